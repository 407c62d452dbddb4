package session

import (
	"testing"

	"winx/auth/policy"
	"winx/guardian"
)

func TestShellProfile(t *testing.T) {
	tests := []struct {
		mode     string
		level    guardian.ShellLevel
		gitFixed bool
	}{
		{policy.ModeWCGW, guardian.LevelUnrestricted, false},
		{"", guardian.LevelUnrestricted, false},
		{policy.ModeCodeWriter, guardian.LevelUnrestricted, true},
		{policy.ModeArchitect, guardian.LevelReadOnly, true},
	}
	for _, tc := range tests {
		p := ShellProfile(policy.Mode{Name: tc.mode})
		if p.Level != tc.level || (len(p.Env) > 0) != tc.gitFixed {
			t.Errorf("ShellProfile(%q) = %+v, want level %q and git neutralised %v", tc.mode, p, tc.level, tc.gitFixed)
		}
	}
}

// TestShellRecord: the durable record carries the mode as before (older
// readers decode it) and the shell's state beside it.
func TestShellRecord(t *testing.T) {
	m := policy.Mode{Name: policy.ModeArchitect}
	st := ShellState{Profile: ShellProfile(m), Confinement: guardian.Confinement{ReadOnly: true}}
	raw := encodeRecord(m, st)
	if got, ok := DecodeMode(raw); !ok || got.Name != policy.ModeArchitect {
		t.Errorf("DecodeMode(%s) = %+v, %v; want architect", raw, got, ok)
	}
	if got := decodeShellState(raw); !got.Profile.Equal(st.Profile) || got.Confinement != st.Confinement {
		t.Errorf("decodeShellState(%s) = %+v, want %+v", raw, got, st)
	}
	// A record of an older adapter has no shell state: the default profile.
	if got := decodeShellState(EncodeMode(m)); !got.Profile.Equal(guardian.ShellProfile{}) {
		t.Errorf("decodeShellState(mode only) = %+v, want the default profile", got)
	}
}
