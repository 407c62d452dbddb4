package remote

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"winx/guardian"
	"winx/guardian/wire/hermetic"
)

// stop SIGSTOPs a guardian until the test ends (continued before the
// spawn's cleanup stops it).
func stop(t *testing.T, p *Process) {
	t.Helper()
	if err := hermetic.Stop(p.PID); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(p.PID, syscall.SIGCONT) })
}

// A stopped guardian answers nothing: every call on it returns within its
// wait plus the grace with a typed unresponsive error, and another
// guardian keeps answering meanwhile.
func TestStoppedGuardianIsUnresponsive(t *testing.T) {
	p1, _ := spawn(t)
	p2, _ := spawn(t)
	r1, r2 := attach(t, p1.Socket), attach(t, p2.Socket)
	stop(t, p1)
	type result struct {
		err     error
		elapsed time.Duration
	}
	calls := map[string]func(context.Context) error{
		"run": func(ctx context.Context) error { _, err := r1.Run(ctx, "echo hi", 2*time.Second); return err },
		"poll": func(ctx context.Context) error {
			_, err := r1.Poll(ctx, 0, 2*time.Second)
			return err
		},
		"status": func(ctx context.Context) error { _, err := r1.Status(ctx); return err },
	}
	done := make(map[string]chan result)
	for name, call := range calls {
		ch := make(chan result, 1)
		done[name] = ch
		go func() {
			start := time.Now()
			// No deadline of the caller's: the client's own must end it.
			err := call(context.Background())
			ch <- result{err, time.Since(start)}
		}()
	}
	// The other session answers while those calls hang.
	ctx := ctxT(t)
	if o, err := r2.Run(ctx, "echo other", 20*time.Second); err != nil || o.Output.Text != "other" {
		t.Fatalf("other guardian: Run = %+v, %v", o, err)
	}
	for name, ch := range done {
		select {
		case res := <-ch:
			var ue *UnresponsiveError
			if !errors.Is(res.err, guardian.ErrUnresponsive) || !errors.As(res.err, &ue) {
				t.Errorf("%s on a stopped guardian = %v, want an *UnresponsiveError", name, res.err)
			}
			t.Logf("%s: %v after %v", name, res.err, res.elapsed)
		case <-time.After(60 * time.Second):
			t.Fatalf("%s on a stopped guardian did not return within 60 s", name)
		}
	}
	if r1.Healthy(ctx) {
		t.Error("Healthy = true for a stopped guardian")
	}
	// Not sticky: continued, the guardian answers the same client again.
	syscall.Kill(p1.PID, syscall.SIGCONT)
	if o, err := r1.Run(ctx, "echo back", 20*time.Second); err != nil || o.Output.Text != "back" {
		t.Fatalf("continued guardian: Run = %+v, %v", o, err)
	}
}

// A status check sees the running command whoever asks: the client whose
// own run is still waiting, and a second client attached before the
// command started, both after an earlier command set their generations.
func TestPollSeesCommandStartedElsewhere(t *testing.T) {
	p, _ := spawn(t)
	ctx := ctxT(t)
	a, b := attach(t, p.Socket), attach(t, p.Socket)
	if o, err := a.Run(ctx, "echo first", 10*time.Second); err != nil || o.Running {
		t.Fatalf("first Run = %+v, %v", o, err)
	}
	if _, err := b.Poll(ctx, 0, 0); err != nil && !errors.Is(err, guardian.ErrNotRunning) {
		t.Fatalf("b learns the first command: %v", err)
	}
	type result struct {
		o   *guardian.Outcome
		err error
	}
	ran := make(chan result, 1)
	go func() {
		o, err := a.Run(ctx, "sleep 6; echo t", 30*time.Second)
		ran <- result{o, err}
	}()
	if !eventually(10*time.Second, func() bool { st, err := b.Status(ctx); return err == nil && st.Running }) {
		t.Fatal("the command never showed as running")
	}
	for name, c := range map[string]*RemoteShell{"same client": a, "second client": b} {
		o, err := c.Poll(ctx, 0, 0)
		if err != nil || !o.Running {
			t.Errorf("%s: status check while sleep 6 runs = %+v, %v; want running", name, o, err)
		}
	}
	r := <-ran
	if r.err != nil || r.o.Running || !strings.Contains(r.o.Output.Text, "t") {
		t.Fatalf("Run = %+v, %v", r.o, r.err)
	}
}
