package runtime

import (
	"context"
	"errors"
	"log/slog"

	"winx/guardian"
)

// Spec is what a factory needs to start a session's terminal.
type Spec struct {
	// The session's identity. Principal, Workspace and Scope key the
	// session's guardian in the daemon runtime, so a later adapter reaches
	// the guardian an earlier one used; ExternalID is the id clients see.
	Principal  string
	Workspace  string // canonical workspace root; "" means Dir
	Scope      string // affinity scope; "" for the workspace-wide session
	ExternalID string

	// Dir is where the shell starts. Env holds the variables Winx adds
	// (WINX_WORKSPACE_ROOT, WINX_TEMP_DIR) on top of the runtime's BaseEnv.
	Dir string
	Env []string

	// Replacing is the terminal being replaced on a reset_shell, nil for a
	// session's first terminal. The caller releases it once the new one
	// started.
	Replacing guardian.Terminal

	// Existing asks only for a terminal that serves the session already (a
	// guardian a previous adapter started): the factory never starts one
	// and answers ErrNoSession when none runs. It is how a call that names
	// a session this adapter does not know reattaches without Initialize.
	Existing bool
}

// ErrNoSession: Spec.Existing asked for a terminal that does not run (the
// embedded runtime keeps none beyond its adapter).
var ErrNoSession = errors.New("runtime: no running terminal serves the session")

// workspace is the session's workspace root.
func (s *Spec) workspace() string {
	if s.Workspace != "" {
		return s.Workspace
	}
	return s.Dir
}

// Started is a terminal a factory started or reached.
type Started struct {
	Terminal guardian.Terminal
	// Resumed: the terminal served the session before this adapter asked
	// for it (a guardian found running); its Meta is what an earlier
	// adapter recorded.
	Resumed bool
	// Lost is set when the session had a terminal that died before this
	// one started in its place: what the dead one left (LostInfo). The
	// new terminal is a fresh shell, never the lost one.
	Lost *Lost
}

// Factory starts a session's terminal. ctx bounds the start only: the
// terminal outlives it.
type Factory func(ctx context.Context, spec Spec) (*Started, error)

// Options configure the embedded shell runtime, and are carried to every
// guardian the daemon runtime spawns. They are read once at start-up from
// the environment by the caller.
type Options struct {
	Shell      string   // WINX_SHELL: "bash" (default) or "zsh"
	NoRedact   bool     // WINX_NO_REDACT=1
	NoCompress bool     // WINX_NO_COMPRESS=1
	BaseEnv    []string // the environment shells inherit
	Logger     *slog.Logger
	// Sandbox, if set, wraps the argument vector of every process a session
	// starts so that it runs confined to the session's workspace root (see
	// package pty/sandbox; WINX_SANDBOX=1).
	Sandbox func(workspace string, own guardian.OwnDirs, argv []string) ([]string, error)
	// SandboxDenyNetwork is WINX_SANDBOX_NETWORK=deny with the sandbox on:
	// the daemon runtime keys such sessions apart (the embedded runtime's
	// Sandbox applies the policy itself).
	SandboxDenyNetwork bool
	// StateDir is winx's state directory: an embedded session keeps its
	// private directory in its sessions/ (guardian.Options.PrivateRoot),
	// and a read-only shell may not read it. "" means the one BaseEnv
	// names (wire.StateDir), as a guardian finds it in its environment.
	StateDir string
	// Launcher is the binary that dispatches pty/sandbox.LauncherArg (winx),
	// for read-only shell profiles (architect) in the embedded runtime; ""
	// leaves them to the command parser alone, with that reason reported.
	// It is never guessed: a binary that does not dispatch the launcher
	// would run as itself. The daemon runtime's guardians use their own
	// binary (winx-guardian).
	Launcher string
}
