//go:build linux

package main

// winx attach --interactive: a person at a real terminal (a PTY this test
// holds) takes the wheel of a session served by the daemon runtime, while
// the agent speaks to the same session through the official Go SDK client
// (mcpprobe), a fresh client process per call.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"winx/guardian/daemon"
	"winx/guardian/wire"
)

// Bounds of the attach tests.
const (
	attachWait  = 15 * time.Second // a person's output, the client's exit
	probeBudget = time.Minute      // one mcpprobe call
)

// probeResult is the part of an mcpprobe call's printed result the tests
// read.
type probeResult struct {
	Status, ErrorCode, Text string
}

// agentCall makes one tool call through the official Go SDK client, in a
// client process and an adapter of its own, in d's runtime.
func agentCall(t *testing.T, d *daemonEnv, probe, tool string, args map[string]any) probeResult {
	t.Helper()
	b, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(t.Context(), probeBudget)
	defer cancel()
	cmd := exec.CommandContext(ctx, probe, "call", "--stdio", shellQuote(filepath.Join(d.bins, "winx")), "--tool", tool, "--args", string(b))
	cmd.Env = d.env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) { // 1: a result with isError
		t.Fatalf("mcpprobe call %s: %v\n%s\n%s", tool, err, out, stderr.String())
	}
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Structured struct {
			Status    string `json:"status"`
			ErrorCode string `json:"errorCode"`
			Output    string `json:"output"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("mcpprobe call %s printed %q: %v", tool, out, err)
	}
	r := probeResult{Status: res.Structured.Status, ErrorCode: res.Structured.ErrorCode}
	for _, c := range res.Content {
		r.Text += c.Text
	}
	return r
}

// personTerminal is `winx attach --interactive` running on a PTY the test
// holds both ends of: the person types into the master and reads what the
// attach client prints; the slave is kept to read its terminal modes.
type personTerminal struct {
	t      *testing.T
	cmd    *exec.Cmd
	master *os.File
	slave  *os.File
	exited chan struct{} // closed when the client ended; err is then set
	err    error

	mu  sync.Mutex
	out bytes.Buffer // everything the client printed
}

// startPerson starts the attach client of thread on a fresh 30x100 PTY.
func startPerson(t *testing.T, d *daemonEnv, thread string) *personTerminal {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	if err := pty.Setsize(master, &pty.Winsize{Rows: 30, Cols: 100}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(d.bins, "winx"), "attach", "--interactive", thread)
	cmd.Env = d.env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &personTerminal{t: t, cmd: cmd, master: master, slave: slave, exited: make(chan struct{})}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
		master.Close()
		slave.Close()
	})
	return p
}

// printed is what the client printed so far.
func (p *personTerminal) printed() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// waitFor waits until the client printed want; it fails the test after
// attachWait.
func (p *personTerminal) waitFor(want string) {
	p.t.Helper()
	if !p.poll(want, attachWait) {
		p.t.Fatalf("the person's terminal never showed %q; it shows:\n%q", want, p.printed())
	}
}

// poll reports whether want was printed within limit.
func (p *personTerminal) poll(want string, limit time.Duration) bool {
	for deadline := time.Now().Add(limit); ; time.Sleep(10 * time.Millisecond) {
		if strings.Contains(p.printed(), want) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// run types line and Enter at the prompt, as a person does: then waits for
// want in the output and for the next prompt.
func (p *personTerminal) run(line, want string) {
	p.t.Helper()
	prompts := strings.Count(p.printed(), personPrompt)
	p.typeKeys(line + "\r")
	p.waitFor(want)
	if !p.pollCount(personPrompt, prompts+1) {
		p.t.Fatalf("no prompt came back after %q:\n%q", line, p.printed())
	}
}

// pollCount reports whether s was printed at least n times within
// attachWait.
func (p *personTerminal) pollCount(s string, n int) bool {
	for deadline := time.Now().Add(attachWait); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if strings.Count(p.printed(), s) >= n {
			return true
		}
	}
	return false
}

// personPrompt starts the prompt an attached person is given.
const personPrompt = "(winx attach)"

// typeKeys types s at the person's terminal.
func (p *personTerminal) typeKeys(s string) {
	p.t.Helper()
	if _, err := p.master.Write([]byte(s)); err != nil {
		p.t.Fatal(err)
	}
}

// modes reads the terminal modes of the person's terminal.
func (p *personTerminal) modes() *unix.Termios {
	p.t.Helper()
	tio, err := unix.IoctlGetTermios(int(p.slave.Fd()), unix.TCGETS)
	if err != nil {
		p.t.Fatal(err)
	}
	return tio
}

// TestAttachInteractive: a person attaches to the agent's live shell from
// a terminal, runs a command and sees its output, resizes the terminal
// (the shell sees the new size), and detaches with Ctrl-] d (exit 0, the
// terminal's modes as before). Meanwhile the agent's command and input are
// refused with person_attached and reach nothing; its next answer after
// the detach says that a person typed and what ran, and its command runs
// as before (no echo of the typed line in its output).
func TestAttachInteractive(t *testing.T) {
	probe := filepath.Join(mcpClients(t), "mcpprobe")
	d := newDaemonEnv(t)
	root := canonDir(t, t.TempDir())
	const thread = "person-at-the-wheel"
	at := func(action map[string]any) map[string]any {
		return map[string]any{"action_json": action, "thread_id": thread, "workspace_root": root, "wait_for_seconds": 10}
	}
	if r := agentCall(t, d, probe, "Initialize", map[string]any{"type": "first_call", "any_workspace_path": root, "thread_id": thread}); r.Status != "completed" {
		t.Fatalf("Initialize = %+v", r)
	}
	if r := agentCall(t, d, probe, "BashCommand", at(command("echo agent-$((1+1))"))); !strings.Contains(r.Text, "agent-2") {
		t.Fatalf("the agent's first command = %+v", r)
	}

	p := startPerson(t, d, root) // a session is named by its workspace, its id or its socket
	before := p.modes()
	p.waitFor("Ctrl-] then d detaches")
	p.waitFor(personPrompt) // the prompt the person is given
	if p.modes().Lflag&unix.ICANON != 0 {
		t.Errorf("the person's terminal is not in raw mode while attached")
	}

	// The person runs a command and sees what it prints (the sum is not
	// in what they typed, only in its output).
	p.run("echo from-person-$((40+2))", "from-person-42")
	// A secret typed to a prompt that does not echo is never recorded for
	// the agent (only counted).
	p.typeKeys("read -rsp 'password: ' PW; echo got-${#PW}\r")
	p.waitFor("password: ") // read prints it with echo off already
	p.run("hunter2-secret", "got-14")

	// A resize reaches the shell: stty size in the session prints it.
	if err := pty.Setsize(p.master, &pty.Winsize{Rows: 41, Cols: 123}); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		prompts := strings.Count(p.printed(), personPrompt)
		p.typeKeys("stty size\r")
		if !p.pollCount(personPrompt, prompts+1) {
			t.Fatalf("no prompt came back after stty size:\n%q", p.printed())
		}
		if strings.Contains(p.printed(), "41 123") {
			break
		}
		if i == 20 {
			t.Fatalf("stty size in the session never showed 41 123 after the resize:\n%q", p.printed())
		}
	}

	// The agent is refused while the person is attached, and nothing it
	// sent reaches the terminal.
	r := agentCall(t, d, probe, "BashCommand", at(command("echo agent-while-person-$((2+3))")))
	t.Logf("the agent's command while the person is attached:\n%s", r.Text)
	if r.ErrorCode != "person_attached" || r.Status != "conflict" || !strings.Contains(r.Text, "A person is attached") || !strings.Contains(r.Text, "status_check") {
		t.Errorf("the agent's command during the attachment = %+v; want conflict/person_attached saying so, with a status_check next", r)
	}
	r = agentCall(t, d, probe, "BashCommand", at(map[string]any{"type": "send_text", "send_text": "echo typed-by-agent-$((3+4))", "submit": true}))
	if r.ErrorCode != "person_attached" {
		t.Errorf("the agent's send_text during the attachment = %+v; want person_attached", r)
	}
	p.run("echo still-mine-$((5+5))", "still-mine-10")
	for _, leaked := range []string{"agent-while-person-5", "typed-by-agent-7"} {
		if strings.Contains(p.printed(), leaked) {
			t.Errorf("the refused agent action ran: the person's terminal shows %q", leaked)
		}
	}

	// Ctrl-] then d: the client ends with exit 0 and the terminal as it was.
	p.typeKeys("\x1dd")
	select {
	case <-p.exited:
		if p.err != nil {
			t.Errorf("winx attach --interactive after Ctrl-] d: %v, want exit 0; it printed:\n%q", p.err, p.printed())
		}
	case <-time.After(attachWait):
		t.Fatalf("winx attach --interactive did not end after Ctrl-] d:\n%q", p.printed())
	}
	if after := p.modes(); after.Lflag != before.Lflag || after.Iflag != before.Iflag || after.Oflag != before.Oflag || after.Cflag != before.Cflag {
		t.Errorf("terminal modes after the detach = %+v, want them restored to %+v", after, before)
	}
	if !p.poll("winx: detached from ", attachWait) {
		t.Errorf("the client did not say it detached:\n%q", p.printed())
	}

	// The agent's next answer says a person typed and what ran; its
	// command runs as before, with nothing of the person's prompt or echo.
	r = agentCall(t, d, probe, "BashCommand", at(command("echo agent-again-$((6+6))")))
	if r.Status != "completed" || !strings.Contains(r.Text, "agent-again-12") {
		t.Fatalf("the agent's command after the detach = %+v", r)
	}
	t.Logf("the agent's answer after the detach:\n%s", r.Text)
	if !strings.Contains(r.Text, "a person attached") || !strings.Contains(r.Text, `echo from-person-$((40+2))`) || !strings.Contains(r.Text, "stty size") {
		t.Errorf("the agent's next answer does not say what the person ran:\n%s", r.Text)
	}
	if strings.Contains(r.Text, "hunter2") || !strings.Contains(r.Text, "echo still-mine-$((5+5))") {
		t.Errorf("the note records the secret typed to read -s, or misses a command line:\n%s", r.Text)
	}
	if strings.Contains(r.Text, personPrompt) || strings.Contains(r.Text, "echo agent-again") {
		t.Errorf("the agent's output carries the person's prompt or the echo of its own line:\n%s", r.Text)
	}
	if strings.Count(r.Text, "a person attached") != 1 {
		t.Errorf("the note is said %d times, want once:\n%s", strings.Count(r.Text, "a person attached"), r.Text)
	}
	r = agentCall(t, d, probe, "BashCommand", at(command("echo agent-last")))
	if strings.Contains(r.Text, "a person attached") {
		t.Errorf("the note is repeated in a later answer:\n%s", r.Text)
	}

	// A signal ends an attachment too: the terminal is restored and the
	// agent is let in again.
	p2 := startPerson(t, d, root)
	before = p2.modes()
	p2.waitFor(personPrompt)
	p2.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p2.exited:
	case <-time.After(attachWait):
		t.Fatalf("winx attach --interactive did not end on SIGTERM:\n%q", p2.printed())
	}
	if after := p2.modes(); after.Lflag != before.Lflag || after.Iflag != before.Iflag || after.Oflag != before.Oflag {
		t.Errorf("terminal modes after SIGTERM = %+v, want them restored to %+v", after, before)
	}
	if r := agentCall(t, d, probe, "BashCommand", at(command("echo agent-after-signal"))); r.Status != "completed" || !strings.Contains(r.Text, "agent-after-signal") {
		t.Errorf("the agent's command after the person's client was signalled = %+v", r)
	}

	// The key sequence is documented where a person looks.
	if help, err := d.winx("help", "attach"); err != nil || !strings.Contains(help, "Detach: Ctrl-] then d") {
		t.Errorf("winx help attach = %q, %v; want the detach sequence", help, err)
	}
}

// TestAttachInteractiveOtherUID: only the session's own user may attach.
// Another uid (nobody) holding the session's wire secret, with the socket
// directory and socket opened up so that it can connect at all, asks the
// guardian for a person attachment over the wire: the guardian refuses the
// connection (its peer's uid), and the agent's next command runs as if
// nothing happened. winx attach --interactive run as nobody fails too.
func TestAttachInteractiveOtherUID(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the attack as another, unprivileged uid")
	}
	// The socket directory is made where another uid can be let in (the
	// test's temporary directory is private to it).
	sock, err := os.MkdirTemp("/tmp", "wxa")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	d := newDaemonEnv(t, "WINX_SOCKET="+filepath.Join(sock, wire.DaemonSocketName))
	d.sock = sock
	a := d.adapter()
	root := canonDir(t, t.TempDir())
	s := a.mustInit(root)
	if r := a.bash(s, command("echo ready"), 10); exitCode(r) != 0 {
		t.Fatalf("first command = %+v", r)
	}
	secret, err := wire.LoadSecret(filepath.Join(d.state, "winx", wire.SecretFileName))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	live, _, err := (&daemon.Fleet{Dir: d.sock, Hello: wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(secret)}).Discover(ctx)
	if err != nil || len(live) != 1 {
		t.Fatalf("guardians = %v, %v; want one", live, err)
	}
	// Open the way to the socket: only the kernel's peer check is left.
	if err := os.Chmod(d.sock, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(live[0].Socket, 0o666); err != nil {
		t.Fatal(err)
	}

	// The attack, from a process of uid nobody: dial, hello with the
	// secret, person.attach.
	dir := newProcDir(t, nobody)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	attacker := filepath.Join(dir, "attacker.test")
	copyExecutable(t, self, attacker)
	cmd := exec.Command(attacker, "-test.run=^TestAttachAttacker$", "-test.v")
	cmd.Env = []string{"WINX_TEST_ATTACKER_SOCKET=" + live[0].Socket, "WINX_TEST_ATTACKER_SECRET=" + secret, "HOME=" + filepath.Join(dir, "home"), "TMPDIR=" + filepath.Join(dir, "home")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("the attack as uid %d: %v\n%s", nobody, err, out)
	}
	t.Logf("the attack as uid %d (%v):\n%s", nobody, time.Since(start), out)

	// winx attach --interactive as nobody, on a terminal.
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	cli := exec.Command(filepath.Join(dir, "winx"), "attach", "--interactive", root)
	cli.Env = append(d.env, "HOME="+filepath.Join(dir, "home"))
	cli.Stdin, cli.Stdout, cli.Stderr = slave, slave, slave
	cli.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if err := cli.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	done := make(chan error, 1)
	go func() { done <- cli.Wait() }()
	said := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(master) // EIO once the client is gone
		said <- b
	}()
	start = time.Now()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("winx attach --interactive as uid %d exited 0, want a refusal", nobody)
		}
		t.Logf("winx attach --interactive as uid %d (%v): %v: %q", nobody, time.Since(start), err, <-said)
	case <-time.After(attachWait):
		cli.Process.Kill()
		<-done
		t.Errorf("winx attach --interactive as uid %d did not end", nobody)
	}

	// Nobody is attached: the agent's command runs.
	if r := a.bash(s, command("echo after-the-attack"), 10); r.Status != "completed" || !strings.Contains(r.Output, "after-the-attack") || strings.Contains(r.Output, "a person attached") {
		t.Errorf("the agent's command after the attacks = %+v; want it run, with no person note", r)
	}
}

// TestAttachAttacker is the attack of TestAttachInteractiveOtherUID, run
// by that test as another uid; it does nothing in a normal test run. It
// speaks the wire by hand (the winx client would refuse a server of
// another uid before the guardian could): it passes when the guardian
// attaches no person.
func TestAttachAttacker(t *testing.T) {
	socket := os.Getenv("WINX_TEST_ATTACKER_SOCKET")
	if socket == "" {
		t.Skip("run by TestAttachInteractiveOtherUID")
	}
	c, err := net.DialTimeout("unix", socket, 5*time.Second)
	if err != nil {
		t.Fatalf("cannot even connect (the test opened the socket for this uid): %v", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	send := func(id int, method string, params any) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(b)))
		c.Write(append(n[:], b...))
	}
	read := func() (string, error) {
		var n [4]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return "", err
		}
		b := make([]byte, min(binary.BigEndian.Uint32(n[:]), 1<<20))
		_, err := io.ReadFull(c, b)
		return string(b), err
	}
	hello := wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(os.Getenv("WINX_TEST_ATTACKER_SECRET"))
	send(1, wire.MethodHello, hello)
	send(2, "person.attach", map[string]any{"rows": 24, "cols": 80})
	for {
		frame, err := read()
		if err != nil {
			t.Logf("the guardian closed the connection: %v", err)
			return
		}
		if strings.Contains(frame, `"id":2`) && !strings.Contains(frame, `"error"`) {
			t.Fatalf("the guardian attached a person of uid %d: %s", os.Getuid(), frame)
		}
		t.Logf("the guardian said: %s", frame)
	}
}
