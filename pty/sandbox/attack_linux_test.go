//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"winx/pty/testenv"
)

// helperArg makes the test binary run a helper mode (runHelper) instead of
// the tests: the attacks a confined shell runs that bash cannot express.
const helperArg = "__winx-sandbox-test-helper"

// nobody is the unprivileged uid and gid the attacks also run as.
const nobody = 65534

// runHelper runs the helper mode args[0] and returns the exit status.
func runHelper(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "helper: no mode")
		return 2
	}
	switch mode, rest := args[0], args[1:]; mode {
	case "tiocsti":
		// tiocsti PATH TEXT: type TEXT into the terminal at PATH.
		f, err := os.OpenFile(rest[0], os.O_RDWR, 0)
		if err != nil {
			fmt.Println("tiocsti open:", err)
			return 1
		}
		return typeInto(f, rest[1], "injected")
	case "tiocsti-self":
		// Type into the shell's own terminal (fd 0): the classic escape
		// from a sandbox that shares its terminal with an unconfined shell.
		return typeInto(os.Stdin, "#\n", "self-injected")
	case "nondumpable":
		// A process that protects its memory and environment, as
		// ssh-agent and gpg-agent do: it says where it is, then waits.
		if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
			fmt.Println("prctl:", err)
			return 1
		}
		fmt.Println("ready", os.Getpid())
		io.Copy(io.Discard, os.Stdin)
		return 0
	case "connect-unix":
		// connect-unix ADDR: connect to a Unix socket ("@name" is abstract).
		c, err := net.Dial("unix", rest[0])
		if err != nil {
			fmt.Println("connect-unix:", err)
			return 1
		}
		c.Close()
		fmt.Println("unix-ok")
		return 0
	case "udp":
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
		if err != nil {
			fmt.Println("udp socket:", err)
			return 1
		}
		unix.Close(fd)
		fmt.Println("udp-ok")
		return 0
	case "io-uring":
		var params [120]byte // struct io_uring_params
		fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
		if errno != 0 {
			fmt.Println("io_uring_setup:", errno)
			return 1
		}
		unix.Close(int(fd))
		fmt.Println("io-uring-ok")
		return 0
	case "x32":
		return x32Getpid()
	case "int80":
		return int80Getpid()
	}
	fmt.Fprintln(os.Stderr, "helper: unknown mode", args[0])
	return 2
}

// typeInto pushes text into the input queue of the terminal f with
// TIOCSTI, one byte at a time, and prints ok if every byte went in.
func typeInto(f *os.File, text, ok string) int {
	for i := 0; i < len(text); i++ {
		b := text[i]
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), unix.TIOCSTI, uintptr(unsafe.Pointer(&b))); errno != 0 {
			fmt.Println("tiocsti:", errno)
			return 1
		}
	}
	fmt.Println(ok)
	return 0
}

// x32Getpid calls getpid through the x32 system call table (amd64 only).
func x32Getpid() int {
	if runtime.GOARCH != "amd64" {
		fmt.Println("x32: not amd64")
		return 3
	}
	const x32Bit = 0x40000000
	pid, _, errno := unix.RawSyscall(unix.SYS_GETPID|x32Bit, 0, 0, 0)
	fmt.Println("x32 getpid:", pid, errno)
	return 0
}

// int80Getpid calls getpid through the i386 entry (int $0x80) from 64-bit
// code: a system call of another architecture, which a filter checking
// numbers of the native table alone would misread. It runs a few bytes of
// machine code from an executable page through a Go func value.
func int80Getpid() int {
	if runtime.GOARCH != "amd64" {
		fmt.Println("int80: not amd64")
		return 3
	}
	page, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		fmt.Println("int80 mmap:", err)
		return 1
	}
	code := []byte{
		0x41, 0x50, 0x41, 0x51, 0x41, 0x52, 0x41, 0x53, // push r8..r11 (the compat entry may clear them)
		0xb8, 20, 0, 0, 0, // mov eax, 20 (i386 getpid)
		0xcd, 0x80, // int 0x80
		0x89, 0x05, 0, 0, 0, 0, // mov [rip+disp], eax (disp patched below)
		0x41, 0x5b, 0x41, 0x5a, 0x41, 0x59, 0x41, 0x58, // pop r11..r8
		0xc3, // ret
	}
	const result = 256 // where the code stores eax
	disp := int32(result - 21)
	code[17], code[18], code[19], code[20] = byte(disp), byte(disp>>8), byte(disp>>16), byte(disp>>24)
	copy(page, code)
	runtime.LockOSThread()
	fv := &struct{ fn uintptr }{uintptr(unsafe.Pointer(&page[0]))}
	call := *(*func())(unsafe.Pointer(&fv))
	call()
	ret := int32(uint32(page[result]) | uint32(page[result+1])<<8 | uint32(page[result+2])<<16 | uint32(page[result+3])<<24)
	fmt.Println("int80 getpid:", ret)
	return 0
}

// attackBin copies the test binary into a fresh directory under /var/tmp
// that every uid may read and execute, outside the temporary directories
// and home directories the sandbox hides, and returns its path. The confined
// shells run it as their attack helper, and the unprivileged runs start the
// launcher from it.
func attackBin(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("/var/tmp", "winx-sandbox-bin-")
	if err != nil {
		testenv.Missing(t, "no /var/tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sandbox.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// sharedDir makes a fresh 0755 directory under /var/tmp (outside every
// hidden tree) for files the attacks use.
func sharedDir(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", prefix)
	if err != nil {
		testenv.Missing(t, "no /var/tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// requireLandlock skips the test when Landlock is unavailable, or fails it
// under CI, whose kernel has it.
func requireLandlock(t *testing.T) int {
	t.Helper()
	abi, err := Probe()
	if err != nil {
		testenv.Missing(t, "Landlock unavailable: %v", err)
	}
	return abi
}

// identity is who a confined shell runs as.
type identity struct {
	name    string
	cred    *syscall.Credential // nil: the test's own (root)
	ambient []uintptr           // ambient capabilities handed to the launcher
}

// identities are root and the unprivileged uid; the tests run as root.
func identities(t *testing.T) []identity {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the attacks run as root and as uid 65534; this test runs as uid", os.Geteuid())
	}
	return []identity{
		{name: "root"},
		{name: "nobody", cred: &syscall.Credential{Uid: nobody, Gid: nobody}},
	}
}

// uid is the uid id runs as.
func (id identity) uid() int {
	if id.cred == nil {
		return os.Geteuid()
	}
	return int(id.cred.Uid)
}

// startOnPTY starts argv as a session leader with a new pseudo-terminal as
// its controlling terminal and stdin, stdout and stderr, as the guardian
// starts a session's shell. The terminal belongs to uid. It returns the
// master side.
func startOnPTY(t *testing.T, ctx context.Context, argv, env []string, id identity, uid int) (*exec.Cmd, *os.File) {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close() })
	defer slave.Close()
	if err := os.Chown(slave.Name(), uid, -1); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = "/"
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Credential: id.cred, AmbientCaps: id.ambient}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, master
}

// runOnPTY runs argv on its own pseudo-terminal as id and returns all it
// printed there and how it ended.
func runOnPTY(t *testing.T, argv, env []string, id identity) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, master := startOnPTY(t, ctx, argv, env, id, id.uid())
	// The read ends with EIO once the last process holding the terminal
	// has closed it.
	out, _ := io.ReadAll(master)
	return string(out), cmd.Wait()
}

// terminalReader reads a pseudo-terminal master up to a marker.
type terminalReader struct {
	r   *bufio.Reader
	all bytes.Buffer
}

// upTo reads until the output holds marker and returns everything read so
// far. The deadline of the master bounds the wait.
func (tr *terminalReader) upTo(marker string) (string, error) {
	for !strings.Contains(tr.all.String(), marker) {
		b, err := tr.r.ReadByte()
		if err != nil {
			return tr.all.String(), err
		}
		tr.all.WriteByte(b)
	}
	return tr.all.String(), nil
}

// victimTerminal is an unconfined interactive bash on its own terminal:
// another session, whose terminal a confined shell must not reach.
type victimTerminal struct {
	path   string // the slave, /dev/pts/N
	master *os.File
	out    *terminalReader
}

func startVictim(t *testing.T, owner int) *victimTerminal {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	env := []string{"PATH=" + os.Getenv("PATH"), "TERM=dumb", "PS1=victim$ ", "HOME=/"}
	cmd, master := startOnPTY(t, ctx, []string{"bash", "--norc", "--noprofile", "-i"}, env, identity{}, owner)
	_ = cmd
	name, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	master.SetDeadline(time.Now().Add(time.Minute))
	v := &victimTerminal{path: name, master: master, out: &terminalReader{r: bufio.NewReader(master)}}
	if out, err := v.out.upTo("victim$ "); err != nil {
		t.Fatalf("victim shell gave no prompt: %v, %q", err, out)
	}
	return v
}

// settle types a command into the victim's terminal the way its user
// would and waits for its output: whatever was typed into the terminal
// before has been run by then.
func (v *victimTerminal) settle(t *testing.T) string {
	t.Helper()
	if _, err := v.master.Write([]byte("echo SETT''LED-$((6*7))\n")); err != nil {
		t.Fatal(err)
	}
	out, err := v.out.upTo("SETTLED-42")
	if err != nil {
		t.Fatalf("victim shell did not settle: %v, %q", err, out)
	}
	return out
}

// profile is a way to confine a shell: the sandbox policy or the read-only
// ruleset.
type profile struct {
	name string
	argv func(self string, cmd []string) []string
}

func confinementProfiles(p Policy) []profile {
	return []profile{
		{"sandbox", func(self string, cmd []string) []string { return Launcher(self, p, cmd) }},
		{"read-only", func(self string, cmd []string) []string { return ReadOnly(self, cmd, ReadOnlyOptions{}) }},
	}
}

// launcherEnviron is the environment of a launcher started by a test.
func launcherEnviron(extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), launcherEnv + "=1", "LC_ALL=C", "TERM=dumb"}, extra...)
}

// TestConfinedShellCannotReachOtherTerminals runs the review's attack: a
// confined shell writes to another session's terminal and types a command
// into it with TIOCSTI, as root and as an unprivileged user whose other
// session it is. Neither may land; its own terminal keeps working.
func TestConfinedShellCannotReachOtherTerminals(t *testing.T) {
	requireLandlock(t)
	ids := identities(t)
	bin := attackBin(t)
	home := sharedDir(t, "winx-tty-home-")
	marks := sharedDir(t, "winx-tty-marks-")
	p := Policy{Home: home}
	for _, id := range ids {
		for _, pr := range confinementProfiles(p) {
			t.Run(id.name+"/"+pr.name, func(t *testing.T) {
				victim := startVictim(t, id.uid())
				pwned := filepath.Join(marks, "pwned-"+id.name+"-"+pr.name)
				script := `echo WRITE-MARK > ` + victim.path + ` && echo write-ok
"$BIN" ` + helperArg + ` tiocsti ` + victim.path + ` 'touch ` + pwned + `
'
"$BIN" ` + helperArg + ` tiocsti-self
echo own > /dev/tty && echo tty-ok
echo own > "$(tty)" && echo pts-ok
true`
				argv := pr.argv(bin, []string{"/bin/bash", "-c", script})
				out, err := runOnPTY(t, argv, launcherEnviron("BIN="+bin, "HOME="+home), id)
				if err != nil {
					t.Errorf("confined shell = %v, output %q", err, out)
				}
				for _, bad := range []string{"write-ok", "injected"} {
					if strings.Contains(out, bad) {
						t.Errorf("confined shell printed %q: it reached a terminal not its own:\n%s", bad, out)
					}
				}
				for _, good := range []string{"tty-ok", "pts-ok"} {
					if !strings.Contains(out, good) {
						t.Errorf("confined shell did not print %q: its own terminal must work:\n%s", good, out)
					}
				}
				seen := victim.settle(t)
				if strings.Contains(seen, "WRITE-MARK") {
					t.Errorf("the victim's terminal shows what the confined shell wrote:\n%s", seen)
				}
				if _, err := os.Stat(pwned); err == nil {
					t.Errorf("the victim's shell ran a command typed by the confined shell (%s exists)", pwned)
				}
			})
		}
	}
}

// TestConfinedShellHoldsNoCapabilities runs, as root and as an
// unprivileged user handed ambient capabilities, the attacks a capability
// would allow: read a 0600 file of another uid (DAC override) and the
// environment of a process that made itself non-dumpable (ptrace). The
// shell must hold no capability at all, keep no_new_privs and run under the
// seccomp filter.
func TestConfinedShellHoldsNoCapabilities(t *testing.T) {
	requireLandlock(t)
	ids := identities(t)
	// The unprivileged launcher gets what a service manager could hand it.
	ids[1].ambient = []uintptr{unix.CAP_DAC_OVERRIDE, unix.CAP_DAC_READ_SEARCH, unix.CAP_SYS_PTRACE}
	bin := attackBin(t)
	home := sharedDir(t, "winx-caps-home-")
	data := sharedDir(t, "winx-caps-data-")
	p := Policy{Home: home}
	for _, id := range ids {
		secret := filepath.Join(data, "secret-of-another-uid-"+id.name)
		if err := os.WriteFile(secret, []byte("dac-secret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		other := nobody
		if id.uid() != 0 {
			other = 0
		}
		if err := os.Chown(secret, other, other); err != nil {
			t.Fatal(err)
		}
		for _, pr := range confinementProfiles(p) {
			t.Run(id.name+"/"+pr.name, func(t *testing.T) {
				script := `grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):' /proc/self/status
cat "$SECRET"
export WINX_AGENT_SECRET=env-secret
coproc AGENT { "$BIN" ` + helperArg + ` nondumpable; }
read -r word pid <&"${AGENT[0]}"
echo "agent $word"
tr '\0' '\n' < /proc/$pid/environ | grep WINX_AGENT_SECRET
kill $pid
true`
				argv := pr.argv(bin, []string{"/bin/bash", "-c", script})
				out, err := runOnPTY(t, argv, launcherEnviron("BIN="+bin, "HOME="+home, "SECRET="+secret), id)
				if err != nil {
					t.Errorf("confined shell = %v, output %q", err, out)
				}
				if !strings.Contains(out, "agent ready") {
					t.Errorf("the non-dumpable helper did not start:\n%s", out)
				}
				for _, leak := range []string{"dac-secret", "env-secret"} {
					if strings.Contains(out, leak) {
						t.Errorf("the confined shell read %q:\n%s", leak, out)
					}
				}
				want := []string{"CapInh:\t0000000000000000", "CapPrm:\t0000000000000000", "CapEff:\t0000000000000000",
					"CapAmb:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2"}
				if id.uid() == 0 {
					// Only a holder of CAP_SETPCAP can empty the bounding
					// set; an unprivileged launcher has none to gain back.
					want = append(want, "CapBnd:\t0000000000000000")
				}
				for _, w := range want {
					if !strings.Contains(out, w) {
						t.Errorf("/proc/self/status of the confined shell lacks %q:\n%s", w, out)
					}
				}
			})
		}
	}
}

// runConfined runs script in bash -c under argv (a launcher vector) with
// env, as id, without a terminal, and returns its combined output.
func runConfined(t *testing.T, argv, env []string, id identity) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: id.cred, AmbientCaps: id.ambient}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestSandboxHidesTemporaryDirectories checks that the temporary
// directories every session shares (/tmp, $TMPDIR, /dev/shm) are neither
// readable, listable nor writable under the sandbox policy, while grants
// inside them (a session's private temporary directory) work.
func TestSandboxHidesTemporaryDirectories(t *testing.T) {
	requireLandlock(t)
	bin := attackBin(t)
	home := sharedDir(t, "winx-tmp-home-")
	ws := filepath.Join(home, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := resolveIfExists("/tmp")
	// A neighbour's files, readable by every uid: only the sandbox stands
	// between them and the confined shell.
	neighbour, err := os.MkdirTemp(tmp, "winx-neighbour-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(neighbour) })
	tmpdir := sharedDir(t, "winx-tmpdir-")
	private, err := os.MkdirTemp(tmp, "winx-private-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(private) })
	ro, err := os.MkdirTemp(tmp, "winx-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(ro) })
	for _, f := range []string{filepath.Join(neighbour, "secret"), filepath.Join(tmpdir, "secret"), filepath.Join(ro, "notes")} {
		if err := os.WriteFile(f, []byte("neighbour-secret\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(neighbour, 0o755)
	p, err := PolicyFromEnv(ws, envFunc(map[string]string{"HOME": home, "TMPDIR": tmpdir, EnvRWPaths: private, EnvROPaths: ro}))
	if err != nil {
		t.Fatal(err)
	}
	tests := []shellCase{
		{"read a neighbour's file in /tmp", `cat "$NB/secret"`, false, "Permission denied"},
		{"list /tmp", `ls "$TMPD"`, false, "Permission denied"},
		{"list a neighbour's directory", `ls "$NB"`, false, "Permission denied"},
		{"write in /tmp", `echo x > "$TMPD/winx-from-sandbox"`, false, "Permission denied"},
		{"read a neighbour's file in $TMPDIR", `cat "$TMPDIR/secret"`, false, "Permission denied"},
		{"list $TMPDIR", `ls "$TMPDIR"`, false, "Permission denied"},
		{"write in $TMPDIR", `echo x > "$TMPDIR/from-sandbox"`, false, "Permission denied"},
		{"list /dev/shm", `ls /dev/shm`, false, "Permission denied"},
		{"write in /dev/shm", `echo x > /dev/shm/winx-from-sandbox`, false, "Permission denied"},
		{"write the private temporary directory", `echo private-ok > "$PRIV/f" && cat "$PRIV/f" && ls "$PRIV"`, true, "private-ok"},
		{"read a read-only grant in /tmp", `cat "$RO/notes"`, true, "neighbour-secret"},
		{"write a read-only grant in /tmp", `echo x > "$RO/notes"`, false, "Permission denied"},
		{"read /var/tmp outside TMPDIR", `test -x "$BIN" && echo bin-ok`, true, "bin-ok"},
	}
	env := launcherEnviron("HOME="+home, "TMPDIR="+tmpdir, "NB="+neighbour, "TMPD="+tmp, "PRIV="+private, "RO="+ro, "BIN="+bin)
	for _, tc := range tests {
		out, err := runConfined(t, Launcher(bin, p, []string{"/bin/bash", "-c", tc.script}), env, identity{})
		if (err == nil) != tc.ok || !strings.Contains(out, tc.output) {
			t.Errorf("%s: %s\n= %v, output %q; want ok=%v and output containing %q", tc.name, tc.script, err, out, tc.ok, tc.output)
		}
		if !tc.ok && strings.Contains(out, "neighbour-secret") {
			t.Errorf("%s: a neighbour's file leaked: %q", tc.name, out)
		}
	}
	for _, f := range []string{filepath.Join(tmp, "winx-from-sandbox"), filepath.Join(tmpdir, "from-sandbox"), "/dev/shm/winx-from-sandbox"} {
		if _, err := os.Stat(f); err == nil {
			os.Remove(f)
			t.Errorf("%s was created from inside the sandbox", f)
		}
	}
}

// TestSandboxScopesSignalsAndAbstractSockets checks that a shell under the
// sandbox policy can neither signal a process outside its domain nor
// connect to an abstract Unix socket outside it (Landlock ABI 6), while a
// named Unix socket and its own children stay reachable.
func TestSandboxScopesSignalsAndAbstractSockets(t *testing.T) {
	if abi := requireLandlock(t); abi < 6 {
		testenv.Missing(t, "Landlock ABI %d < 6: no scoping", abi)
	}
	bin := attackBin(t)
	home := sharedDir(t, "winx-scope-home-")
	sockDir := sharedDir(t, "winx-scope-sock-")
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	abstract := fmt.Sprintf("@winx-sandbox-test-%d", os.Getpid())
	named := filepath.Join(sockDir, "sock")
	for _, addr := range []string{abstract, named} {
		ln, err := net.Listen("unix", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	tests := []shellCase{
		{"signal a process outside", `kill -0 ` + strconv.Itoa(sleeper.Process.Pid), false, "Operation not permitted"},
		{"signal its own child", `sleep 30 & kill $! && wait $!; echo child-signalled`, true, "child-signalled"},
		{"connect an abstract socket outside", `"$BIN" ` + helperArg + ` connect-unix ` + abstract, false, "connect-unix"},
		{"connect a named socket", `"$BIN" ` + helperArg + ` connect-unix ` + named, true, "unix-ok"},
	}
	p := Policy{Home: home}
	for _, tc := range tests {
		out, err := runConfined(t, Launcher(bin, p, []string{"/bin/bash", "-c", tc.script}), launcherEnviron("HOME="+home, "BIN="+bin), identity{})
		if (err == nil) != tc.ok || !strings.Contains(out, tc.output) {
			t.Errorf("%s: %s\n= %v, output %q; want ok=%v and output containing %q", tc.name, tc.script, err, out, tc.ok, tc.output)
		}
	}
}

// TestSandboxNetworkPolicy connects, from confined shells as root and as
// an unprivileged user, to a TCP listener on 127.0.0.1 and a Unix socket:
// with WINX_SANDBOX_NETWORK=deny no IP socket, UDP or io_uring can be made
// and nothing reaches the listener, while Unix sockets still work; with
// allow the connection goes through.
func TestSandboxNetworkPolicy(t *testing.T) {
	requireLandlock(t)
	ids := identities(t)
	bin := attackBin(t)
	home := sharedDir(t, "winx-net-home-")
	sockDir := sharedDir(t, "winx-net-sock-")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan struct{}, 64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	named := filepath.Join(sockDir, "sock")
	uln, err := net.Listen("unix", named)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { uln.Close() })
	if err := os.Chmod(named, 0o777); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := uln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	script := `exec 3<>/dev/tcp/127.0.0.1/` + port + ` && echo tcp-connected
"$BIN" ` + helperArg + ` udp
"$BIN" ` + helperArg + ` io-uring
"$BIN" ` + helperArg + ` connect-unix ` + named + `
read -r -u 4 x 4< <(echo pipe-ok) && echo "$x"
true`
	for _, id := range ids {
		for _, deny := range []bool{true, false} {
			name := id.name + "/allow"
			if deny {
				name = id.name + "/deny"
			}
			t.Run(name, func(t *testing.T) {
				p := Policy{Home: home, DenyNetwork: deny}
				before := len(accepted)
				out, err := runOnPTY(t, Launcher(bin, p, []string{"/bin/bash", "-c", script}), launcherEnviron("BIN="+bin, "HOME="+home), id)
				if err != nil {
					t.Errorf("confined shell = %v:\n%s", err, out)
				}
				for _, want := range []string{"unix-ok", "pipe-ok"} {
					if !strings.Contains(out, want) {
						t.Errorf("output lacks %q:\n%s", want, out)
					}
				}
				results := []string{"tcp-connected", "udp-ok", "io-uring-ok"}
				for _, r := range results {
					if strings.Contains(out, r) == deny {
						t.Errorf("deny %v: output has %q = %v:\n%s", deny, r, !deny, out)
					}
				}
				if deny && !strings.Contains(out, "permission denied") {
					t.Errorf("deny: the refusals are not EACCES:\n%s", out)
				}
				if deny && len(accepted) > before {
					t.Errorf("deny: the listener accepted a connection")
				}
			})
		}
	}
}

// TestReadOnlyHidesPaths starts shells under the read-only ruleset with a
// hidden directory, alone and stacked on the sandbox policy: nothing in it
// can be read, listed or executed but its readable exception; the rest of
// the system stays readable; writes stay denied.
func TestReadOnlyHidesPaths(t *testing.T) {
	requireLandlock(t)
	bin := attackBin(t)
	home := sharedDir(t, "winx-hide-home-")
	ws := filepath.Join(home, "ws")
	hidden := filepath.Join(ws, "state")
	readable := filepath.Join(hidden, "pub")
	for _, d := range []string{ws, readable} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(hidden, "wire-secret"): "hidden-secret\n",
		filepath.Join(hidden, "run.sh"):      "#!/bin/sh\necho hidden-ran\n",
		filepath.Join(readable, "notes"):     "pub-ok\n",
		filepath.Join(ws, "keep"):            "keep-me\n",
	}
	for f, content := range files {
		if err := os.WriteFile(f, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A link to the hidden directory does not lead into it: the hole is
	// the directory, whatever the path.
	if err := os.Symlink(hidden, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	o := ReadOnlyOptions{Hide: []string{filepath.Join(ws, "link")}, Readable: []string{readable}}
	p := Policy{Home: filepath.Join(home, "elsewhere"), RW: []string{ws}}
	profiles := []profile{
		{"read-only", func(self string, cmd []string) []string { return ReadOnly(self, cmd, o) }},
		{"policy+read-only", func(self string, cmd []string) []string { return ReadOnly(self, Launcher(self, p, cmd), o) }},
	}
	tests := []shellCase{
		{"read a hidden file", `cat "$H/wire-secret"`, false, "Permission denied"},
		{"list the hidden directory", `ls "$H"`, false, "Permission denied"},
		{"execute a hidden script", `"$H/run.sh"`, false, "Permission denied"},
		{"source a hidden script", `. "$H/run.sh"`, false, "Permission denied"},
		{"read through /proc/self/root", `cat /proc/self/root"$H/wire-secret"`, false, "Permission denied"},
		{"read the readable exception", `cat "$H/pub/notes" && ls "$H/pub"`, true, "pub-ok"},
		{"read next to the hidden directory", `cat "$WS/keep"`, true, "keep-me"},
		{"read /etc", `head -c 4 /etc/passwd >/dev/null && echo etc-ok`, true, "etc-ok"},
		{"run programs", `"$BIN" ` + helperArg + ` connect-unix /nonexistent; ls /usr >/dev/null && echo ran-ok`, true, "ran-ok"},
		{"devices", `echo x > /dev/null && head -c 1 /dev/urandom >/dev/null && echo dev-ok`, true, "dev-ok"},
		{"write next to it", `echo x > "$WS/new"`, false, "Permission denied"},
		{"write in the readable exception", `echo x > "$H/pub/new"`, false, "Permission denied"},
	}
	env := launcherEnviron("BIN="+bin, "HOME="+home, "WS="+ws, "H="+hidden)
	for _, pr := range profiles {
		for _, tc := range tests {
			out, err := runConfined(t, pr.argv(bin, []string{"/bin/bash", "-c", tc.script}), env, identity{})
			if (err == nil) != tc.ok || !strings.Contains(out, tc.output) {
				t.Errorf("%s: %s: %s\n= %v, output %q; want ok=%v and output containing %q", pr.name, tc.name, tc.script, err, out, tc.ok, tc.output)
			}
			if strings.Contains(out, "hidden-secret") || strings.Contains(out, "hidden-ran") {
				t.Errorf("%s: %s: the hidden directory leaked: %q", pr.name, tc.name, out)
			}
		}
	}
	for _, f := range []string{filepath.Join(ws, "new"), filepath.Join(readable, "new")} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was created from a read-only shell", f)
		}
	}
}
