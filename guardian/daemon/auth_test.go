package daemon

import (
	"errors"
	"path/filepath"
	"testing"

	"winx/guardian/wire"
	"winx/jsonrpc"
)

// TestSandboxFixedByKey: the sandbox of a guardian is its key's. A request
// asking for an unconfined guardian under a confined session's key (or the
// other way round) is refused before anything is spawned.
func TestSandboxFixedByKey(t *testing.T) {
	k := SessionKey{ExternalID: "ws_w_1", Principal: "p", Workspace: "/w"}
	confined := k.Sandboxed()
	if !confined.IsSandboxed() || k.IsSandboxed() || confined.Sandboxed() != confined {
		t.Fatalf("Sandboxed: %+v / %+v", k, confined)
	}
	back, ok := ParseSessionKey(confined.String())
	if !ok || !back.IsSandboxed() {
		t.Fatalf("a confined key does not survive its string form: %+v %v", back, ok)
	}
	for _, tc := range []struct {
		key     string
		sandbox bool
		ok      bool
	}{
		{confined.String(), true, true},
		{confined.String(), false, false},
		{k.String(), false, true},
		{k.String(), true, false},
		{"hand-made", false, true},
		{"hand-made", true, false},
	} {
		p := &EnsureParams{Key: tc.key, Dir: "/", Sandbox: tc.sandbox}
		if err := p.validate(); (err == nil) != tc.ok {
			t.Errorf("validate(key %q, sandbox %v) = %v, want ok %v", tc.key, tc.sandbox, err, tc.ok)
		}
	}
}

// TestServeRefusesUnauthenticated: winxd answers no call of a peer whose
// hello lacks the wire secret, and a mismatched sandbox flag is a request
// error.
func TestServeRefusesUnauthenticated(t *testing.T) {
	dir := socketDir(t)
	serve(t, dir, Policy{})
	socket := filepath.Join(dir, wire.DaemonSocketName)
	for _, secret := range []string{"", wire.NewSecret()} {
		c := &Client{Socket: socket, Hello: wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(secret)}
		if _, err := c.Ensure(t.Context(), &EnsureParams{Key: "k", Dir: "/"}); !errors.Is(err, wire.ErrUnauthenticated) {
			t.Errorf("Ensure with secret %q = %v, want ErrUnauthenticated", secret, err)
		}
		if _, err := c.Shutdown(t.Context(), "attack"); !errors.Is(err, wire.ErrUnauthenticated) {
			t.Errorf("Shutdown with secret %q = %v, want ErrUnauthenticated", secret, err)
		}
	}
	c := &Client{Socket: socket, Hello: wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(testSecret)}
	key := SessionKey{ExternalID: "ws_w_1", Principal: "p", Workspace: "/"}.Sandboxed().String()
	_, err := c.Ensure(t.Context(), &EnsureParams{Key: key, Dir: "/", Sandbox: false})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != CodeRequest {
		t.Errorf("Ensure of a confined key with sandbox:false = %v, want code %d", err, CodeRequest)
	}
	if _, err := c.Ping(t.Context()); err != nil {
		t.Errorf("winxd stopped answering: %v", err)
	}
}
