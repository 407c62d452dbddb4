package tools

import (
	"errors"
	"testing"

	"winx/guardian"
)

// TestModeMessages pins, byte for byte, the texts the mode table now builds
// in this package: Initialize's mode_name errors and the command-policy
// line of each mode.
func TestModeMessages(t *testing.T) {
	for _, tc := range []struct {
		in   initializeInput
		want string
	}{
		{initializeInput{ModeName: "root"}, `mode_name "root" is not one of wcgw, architect, code_writer`},
		{initializeInput{ModeName: ModeCodeWriter}, "mode_name code_writer needs code_writer_config with allowed_globs and allowed_commands"},
	} {
		_, err := tc.in.mode("/w")
		var ie *InputError
		if !errors.As(err, &ie) || ie.Msg != tc.want {
			t.Errorf("mode(%q) = %v, want InputError %q", tc.in.ModeName, err, tc.want)
		}
	}
	for _, name := range []string{"", ModeWCGW, ModeArchitect, ModeCodeWriter} {
		m, err := (&initializeInput{ModeName: name, CodeWriterConfig: codeWriterAll(name)}).mode("/w")
		if err != nil || m.Name != name {
			t.Errorf("mode(%q) = %+v, %v, want that mode", name, m, err)
		}
	}
	for _, tc := range []struct {
		mode string
		c    guardian.Confinement
		want string
	}{
		{"", guardian.Confinement{}, "none (wcgw)"},
		{ModeWCGW, guardian.Confinement{ReadOnly: true}, "none (wcgw)"},
		{ModeArchitect, guardian.Confinement{ReadOnly: true}, "parser allowlist + Landlock read-only shell"},
		{ModeArchitect, guardian.Confinement{Unavailable: "no landlock"}, "parser allowlist (kernel layer unavailable: no landlock)"},
		{ModeCodeWriter, guardian.Confinement{}, "parser allowlist"},
		{"root", guardian.Confinement{}, "parser allowlist"},
	} {
		if got := commandLayers(tc.mode, tc.c); got != tc.want {
			t.Errorf("commandLayers(%q, %+v) = %q, want %q", tc.mode, tc.c, got, tc.want)
		}
	}
}

// codeWriterAll is the configuration "all, all" for code_writer, nil for
// the other modes.
func codeWriterAll(mode string) *codeWriterConfig {
	if mode != ModeCodeWriter {
		return nil
	}
	return &codeWriterConfig{AllowedGlobs: []byte(`"all"`), AllowedCommands: []byte(`"all"`)}
}
