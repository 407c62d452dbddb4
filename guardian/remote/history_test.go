package remote

import (
	"errors"
	"testing"
	"time"

	"winx/guardian/wire"
)

// TestHistoryFromAnotherClient: the commands one client ran are reported
// by the guardian to a client that attached later, with their exit codes
// and cwd, including how a command ended that its client stopped watching
// while it ran. A guardian that does not announce the method is not asked.
func TestHistoryFromAnotherClient(t *testing.T) {
	p, _ := spawn(t)
	ctx := ctxT(t)
	r1 := attach(t, p.Socket)
	for _, c := range []string{"cd /tmp", "(exit 4)"} {
		if _, err := r1.Run(ctx, c, 10*time.Second); err != nil {
			t.Fatalf("Run(%q): %v", c, err)
		}
	}
	// The client looks away while the last command runs: only the
	// guardian sees it end.
	if o, err := r1.Run(ctx, "sleep 0.3; false", 0); err != nil || !o.Running {
		t.Fatalf("Run(sleep; false) = %+v, %v; want running", o, err)
	}
	r2 := attach(t, p.Socket)
	var h []struct {
		cmd  string
		code int
	}
	ok := eventually(10*time.Second, func() bool {
		runs, err := r2.History(ctx)
		if err != nil {
			t.Fatalf("History: %v", err)
		}
		h = h[:0]
		for _, r := range runs {
			if r.Running {
				return false
			}
			if r.Cwd != "/tmp" {
				t.Fatalf("History entry %+v, want cwd /tmp", r)
			}
			h = append(h, struct {
				cmd  string
				code int
			}{r.Command, r.ExitCode})
		}
		return true
	})
	if !ok || len(h) != 3 || h[0].cmd != "sleep 0.3; false" || h[0].code != 1 || h[1].cmd != "(exit 4)" || h[1].code != 4 || h[2].cmd != "cd /tmp" {
		t.Fatalf("History from a second client = %+v, want the three commands, newest first, with their codes", h)
	}

	// An older guardian's hello lacks the method: the client refuses
	// without a call.
	r2.mu.Lock()
	r2.peer = wire.Hello{Role: wire.RoleGuardian, Capabilities: []string{MethodRun}}
	r2.mu.Unlock()
	if _, err := r2.History(ctx); !errors.Is(err, ErrUnsupported) {
		t.Errorf("History against a guardian without the method = %v, want ErrUnsupported", err)
	}
}
