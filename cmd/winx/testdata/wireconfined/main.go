// Command wireconfined is an attack helper of the confined-session tests:
// a program inside a confined (WINX_SANDBOX=1) or architect session that
// HAS the wire secret (the test copies it where the session can read it)
// and speaks the wire by hand (a 4-byte big-endian length, then JSON-RPC)
// as a hostile program would. It says hello with the secret to every
// guardian socket it is given and asks each for its status, to run a
// command and to attach a person (winx attach --interactive), then asks winxd for an unconfined session (daemon.ensure with
// sandbox false) and runs a command there. A command that runs creates a
// file escaped-<step> in the -out directory.
//
// It reports to the Unix socket -report, one line per step: ACCEPTED or
// REFUSED (with the wire error code) and the step, then DONE. With
// -detach it first leaves the shell's process tree the way a daemon
// does: it forks, the child calls setsid and forks again and exits, and
// the grandchild, reparented to the nearest subreaper, attacks. With
// -filter it is a git clean filter: it copies stdin to stdout before
// anything else, so git status, which runs it, carries on.
//
// Usage: wireconfined -report SOCK -secret FILE -winxd SOCK -out DIR [-detach] [-filter] [GUARDIAN_SOCKET...]
package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const stageEnv = "WIRECONFINED_STAGE"

type wireError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *wireError) Error() string { return fmt.Sprintf("code=%d %s", e.Code, e.Message) }

type conn struct {
	c    net.Conn
	next int
}

func (c *conn) call(method string, params any) (json.RawMessage, error) {
	c.next++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": method, "params": params})
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(b)))
	if _, err := c.c.Write(append(n[:], b...)); err != nil {
		return nil, err
	}
	if _, err := io.ReadFull(c.c, n[:]); err != nil {
		return nil, err
	}
	buf := make([]byte, binary.BigEndian.Uint32(n[:]))
	if _, err := io.ReadFull(c.c, buf); err != nil {
		return nil, err
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  *wireError      `json:"error"`
	}
	if err := json.Unmarshal(buf, &resp); err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	return resp.Result, nil
}

type attack struct {
	report io.Writer
	secret string
	out    string
}

func (a *attack) say(format string, args ...any) {
	fmt.Fprintf(a.report, format+"\n", args...)
}

// verdict reports one step.
func (a *attack) verdict(step string, err error) bool {
	if err != nil {
		a.say("REFUSED %s %s", step, strings.ReplaceAll(err.Error(), "\n", " "))
		return false
	}
	a.say("ACCEPTED %s", step)
	return true
}

// open dials path and says hello with the secret.
func (a *attack) open(path string) (*conn, error) {
	nc, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return nil, err
	}
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	c := &conn{c: nc}
	hello := map[string]any{"protocol": map[string]int{"major": 1, "minor": 0}, "role": "adapter",
		"build": map[string]any{}, "pid": os.Getpid(), "secret": a.secret}
	if _, err := c.call("hello", hello); err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

// guardian attacks one guardian socket.
func (a *attack) guardian(socket, step string) {
	name := filepath.Base(socket)
	c, err := a.open(socket)
	if !a.verdict("hello "+name, err) {
		return
	}
	defer c.c.Close()
	_, err = c.call("session.status", struct{}{})
	a.verdict("status "+name, err)
	_, err = c.call("session.run", map[string]any{"command": "touch " + filepath.Join(a.out, "escaped-"+step), "wait_ms": 5000})
	a.verdict("run "+name, err)
	// A person's attachment (winx attach --interactive) would let it type
	// into the session's shell.
	_, err = c.call("person.attach", map[string]any{"rows": 24, "cols": 80})
	a.verdict("person.attach "+name, err)
}

// winxd asks for an unconfined session and runs a command in it.
func (a *attack) winxd(socket string) {
	c, err := a.open(socket)
	if !a.verdict("hello winxd", err) {
		return
	}
	defer c.c.Close()
	res, err := c.call("daemon.ensure", map[string]any{
		"key": "wire-confined-escape", "dir": a.out, "workspace": a.out, "sandbox": false,
		"env": []string{"HOME=" + a.out, "PATH=/usr/local/bin:/usr/bin:/bin"},
	})
	if !a.verdict("ensure", err) {
		return
	}
	var r struct {
		Guardian struct {
			Socket string `json:"socket"`
		} `json:"guardian"`
	}
	json.Unmarshal(res, &r)
	a.guardian(r.Guardian.Socket, "ensure")
}

func main() {
	report := flag.String("report", "", "Unix socket to report to")
	secretFile := flag.String("secret", "", "the wire secret's file")
	winxd := flag.String("winxd", "", "winxd's socket")
	out := flag.String("out", "", "directory of the escape markers")
	detach := flag.Bool("detach", false, "leave the shell's process tree first")
	filter := flag.Bool("filter", false, "act as a git clean filter")
	flag.Parse()
	if *filter {
		io.Copy(os.Stdout, os.Stdin)
		os.Stdout.Close()
	}
	switch os.Getenv(stageEnv) {
	case "":
		if *detach {
			// Fork; the child detaches. Nothing of git's pipes is
			// inherited (exec's default is /dev/null).
			cmd := exec.Command(os.Args[0], os.Args[1:]...)
			cmd.Env = append(os.Environ(), stageEnv+"=setsid")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := cmd.Start(); err != nil {
				fmt.Fprintln(os.Stderr, "wireconfined:", err)
				os.Exit(1)
			}
			return
		}
	case "setsid":
		// In a session of its own: fork again and leave, orphaning the
		// grandchild, which waits for the end of this process through a
		// pipe only this process holds.
		r, w, err := os.Pipe()
		if err != nil {
			os.Exit(1)
		}
		cmd := exec.Command(os.Args[0], os.Args[1:]...)
		cmd.Env = append(os.Environ(), stageEnv+"=orphan", "WIRECONFINED_PARENT="+strconv.Itoa(os.Getpid()))
		cmd.Stdin = r
		if err := cmd.Start(); err != nil {
			os.Exit(1)
		}
		w.Close()
		return
	case "orphan":
		io.Copy(io.Discard, os.Stdin) // EOF: the parent exited
		parent, _ := strconv.Atoi(os.Getenv("WIRECONFINED_PARENT"))
		for deadline := time.Now().Add(5 * time.Second); os.Getppid() == parent && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond) // reparenting follows the exit
		}
	}
	rc, err := net.Dial("unix", *report)
	if err != nil {
		fmt.Fprintln(os.Stderr, "wireconfined: report:", err)
		os.Exit(1)
	}
	defer rc.Close()
	a := &attack{report: rc, out: *out}
	a.say("PID %d PPID %d SID %d", os.Getpid(), os.Getppid(), sid())
	b, err := os.ReadFile(*secretFile)
	if err != nil {
		a.say("NOSECRET %v", err)
	}
	a.secret = strings.TrimSpace(string(b))
	for i, g := range flag.Args() {
		a.guardian(g, "run-"+strconv.Itoa(i))
	}
	a.winxd(*winxd)
	a.say("DONE")
}

// sid is this process's session id (getsid(0)).
func sid() int {
	s, _, _ := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0)
	return int(s)
}
