package remote

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// shared returns the client's shared connection (nil when none).
func shared(r *RemoteShell) *sharedConn {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conn
}

// A client says hello once: every later action, concurrent ones included,
// goes over the same connection.
func TestActionsShareOneConnection(t *testing.T) {
	p, _ := spawn(t)
	r := attach(t, p.Socket)
	ctx := ctxT(t)
	first := shared(r)
	if first == nil {
		t.Fatal("no shared connection after attach")
	}
	for range 5 {
		if o, err := r.Run(ctx, "echo hi", 20*time.Second); err != nil || o.Output.Text != "hi" {
			t.Fatalf("Run = %+v, %v", o, err)
		}
	}
	// A status while a run waits travels on the same connection. The run
	// marks that it started and then waits on a FIFO, not on the clock, so
	// the status surely comes while it waits.
	dir := t.TempDir()
	started, gate := filepath.Join(dir, "started"), filepath.Join(dir, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx, ": > "+started+"; read -r _ < "+gate+"; echo late", 20*time.Second)
		done <- err
	}()
	if !eventually(20*time.Second, func() bool { _, err := os.Stat(started); return err == nil }) {
		t.Fatal("the gated run never started")
	}
	if _, err := r.Status(ctx); err != nil {
		t.Fatalf("Status while a run waits: %v", err)
	}
	if err := os.WriteFile(gate, []byte("go\n"), 0); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := shared(r); got != first {
		t.Errorf("shared connection replaced without a loss: %p, then %p", first, got)
	}
}

// A connection that ends is replaced on the next call, which succeeds.
func TestLostConnectionIsReplaced(t *testing.T) {
	p, _ := spawn(t)
	r := attach(t, p.Socket)
	ctx := ctxT(t)
	first := shared(r)
	first.c.Close()
	if o, err := r.Run(ctx, "echo again", 20*time.Second); err != nil || o.Output.Text != "again" {
		t.Fatalf("Run after the connection ended = %+v, %v", o, err)
	}
	if got := shared(r); got == nil || got == first {
		t.Errorf("shared connection = %p, want a new one (old %p)", got, first)
	}
}

// A call abandoned by its caller leaves the connection to the others, and
// its output is delivered again to the next reader.
func TestAbandonedCallKeepsConnection(t *testing.T) {
	p, _ := spawn(t)
	r := attach(t, p.Socket)
	ctx := ctxT(t)
	first := shared(r)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err := r.Run(short, "sleep 1; echo kept", 20*time.Second)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("abandoned Run = %v, want the caller's deadline", err)
	}
	o, err := r.Poll(ctx, 0, 20*time.Second)
	if err != nil || o.Output.Text != "kept" {
		t.Fatalf("Poll after an abandoned run = %+v, %v", o, err)
	}
	if got := shared(r); got != first {
		t.Errorf("an abandoned call replaced the connection: %p, then %p", first, got)
	}
}
