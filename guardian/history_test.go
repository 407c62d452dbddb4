package guardian

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"winx/evidence/redact"
)

// TestHistoryBoundedWithExitCodesAndCwd: the session remembers its last
// MaxHistory commands, newest first, each with its exit code and the cwd it
// left; a flood of commands keeps the ring at its bound, a long command is
// cut, and a secret typed in a command is redacted as output is.
func TestHistoryBoundedWithExitCodesAndCwd(t *testing.T) {
	s := newTestSession(t, "")
	s.opts.Shape.Redactor = redact.New(false)
	ctx := context.Background()
	if h, err := s.History(ctx); err != nil || len(h) != 0 {
		t.Fatalf("History before any command = %v, %v; want none", h, err)
	}
	sub := t.TempDir()
	run(t, s, "cd "+sub, 5*time.Second)
	run(t, s, "(exit 3)", 5*time.Second)
	long := "echo " + strings.Repeat("x", 2*MaxHistoryCommandBytes)
	run(t, s, long, 5*time.Second)
	secret := "ghp_" + strings.Repeat("A", 36)
	run(t, s, "true "+secret, 5*time.Second)
	h, _ := s.History(ctx)
	if len(h) != 4 {
		t.Fatalf("History = %+v, want 4 commands", h)
	}
	if h[3].Command != "cd "+sub || h[3].Cwd != sub || h[3].Running {
		t.Errorf("oldest = %+v, want cd %s leaving cwd %s", h[3], sub, sub)
	}
	if h[2].ExitCode != 3 || h[2].Finished.IsZero() {
		t.Errorf("(exit 3) = %+v, want exit code 3 and a finish time", h[2])
	}
	if len(h[1].Command) > MaxHistoryCommandBytes+len("…") || !strings.HasSuffix(h[1].Command, "…") {
		t.Errorf("long command kept as %d bytes, want it cut at %d with …", len(h[1].Command), MaxHistoryCommandBytes)
	}
	if strings.Contains(h[0].Command, secret) || !strings.Contains(h[0].Command, "[REDACTED:") {
		t.Errorf("command with a secret kept as %q, want it redacted", h[0].Command)
	}

	for i := range 2 * MaxHistory {
		run(t, s, "(exit "+strconv.Itoa(i%7)+")", 5*time.Second)
	}
	h, _ = s.History(ctx)
	if len(h) != MaxHistory {
		t.Fatalf("after a flood History has %d commands, want %d", len(h), MaxHistory)
	}
	last := 2*MaxHistory - 1
	if h[0].Command != "(exit "+strconv.Itoa(last%7)+")" || h[0].ExitCode != last%7 {
		t.Errorf("newest = %+v, want (exit %d) with its code", h[0], last%7)
	}
	for i := 1; i < len(h); i++ {
		if h[i].Generation >= h[i-1].Generation {
			t.Fatalf("History not newest first: %d then %d", h[i-1].Generation, h[i].Generation)
		}
	}

	// A command still running is reported so, without an exit code.
	o, err := s.Run(ctx, "sleep 30", 50*time.Millisecond)
	if err != nil || !o.Running {
		t.Fatalf("sleep 30 = %+v, %v; want running", o, err)
	}
	h, _ = s.History(ctx)
	if !h[0].Running || h[0].Command != "sleep 30" || h[0].Cwd != "" {
		t.Errorf("running command = %+v, want running without a cwd", h[0])
	}
	if _, err := s.Cancel(ctx, o.Generation, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	h, _ = s.History(ctx)
	if h[0].Running || h[0].ExitCode == 0 {
		t.Errorf("cancelled command = %+v, want ended with a non-zero code", h[0])
	}
}
