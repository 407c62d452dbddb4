package runtime

import (
	"strings"
	"testing"

	"winx/guardian/daemon"
)

// TestGuardianKeySeparatesSandbox: a confined and an unconfined session of
// one workspace never share a guardian.
func TestGuardianKeySeparatesSandbox(t *testing.T) {
	spec := &Spec{Principal: "p", Workspace: "/w", ExternalID: "ws_w_1", Dir: "/w"}
	plain, confined := guardianKey(spec, false, false).String(), guardianKey(spec, true, false).String()
	if plain == confined {
		t.Errorf("the same guardian key %q with and without the sandbox", plain)
	}
	// A spec with only a directory (no session identity).
	spec = &Spec{Dir: "/w"}
	plain, confined = guardianKey(spec, false, false).String(), guardianKey(spec, true, false).String()
	if plain == confined {
		t.Errorf("the same guardian key %q with and without the sandbox (no session)", plain)
	}
}

// TestGuardianKeySeparatesNetworkPolicy: a confined session without IP
// networking never shares a guardian with one that has it, its key is a
// confined one, and winxd gives its guardian the key's policy whatever
// the request's environment said.
func TestGuardianKeySeparatesNetworkPolicy(t *testing.T) {
	spec := &Spec{Principal: "p", Workspace: "/w", ExternalID: "ws_w_1", Dir: "/w"}
	confined, nonet := guardianKey(spec, true, false), guardianKey(spec, true, true)
	if confined.String() == nonet.String() {
		t.Fatalf("the same guardian key %q with and without networking", nonet)
	}
	if !nonet.IsSandboxed() || !nonet.DeniesNetwork() || confined.DeniesNetwork() {
		t.Errorf("nonet sandboxed %v denies %v; confined denies %v", nonet.IsSandboxed(), nonet.DeniesNetwork(), confined.DeniesNetwork())
	}
	if got := guardianKey(spec, false, true); got.IsSandboxed() || got.DeniesNetwork() {
		t.Errorf("an unconfined key %q carries a sandbox policy", got)
	}
	for _, tc := range []struct {
		key  string
		want string
	}{
		{nonet.String(), "WINX_SANDBOX_NETWORK=deny"},
		{confined.String(), "WINX_SANDBOX_NETWORK=allow"},
		{guardianKey(spec, false, false).String(), ""},
	} {
		if got := strings.Join(daemon.NetworkEnv(tc.key), ","); got != tc.want {
			t.Errorf("NetworkEnv(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
}
