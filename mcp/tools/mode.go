package tools

import "winx/auth"

// Modes of a session (TOOLS.md, "Modes"). Initialize records them; the
// tools that run commands and write files enforce them (modepolicy.go).
const (
	ModeWCGW       = auth.ModeWCGW
	ModeArchitect  = auth.ModeArchitect
	ModeCodeWriter = auth.ModeCodeWriter
)

// Mode is a session's mode and, for code_writer, what it may touch; the
// policy is auth.Mode's, and the session registry stores it as one. The
// zero Mode (Name "") means "keep the current mode" to Attach.
type Mode auth.Mode
