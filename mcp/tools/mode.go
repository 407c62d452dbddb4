package tools

import "winx/auth/policy"

// Modes of a session (TOOLS.md, "Modes"). Initialize records them; the
// tools that run commands and write files enforce them through auth/policy.
const (
	ModeWCGW       = policy.ModeWCGW
	ModeArchitect  = policy.ModeArchitect
	ModeCodeWriter = policy.ModeCodeWriter
)

// Mode is a session's mode, declared once by auth/policy. The zero Mode
// (Name "") means "keep the current mode" to Attach.
type Mode = policy.Mode
