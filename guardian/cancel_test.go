package guardian

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCancelTargetsOneGeneration: a cancel for a generation that already
// ended types nothing, so the next command runs to its end; a cancel for
// the running generation interrupts it.
func TestCancelTargetsOneGeneration(t *testing.T) {
	s := newTestSession(t, "")
	first := run(t, s, "echo a", 10*time.Second)
	if first.Running {
		t.Fatalf("echo a still running: %+v", first)
	}
	second := run(t, s, "sleep 1; echo b", 100*time.Millisecond)
	if !second.Running || second.Generation != first.Generation+1 {
		t.Fatalf("second command = %+v, want running generation %d", second, first.Generation+1)
	}
	if _, err := s.Cancel(context.Background(), first.Generation, time.Second); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("cancel of the ended generation = %v, want ErrNotRunning", err)
	}
	o, err := s.Poll(context.Background(), second.Generation, 10*time.Second)
	if err != nil || o.Running || o.ExitCode != 0 || o.Output.Text != "b" {
		t.Fatalf("second command after a stale cancel = %+v, %v; want b with exit 0", o, err)
	}

	third := run(t, s, "sleep 30", 100*time.Millisecond)
	o, err = s.Cancel(context.Background(), third.Generation, 5*time.Second)
	if err != nil || o.Running || o.ExitCode != 130 {
		t.Fatalf("cancel of the running generation = %+v, %v; want it ended with 130", o, err)
	}
}

// TestCancelRacesLaunch: cancels for generation N race the launch of N+1;
// N+1 is never interrupted.
func TestCancelRacesLaunch(t *testing.T) {
	s := newTestSession(t, "")
	for i := 0; i < 5; i++ {
		prev := run(t, s, "true", 10*time.Second)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				s.Cancel(context.Background(), prev.Generation, 10*time.Millisecond)
			}
		}()
		o := run(t, s, "sleep 0.2; echo done", 10*time.Second)
		wg.Wait()
		if o.Running || o.ExitCode != 0 || o.Output.Text != "done" {
			t.Fatalf("round %d: the next command was touched by stale cancels: %+v", i, o)
		}
	}
}

// TestCancelRightAfterLaunch: a cancel that arrives while the shell may not
// have read the command line yet still ends that command, and the shell
// takes the next one.
func TestCancelRightAfterLaunch(t *testing.T) {
	s := newTestSession(t, "")
	run(t, s, "true", 10*time.Second)
	for i := 0; i < 3; i++ {
		o, err := s.Run(context.Background(), "sleep 30; echo never", 0)
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.Cancel(context.Background(), o.Generation, 5*time.Second)
		if err != nil || c.Running || c.ExitCode != 130 || c.Output.Text != "" {
			t.Fatalf("round %d: cancel right after launch = %+v, %v; want ended with 130 and no output", i, c, err)
		}
		if next := run(t, s, "echo next", 10*time.Second); next.Running || next.Output.Text != "next" {
			t.Fatalf("round %d: next command = %+v\nscreen:\n%s", i, next, strings.Join(s.Screen(t.Context(), 0, false).Rows, "\n"))
		}
	}
}
