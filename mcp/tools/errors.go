package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"winx/auth/policy"
	"winx/mcp"
	wspace "winx/mcp/workspace" // "workspace" names a test helper of this package
)

// Sentinel errors of session routing and workspace resolution. Callers decide
// with errors.Is; the structs below carry the data for the message.
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
	// ErrWorkspaceChangeNeedsNewSession: a remote conversation asked to
	// move to another workspace; it must start a new conversation.
	ErrWorkspaceChangeNeedsNewSession = errors.New("tools: a remote conversation cannot change its workspace")
	// ErrInvalidMode: an unknown mode or a malformed code_writer config
	// (Mode.Validate wraps it).
	ErrInvalidMode = policy.ErrInvalidMode
	// ErrTaskNotFound: no saved context has the id.
	ErrTaskNotFound = wspace.ErrTaskNotFound
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

// InputError is tool input that does not match the schema.
type InputError struct {
	Msg string
}

func (e *InputError) Error() string { return "tools: invalid input: " + e.Msg }

// Error codes of the envelope (TOOLS.md, "The result envelope").
const (
	codeInvalidToolInput         = "invalid_tool_input"
	codeFileNotFound             = "file_not_found"
	codeFileOperationDenied      = "file_operation_denied"
	codeNotInitialized           = "not_initialized"
	codeWorkspaceBindingRequired = "workspace_binding_required"
	codeWorkspaceThreadMismatch  = "workspace_thread_mismatch"
	codeWorkspaceAlreadyBound    = "initialize_workspace_already_bound"
	codeResetSkippedHealthy      = "reset_skipped_healthy"
	codeExecutionFailed          = "execution_failed"
	codeTaskNotFound             = "task_not_found"
	codeWorkspaceChangeNewSess   = "workspace_change_requires_new_session"
)

// errorEnvelope maps a typed error to the envelope a tool answers with. It
// never inspects error text; unknown errors are server-side failures.
func errorEnvelope(tool string, err error) mcp.Envelope {
	env := mcp.Envelope{Tool: tool, Message: err.Error()}
	var ie *InputError
	var we *WorkspaceError
	var be *ThreadBindingError
	switch {
	case errors.As(err, &ie):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusInvalidInput, codeInvalidToolInput, true
		env.Message = "Invalid input: " + ie.Msg + "."
	case errors.Is(err, ErrInvalidMode):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusInvalidInput, codeInvalidToolInput, true
	case errors.Is(err, ErrWorkspaceRelative):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusInvalidInput, codeInvalidToolInput, true
		if errors.As(err, &we) {
			env.Message = fmt.Sprintf("The workspace path %q is not absolute; pass an absolute path.", we.Path)
		}
	case errors.Is(err, ErrWorkspaceNotFound):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusNotFound, codeFileNotFound, true
		if errors.As(err, &we) {
			env.Message = fmt.Sprintf("The workspace path %q does not exist.", we.Path)
		}
	case errors.Is(err, fs.ErrPermission):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusDenied, codeFileOperationDenied, true
		if errors.As(err, &we) {
			env.Message = fmt.Sprintf("Permission denied for the workspace path %q.", we.Path)
		}
	case errors.Is(err, ErrTaskNotFound):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusNotFound, codeTaskNotFound, true
	case errors.Is(err, ErrWorkspaceChangeNeedsNewSession):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusConflict, codeWorkspaceChangeNewSess, false
		env.Message = "This conversation is bound to its workspace; start a new conversation (a new session) to work elsewhere."
	case errors.Is(err, ErrNotInitialized):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusNeedsInitialize, codeNotInitialized, true
		env.Message = "This thread has no session; call Initialize with type first_call and the workspace path."
	case errors.Is(err, ErrWorkspaceBindingRequired):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusInvalidInput, codeWorkspaceBindingRequired, true
		env.Message = "workspace_root is required; pass the workspace_root that Initialize returned."
	case errors.As(err, &be) && errors.Is(err, ErrWorkspaceAlreadyBound):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusConflict, codeWorkspaceAlreadyBound, true
		env.Message = fmt.Sprintf("Thread %s is bound to %s; only a user_asked_change_workspace call (when the user asked) or a new thread_id can use %s.",
			be.ThreadID, be.Bound, be.Given)
	case errors.As(err, &be) && errors.Is(err, ErrWorkspaceThreadMismatch):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusConflict, codeWorkspaceThreadMismatch, true
		env.Message = fmt.Sprintf("Thread %s is bound to workspace_root %s, not %s; pass the workspace_root that Initialize returned.",
			be.ThreadID, be.Bound, be.Given)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusFailed, codeExecutionFailed, true
		env.Message = "The call was cancelled or timed out before it finished."
	default:
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusFailed, codeExecutionFailed, true
	}
	return env
}
