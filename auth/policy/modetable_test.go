package policy

import (
	"slices"
	"testing"
)

// TestModeTable checks the rows every consumer relies on: unique names, the
// default first, each name valid on its own or with a configuration, and
// the decisions of each rule as the modes gave them before the table.
func TestModeTable(t *testing.T) {
	names := ModeNames()
	if want := []string{ModeWCGW, ModeArchitect, ModeCodeWriter}; !slices.Equal(names, want) {
		t.Errorf("ModeNames() = %q, want %q", names, want)
	}
	if names[0] != DefaultMode {
		t.Errorf("first mode = %q, want the default %q", names[0], DefaultMode)
	}
	seen := map[string]bool{}
	for _, s := range Modes() {
		if seen[s.Name] {
			t.Errorf("mode %q listed twice", s.Name)
		}
		seen[s.Name] = true
		if s.Summary == "" {
			t.Errorf("mode %q has no summary", s.Name)
		}
		var cfg *CodeWriterConfig
		if s.Configured {
			cfg = &CodeWriterConfig{AllGlobs: true, AllCommands: true}
		}
		if _, err := ParseMode(s.Name, cfg, "/w"); err != nil {
			t.Errorf("ParseMode(%q) = %v, want nil", s.Name, err)
		}
		if got, ok := LookupMode(s.Name); !ok || got != s {
			t.Errorf("LookupMode(%q) = %+v, %v, want %+v, true", s.Name, got, ok, s)
		}
	}
	if s, ok := LookupMode(""); !ok || s.Name != DefaultMode {
		t.Errorf(`LookupMode("") = %+v, %v, want the default mode`, s, ok)
	}
	if _, ok := LookupMode("root"); ok {
		t.Error(`LookupMode("root") found a mode`)
	}
	for _, tc := range []struct {
		name      string
		restricts bool
	}{
		{"", false}, {ModeWCGW, false}, {ModeArchitect, true}, {ModeCodeWriter, true}, {"root", true},
	} {
		if got := (Mode{Name: tc.name}).Restricts(); got != tc.restricts {
			t.Errorf("Mode{%q}.Restricts() = %v, want %v", tc.name, got, tc.restricts)
		}
	}
	if err := (Mode{Name: "root"}).Validate(); err == nil || err.Error() != `policy: invalid mode: unknown mode "root" (want wcgw, architect or code_writer)` {
		t.Errorf("Validate(root) = %v", err)
	}
}
