package remote

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFinishedRunLeavesCwdFresh: the outcome of a finished command carries
// the shell's cwd at its prompt, so the next Cwd (every BashCommand checks
// the cwd before it runs) reuses it instead of a status round trip; a
// command still running may change the cwd, so it is forgotten.
func TestFinishedRunLeavesCwdFresh(t *testing.T) {
	p, work := spawn(t)
	r := attach(t, p.Socket)
	ctx := ctxT(t)
	r.mu.Lock()
	cwd, fresh := r.cwd, !r.cwdAt.IsZero()
	r.mu.Unlock()
	if !fresh || cwd != work {
		t.Errorf("after attach: cwd %q fresh %v, want %q fresh (the snapshot is a status answer)", cwd, fresh, work)
	}
	sub := filepath.Join(work, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	o, err := r.Run(ctx, "cd sub", 10*time.Second)
	if err != nil || o.Running {
		t.Fatalf("Run(cd sub) = %+v, %v", o, err)
	}
	r.mu.Lock()
	cwd, fresh = r.cwd, !r.cwdAt.IsZero()
	r.mu.Unlock()
	if !fresh || cwd != sub {
		t.Errorf("after a finished run: cwd %q fresh %v, want %q fresh (no status call needed)", cwd, fresh, sub)
	}
	if got := r.Cwd(ctx); got != sub {
		t.Errorf("Cwd = %q, want %q", got, sub)
	}

	o, err = r.Run(ctx, "sleep 30", 0)
	if err != nil || !o.Running {
		t.Fatalf("Run(sleep 30) = %+v, %v", o, err)
	}
	r.mu.Lock()
	fresh = !r.cwdAt.IsZero()
	r.mu.Unlock()
	if fresh {
		t.Error("after a run still going: the cwd is kept fresh, want it forgotten (the command may cd)")
	}
	if _, err := r.Cancel(ctx, o.Generation, 10*time.Second); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
}
