package session_test

import (
	"context"
	"testing"

	"winx/auth/policy"
	"winx/mcp/session"
	"winx/mcp/session/sessiontest"
)

// TestReattachKeepsUnchangedRecord: a registry that reattaches a running
// shell whose record already says its mode and shell state does not write
// the record again (one round trip to the guardian less per reattach); a
// reattach that changes the mode does.
func TestReattachKeepsUnchangedRecord(t *testing.T) {
	f := &durableFactory{shells: make(map[[3]string]*durableShell)}
	t.Cleanup(func() {
		for _, sh := range f.shells {
			sh.Close()
		}
	})
	root := sessiontest.Canon(t, t.TempDir())
	ctx := context.Background()
	writes := func() int {
		for _, sh := range f.shells {
			sh.mu.Lock()
			defer sh.mu.Unlock()
			return sh.writes
		}
		return -1
	}
	attach := func(mode policy.Mode) *session.Session {
		t.Helper()
		s := session.NewSessions(f.start, nil)
		t.Cleanup(func() { s.Close() })
		sess, _, err := s.Attach(ctx, "p", root, mode, "", false)
		if err != nil {
			t.Fatal(err)
		}
		return sess
	}
	attach(policy.Mode{})
	if got := writes(); got != 1 {
		t.Fatalf("a new session wrote its record %d times, want 1", got)
	}
	if sess := attach(policy.Mode{}); !sess.Resumed() || sess.Mode().Name != policy.ModeWCGW {
		t.Fatalf("reattach: resumed %v mode %q", sess.Resumed(), sess.Mode().Name)
	}
	if got := writes(); got != 1 {
		t.Errorf("a reattach with the recorded mode wrote the record again (%d writes, want 1)", got)
	}
	attach(policy.Mode{Name: policy.ModeWCGW})
	if got := writes(); got != 1 {
		t.Errorf("a reattach asking for the recorded mode wrote the record again (%d writes, want 1)", got)
	}
	if sess := attach(policy.Mode{Name: policy.ModeArchitect}); sess.Mode().Name != policy.ModeArchitect {
		t.Fatalf("reattach in architect: mode %q", sess.Mode().Name)
	}
	if got := writes(); got != 2 {
		t.Errorf("a reattach that changed the mode: %d writes, want 2", got)
	}
}
