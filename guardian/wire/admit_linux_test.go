package wire

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"winx/jsonrpc"
)

// The child processes of the admission tests are this test binary again,
// told what to do by admitChildEnv, the socket by admitPathEnv and the
// secret (random per test process) by admitSecretEnv.
const (
	admitChildEnv  = "WINX_WIRE_TEST_ADMIT"
	admitPathEnv   = "WINX_WIRE_TEST_ADMIT_PATH"
	admitSecretEnv = "WINX_WIRE_TEST_ADMIT_SECRET"
)

// prSetNoNewPrivs is PR_SET_NO_NEW_PRIVS, which package syscall lacks.
const prSetNoNewPrivs = 38

// Exit codes of admitChild.
const (
	childRefused  = 0 // the hello was refused as a confined caller
	childAdmitted = 5 // the hello was accepted and a call answered
	childFailed   = 6 // anything else
)

// admitChild is one child of the admission tests:
//
//	nnp: sets no_new_privs (as a confined session's launcher does), then
//	     dials with the secret;
//	plain: dials with the secret;
//	pass: connects, hands the connection to a "late" child and exits;
//	late: waits for a line on stdin, then says hello on the connection it
//	     was handed (descriptor 3).
func admitChild(mode string) int {
	path, secret := os.Getenv(admitPathEnv), os.Getenv(admitSecretEnv)
	switch mode {
	case "nnp":
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0); e != 0 {
			fmt.Println("prctl:", e)
			return childFailed
		}
		return dialVerdict(path, secret)
	case "plain":
		return dialVerdict(path, secret)
	case "pass":
		c, err := net.Dial("unix", path)
		if err != nil {
			fmt.Println("dial:", err)
			return childFailed
		}
		f, err := c.(*net.UnixConn).File()
		if err != nil {
			fmt.Println("file:", err)
			return childFailed
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), admitChildEnv+"=late")
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		cmd.ExtraFiles = []*os.File{f}
		if err := cmd.Start(); err != nil {
			fmt.Println("start:", err)
			return childFailed
		}
		return 0 // the connecting process leaves; its child stays
	case "late":
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			fmt.Println("stdin:", err)
			return childFailed
		}
		c := os.NewFile(3, "conn")
		hello := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"hello","params":{"protocol":{"major":1,"minor":0},"role":"adapter","secret":%q}}`, secret)
		writeFrame(c, []byte(hello))
		b, err := jsonrpc.NewLengthReader(c, 0).ReadFrame()
		if err != nil {
			fmt.Println("read:", err)
			return childFailed
		}
		fmt.Println(string(b))
		if strings.Contains(string(b), fmt.Sprintf(`"code":%d`, CodeConfinedPeer)) {
			return childRefused
		}
		return childAdmitted
	}
	fmt.Println("unknown mode", mode)
	return childFailed
}

// dialVerdict dials path and reports the server's verdict as an exit code.
func dialVerdict(path, secret string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, path, NewHello(RoleAdapter, Build{}, nil).WithSecret(secret))
	var ce *ConfinedPeerError
	switch {
	case errors.As(err, &ce) && errors.Is(err, ErrConfinedPeer):
		fmt.Println(err)
		return childRefused
	case err != nil:
		fmt.Println("dial:", err)
		return childFailed
	}
	defer c.Close()
	var got []int
	if err := c.Call(ctx, "echo", []int{1}, &got); err != nil {
		fmt.Println("echo:", err)
		return childFailed
	}
	return childAdmitted
}

// runAdmitChild runs this test binary as a child in mode against path and
// returns its exit code, its output and its pid.
func runAdmitChild(t *testing.T, mode, path string) (int, string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), admitChildEnv+"="+mode, admitPathEnv+"="+path, admitSecretEnv+"="+testSecret)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("child %s: %v", mode, err)
	}
	return cmd.ProcessState.ExitCode(), string(out), cmd.Process.Pid
}

// judged records the callers an admission saw.
type judged struct {
	mu    sync.Mutex
	procs []PeerProcess
}

func (j *judged) add(p *PeerProcess) {
	j.mu.Lock()
	j.procs = append(j.procs, *p)
	j.mu.Unlock()
}

func (j *judged) last(t *testing.T) PeerProcess {
	t.Helper()
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.procs) == 0 {
		t.Fatal("the admission judged nobody")
	}
	return j.procs[len(j.procs)-1]
}

// kernelPidfd reports whether this kernel has SO_PEERPIDFD.
func kernelPidfd(t *testing.T) bool {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[0])
	defer syscall.Close(fds[1])
	fd, err := syscall.GetsockoptInt(fds[0], syscall.SOL_SOCKET, soPeerPidfd)
	if err != nil {
		return false
	}
	syscall.Close(fd)
	return true
}

// TestAdmitConfinedCaller: a server that refuses callers confined beyond
// itself refuses a real process with no_new_privs that has the secret,
// with a typed error on both sides, and still serves an unconfined child
// and this process.
func TestAdmitConfinedCaller(t *testing.T) {
	self, err := Proc{}.Confinement(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if self.NoNewPrivs {
		t.Skip("the test process already has no_new_privs: a child cannot be confined beyond it this way")
	}
	var j judged
	ts := startAdmitServer(t, shortDir(t), func(p *PeerProcess) error {
		j.add(p)
		if p.Confinement.MoreThan(self) {
			return &ConfinedPeerError{Reason: "confined beyond the server"}
		}
		return nil
	})
	code, out, pid := runAdmitChild(t, "nnp", ts.path)
	if code != childRefused {
		t.Fatalf("child with no_new_privs: exit %d, want %d (refused)\n%s", code, childRefused, out)
	}
	if !strings.Contains(out, "refused: the caller runs inside a confined session") {
		t.Errorf("the refused child was told %q", out)
	}
	rej := ts.waitRejects(t, 1)
	var ce *ConfinedPeerError
	if !errors.As(rej[0], &ce) || ce.PID != pid {
		t.Errorf("rejection = %v, want *ConfinedPeerError for pid %d", rej[0], pid)
	}
	if p := j.last(t); p.PID != pid || !p.Confinement.NoNewPrivs || !p.DescendsFrom(os.Getpid()) {
		t.Errorf("judged %+v; want pid %d with no_new_privs, a child of %d", p, pid, os.Getpid())
	}
	if code, out, _ := runAdmitChild(t, "plain", ts.path); code != childAdmitted {
		t.Errorf("unconfined child: exit %d, want %d (admitted)\n%s", code, childAdmitted, out)
	}
	echo(t, ts.path)
	if want := kernelPidfd(t); j.last(t).Pinned != want {
		t.Errorf("Pinned = %v, want %v (the kernel's SO_PEERPIDFD)", j.last(t).Pinned, want)
	}
}

// TestAdmitDescendant: the ancestry a server is given is the real one: a
// server refusing its own descendants refuses its child and serves
// itself.
func TestAdmitDescendant(t *testing.T) {
	me := os.Getpid()
	ts := startAdmitServer(t, shortDir(t), func(p *PeerProcess) error {
		if p.DescendsFrom(me) {
			return &ConfinedPeerError{Reason: "a descendant"}
		}
		return nil
	})
	if code, out, _ := runAdmitChild(t, "plain", ts.path); code != childRefused {
		t.Fatalf("child: exit %d, want %d (refused)\n%s", code, childRefused, out)
	}
	echo(t, ts.path)
}

// TestAdmitGoneCaller: the process that connected exits (and is reaped)
// before the hello, which its child sends on the inherited connection.
// The server judges the process that connected, finds it gone and
// refuses, even though it admits everyone else.
func TestAdmitGoneCaller(t *testing.T) {
	ts := startAdmitServer(t, shortDir(t), func(*PeerProcess) error { return nil })
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), admitChildEnv+"=pass", admitPathEnv+"="+ts.path, admitSecretEnv+"="+testSecret)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, outW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	defer outR.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the connecting child: %v", err)
	}
	// Reaped: its pid is free. Now its child says hello.
	inW.WriteString("go\n")
	inW.Close()
	b := make([]byte, 4096)
	outR.SetReadDeadline(time.Now().Add(10 * time.Second))
	var out strings.Builder
	for {
		n, err := outR.Read(b)
		out.Write(b[:n])
		if err != nil {
			break
		}
	}
	if !strings.Contains(out.String(), fmt.Sprintf(`"code":%d`, CodeConfinedPeer)) || !strings.Contains(out.String(), "gone") {
		t.Fatalf("hello from the child of a gone caller answered %q; want refused, the caller gone", out.String())
	}
	t.Logf("the hello on a gone caller's connection was answered %s", out.String())
	echo(t, ts.path)
}
