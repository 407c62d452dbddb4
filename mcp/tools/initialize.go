package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"winx/auth"
	"winx/auth/policy"
	"winx/evidence/redact"
	"winx/guardian"
	"winx/mcp"
	"winx/mcp/session"
	wspace "winx/mcp/workspace" // "workspace" names a test helper of this package
)

// InitializeTool is the name of the tool that starts or reattaches a session.
const InitializeTool = "Initialize"

// DefaultResumeTokens bounds the saved context an Initialize answer shows
// (about bytes/4).
const DefaultResumeTokens = 20000

// Initialize call types (docs/tools.md, "Initialize").
const (
	initFirstCall       = "first_call"
	initModeChange      = "user_asked_mode_change"
	initResetShell      = "reset_shell"
	initChangeWorkspace = "user_asked_change_workspace"
)

// initializeSchema is the input schema. It follows the strict-client rules:
// no titles, no $ref, no integer formats, no boolean true schemas; unknown
// fields are refused (additionalProperties false) and the decoder agrees.
var initializeSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "type": {
      "type": "string",
      "enum": ["first_call", "user_asked_mode_change", "reset_shell", "user_asked_change_workspace"],
      "default": "first_call",
      "description": "others only when the user asked"
    },
    "any_workspace_path": {
      "type": "string",
      "description": "Absolute project path; empty: a scratch playground"
    },
    "initial_files_to_read": {
      "type": "array",
      "items": {"type": "string"},
      "description": "Files to show now"
    },
    "task_id_to_resume": {
      "type": "string",
      "description": "A ContextSave id"
    },
    "mode_name": {
      "type": "string",
      "enum": [` + modeEnum() + `],
      "default": "` + policy.DefaultMode + `",
      "description": "` + modeSummaries() + `; omitted: kept"
    },
    "thread_id": {
      "type": "string",
      "description": "An earlier thread_id"
    },
    "workspace_root": {"type": "string"},
    "code_writer_config": {
      "type": "object",
      "description": "For code_writer",
      "properties": {
        "allowed_globs": {
          "anyOf": [{"type": "string", "enum": ["all"]}, {"type": "array", "items": {"type": "string"}}],
          "description": "writable globs"
        },
        "allowed_commands": {
          "anyOf": [{"type": "string", "enum": ["all"]}, {"type": "array", "items": {"type": "string"}}],
          "description": "commands that may run"
        }
      },
      "required": ["allowed_globs", "allowed_commands"],
      "additionalProperties": false
    },
    "worktree": {"type": "string", "description": "Task name: a git worktree on branch winx/NAME"},
    "worktree_base": {"type": "string", "description": "Its base; default HEAD"},
    "worktree_action": {"type": "string", "enum": ["list", "changes", "remove"], "description": "No session; changes, remove need worktree"},
    "force": {"type": "boolean", "description": "remove even if dirty"}
  },
  "additionalProperties": false
}`)

const initializeDescription = `Start or reattach a Winx session; call it first with the project path. ` +
	`Returns thread_id and workspace_root (every other Winx tool needs both), a file tree, git status and guideline files. ` +
	`Again: same shell, compact answer. reset_shell only when the shell is stuck.`

// initializeInput is the decoded arguments.
type initializeInput struct {
	// scope is the session affinity scope of the call (not client input).
	scope string
	// resumed is the saved context of task_id_to_resume (not client input).
	resumed *wspace.SavedContext
	// roots are the caller's allowed_roots, nil for none (not client input).
	roots []string
	// recalledScratch is the scratch playground the thread book remembers
	// for the call's thread (not client input).
	recalledScratch string

	Type               string   `json:"type"`
	AnyWorkspacePath   string   `json:"any_workspace_path"`
	InitialFilesToRead []string `json:"initial_files_to_read"`
	TaskIDToResume     string   `json:"task_id_to_resume"`
	ModeName           string   `json:"mode_name"`
	ThreadID           string   `json:"thread_id"`
	// WorkspaceRoot is the binding an agent copies into every stateful
	// call, Initialize included (the Winx contract); see checkBinding.
	WorkspaceRoot    string            `json:"workspace_root"`
	CodeWriterConfig *codeWriterConfig `json:"code_writer_config"`
	worktreeInput
}

type codeWriterConfig struct {
	AllowedGlobs    json.RawMessage `json:"allowed_globs"`
	AllowedCommands json.RawMessage `json:"allowed_commands"`
}

// initializeData is the envelope's data.
type initializeData struct {
	ThreadID             string            `json:"thread_id"`
	WorkspaceRoot        string            `json:"workspace_root"`
	SessionID            string            `json:"session_id"`
	ShellPID             int               `json:"shell_pid"`
	Cwd                  string            `json:"cwd"`
	Mode                 string            `json:"mode"`
	CommandPolicy        string            `json:"command_policy"`
	TemporaryArtifactDir string            `json:"temporary_artifact_dir"`
	Reattached           bool              `json:"reattached"`
	Scratch              bool              `json:"scratch"`
	ShellReset           *bool             `json:"shell_reset,omitempty"`
	InitialFiles         []initialFileNote `json:"initial_files,omitempty"`
	ResumedTask          string            `json:"resumed_task,omitempty"`
	// ShellStartupMS is the new shell's start-up when it is over
	// SlowShellStartup.
	ShellStartupMS int64            `json:"shell_startup_ms,omitempty"`
	Warnings       []string         `json:"warnings,omitempty"`
	Worktree       *wspace.Worktree `json:"worktree,omitempty"`
	// Lost says what a lost shell of the session took with it; the shell
	// answering now is a fresh one.
	Lost *lostData `json:"lost,omitempty"`
}

// initialFileNote is the outcome of one initial file.
type initialFileNote struct {
	Path      string `json:"path"`
	Status    string `json:"status"` // shown, truncated, binary, not_found, denied, skipped
	Bytes     int64  `json:"bytes,omitempty"`
	ErrorCode string `json:"errorCode,omitempty"`
}

// initialFileCodes are the error codes of the initial files not shown.
var initialFileCodes = map[string]string{wspace.InitialNotFound: codeFileNotFound, wspace.InitialDenied: codeFileOperationDenied}

// initializer serves the Initialize tool.
type initializer struct {
	sessions    *session.Sessions
	scratchRoot string // "" means DefaultScratchRoot
	protected   *auth.Protected
	overview    wspace.Limits
	// redactor cleans the answer: guideline and initial files may hold
	// secrets.
	redactor *redact.Redactor
	// affinity decides which calls share a session; transport is "stdio"
	// or "http".
	affinity  string
	transport string
	// roots bootstraps a stdio client's workspace from its Roots.
	roots rootsBootstrap
	// serverInstructions are the operator's (WINX_SERVER_INSTRUCTIONS),
	// repeated when a session starts.
	serverInstructions string
	// warnings are Options.Warnings.
	warnings []string
	// stateDir holds the contexts task_id_to_resume loads; "" means
	// nothing was ever saved.
	stateDir string
}

// Session affinity modes (--session-affinity), declared by package session.
const (
	AffinityWorkspace    = session.AffinityWorkspace
	AffinityConversation = session.AffinityConversation
	AffinityThread       = session.AffinityThread
)

func addInitialize(reg *mcp.Registry, opts Options) {
	t := &initializer{sessions: opts.Sessions, scratchRoot: opts.ScratchRoot, overview: opts.protectedOverview(), redactor: opts.redactor(),
		affinity: opts.Affinity, transport: opts.Transport, serverInstructions: opts.ServerInstructions, warnings: opts.Warnings, stateDir: opts.StateDir, protected: opts.Protected}
	reg.AddTool(mcp.Tool{
		Name:         InitializeTool,
		Title:        "Initialize a Winx session",
		Description:  initializeDescription,
		InputSchema:  initializeSchema,
		OutputSchema: mcp.EnvelopeOutputSchema,
		Waits:        true, // on a guardian starting, or git making a worktree
		// Not read-only: Initialize makes managed worktrees (a branch and a
		// checkout), and worktree_action remove with force discards a
		// worktree's uncommitted files. A client that approves read-only
		// tools without asking must ask for this one.
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    mcp.Bool(false),
			DestructiveHint: mcp.Bool(true),
			OpenWorldHint:   mcp.Bool(false),
		},
	}, t.handle)
}

func (t *initializer) handle(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
	var in initializeInput
	if err := decodeArguments(req.Arguments, &in); err != nil {
		return failure(err), nil
	}
	var call func(context.Context, string, *initializeInput) *mcp.CallToolResult
	switch in.Type {
	case "", initFirstCall:
		in.Type, call = initFirstCall, t.firstCall
	case initChangeWorkspace:
		call = t.changeWorkspace
	case initModeChange:
		call = t.modeChange
	case initResetShell:
		call = t.resetShell
	default:
		return failure(&InputError{Msg: fmt.Sprintf("type %q is not one of %s, %s, %s, %s",
			in.Type, initFirstCall, initModeChange, initResetShell, initChangeWorkspace)}), nil
	}
	in.roots = req.Caller().Roots
	if in.TaskIDToResume != "" {
		if err := t.prepareResume(req.Caller().Principal, &in); err != nil {
			return failure(err), nil
		}
	}
	if err := t.checkBinding(req.Caller().Principal, &in); err != nil {
		return failure(err), nil
	}
	in.scope = session.Scope(t.affinity, req.Caller().Conversation, in.ThreadID)
	if err := t.bootstrapFromRoots(ctx, req, &in); err != nil {
		if mcp.IsInputRequired(err) {
			return nil, err
		}
		return failure(err), nil
	}
	if r, done := t.worktree(ctx, req.Caller().Principal, &in, req.Caller().Profile); done {
		return r, nil
	}
	return call(ctx, req.Caller().Principal, &in), nil
}

// checkBinding checks the workspace_root a call passes back. Agents
// following the Winx contract copy thread_id and workspace_root unchanged
// into every later stateful call, reset_shell and mode changes included,
// so Initialize accepts the pair, but never lets it disagree with the
// session: a thread bound here to another workspace is the typed mismatch
// every other tool answers (*session.ThreadBindingError wrapping
// ErrWorkspaceThreadMismatch), and so is a workspace_root that names
// another workspace than any_workspace_path (except for
// user_asked_change_workspace, whose workspace_root is the one the thread
// leaves). A call that names no workspace works in workspace_root, so a
// reset after an adapter restart finds the session.
func (t *initializer) checkBinding(principal string, in *initializeInput) error {
	if in.WorkspaceRoot == "" {
		return nil
	}
	bound := false
	if in.ThreadID != "" {
		if _, err := t.sessions.ByThread(principal, in.ThreadID); err == nil {
			if _, err := t.sessions.Lookup(principal, in.ThreadID, in.WorkspaceRoot); err != nil {
				return err
			}
			bound = true
		}
	}
	if in.Type == initChangeWorkspace {
		return nil
	}
	if in.AnyWorkspacePath == "" {
		// A thread bound here is found by its id, as without the root; one
		// this adapter does not know (it restarted) is looked for in the
		// workspace the agent names.
		if !bound {
			in.AnyWorkspacePath = in.WorkspaceRoot
		}
		return nil
	}
	given, _, err := session.ResolveWorkspace(in.WorkspaceRoot, "")
	if err != nil {
		return err
	}
	asked, _, err := session.ResolveWorkspace(in.AnyWorkspacePath, "")
	if err != nil {
		return err
	}
	if given != asked {
		return &session.ThreadBindingError{ThreadID: session.NormalizeThreadID(in.ThreadID), Bound: given, Given: asked, Err: session.ErrWorkspaceThreadMismatch}
	}
	return nil
}

// failure is the result of a call that did nothing.
func failure(err error) *mcp.CallToolResult { return toolFailure(InitializeTool, err) }

// bindingFailure is failure, except that a remote thread bound to another
// workspace is told to start a new conversation: user_asked_change_workspace
// is refused there, so it is never suggested.
func (t *initializer) bindingFailure(err error) *mcp.CallToolResult {
	var be *session.ThreadBindingError
	if t.transport == "stdio" || !errors.As(err, &be) || !errors.Is(err, session.ErrWorkspaceAlreadyBound) {
		return failure(err)
	}
	env := errorEnvelope(InitializeTool, err)
	env.Message = fmt.Sprintf("Thread %s is bound to %s; a remote conversation cannot move to %s. Start a new conversation (a new session) to work there.",
		be.ThreadID, be.Bound, be.Given)
	return env.Result(env.Message)
}

// mode builds the mode the call asks for; root anchors relative globs.
// An absent mode_name gives the zero Mode (keep / default).
func (in *initializeInput) mode(root string) (Mode, error) {
	spec, known := policy.LookupMode(in.ModeName)
	if in.CodeWriterConfig != nil && (in.ModeName == "" || !spec.Configured) {
		// A stray config is still checked: a malformed one is never ignored.
		if _, err := codeWriterMode(in.CodeWriterConfig, root); err != nil {
			return Mode{}, err
		}
	}
	switch {
	case in.ModeName == "":
		return Mode{}, nil
	case known && spec.Configured:
		if in.CodeWriterConfig == nil {
			return Mode{}, &InputError{Msg: "mode_name " + spec.Name + " needs code_writer_config with allowed_globs and allowed_commands"}
		}
		return configuredMode(spec.Name, in.CodeWriterConfig, root)
	}
	m := Mode{Name: in.ModeName}
	if err := m.Validate(); err != nil {
		return Mode{}, &InputError{Msg: fmt.Sprintf("mode_name %q is not one of %s", in.ModeName, strings.Join(policy.ModeNames(), ", "))}
	}
	return m, nil
}

// modeEnum is the schema's enum of mode names, from the mode table:
// "wcgw", "architect", "code_writer".
func modeEnum() string {
	return `"` + strings.Join(policy.ModeNames(), `", "`) + `"`
}

// modeSummaries is the schema's sentence on the modes, from the mode
// table: "wcgw: full access; architect: read-only; ...".
func modeSummaries() string {
	var parts []string
	for _, s := range policy.Modes() {
		parts = append(parts, s.Name+": "+s.Summary)
	}
	return strings.Join(parts, "; ")
}

func codeWriterMode(cfg *codeWriterConfig, root string) (Mode, error) {
	return configuredMode(ModeCodeWriter, cfg, root)
}

// configuredMode builds the configured mode name (code_writer) from cfg.
func configuredMode(name string, cfg *codeWriterConfig, root string) (Mode, error) {
	var c policy.CodeWriterConfig
	var err error
	if c.AllGlobs, c.AllowedGlobs, err = allOrList("code_writer_config.allowed_globs", cfg.AllowedGlobs); err != nil {
		return Mode{}, err
	}
	if c.AllCommands, c.AllowedCommands, err = allOrList("code_writer_config.allowed_commands", cfg.AllowedCommands); err != nil {
		return Mode{}, err
	}
	m, err := policy.ParseMode(name, &c, root)
	var ce *policy.ModeConfigError
	if errors.As(err, &ce) {
		return Mode{}, &InputError{Msg: ce.Msg}
	}
	return m, err
}

// allOrList decodes "all" or a list of strings.
func allOrList(field string, raw json.RawMessage) (all bool, list []string, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return false, nil, &InputError{Msg: field + ` is required ("all" or a list of strings)`}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s != "all" {
			return false, nil, &InputError{Msg: fmt.Sprintf(`%s must be "all" or a list of strings, not %q`, field, s)}
		}
		return true, nil, nil
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return false, nil, &InputError{Msg: field + ` must be "all" or a list of strings`}
	}
	return false, list, nil
}

// resolve resolves the call's workspace and builds its mode. No path means
// the principal's one scratch playground, created only once the call is
// known to be valid.
func (t *initializer) resolve(principal string, in *initializeInput) (root string, scratch bool, mode Mode, err error) {
	if in.AnyWorkspacePath == "" {
		scratch = true
		root, err = session.ScratchWorkspace(session.ScratchRootOr(t.scratchRoot), principal)
	} else {
		root, scratch, err = session.ResolveWorkspace(in.AnyWorkspacePath, "")
	}
	if err != nil {
		return "", false, Mode{}, err
	}
	// A confined principal starts sessions only inside its allowed roots,
	// a scratch playground included; the root is canonical, so a link
	// inside a root that points outside is outside.
	if err := checkRoot(mcp.Caller{Roots: in.roots}, root, in.AnyWorkspacePath); err != nil {
		return "", false, Mode{}, err
	}
	if mode, err = in.mode(root); err != nil {
		return "", false, Mode{}, err
	}
	if scratch {
		if err := session.MakeScratch(root); err != nil {
			return "", false, Mode{}, err
		}
	}
	return root, scratch, mode, nil
}

// principalDir is the principal's state directory ("" when nothing is
// kept): its saved contexts, ledgers and thread book.
func (t *initializer) principalDir(principal string) string {
	return wspace.PrincipalStateDir(t.stateDir, principal)
}

// stableIDs: under workspace affinity a workspace has one session, so an
// Initialize answers with the session's own id (ws_<project>_<hash>)
// whatever thread id the model made up, and later calls converge on it.
func (t *initializer) stableIDs() bool {
	return t.affinity == "" || t.affinity == AffinityWorkspace
}

// threadAnswer is the thread id an Initialize answers with for sess and
// binds it: the client's (normalized), or the session's id under
// workspace affinity (stableIDs). It also records every id the call bound
// in the principal's thread book, so an Initialize with only the thread
// id finds the workspace after an adapter restart.
func (t *initializer) threadAnswer(principal string, in *initializeInput, sess *session.Session) string {
	tid := session.ThreadIDOrDefault(in.ThreadID, sess.ExternalID)
	if t.stableIDs() && tid != sess.ExternalID {
		// The session id names the session's default thread: a client
		// may have used it as a thread of another workspace, then keep
		// its own id.
		if err := t.sessions.Bind(sess, ""); err == nil {
			tid = sess.ExternalID
		}
	}
	session.RememberThreads(t.principalDir(principal), session.ThreadRecord{Root: sess.Root, Scratch: sess.Scratch, Used: t.sessions.Now()},
		in.ThreadID, tid)
	return tid
}

// recall points a first_call with only a thread id at the workspace the
// principal's thread book remembers for it, when that still exists: the
// thread was bound by an adapter that is gone.
func (t *initializer) recall(principal string, in *initializeInput) {
	rec, ok := session.RecallThread(t.principalDir(principal), in.ThreadID)
	if !ok {
		return
	}
	if _, _, err := session.ResolveWorkspace(rec.Root, ""); err != nil {
		return // gone: a playground as for a new thread
	}
	if rec.Scratch {
		in.recalledScratch = rec.Root
	}
	in.AnyWorkspacePath = rec.Root
}

func (t *initializer) firstCall(ctx context.Context, principal string, in *initializeInput) *mcp.CallToolResult {
	if in.AnyWorkspacePath == "" && in.ThreadID != "" {
		// A known conversation coming back without its path reattaches
		// rather than getting a new playground.
		if sess, err := t.sessions.ByThread(principal, in.ThreadID); err == nil {
			if err := checkRoot(mcp.Caller{Roots: in.roots}, sess.Root, ""); err != nil {
				return failure(err)
			}
			// A dead shell is replaced before anything is said of it.
			if _, err := t.sessions.Revive(ctx, sess); err != nil {
				return failure(err)
			}
			mode, err := in.mode(sess.Root)
			if err == nil && mode.Name != "" {
				err = sess.SetMode(ctx, policy.Mode(mode))
			}
			if err != nil {
				return failure(err)
			}
			return t.answer(ctx, in, sess, t.threadAnswer(principal, in, sess), answerOpts{reattached: true})
		}
		// Not bound here: an adapter that is gone may have bound it.
		t.recall(principal, in)
	}
	root, scratch, mode, err := t.resolve(principal, in)
	if err == nil && in.recalledScratch != "" && root == in.recalledScratch {
		scratch = true // the thread's playground, found by its path
	}
	if err != nil {
		return failure(err)
	}
	var pre *overviewJob
	if !t.sessions.Known(principal, in.scope, root) {
		// Likely a new session: its overview is built while its shell
		// starts (see overviewJob).
		pre = startOverview(ctx, root, t.overview)
		defer pre.stop()
	}
	sess, created, err := t.sessions.AttachScoped(ctx, principal, in.scope, root, policy.Mode(mode), in.ThreadID, scratch)
	if err != nil {
		return t.bindingFailure(err)
	}
	// A session found running in its guardian after an adapter restart
	// reattaches like any repeated first call: same shell, compact answer.
	resumed := created && sess.Resumed()
	return t.answer(ctx, in, sess, t.threadAnswer(principal, in, sess), answerOpts{reattached: !created || resumed, overview: created && !resumed, pre: pre})
}

func (t *initializer) changeWorkspace(ctx context.Context, principal string, in *initializeInput) *mcp.CallToolResult {
	if t.transport != "stdio" {
		// A remote conversation stays with the workspace it started in,
		// whatever the affinity: moving it would hand one project's thread
		// (and its shell, reads and saved state) to another. Fail closed:
		// only the local stdio client may move a thread.
		return failure(ErrWorkspaceChangeNeedsNewSession)
	}
	root, scratch, mode, err := t.resolve(principal, in)
	if err != nil {
		return failure(err)
	}
	sess, created, err := t.sessions.ChangeWorkspaceScoped(ctx, principal, in.scope, root, policy.Mode(mode), in.ThreadID, scratch)
	if err != nil {
		return failure(err)
	}
	tid := session.ThreadIDOrDefault(in.ThreadID, sess.ExternalID)
	session.RememberThreads(t.principalDir(principal), session.ThreadRecord{Root: sess.Root, Scratch: sess.Scratch, Used: t.sessions.Now()}, tid)
	// The thread has not seen this workspace: show its context even when
	// another thread's session is reattached.
	return t.answer(ctx, in, sess, tid,
		answerOpts{reattached: !created, overview: true, note: "The thread now works in " + sess.Root + "."})
}

func (t *initializer) modeChange(ctx context.Context, principal string, in *initializeInput) *mcp.CallToolResult {
	if in.ModeName == "" {
		return failure(&InputError{Msg: "user_asked_mode_change needs mode_name"})
	}
	sess, tid, recovered, err := t.find(ctx, principal, in)
	if err != nil {
		return failure(err)
	}
	mode, err := in.mode(sess.Root)
	oldMode, oldPID := sess.Mode().Name, shellPID(ctx, sess)
	if err == nil {
		err = sess.SetMode(ctx, policy.Mode(mode))
	}
	if err != nil {
		return failure(err)
	}
	return t.answer(ctx, in, sess, tid, answerOpts{reattached: true, recovered: recovered,
		note: recovered.note() + modeChangeNote(oldMode, mode.Name, oldPID, shellPID(ctx, sess))})
}

// shellPID is the PID of the session's shell, 0 without one.
func shellPID(ctx context.Context, sess *session.Session) int {
	if sh := sess.Shell(); sh != nil {
		return sh.PID(ctx)
	}
	return 0
}

// modeChangeNote says what a mode change did, and only that: the mode
// before and after, and whether the shell was replaced (a mode whose shell
// profile differs starts a fresh shell in the same cwd).
func modeChangeNote(from, to string, oldPID, newPID int) string {
	var b strings.Builder
	b.WriteString("Mode set to " + to + " as the user asked")
	switch {
	case from == to:
		b.WriteString(" (it already was " + to + ")")
	case from != "":
		b.WriteString(" (it was " + from + ")")
	}
	switch {
	case oldPID != 0 && newPID != 0 && oldPID != newPID:
		fmt.Fprintf(&b, "; the shell was replaced (PID %d -> %d) in the same cwd.", oldPID, newPID)
	case newPID != 0:
		fmt.Fprintf(&b, "; same shell (PID %d) and cwd.", newPID)
	default:
		b.WriteString(".")
	}
	return b.String()
}

func (t *initializer) resetShell(ctx context.Context, principal string, in *initializeInput) *mcp.CallToolResult {
	if in.ModeName != "" || in.CodeWriterConfig != nil {
		return failure(&InputError{Msg: "reset_shell keeps the mode; use user_asked_mode_change to change it"})
	}
	sess, tid, recovered, err := t.find(ctx, principal, in)
	if err != nil {
		return failure(err)
	}
	if recovered == recoveredNew || recovered == recoveredLost {
		// The session was lost with its shell: the one just started is
		// the fresh shell the reset asked for.
		return t.answer(ctx, in, sess, tid, answerOpts{reattached: true, recovered: recovered, note: recovered.note()})
	}
	oldPID := sess.Shell().PID(ctx)
	reset, err := t.sessions.ResetShell(ctx, sess)
	if err != nil {
		return failure(err)
	}
	opts := answerOpts{reattached: true, shellReset: &reset, recovered: recovered}
	if reset {
		opts.note = recovered.note() + fmt.Sprintf("The shell was replaced (PID %d -> %d) in the same cwd and mode.", oldPID, sess.Shell().PID(ctx))
	} else {
		opts.skippedReset = true
		opts.note = fmt.Sprintf("The shell was already reset less than %d minutes ago and reports no failure, so it was kept (PID %d).",
			int(session.ResetInterval.Minutes()), oldPID)
	}
	return t.answer(ctx, in, sess, tid, opts)
}

// recovery says how a call about an existing session found it.
type recovery int

const (
	recoveredNone     recovery = iota // this adapter knew the session
	recoveredAttached                 // its shell ran on; reattached
	recoveredNew                      // it was gone; a new shell started
	// recoveredLost: this adapter knew the session, but its shell was
	// lost; a fresh one started (the answer's lost report says so).
	recoveredLost
)

// note is the line that tells the model about a recovery.
func (r recovery) note() string {
	switch r {
	case recoveredAttached:
		// Only the recovery: what the call then changed (the mode, the
		// shell) is said by the call's own note, so nothing is claimed
		// unchanged that changed.
		return "This server had lost the session (it restarted) and recovered it with its running shell. "
	case recoveredNew:
		return "This server had lost the session (it restarted) and its shell had ended; a new shell was started in the workspace. "
	}
	return ""
}

// find returns the session a mode change or a reset names. A session this
// adapter lost (it restarted) is recovered: the workspace the call names,
// else the one the thread book remembers for its thread, is attached,
// reaching the shell that runs on when there is one.
func (t *initializer) find(ctx context.Context, principal string, in *initializeInput) (*session.Session, string, recovery, error) {
	sess, tid, err := t.sessions.Find(principal, in.ThreadID, in.AnyWorkspacePath)
	if err == nil {
		revived, err := t.sessions.Revive(ctx, sess)
		if revived {
			return sess, tid, recoveredLost, err
		}
		return sess, tid, recoveredNone, err
	}
	if !errors.Is(err, session.ErrNotInitialized) {
		return sess, tid, recoveredNone, err
	}
	path := in.AnyWorkspacePath
	if path == "" {
		rec, ok := session.RecallThread(t.principalDir(principal), in.ThreadID)
		if !ok {
			return nil, "", recoveredNone, err
		}
		path = rec.Root
	}
	root, _, rerr := session.ResolveWorkspace(path, "")
	if rerr != nil {
		return nil, "", recoveredNone, rerr
	}
	if err := checkRoot(mcp.Caller{Roots: in.roots}, root, path); err != nil {
		return nil, "", recoveredNone, err
	}
	sess, created, err := t.sessions.AttachScoped(ctx, principal, in.scope, root, policy.Mode{}, in.ThreadID, false)
	if err != nil {
		return nil, "", recoveredNone, err
	}
	tid = session.ThreadIDOrDefault(in.ThreadID, sess.ExternalID)
	session.RememberThreads(t.principalDir(principal), session.ThreadRecord{Root: sess.Root, Scratch: sess.Scratch, Used: t.sessions.Now()}, tid)
	r := recoveredAttached
	if created && !sess.Resumed() {
		r = recoveredNew
	}
	return sess, tid, r, nil
}

// commandLayers says which layers enforce a mode's command policy: the
// parser allowlist in every restricted mode and, for architect, the kernel's
// read-only shell or the reason it is missing.
func commandLayers(mode string, c guardian.Confinement) string {
	switch {
	case !policy.Mode{Name: mode}.Restricts():
		return "none (" + cmp.Or(mode, policy.DefaultMode) + ")"
	case c.ReadOnly:
		return "parser allowlist + Landlock read-only shell"
	case c.Unavailable != "":
		return "parser allowlist (kernel layer unavailable: " + c.Unavailable + ")"
	}
	return "parser allowlist"
}

// SlowShellStartup is the shell start-up (spawn to first ready prompt,
// mostly the user's rc file) over which a new session's answer names it:
// every new session pays it, and the user can fix it.
const SlowShellStartup = 200 * time.Millisecond

// shellStartupReporter is a terminal that knows its shell's start-up
// (*guardian.Shell, *remote.RemoteShell).
type shellStartupReporter interface {
	ShellStartup() (time.Duration, string)
}

var _ shellStartupReporter = (*guardian.Shell)(nil)

// slowStartup names a shell start-up over SlowShellStartup in b and
// returns it in milliseconds; 0 when it was fast or is unknown.
func slowStartup(b *strings.Builder, sh terminal) int64 {
	r, ok := sh.(shellStartupReporter)
	if !ok {
		return 0
	}
	d, rc := r.ShellStartup()
	if d <= SlowShellStartup {
		return 0
	}
	if rc == "" {
		rc = "its rc file"
	}
	fmt.Fprintf(b, "Your shell start-up (%s) took %d ms; every new session pays it.\n", rc, d.Milliseconds())
	return d.Milliseconds()
}

// answerOpts shape the answer of a call that has a session.
type answerOpts struct {
	reattached   bool
	overview     bool // show the workspace context
	note         string
	shellReset   *bool
	skippedReset bool
	recovered    recovery
	pre          *overviewJob // the overview started before the session; nil: build it here
}

// answer builds the result for a session: the thread line, the session
// facts, the workspace context when asked, and the initial files.
func (t *initializer) answer(ctx context.Context, in *initializeInput, sess *session.Session, tid string, o answerOpts) *mcp.CallToolResult {
	// A shell lost and replaced in this call (or since the last answer)
	// is said first, and the session is not called reattached.
	sess.UseHistoryDir(t.principalDir(sess.Principal))
	lost, wasLost := sess.TakeLost()
	if wasLost {
		o.reattached = false
		if o.recovered == recoveredLost {
			o.recovered = recoveredNone
		}
	}
	// facts are the usage log's: how the session was found and how much
	// context the answer carried (sizes only, never the text).
	facts := mcp.CallFacts{Session: mcp.SessionCreated, InitialFiles: len(in.InitialFilesToRead)}
	if o.reattached {
		facts.Session = mcp.SessionReused
	}
	defer func() { mcp.NoteCall(ctx, facts) }()
	sh := sess.Shell()
	mode := sess.Mode()
	data := initializeData{
		ThreadID: tid, WorkspaceRoot: sess.Root, SessionID: sess.ExternalID,
		ShellPID: sh.PID(ctx), Cwd: sh.Cwd(ctx), Mode: mode.Name, TemporaryArtifactDir: sess.TempDir,
		Reattached: o.reattached, Scratch: sess.Scratch, ShellReset: o.shellReset, Warnings: t.warnings,
		CommandPolicy: commandLayers(mode.Name, sess.ShellState().Confinement),
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Use thread_id=%s for all winx tool calls.\n", tid)
	for _, w := range t.warnings {
		fmt.Fprintf(&b, "Warning: %s\n", w)
	}
	fmt.Fprintf(&b, "Pass workspace_root=%s with it.\n", sess.Root)
	fmt.Fprintf(&b, "Session %s: shell PID %d, cwd %s, mode %s.\n", sess.ExternalID, data.ShellPID, data.Cwd, mode.Name)
	fmt.Fprintf(&b, "Command policy: %s.\n", data.CommandPolicy)
	fmt.Fprintf(&b, "Temporary artifacts go in %s ($WINX_TEMP_DIR).\n", sess.TempDir)
	if sess.Scratch {
		b.WriteString("This is a scratch playground: no workspace path was given.\n")
	}
	in.writeWorktree(&b, &data)
	var next *mcp.NextAction
	if wasLost {
		b.WriteString(lostSummary(sess.Root, lost) + "\n")
		ld, n := lostBlock(&b, lost, t.redactor, tid, sess.Root)
		data.Lost, next = &ld, n
	}
	if o.note != "" {
		b.WriteString(o.note + "\n")
	}
	if !o.reattached {
		data.ShellStartupMS = slowStartup(&b, sh)
	}
	message := "Session started for " + sess.Root + "."
	switch {
	case o.overview:
		if o.reattached {
			message = "Attached to the running session for " + sess.Root + "."
		}
		ov, err := o.pre.result(ctx, sess.Root, t.overview)
		if err != nil {
			fmt.Fprintf(&b, "\nWorkspace context is unavailable: %v\n", err)
		} else {
			text := ov.Text()
			facts.ContextBytes += len(text)
			for _, g := range ov.Guidelines {
				facts.GuidelinesBytes += len(g.Content)
			}
			b.WriteString("\n" + text)
		}
		t.writeOperatorInstructions(&b)
	case o.reattached:
		message = "Reattached to the running session for " + sess.Root + "."
		if in.Type == initFirstCall {
			b.WriteString("Reattached: same shell, cwd and running command. The workspace context was shown when the session started and is not repeated.\n")
		}
	}
	if o.note != "" && in.Type != initFirstCall {
		message = o.note
	}
	if wasLost {
		message = lostSummary(sess.Root, lost)
	}
	env := mcp.Envelope{Status: mcp.StatusCompleted, Tool: InitializeTool, Message: message}
	if wasLost {
		// The model's session is gone with its running command: a fact it
		// must act on (read the journal, run the command again).
		env.Status, env.ErrorCode, env.Retryable, env.NextAction = mcp.StatusCompletedWithIssues, codeRecoveredMissingSession, true, next
	}
	if o.skippedReset {
		env.Status, env.ErrorCode = mcp.StatusCompletedWithIssues, codeResetSkippedHealthy
	}
	if o.recovered != recoveredNone {
		// The model asked about a session it had; that this server lost
		// it is a fact it must see, not a failure.
		env.Status, env.ErrorCode = mcp.StatusCompletedWithIssues, codeRecoveredMissingSession
	}
	if in.resumed != nil {
		data.ResumedTask = in.resumed.ID
		if sess.MarkResumeShown(in.resumed.ID) {
			fmt.Fprintf(&b, "Resumed task %s: its saved context was shown to this session before and is not repeated.\n", in.resumed.ID)
		} else {
			excerpt := in.resumed.Excerpt(wspace.PrincipalStateDir(t.stateDir, sess.Key.Principal), DefaultResumeTokens)
			facts.ContextBytes += len(excerpt)
			b.WriteString(excerpt)
		}
	}
	code := ""
	if len(in.InitialFilesToRead) > 0 {
		sess.UseLedgerDir(wspace.PrincipalStateDir(t.stateDir, sess.Key.Principal))
		defer sess.SaveLedger()
		sess.UseWorkDir(wspace.PrincipalStateDir(t.stateDir, sess.Key.Principal))
		defer sess.SaveWork()
	}
	for _, f := range wspace.WriteInitialFiles(&b, sess.Root, in.InitialFilesToRead, t.protected) {
		if f.Revision != "" { // shown with line numbers: it counts as a read
			sess.Ledger.Record(f.Canonical, f.Revision, f.Shown)
			sess.NoteRead(f.Canonical, f.Shown)
		}
		note := initialFileNote{Path: f.Path, Status: f.Status, Bytes: f.Bytes, ErrorCode: initialFileCodes[f.Status]}
		if code == "" {
			code = note.ErrorCode
		}
		data.InitialFiles = append(data.InitialFiles, note)
	}
	if code != "" && env.Status == mcp.StatusCompleted {
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusCompletedWithIssues, code, true
		env.Message += " Some initial files could not be shown."
	}
	env.Data = data
	text, _ := t.redactor.String(b.String())
	return env.Result(text)
}

// prepareResume loads the saved context of a first_call's task_id_to_resume
// and points the call at its project root. A different any_workspace_path
// is refused rather than guessed between.
func (t *initializer) prepareResume(principal string, in *initializeInput) error {
	if in.Type != initFirstCall {
		return &InputError{Msg: "task_id_to_resume works only with type first_call"}
	}
	// Only the principal's own saved contexts: another principal's id is
	// not found.
	sc, err := wspace.Load(wspace.PrincipalStateDir(t.stateDir, principal), in.TaskIDToResume)
	if err != nil {
		return taskIDInput(err)
	}
	if in.AnyWorkspacePath != "" {
		given, _, err := session.ResolveWorkspace(in.AnyWorkspacePath, "")
		if err != nil {
			return err
		}
		if err := sc.CheckRoot(given); err != nil {
			return &InputError{Msg: fmt.Sprintf("task %s was saved for %s, not %s; omit any_workspace_path to resume it there",
				sc.ID, sc.Root, in.AnyWorkspacePath)}
		}
	} else {
		in.AnyWorkspacePath = sc.Root
	}
	in.resumed = sc
	return nil
}
