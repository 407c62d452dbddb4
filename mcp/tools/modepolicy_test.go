package tools

import (
	"errors"
	"testing"
)

func TestModeAllowsWrite(t *testing.T) {
	cw := Mode{Name: ModeCodeWriter, AllowedGlobs: []string{"/w/src/**/*.go", "/w/README.md"}}
	tests := []struct {
		mode Mode
		path string
		ok   bool
	}{
		{Mode{Name: ModeWCGW}, "/anything", true},
		{Mode{Name: ModeArchitect}, "/w/src/a.go", false},
		{cw, "/w/src/a.go", true},
		{cw, "/w/src/x/y/a.go", true},
		{cw, "/w/src/a.txt", false},
		{cw, "/w/README.md", true},
		{cw, "/w/other/a.go", false},
		{cw, "/w/srcx/a.go", false},
		{Mode{Name: ModeCodeWriter, AllGlobs: true}, "/w/x", true},
	}
	for _, tc := range tests {
		err := tc.mode.allowsWrite(tc.path)
		var me *ModeError
		if (err == nil) != tc.ok || (err != nil && !errors.As(err, &me)) {
			t.Errorf("Mode %s allowsWrite(%q) = %v, want ok=%v", tc.mode.Name, tc.path, err, tc.ok)
		}
	}
}
