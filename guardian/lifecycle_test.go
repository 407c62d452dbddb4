package guardian

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"winx/pty/testenv"
)

// newTestSession starts a real bash whose HOME is a temp dir, so the user's
// own rc files never influence the test (a test may write its own).
func newTestSession(t testing.TB, home string) *Shell {
	t.Helper()
	if home == "" {
		home = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := NewShell(ctx, Options{
		Dir:         t.TempDir(),
		PrivateRoot: t.TempDir(),
		Env:         []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"},
		Shape:       ShapeOptions{ScratchDir: filepath.Join(t.TempDir(), "scratch")},
	})
	if err != nil {
		t.Fatalf("NewShell: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func run(t testing.TB, s *Shell, cmd string, wait time.Duration) *Outcome {
	t.Helper()
	o, err := s.Run(context.Background(), cmd, wait)
	if err != nil {
		t.Fatalf("Run(%q): %v", cmd, err)
	}
	return o
}

func TestRunExitCodesAndOutput(t *testing.T) {
	s := newTestSession(t, "")
	tests := []struct {
		cmd      string
		wantOut  string
		wantCode int
	}{
		{"echo hi", "hi", 0},
		{"false", "", 1},
		{"(exit 3)", "", 3},
		{"printf 'a\\nb\\n'", "a\nb", 0},
		// Tabs come back as tabs, not as the spaces a terminal shows.
		{"echo 'single '\"'\"' quote' && echo $'tab\\there'", "single ' quote\ntab\there", 0},
		{"for i in 1 2 3; do\n  echo line$i\ndone", "line1\nline2\nline3", 0},
	}
	for _, tc := range tests {
		o := run(t, s, tc.cmd, 10*time.Second)
		if o.Running {
			t.Fatalf("Run(%q) still running", tc.cmd)
		}
		if o.ExitCode != tc.wantCode || o.Output.Text != tc.wantOut {
			t.Errorf("Run(%q) = code %d output %q, want %d %q", tc.cmd, o.ExitCode, o.Output.Text, tc.wantCode, tc.wantOut)
		}
	}
}

func TestStatePersistsAcrossCommands(t *testing.T) {
	s := newTestSession(t, "")
	dir := t.TempDir()
	o := run(t, s, "cd "+dir+" && export X=1", 10*time.Second)
	if o.Cwd != dir {
		t.Errorf("cwd after cd = %q, want %q", o.Cwd, dir)
	}
	o = run(t, s, "pwd; echo $X", 10*time.Second)
	if o.Output.Text != dir+"\n1" {
		t.Errorf("pwd; echo $X = %q, want %q", o.Output.Text, dir+"\n1")
	}
}

func TestRunningCommandInterruptAndRefusal(t *testing.T) {
	s := newTestSession(t, "")
	marker := filepath.Join(t.TempDir(), "ran")
	o := run(t, s, "sleep 30", time.Second)
	if !o.Running {
		t.Fatalf("sleep 30 finished: %+v", o)
	}
	if _, err := s.Run(context.Background(), "touch "+marker, time.Second); !errors.Is(err, ErrCommandRunning) {
		t.Fatalf("second Run = %v, want ErrCommandRunning", err)
	}
	o, err := s.SendKeys(context.Background(), []Key{"Ctrl-c"}, 5*time.Second)
	if err != nil || o.Running {
		t.Fatalf("Ctrl-c = %+v, %v; want the command ended", o, err)
	}
	o = run(t, s, "echo after", 10*time.Second)
	if o.Output.Text != "after" {
		t.Errorf("after interrupt, echo = %q", o.Output.Text)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the refused command ran later")
	}
}

func TestInputToRunningCommand(t *testing.T) {
	s := newTestSession(t, "")
	o := run(t, s, "read x; echo got:$x", 500*time.Millisecond)
	if !o.Running {
		t.Fatalf("read finished early: %+v", o)
	}
	o, err := s.SendText(context.Background(), "hello", true, 5*time.Second)
	if err != nil || o.Running || !strings.Contains(o.Output.Text, "got:hello") {
		t.Fatalf("send_text = %+v, %v; want got:hello", o, err)
	}
	o = run(t, s, "cat", 300*time.Millisecond)
	if !o.Running {
		t.Fatalf("cat finished early")
	}
	o, err = s.SendKeys(context.Background(), []Key{"Ctrl-d"}, 5*time.Second)
	if err != nil || o.Running {
		t.Fatalf("Ctrl-d = %+v, %v; want cat ended", o, err)
	}
}

func TestBackgroundCommand(t *testing.T) {
	s := newTestSession(t, "")
	start := time.Now()
	id, err := s.StartBackground(context.Background(), "sleep 2; echo done")
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > time.Second {
		t.Errorf("StartBackground took %v", time.Since(start))
	}
	if o := run(t, s, "echo main", 5*time.Second); o.Output.Text != "main" {
		t.Errorf("main shell while background runs = %q", o.Output.Text)
	}
	o, err := s.PollBackground(context.Background(), id, 10*time.Second)
	if err != nil || o.Running || o.Output.Text != "done" || o.ExitCode != 0 {
		t.Fatalf("PollBackground = %+v, %v; want done", o, err)
	}
	if _, err := s.PollBackground(context.Background(), "bg-99", 0); !errors.Is(err, ErrUnknownBg) {
		t.Errorf("PollBackground(bg-99) = %v, want ErrUnknownBg", err)
	}
}

func TestForgedMarkerDoesNotEndCommand(t *testing.T) {
	s := newTestSession(t, "")
	o := run(t, s, `printf '\033]6973;W;deadbeef;0;/\007'; sleep 1; echo real-end`, 10*time.Second)
	if want := `[winx: ignored a completion marker (exit 0, cwd "/") the shell did not print]` + "\nreal-end"; o.Running || o.Output.Text != want {
		t.Errorf("forged marker: %+v, want the note and real-end after the sleep", o)
	}
}

func TestShellChangesDoNotBreakCompletion(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte("echo hello from bashrc\nPS1='custom> '\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newTestSession(t, home)
	for _, cmd := range []string{"PS1='x$ '", "PROMPT_COMMAND='echo hijack'", "unset PROMPT_COMMAND", "__winx_hook() { :; }",
		"__winx_s() { :; }", "unset -f __winx_s", "alias printf=false", "alias __winx_s=:"} {
		o := run(t, s, cmd, 10*time.Second)
		if o.Running {
			t.Fatalf("%q: completion lost", cmd)
		}
	}
	if o := run(t, s, "echo still", 10*time.Second); o.Running || o.Output.Text != "still" {
		t.Errorf("after changes, echo = %+v", o)
	}
	// The start marker's function is read-only: it still prints the marker.
	if o := run(t, s, "declare -f __winx_s | grep -c 6973", 10*time.Second); o.Output.Text != "1" {
		t.Errorf("the start marker's function was replaced: %+v", o)
	}
	// set -e makes an interactive bash exit on failure: the command ends
	// with its code and the next command gets a fresh shell at the same cwd.
	run(t, s, "cd /tmp", 10*time.Second)
	o := run(t, s, "set -e; false", 10*time.Second)
	if o.Running || o.ExitCode != 1 {
		t.Errorf("set -e; false = %+v, want exit 1", o)
	}
	if o := run(t, s, "pwd", 10*time.Second); o.Output.Text != "/tmp" {
		t.Errorf("after the shell exited, pwd = %q, want /tmp", o.Output.Text)
	}
}

func TestInvalidInput(t *testing.T) {
	s := newTestSession(t, "")
	ctx := context.Background()
	if _, err := s.Run(ctx, "echo a\x00b", time.Second); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("NUL command = %v", err)
	}
	if _, err := s.Run(ctx, strings.Repeat("x", 10<<20), time.Second); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("10 MB command = %v", err)
	}
	if _, err := s.SendText(ctx, "", false, time.Second); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("empty send_text = %v", err)
	}
	if _, err := s.SendKeys(ctx, []Key{"Ctrl-q"}, time.Second); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("unknown key = %v", err)
	}
	if _, err := s.SendBytes(ctx, []byte{'a', 0}, time.Second); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("NUL in send_ascii = %v", err)
	}
	if _, err := s.SendText(ctx, "exit", true, time.Second); !errors.Is(err, ErrNotRunning) {
		t.Errorf("send_text to an idle shell = %v, want ErrNotRunning", err)
	}
	long := "echo " + strings.Repeat("y", 5000) + " | wc -c"
	if o := run(t, s, long, 10*time.Second); o.Output.Text != "5001" {
		t.Errorf("long command output = %q, want 5001", o.Output.Text)
	}
}

func TestRenderedOutput(t *testing.T) {
	s := newTestSession(t, "")
	tests := []struct{ cmd, want string }{
		{`printf '\033[2J\033[Hx\rY\n'`, "Y"},
		{`for i in 10 50 100; do printf '\r%s%%' $i; done; echo`, "100%"},
		{`printf '\033[31mred\033[0m plain\n'`, "red plain"},
		{`printf '\033[?1049hFULLSCREEN\033[?1049l'; echo back`, "back"},
	}
	for _, tc := range tests {
		if o := run(t, s, tc.cmd, 10*time.Second); o.Output.Text != tc.want {
			t.Errorf("Run(%q) = %q, want %q", tc.cmd, o.Output.Text, tc.want)
		}
	}
}

func TestLargeOutputIsBoundedAndCollapsed(t *testing.T) {
	s := newTestSession(t, "")
	o := run(t, s, "seq 1 2000000", 60*time.Second)
	if o.Running {
		t.Fatal("seq did not finish")
	}
	if len(o.Output.Text) > DefaultOutputBudget+512 {
		t.Errorf("output is %d bytes, want at most the budget", len(o.Output.Text))
	}
	if !strings.HasSuffix(o.Output.Text, "2000000") || o.Output.DroppedFile == "" {
		t.Fatalf("seq output tail %q, dropped file %q", o.Output.Text[max(0, len(o.Output.Text)-20):], o.Output.DroppedFile)
	}
	head, err := os.ReadFile(o.Output.DroppedFile)
	if err != nil || !strings.HasPrefix(string(head), "1\n2\n3\n") {
		t.Errorf("dropped head file starts %q (%v)", string(head[:min(20, len(head))]), err)
	}
	o = run(t, s, "yes same | head -n 500", 10*time.Second)
	if !strings.Contains(o.Output.Text, "[winx: x500]") {
		t.Errorf("500 identical lines = %q, want a collapsed line", o.Output.Text)
	}
}

func TestRepeatedScreenAndWaitForTurn(t *testing.T) {
	s := newTestSession(t, "")
	run(t, s, `printf 'top\n'; printf '\033[?1049h\033[Hmenu item\033[5;1Hstatus'; sleep 30`, 500*time.Millisecond)
	quiet, err := s.WaitForTurn(context.Background(), 200*time.Millisecond, 5*time.Second)
	if err != nil || !quiet {
		t.Fatalf("WaitForTurn = %v, %v", quiet, err)
	}
	snap := s.Screen(t.Context(), 0, false)
	if !snap.AltScreen || snap.Rows[0] != "menu item" || snap.Rows[4] != "status" {
		t.Errorf("screen = alt %v rows %q", snap.AltScreen, snap.Rows[:5])
	}
	if _, err := s.SendKeys(context.Background(), []Key{"Ctrl-c"}, 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestCloseKillsBackgroundJobs checks that jobs the shell put in process
// groups of their own (job control) die with the session.
func TestCloseKillsBackgroundJobs(t *testing.T) {
	s := newTestSession(t, "")
	o := run(t, s, "sleep 1000 & echo $!", 10*time.Second)
	// Interactive bash announces the job ("[1] PID") before the echo.
	lines := strings.Split(strings.TrimSpace(o.Output.Text), "\n")
	pid, err := strconv.Atoi(lines[len(lines)-1])
	if err != nil {
		t.Fatalf("background pid %q: %v", o.Output.Text, err)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("background job %d not running: %v", pid, err)
	}
	s.Close()
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("background job %d survived Close", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestInterruptResetsAStuckShell: a command that ignores Ctrl-C leaves the
// shell unable to come back, so the session replaces it at the same cwd.
func TestInterruptResetsAStuckShell(t *testing.T) {
	s := newTestSession(t, "")
	dir := t.TempDir()
	run(t, s, "cd "+dir, 10*time.Second)
	oldPID := s.PID(t.Context())
	o := run(t, s, "trap '' INT; sleep 60", 300*time.Millisecond)
	if !o.Running {
		t.Fatalf("stuck command finished: %+v", o)
	}
	o, err := s.SendKeys(context.Background(), []Key{"Ctrl-c"}, time.Second)
	if err != nil || o.Running || !o.ShellReset {
		t.Fatalf("Ctrl-c on a stuck shell = %+v, %v; want a reset", o, err)
	}
	if s.PID(t.Context()) == oldPID {
		t.Errorf("shell PID unchanged after reset")
	}
	if o := run(t, s, "pwd", 10*time.Second); o.Output.Text != dir {
		t.Errorf("after reset, pwd = %q, want %q", o.Output.Text, dir)
	}
}

// TestCtrlZSuspends: Ctrl-z stops the foreground job and gives the shell back.
func TestCtrlZSuspends(t *testing.T) {
	s := newTestSession(t, "")
	run(t, s, "sleep 60", 300*time.Millisecond)
	o, err := s.SendKeys(context.Background(), []Key{"Ctrl-z"}, 5*time.Second)
	if err != nil || o.Running {
		t.Fatalf("Ctrl-z = %+v, %v; want the shell back", o, err)
	}
	if o := run(t, s, "jobs", 10*time.Second); !strings.Contains(o.Output.Text, "Stopped") {
		t.Errorf("jobs = %q, want a stopped job", o.Output.Text)
	}
}

// TestZshSession runs the same completion contract on zsh (WINX_SHELL=zsh).
func TestZshSession(t *testing.T) {
	if _, err := exec.LookPath("zsh"); err != nil {
		testenv.Missing(t, "zsh is not installed (.ci/run installs it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := NewShell(ctx, Options{Shell: ShellZsh, Dir: t.TempDir(), PrivateRoot: t.TempDir(),
		Env: []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"}})
	if err != nil {
		t.Fatalf("NewShell(zsh): %v", err)
	}
	defer s.Close()
	dir := t.TempDir()
	for _, tc := range []struct {
		cmd  string
		out  string
		code int
	}{
		{"echo hi", "hi", 0},
		{"cd " + dir + " && X=7", "", 0},
		{"pwd; echo $X", dir + "\n7", 0},
		{"printf 'no newline'", "no newline", 0},
		{"(exit 4)", "", 4},
	} {
		o := run(t, s, tc.cmd, 10*time.Second)
		if o.Running || o.ExitCode != tc.code || o.Output.Text != tc.out {
			t.Errorf("zsh %q = %+v, want code %d output %q", tc.cmd, o, tc.code, tc.out)
		}
	}
}

// TestFullScreenAwaitsKeys: a program quiet on the alternate screen waits
// for keys (awaiting input) even when it is not in read(2); an alternate
// screen a dead program left on does not make the next silent command
// look like one.
func TestFullScreenAwaitsKeys(t *testing.T) {
	s := newTestSession(t, "")
	o, err := s.Run(t.Context(), `printf '\033[?1049hfull\n'; sleep 30`, 20*time.Second)
	if err != nil || !o.Running || !o.AwaitingInput {
		t.Fatalf("quiet on the alternate screen: %+v, %v; want running and awaiting input before the wait ends", o, err)
	}
	if o, err = s.Interrupt(t.Context(), 5*time.Second); err != nil || o.Running {
		t.Fatalf("interrupt: %+v, %v", o, err)
	}
	o = run(t, s, `sleep 1; echo done`, 20*time.Second)
	if o.Running || o.AwaitingInput || !strings.Contains(o.Output.Text, "done") {
		t.Errorf("after a program left the alternate screen on: %+v, want a plain completion", o)
	}
}
