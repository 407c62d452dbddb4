package session

import "testing"

// TestKeyLegacyEncoding pins the encoding that temporary-artifact
// directories, edit receipts, external ids and guardian keys were derived
// from before keys were typed: a new build must find what an old one made.
func TestKeyLegacyEncoding(t *testing.T) {
	tests := []struct {
		key     Key
		legacy  string
		tempDir string
		extID   string
	}{
		{
			key:     Key{Principal: "alice", Root: "/home/u/proj"},
			legacy:  "alice\x00/home/u/proj",
			tempDir: "/home/u/proj/.winx/tmp/session-a8cc17a1d3fe78b9",
			extID:   "ws_proj_a8cc17a1",
		},
		{
			key:     Key{Principal: "alice", Root: "/home/u/proj", Scope: "conv-1"},
			legacy:  "alice\x00/home/u/proj\x00conv-1",
			tempDir: "/home/u/proj/.winx/tmp/session-9d62dd744f3518f4",
			extID:   "ws_proj_6d47ec83", // sha256("alice NUL conv-1 NUL /home/u/proj")
		},
		{
			key:     Key{Root: "/w"},
			legacy:  "\x00/w",
			tempDir: "/w/.winx/tmp/session-48f4f3e1dae85729",
			extID:   "ws_w_48f4f3e1",
		},
	}
	for _, tc := range tests {
		if got := tc.key.Legacy(); got != tc.legacy {
			t.Errorf("%+v.Legacy() = %q, want %q", tc.key, got, tc.legacy)
		}
		if got := TempArtifactDir(tc.key); got != tc.tempDir {
			t.Errorf("TempArtifactDir(%+v) = %q, want %q", tc.key, got, tc.tempDir)
		}
		if got := tc.key.ExternalID(); got != tc.extID {
			t.Errorf("%+v.ExternalID() = %q, want %q", tc.key, got, tc.extID)
		}
	}
	if k := (Key{Principal: "p", Root: "/w"}); k.ExternalID() != ExternalSessionID("p", "/w") {
		t.Errorf("an unscoped key's external id %q differs from ExternalSessionID's %q", k.ExternalID(), ExternalSessionID("p", "/w"))
	}
}

func TestScope(t *testing.T) {
	tests := []struct {
		name, affinity, conversation, thread, want string
	}{
		{"workspace ignores both", AffinityWorkspace, "conv", "th", ""},
		{"default is workspace", "", "conv", "th", ""},
		{"conversation first", AffinityConversation, "conv", "th", "c:conv"},
		{"conversation falls back to the thread", AffinityConversation, "", "th", "t:" + NormalizeThreadID("th")},
		{"conversation with neither", AffinityConversation, "", "", ""},
		{"thread", AffinityThread, "conv", "th", "t:" + NormalizeThreadID("th")},
		{"thread without one", AffinityThread, "conv", "", ""},
	}
	for _, tc := range tests {
		if got := Scope(tc.affinity, tc.conversation, tc.thread); got != tc.want {
			t.Errorf("%s: Scope(%q, %q, %q) = %q, want %q", tc.name, tc.affinity, tc.conversation, tc.thread, got, tc.want)
		}
	}
}
