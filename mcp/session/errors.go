package session

import (
	"errors"
	"fmt"
)

// Sentinel errors of session routing and workspace resolution. Callers
// decide with errors.Is; the structs below carry the data for the message.
//
// The texts keep the "tools:" prefix they had when the registry lived in
// mcp/tools: some reach the model unchanged in a result envelope.
var (
	// ErrWorkspaceNotFound: the workspace path does not exist.
	ErrWorkspaceNotFound = errors.New("tools: workspace not found")
	// ErrWorkspaceRelative: the workspace path is not absolute; the
	// server's own working directory means nothing to a client.
	ErrWorkspaceRelative = errors.New("tools: workspace path is not absolute")
	// ErrNoScratchRoot: a scratch workspace was asked for but no directory
	// for playgrounds is configured.
	ErrNoScratchRoot = errors.New("tools: no directory for scratch workspaces")
	// ErrNotInitialized: the caller's thread has no session.
	ErrNotInitialized = errors.New("tools: thread is not initialized")
	// ErrWorkspaceBindingRequired: a session-bound call named no workspace_root.
	ErrWorkspaceBindingRequired = errors.New("tools: workspace_root is required")
	// ErrWorkspaceThreadMismatch: the thread is bound to another workspace
	// than the call names.
	ErrWorkspaceThreadMismatch = errors.New("tools: thread is bound to another workspace")
	// ErrWorkspaceAlreadyBound: a first_call names a workspace other than
	// the one its thread is bound to.
	ErrWorkspaceAlreadyBound = errors.New("tools: thread is already bound to another workspace")
	// ErrInvalidMode: an unknown mode or a malformed code_writer config.
	ErrInvalidMode = errors.New("tools: invalid mode")
	// ErrSessionsClosed: the registry was closed.
	ErrSessionsClosed = errors.New("tools: sessions are closed")
)

// WorkspaceError is a workspace path that could not be used.
type WorkspaceError struct {
	Path string // as the client gave it
	Err  error  // a sentinel above or an *os.PathError
}

func (e *WorkspaceError) Error() string { return fmt.Sprintf("%v: %s", e.Err, e.Path) }
func (e *WorkspaceError) Unwrap() error { return e.Err }

// ThreadBindingError is a thread whose bound workspace is not the one a call
// names. Err is ErrWorkspaceThreadMismatch or ErrWorkspaceAlreadyBound.
type ThreadBindingError struct {
	ThreadID string
	Bound    string // canonical root the thread is bound to
	Given    string // root the call named
	Err      error
}

func (e *ThreadBindingError) Error() string {
	return fmt.Sprintf("%v: thread %s is bound to %s, not %s", e.Err, e.ThreadID, e.Bound, e.Given)
}
func (e *ThreadBindingError) Unwrap() error { return e.Err }
