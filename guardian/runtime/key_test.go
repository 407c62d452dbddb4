package runtime

import "testing"

// TestGuardianKeySeparatesSandbox: a confined and an unconfined session of
// one workspace never share a guardian.
func TestGuardianKeySeparatesSandbox(t *testing.T) {
	spec := &Spec{Principal: "p", Workspace: "/w", ExternalID: "ws_w_1", Dir: "/w"}
	plain, confined := guardianKey(spec, false).String(), guardianKey(spec, true).String()
	if plain == confined {
		t.Errorf("the same guardian key %q with and without the sandbox", plain)
	}
	// A spec with only a directory (no session identity).
	spec = &Spec{Dir: "/w"}
	plain, confined = guardianKey(spec, false).String(), guardianKey(spec, true).String()
	if plain == confined {
		t.Errorf("the same guardian key %q with and without the sandbox (no session)", plain)
	}
}
