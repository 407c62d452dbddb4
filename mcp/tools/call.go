package tools

// What every tool call shares: strict decoding of its arguments, the
// envelope of a typed error, and the guarded read of a resolved file.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"winx/auth"
	"winx/evidence"
	"winx/guardian"
	"winx/mcp"
	"winx/mcp/session"
	wspace "winx/mcp/workspace" // "workspace" names a test helper of this package
)

// Sentinel errors of the tools themselves; the registry's own (session
// routing, workspace resolution, modes) are in package session.
var (
	// ErrWorkspaceChangeNeedsNewSession: a remote conversation asked to
	// move to another workspace; it must start a new conversation.
	ErrWorkspaceChangeNeedsNewSession = errors.New("tools: a remote conversation cannot change its workspace")
	// ErrTaskNotFound: no saved context has the id.
	ErrTaskNotFound = wspace.ErrTaskNotFound
	// ErrRootNotAllowed: the directory is outside the caller's
	// allowed_roots.
	ErrRootNotAllowed = errors.New("tools: the directory is outside this principal's allowed roots")
	// ErrToolNotAllowed: the call needs the authority of a tool the
	// caller's profile does not allow (verify_command needs BashCommand).
	ErrToolNotAllowed = errors.New("tools: the caller's profile does not allow this")
)

// RootError is a workspace outside the caller's allowed_roots; it wraps
// ErrRootNotAllowed.
type RootError struct {
	Path string // the path as the caller gave it
}

func (e *RootError) Error() string {
	return "tools: " + e.Path + " is outside this principal's allowed roots"
}

func (e *RootError) Unwrap() error { return ErrRootNotAllowed }

// checkRoot refuses a session root (canonical) outside the caller's
// allowed_roots; shown is the path as the caller gave it.
func checkRoot(caller mcp.Caller, root, shown string) error {
	if !auth.WithinRoots(caller.Roots, root) {
		if shown == "" {
			shown = root
		}
		return &RootError{Path: shown}
	}
	return nil
}

// filePolicy is the path policy of a file tool in sess for caller: the
// session's workspace plus the operator's extra roots, narrowed to the
// caller's allowed_roots, minus the server's protected paths.
func filePolicy(caller mcp.Caller, sess *session.Session, allowPaths []string, protected *auth.Protected) (*auth.PathPolicy, error) {
	if err := checkRoot(caller, sess.Root, ""); err != nil {
		return nil, err
	}
	return pathPolicy(sess.Root, auth.ConfineRoots(allowPaths, caller.Roots), protected)
}

// InputError is tool input that does not match the schema.
type InputError struct {
	Msg string
}

func (e *InputError) Error() string { return "tools: invalid input: " + e.Msg }

// Error codes of the envelope (docs/tools.md, "Error codes").
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
	codeFileTooLarge             = "file_too_large"
	codeToolNotAllowed           = "tool_not_allowed"
	codeGuardianUnresponsive     = "guardian_unresponsive"
	codeRecoveredMissingSession  = "initialize_recovered_missing_session"
)

// lookupSession returns the session a session-bound call names by its
// thread_id and workspace_root. A session this adapter never saw (it
// restarted) is attached when it still runs (session.Sessions.Resolve):
// no Initialize is needed to go on. affinity is the catalog's.
func lookupSession(ctx context.Context, sessions *session.Sessions, affinity string, caller mcp.Caller, threadID, workspaceRoot string) (*session.Session, error) {
	sess, err := sessions.Resolve(ctx, caller.Principal, session.Scope(affinity, caller.Conversation, threadID), threadID, workspaceRoot)
	if errors.Is(err, session.ErrNotInitialized) {
		return nil, &notInitializedError{threadID: threadID, workspaceRoot: workspaceRoot, err: err}
	}
	if err != nil {
		return nil, err
	}
	// A session another adapter started was checked against the
	// principal's allowed roots there; check again here.
	if err := checkRoot(caller, sess.Root, ""); err != nil {
		return nil, err
	}
	return sess, nil
}

// notInitializedError is a session-bound call whose session runs nowhere
// (the embedded runtime ended with its adapter, or the session was
// closed): it carries what the call named, so the answer can give the
// exact Initialize call that starts the session again.
type notInitializedError struct {
	threadID, workspaceRoot string
	err                     error // session.ErrNotInitialized
}

func (e *notInitializedError) Error() string { return e.err.Error() }
func (e *notInitializedError) Unwrap() error { return e.err }

// initializeAgain is the next action of a call whose session runs
// nowhere: a first_call in the workspace it named, keeping its thread_id,
// so the calls that follow go on unchanged.
func (e *notInitializedError) initializeAgain() *mcp.NextAction {
	if !filepath.IsAbs(e.workspaceRoot) {
		return nil
	}
	args := map[string]any{"type": initFirstCall, "any_workspace_path": e.workspaceRoot}
	if e.threadID != "" {
		args["thread_id"] = e.threadID
	}
	return &mcp.NextAction{Tool: InitializeTool,
		Instruction: "Start the session again (a new shell in the workspace; the earlier shell's state is gone), then repeat this call.",
		Arguments:   args}
}

// errorEnvelope maps a typed error to the envelope a tool answers with. It
// never inspects error text; unknown errors are server-side failures.
func errorEnvelope(tool string, err error) mcp.Envelope {
	env := mcp.Envelope{Tool: tool, Message: err.Error()}
	var ie *InputError
	var we *session.WorkspaceError
	var be *session.ThreadBindingError
	switch {
	case errors.As(err, &ie):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusInvalidInput, codeInvalidToolInput, true
		env.Message = "Invalid input: " + ie.Msg + "."
	case errors.Is(err, session.ErrInvalidMode):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusInvalidInput, codeInvalidToolInput, true
	case errors.Is(err, session.ErrWorkspaceRelative):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusInvalidInput, codeInvalidToolInput, true
		if errors.As(err, &we) {
			env.Message = fmt.Sprintf("The workspace path %q is not absolute; pass an absolute path.", we.Path)
		}
	case errors.Is(err, session.ErrWorkspaceNotFound):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusNotFound, codeFileNotFound, true
		if errors.As(err, &we) {
			env.Message = fmt.Sprintf("The workspace path %q does not exist.", we.Path)
		}
	case errors.Is(err, fs.ErrPermission):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusDenied, codeFileOperationDenied, true
		if errors.As(err, &we) {
			env.Message = fmt.Sprintf("Permission denied for the workspace path %q.", we.Path)
		}
	case errors.Is(err, ErrRootNotAllowed):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusDenied, codeFileOperationDenied, false
		env.Message = "This principal may not work there: " + err.Error() + "."
	case errors.Is(err, ErrToolNotAllowed):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusDenied, codeToolNotAllowed, false
	case errors.Is(err, ErrTaskNotFound):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusNotFound, codeTaskNotFound, true
	case errors.Is(err, ErrWorkspaceChangeNeedsNewSession):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusConflict, codeWorkspaceChangeNewSess, false
		env.Message = "This conversation is bound to its workspace; start a new conversation (a new session) to work elsewhere."
	case errors.Is(err, session.ErrNotInitialized):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusNeedsInitialize, codeNotInitialized, true
		env.Message = "This thread has no session; call Initialize with type first_call and the workspace path."
		var ne *notInitializedError
		if errors.As(err, &ne) {
			env.NextAction = ne.initializeAgain()
		}
	case errors.Is(err, session.ErrWorkspaceBindingRequired):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusInvalidInput, codeWorkspaceBindingRequired, true
		env.Message = "workspace_root is required; pass the workspace_root that Initialize returned."
	case errors.As(err, &be) && errors.Is(err, session.ErrWorkspaceAlreadyBound):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusConflict, codeWorkspaceAlreadyBound, true
		env.Message = fmt.Sprintf("Thread %s is bound to %s; only a user_asked_change_workspace call (when the user asked) or a new thread_id can use %s.",
			be.ThreadID, be.Bound, be.Given)
	case errors.As(err, &be) && errors.Is(err, session.ErrWorkspaceThreadMismatch):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusConflict, codeWorkspaceThreadMismatch, true
		env.Message = fmt.Sprintf("Thread %s is bound to workspace_root %s, not %s; pass the workspace_root that Initialize returned.",
			be.ThreadID, be.Bound, be.Given)
	case errors.Is(err, guardian.ErrCommandRunning):
		// A mode change starts a fresh shell, which a running command blocks.
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusConflict, codeCommandAlreadyRunning, true
		env.Message = "A command is running in this shell; the mode changes with a fresh shell once it ends. Wait for it or interrupt it (BashCommand send_specials Ctrl-c), then ask again."
	case errors.Is(err, guardian.ErrPersonAttached):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusConflict, codePersonAttached, true
		env.Message = "A person is attached to this session's terminal and typing in it (winx attach --interactive); nothing was done. Wait until they detach, then ask again."
	case errors.Is(err, guardian.ErrUnresponsive):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusFailed, codeGuardianUnresponsive, true
		env.Message = "The session's guardian process did not answer in time (it may be stopped or overloaded); nothing is known of this call's effect. Check the session with a status_check later, or reset it with Initialize type reset_shell."
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusFailed, codeExecutionFailed, true
		env.Message = "The call was cancelled or timed out before it finished."
	default:
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusFailed, codeExecutionFailed, true
	}
	return env
}

// toolFailure is the result of a call that did nothing.
func toolFailure(tool string, err error) *mcp.CallToolResult {
	env := errorEnvelope(tool, err)
	return env.Result(env.Message)
}

// decodeArguments decodes a tool's arguments strictly: unknown fields, wrong
// types and trailing data are input errors.
func decodeArguments(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return &InputError{Msg: fmt.Sprintf("%s must be %s, not %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)}
		}
		return &InputError{Msg: strings.TrimPrefix(err.Error(), "json: ")}
	}
	if dec.More() {
		return &InputError{Msg: "trailing data after the arguments object"}
	}
	return nil
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	}
	return goKind
}

// readResolved reads the file at canonical, a path from policy.Resolve,
// within limit bytes. A path that resolved inside the roots must still be
// inside after the read's own resolution: a swap between the two is denied.
func readResolved(policy *auth.PathPolicy, canonical string, limit int64) (*evidence.Snapshot, error) {
	snap, err := evidence.ReadSnapshot(canonical, limit)
	if err != nil {
		return nil, err
	}
	if snap.Path != canonical {
		if err := policy.Recheck(snap.Path); err != nil {
			return nil, err
		}
	}
	return snap, nil
}

// pathPolicy is the file tools' path policy for a session rooted at root:
// the workspace and the allowed roots, minus the server's protected paths.
func pathPolicy(root string, allow []string, protected *auth.Protected) (*auth.PathPolicy, error) {
	policy, err := auth.NewPathPolicy(root, allow)
	if err != nil {
		return nil, err
	}
	return policy.WithProtected(protected), nil
}

// protectedPathText says why a path auth.ErrPathProtected refused is
// refused; the file tools show it instead of "outside the workspace",
// which would send the model looking for a wider root that does not exist.
const protectedPathText = "a credential or state path of the server, refused to every principal"

// protectedOverview is o.Overview with the deny list, so the guideline
// files an overview shows never resolve to a protected path.
func (o Options) protectedOverview() wspace.Limits {
	lim := o.Overview
	lim.Protected = o.Protected
	return lim
}
