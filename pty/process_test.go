//go:build linux || darwin

package pty

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// testTimeout bounds every wait for the shell. Nothing sleeps for it: each
// wait ends as soon as its condition holds.
const testTimeout = 15 * time.Second

// pollInterval is how often a condition that has no event to wait on
// (the terminal's foreground group, a process's existence) is checked.
const pollInterval = 5 * time.Millisecond

// term is a process on a real PTY with a goroutine copying its output.
type term struct {
	t *testing.T
	p *Process

	mu      sync.Mutex
	out     bytes.Buffer // everything read so far; guarded by mu
	seen    int          // out[:seen] has been consumed by expect; guarded by mu
	readErr error        // the error that ended the reader; guarded by mu

	changed chan struct{} // gets a token after each read (capacity 1)
	ended   chan struct{} // closed when the reader returns
}

// shellEnv is a small, predictable environment for bash.
func shellEnv(t *testing.T) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"TERM=dumb",
		"LANG=C",
		"PS1=$ ",
		"HISTFILE=",
	}
}

func bashPath(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("these tests need bash on PATH: %v", err)
	}
	return path
}

// startTerm starts bash with args on a PTY of the given size (the default
// size when size is zero) and closes it when the test ends.
func startTerm(t *testing.T, size Size, args ...string) *term {
	t.Helper()
	cmd := exec.Command(bashPath(t), args...)
	cmd.Env = shellEnv(t)
	var (
		p   *Process
		err error
	)
	if size == (Size{}) {
		p, err = Start(cmd)
	} else {
		p, err = StartWithSize(cmd, size)
	}
	if err != nil {
		t.Fatalf("Start(bash %q) = %v", args, err)
	}
	tm := &term{t: t, p: p, changed: make(chan struct{}, 1), ended: make(chan struct{})}
	go tm.read()
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
		select {
		case <-tm.ended:
		case <-time.After(testTimeout):
			t.Errorf("reader still blocked %v after Close", testTimeout)
		}
	})
	return tm
}

// startInteractive starts an interactive bash and waits for it to run a
// command, so that readline and job control are set up.
func startInteractive(t *testing.T) *term {
	t.Helper()
	tm := startTerm(t, Size{}, "--norc", "--noprofile", "-i")
	tm.run("echo ready-$((40+2))", "ready-42")
	return tm
}

func (tm *term) read() {
	defer close(tm.ended)
	buf := make([]byte, 4096)
	for {
		n, err := tm.p.File().Read(buf)
		tm.mu.Lock()
		tm.out.Write(buf[:n])
		if err != nil {
			tm.readErr = err
		}
		tm.mu.Unlock()
		select {
		case tm.changed <- struct{}{}:
		default:
		}
		if err != nil {
			return
		}
	}
}

// write sends s to the terminal as if typed.
func (tm *term) write(s string) {
	tm.t.Helper()
	if _, err := tm.p.File().Write([]byte(s)); err != nil {
		tm.t.Fatalf("writing %q to the master: %v", s, err)
	}
}

// run types line and waits for want, which should be something only the
// command's output contains, not the echoed input line.
func (tm *term) run(line, want string) string {
	tm.t.Helper()
	tm.write(line + "\n")
	return tm.expect(want)
}

// expect waits until the output not yet consumed contains want, consumes it
// through want and returns it.
func (tm *term) expect(want string) string {
	tm.t.Helper()
	deadline := time.After(testTimeout)
	for {
		tm.mu.Lock()
		rest := tm.out.String()[tm.seen:]
		i := strings.Index(rest, want)
		if i >= 0 {
			tm.seen += i + len(want)
		}
		readErr := tm.readErr
		tm.mu.Unlock()
		if i >= 0 {
			return rest[:i+len(want)]
		}
		if readErr != nil {
			tm.t.Fatalf("output ended (%v) without %q; unconsumed output:\n%q", readErr, want, rest)
		}
		select {
		case <-tm.changed:
		case <-deadline:
			tm.t.Fatalf("no %q after %v; unconsumed output:\n%q", want, testTimeout, rest)
		}
	}
}

// all waits for the end of output and returns everything read and the error
// that ended it.
func (tm *term) all() (string, error) {
	tm.t.Helper()
	select {
	case <-tm.ended:
	case <-time.After(testTimeout):
		tm.t.Fatalf("output did not end within %v", testTimeout)
	}
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.String(), tm.readErr
}

// wait waits for the child to be reaped.
func (tm *term) wait() ExitStatus {
	tm.t.Helper()
	select {
	case <-tm.p.Done():
	case <-time.After(testTimeout):
		tm.t.Fatalf("process %d not reaped within %v", tm.p.Pid(), testTimeout)
	}
	st, err := tm.p.Wait()
	if err != nil {
		tm.t.Fatalf("Wait() error = %v", err)
	}
	return st
}

// eventually polls cond until it holds or the test times out.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, testTimeout)
		}
		time.Sleep(pollInterval)
	}
}

func (tm *term) foreground() int {
	tm.t.Helper()
	pgrp, err := tm.p.ForegroundPgrp()
	if err != nil {
		tm.t.Fatalf("ForegroundPgrp() = %v", err)
	}
	return pgrp
}

func TestEchoRoundTrip(t *testing.T) {
	tm := startInteractive(t)
	// The arithmetic makes the output differ from the echoed input.
	tm.run("echo round-$((20+3))-trip", "round-23-trip")
	tm.run("printf '%s\\n' \"$((6*7))\"; echo end-$((1+1))", "42\r\nend-2")
}

func TestTTYIsAPseudoTerminal(t *testing.T) {
	tm := startTerm(t, Size{}, "-c", "tty")
	out, err := tm.all()
	if !IsEndOfOutput(err) {
		t.Errorf("reading after exit ended with %v, want end of output (EOF or EIO)", err)
	}
	if st := tm.wait(); st != (ExitStatus{Code: 0}) {
		t.Errorf("tty exit = %v, want exit status 0", st)
	}
	// /dev/pts/N on Linux, /dev/ttysNNN on macOS.
	if !regexp.MustCompile(`^/dev/(pts/\d+|ttys\d+)\r\n$`).MatchString(out) {
		t.Errorf("tty printed %q, want a pseudo-terminal device path", out)
	}
}

func TestSize(t *testing.T) {
	tm := startInteractive(t)
	// stty prints "rows cols"; the echoed input contains neither number pair.
	tm.run("stty size", "\r\n50 200\r\n")

	if err := tm.p.Resize(Size{Rows: 30, Cols: 100}); err != nil {
		t.Fatalf("Resize(30x100) = %v", err)
	}
	tm.run("stty size", "\r\n30 100\r\n")
	// The shell was told about the change.
	tm.run("echo cols=$COLUMNS", "cols=100")

	for _, bad := range []Size{{}, {Rows: 0, Cols: 80}, {Rows: 24, Cols: 0}} {
		if err := tm.p.Resize(bad); !errors.Is(err, ErrInvalidSize) {
			t.Errorf("Resize(%+v) = %v, want ErrInvalidSize", bad, err)
		}
	}
}

func TestStartWithSize(t *testing.T) {
	tm := startTerm(t, Size{Rows: 24, Cols: 80}, "-c", "stty size")
	out, _ := tm.all()
	if out != "24 80\r\n" {
		t.Errorf("stty size printed %q, want %q", out, "24 80\r\n")
	}
	if _, err := StartWithSize(exec.Command(bashPath(t), "-c", "true"), Size{Rows: 24}); !errors.Is(err, ErrInvalidSize) {
		t.Errorf("StartWithSize(24x0) = %v, want ErrInvalidSize", err)
	}
}

func TestStartRejectsConflictingCmd(t *testing.T) {
	tests := []struct {
		name string
		cmd  func() *exec.Cmd
	}{
		{"stdin set", func() *exec.Cmd {
			c := exec.Command(bashPath(t), "-c", "true")
			c.Stdin = strings.NewReader("")
			return c
		}},
		{"setpgid", func() *exec.Cmd {
			c := exec.Command(bashPath(t), "-c", "true")
			c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			return c
		}},
		{"noctty", func() *exec.Cmd {
			c := exec.Command(bashPath(t), "-c", "true")
			c.SysProcAttr = &syscall.SysProcAttr{Noctty: true}
			return c
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Start(tt.cmd())
			if !errors.Is(err, ErrInvalidCmd) {
				if p != nil {
					p.Close()
				}
				t.Errorf("Start() = %v, want ErrInvalidCmd", err)
			}
		})
	}
}

func TestStartMissingProgram(t *testing.T) {
	p, err := Start(exec.Command(t.TempDir() + "/no-such-program"))
	if err == nil {
		p.Close()
		t.Fatal("Start(missing program) succeeded")
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Start(missing program) = %v, want an error wrapping os.ErrNotExist", err)
	}
}

func TestExitCode(t *testing.T) {
	tm := startTerm(t, Size{}, "-c", "exit 3")
	st := tm.wait()
	if want := (ExitStatus{Code: 3}); st != want {
		t.Errorf("Wait() = %+v, want %+v", st, want)
	}
	if got, want := st.String(), "exit status 3"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if _, err := tm.all(); !IsEndOfOutput(err) {
		t.Errorf("reading after exit ended with %v, want end of output", err)
	}
}

func TestKilledBySignal(t *testing.T) {
	tm := startTerm(t, Size{}, "-c", "kill -TERM $$")
	st := tm.wait()
	if want := (ExitStatus{Code: -1, Signaled: true, Signal: syscall.SIGTERM}); st != want {
		t.Errorf("Wait() = %+v, want %+v", st, want)
	}
	if got, want := st.String(), "signal: terminated"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestSignalReachesTheGroup(t *testing.T) {
	tm := startTerm(t, Size{}, "-c", `trap 'echo got-usr1; exit 7' USR1; echo armed; sleep 1000 & wait`)
	tm.expect("armed")
	if err := tm.p.Signal(syscall.SIGUSR1); err != nil {
		t.Fatalf("Signal(SIGUSR1) = %v", err)
	}
	tm.expect("got-usr1")
	if st := tm.wait(); st != (ExitStatus{Code: 7}) {
		t.Errorf("Wait() = %v, want exit status 7", st)
	}
}

// procStart returns a token that changes if pid is reused (its start time,
// where procfs has it) and its process group, or ok false if there is no
// such process or only its zombie is left.
func procStart(pid int) (start string, pgrp int, ok bool) {
	pgrp, err := syscall.Getpgid(pid)
	if err != nil {
		return "", 0, false
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, os.ErrNotExist) && procfs() {
		return "", 0, false
	}
	if err != nil {
		return "", pgrp, true // No procfs (macOS): it exists, as far as we can tell.
	}
	// After the parenthesised command: state ppid pgrp ... starttime (field 22).
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return "", 0, false
	}
	return f[19], pgrp, true
}

// command returns the name of the program process pid runs, or "" if it
// cannot be told.
func command(pid int) string {
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil {
		return strings.TrimSpace(string(data))
	}
	if procfs() {
		return ""
	}
	out, err := exec.Command("ps", "-o", "comm=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		return ""
	}
	return path.Base(strings.TrimSpace(string(out)))
}

func procfs() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}

// startedGrandchild reads "pid=N" from the terminal and checks that N is a
// live member of the shell's process group.
func startedGrandchild(t *testing.T, tm *term) (pid int, start string) {
	t.Helper()
	line := tm.expect("\n")
	m := regexp.MustCompile(`pid=(\d+)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no pid=N in %q", line)
	}
	pid, _ = strconv.Atoi(m[1])
	start, pgrp, ok := procStart(pid)
	if !ok {
		t.Fatalf("grandchild %d is not running", pid)
	}
	if pgrp != tm.p.Pid() {
		t.Fatalf("grandchild %d is in process group %d, want the shell's group %d", pid, pgrp, tm.p.Pid())
	}
	return pid, start
}

func waitGone(t *testing.T, pid int, start string) {
	t.Helper()
	eventually(t, fmt.Sprintf("grandchild %d gone", pid), func() bool {
		s, _, ok := procStart(pid)
		return !ok || s != start
	})
}

func TestKillKillsTheGroup(t *testing.T) {
	// A non-interactive shell has no job control: the background sleep stays
	// in the shell's process group.
	// SIGHUP is ignored so that only Kill can end the sleep.
	tm := startTerm(t, Size{}, "-c", `trap '' HUP; sleep 1000 & echo pid=$!; wait`)
	pid, start := startedGrandchild(t, tm)

	if err := tm.p.Kill(); err != nil {
		t.Fatalf("Kill() = %v", err)
	}
	st := tm.wait()
	if want := (ExitStatus{Code: -1, Signaled: true, Signal: syscall.SIGKILL}); st != want {
		t.Errorf("Wait() = %+v, want %+v", st, want)
	}
	waitGone(t, pid, start)
	// Everything that held the slave is gone: the output ends.
	if _, err := tm.all(); !IsEndOfOutput(err) {
		t.Errorf("reading after Kill ended with %v, want end of output", err)
	}
	for i := range 3 {
		if err := tm.p.Kill(); err != nil {
			t.Errorf("Kill() #%d after the group died = %v, want nil", i+2, err)
		}
	}
}

func TestSignalAfterTheGroupIsGone(t *testing.T) {
	tm := startTerm(t, Size{}, "-c", "exit 0")
	tm.wait()
	// The leader was the only member and it has been reaped: the group id
	// is free, and must never be signalled again.
	for range 2 {
		if err := tm.p.Signal(syscall.SIGTERM); !errors.Is(err, os.ErrProcessDone) {
			t.Errorf("Signal(SIGTERM) after the group is gone = %v, want os.ErrProcessDone", err)
		}
	}
	if err := tm.p.Kill(); err != nil {
		t.Errorf("Kill() after the group is gone = %v, want nil", err)
	}
}

func TestCloseKillsLeftoversAfterTheShellExits(t *testing.T) {
	// The shell exits at once. Its background child ignores the SIGHUP that
	// the kernel sends when the session leader exits, stays in the group and
	// keeps the slave open, so the output does not end until Close kills it.
	tm := startTerm(t, Size{}, "-c", `trap '' HUP; sleep 1000 & echo pid=$!`)
	pid, start := startedGrandchild(t, tm)
	if st := tm.wait(); st != (ExitStatus{}) {
		t.Errorf("Wait() = %v, want exit status 0", st)
	}
	if s, _, ok := procStart(pid); !ok || s != start {
		t.Fatalf("grandchild %d ended with the shell; the test needs it to outlive the shell", pid)
	}
	if err := tm.p.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	waitGone(t, pid, start)
	if _, err := tm.all(); !IsEndOfOutput(err) && !errors.Is(err, os.ErrClosed) {
		t.Errorf("reader ended with %v, want end of output or os.ErrClosed", err)
	}
}

func TestCtrlCInterruptsForegroundJob(t *testing.T) {
	tm := startInteractive(t)
	shell := tm.p.Pid()
	if got := tm.foreground(); got != shell {
		t.Fatalf("ForegroundPgrp() at the prompt = %d, want the shell's group %d", got, shell)
	}

	tm.write("sleep 100\n")
	// Job control gives the job its own group and the terminal. The group
	// has the terminal a moment before its process has exec'd sleep; a
	// SIGINT in that window goes to bash's own handler in the child and is
	// lost. So wait for sleep itself.
	eventually(t, "sleep becomes the foreground job", func() bool {
		pgrp := tm.foreground()
		return pgrp != shell && command(pgrp) == "sleep"
	})

	tm.write("\x03")
	eventually(t, "the shell gets the terminal back", func() bool { return tm.foreground() == shell })
	tm.run("echo status=$?", "status=130")

	select {
	case <-tm.p.Done():
		t.Fatal("Ctrl-C ended the interactive shell")
	default:
	}
}

func TestWaitIsIdempotentAndConcurrent(t *testing.T) {
	tm := startTerm(t, Size{}, "-c", "exit 5")
	const waiters = 8
	results := make(chan ExitStatus, waiters)
	errs := make(chan error, waiters)
	for range waiters {
		go func() {
			st, err := tm.p.Wait()
			results <- st
			errs <- err
		}()
	}
	want := ExitStatus{Code: 5}
	for range waiters {
		select {
		case st := <-results:
			if err := <-errs; err != nil || st != want {
				t.Errorf("concurrent Wait() = %+v, %v; want %+v, nil", st, err, want)
			}
		case <-time.After(testTimeout):
			t.Fatalf("Wait() did not return within %v", testTimeout)
		}
	}
	for range 2 {
		if st, err := tm.p.Wait(); err != nil || st != want {
			t.Errorf("later Wait() = %+v, %v; want %+v, nil", st, err, want)
		}
	}
}

func TestCloseIsIdempotent(t *testing.T) {
	tm := startInteractive(t)
	for i := range 3 {
		if err := tm.p.Close(); err != nil {
			t.Errorf("Close() #%d = %v", i+1, err)
		}
	}
	select {
	case <-tm.p.Done():
	default:
		t.Error("Done() not closed after Close")
	}
	// Close interrupted the reader or the reader saw the end of output.
	if _, err := tm.all(); !IsEndOfOutput(err) && !errors.Is(err, os.ErrClosed) {
		t.Errorf("reader ended with %v, want end of output or os.ErrClosed", err)
	}
	if st, err := tm.p.Wait(); err != nil || st.Signal != syscall.SIGKILL {
		t.Errorf("Wait() after Close = %+v, %v; want killed by SIGKILL", st, err)
	}
	if _, err := tm.p.File().Write([]byte("x")); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Write after Close = %v, want os.ErrClosed", err)
	}
	if err := tm.p.Resize(Size{Rows: 10, Cols: 10}); err == nil {
		t.Error("Resize after Close succeeded")
	}
	if err := tm.p.Kill(); err != nil {
		t.Errorf("Kill() after Close = %v, want nil", err)
	}
}

func TestReadDeadline(t *testing.T) {
	// The master is managed by the runtime poller, so deadlines work and a
	// Read can be interrupted.
	cmd := exec.Command(bashPath(t), "--norc", "--noprofile")
	cmd.Env = shellEnv(t)
	p, err := Start(cmd)
	if err != nil {
		t.Fatalf("Start() = %v", err)
	}
	defer p.Close()
	if err := p.File().SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatalf("SetReadDeadline() = %v, want nil (master not pollable)", err)
	}
	buf := make([]byte, 1024)
	for {
		// bash with no prompt prints nothing until it gets input.
		_, err := p.File().Read(buf)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatalf("Read() = %v, want os.ErrDeadlineExceeded", err)
		}
	}

	if err := p.File().SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	readDone := make(chan error, 1)
	go func() {
		for {
			if _, err := p.File().Read(buf); err != nil {
				readDone <- err
				return
			}
		}
	}()
	if err := p.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	select {
	case err := <-readDone:
		if !IsEndOfOutput(err) && !errors.Is(err, os.ErrClosed) {
			t.Errorf("pending Read ended with %v, want end of output or os.ErrClosed", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("Close did not end a pending Read")
	}
}
