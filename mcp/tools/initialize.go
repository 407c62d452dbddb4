package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"winx/auth/policy"
	"winx/evidence/redact"
	"winx/mcp"
	"winx/mcp/session"
	wspace "winx/mcp/workspace" // "workspace" names a test helper of this package
)

// InitializeTool is the name of the tool that starts or reattaches a session.
const InitializeTool = "Initialize"

// Limits of initial_files_to_read.
const (
	// MaxInitialFiles is how many initial files one call reads.
	MaxInitialFiles = 32
	// MaxInitialFileBytes bounds one initial file's shown content.
	MaxInitialFileBytes = 64 << 10
	// MaxInitialFilesBytes bounds the shown content of all initial files.
	MaxInitialFilesBytes = 256 << 10
)

// Initialize call types (TOOLS.md, "Initialize").
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
      "description": "first_call to start or reattach a session; user_asked_mode_change, reset_shell and user_asked_change_workspace only when the user asked for that."
    },
    "any_workspace_path": {
      "type": "string",
      "description": "Absolute path of the project (a file means its directory). Empty creates a scratch playground."
    },
    "initial_files_to_read": {
      "type": "array",
      "items": {"type": "string"},
      "description": "Files to show right away, absolute or relative to the workspace; they must stay inside it."
    },
    "task_id_to_resume": {
      "type": "string",
      "description": "Id of a context saved with ContextSave, to resume that task."
    },
    "mode_name": {
      "type": "string",
      "enum": ["wcgw", "architect", "code_writer"],
      "default": "wcgw",
      "description": "wcgw: full access. architect: no writes, read-only commands. code_writer: writes and commands limited by code_writer_config. A new session without it is wcgw; a reattach without it keeps the current mode."
    },
    "thread_id": {
      "type": "string",
      "description": "The thread_id of an earlier Initialize, to reattach the same conversation. Omit it on the very first call."
    },
    "code_writer_config": {
      "type": "object",
      "description": "Required with mode_name code_writer.",
      "properties": {
        "allowed_globs": {
          "anyOf": [{"type": "string", "enum": ["all"]}, {"type": "array", "items": {"type": "string"}}],
          "description": "\"all\" or globs of writable paths; relative globs join the workspace root."
        },
        "allowed_commands": {
          "anyOf": [{"type": "string", "enum": ["all"]}, {"type": "array", "items": {"type": "string"}}],
          "description": "\"all\" or the commands that may run."
        }
      },
      "required": ["allowed_globs", "allowed_commands"],
      "additionalProperties": false
    }
  },
  "additionalProperties": false
}`)

const initializeDescription = `Start or reattach a Winx session for a workspace. Call it first, once per conversation, with type first_call and the project path; it returns thread_id and workspace_root, which every other Winx tool needs. ` +
	`The first answer shows a ranked file tree, git status and agent guideline files (AGENTS.md, CLAUDE.md...). ` +
	`Calling it again for the same workspace reattaches the same shell (same PID and cwd) with a compact answer. ` +
	`Use reset_shell only when the shell is stuck, and the mode and workspace changes only when the user asked.`

// initializeInput is the decoded arguments.
type initializeInput struct {
	// scope is the session affinity scope of the call (not client input).
	scope string
	// resumed is the saved context of task_id_to_resume (not client input).
	resumed *wspace.SavedContext

	Type               string            `json:"type"`
	AnyWorkspacePath   string            `json:"any_workspace_path"`
	InitialFilesToRead []string          `json:"initial_files_to_read"`
	TaskIDToResume     string            `json:"task_id_to_resume"`
	ModeName           string            `json:"mode_name"`
	ThreadID           string            `json:"thread_id"`
	CodeWriterConfig   *codeWriterConfig `json:"code_writer_config"`
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
	TemporaryArtifactDir string            `json:"temporary_artifact_dir"`
	Reattached           bool              `json:"reattached"`
	Scratch              bool              `json:"scratch"`
	ShellReset           *bool             `json:"shell_reset,omitempty"`
	InitialFiles         []initialFileNote `json:"initial_files,omitempty"`
	ResumedTask          string            `json:"resumed_task,omitempty"`
}

// initialFileNote is the outcome of one initial file.
type initialFileNote struct {
	Path      string `json:"path"`
	Status    string `json:"status"` // shown, truncated, binary, not_found, denied, skipped
	Bytes     int64  `json:"bytes,omitempty"`
	ErrorCode string `json:"errorCode,omitempty"`
}

// initializer serves the Initialize tool.
type initializer struct {
	sessions    *session.Sessions
	scratchRoot string // "" means DefaultScratchRoot
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
	// resume serves task_id_to_resume.
	resume *resumer
}

// Session affinity modes (--session-affinity).
const (
	// AffinityWorkspace: one session per principal and canonical
	// workspace (the default).
	AffinityWorkspace = "workspace"
	// AffinityConversation: one session per conversation (the HTTP
	// Mcp-Session-Id, else X-Winx-Conversation-Id, else the first call's
	// thread id) and workspace.
	AffinityConversation = "conversation"
	// AffinityThread: one session per thread id and workspace.
	AffinityThread = "thread"
)

// affinityScope is the session scope of a call under the affinity mode.
// Scopes are internal keys; clients never see them.
func (t *initializer) affinityScope(caller mcp.Caller, threadID string) string {
	switch t.affinity {
	case AffinityConversation:
		if caller.Conversation != "" {
			return "c:" + caller.Conversation
		}
		if threadID != "" {
			return "t:" + session.NormalizeThreadID(threadID)
		}
	case AffinityThread:
		if threadID != "" {
			return "t:" + session.NormalizeThreadID(threadID)
		}
	}
	return ""
}

func addInitialize(reg *mcp.Registry, opts Options) {
	t := &initializer{sessions: opts.Sessions, scratchRoot: opts.ScratchRoot, overview: opts.Overview, redactor: opts.redactor(),
		affinity: opts.Affinity, transport: opts.Transport, serverInstructions: opts.ServerInstructions, resume: newResumer(opts)}
	reg.AddTool(mcp.Tool{
		Name:         InitializeTool,
		Title:        "Initialize a Winx session",
		Description:  initializeDescription,
		InputSchema:  initializeSchema,
		OutputSchema: mcp.EnvelopeOutputSchema,
		Annotations: &mcp.ToolAnnotations{
			Title:         "Initialize a Winx session",
			ReadOnlyHint:  mcp.Bool(true),
			OpenWorldHint: mcp.Bool(false),
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
	if in.TaskIDToResume != "" {
		if err := t.resume.prepare(&in); err != nil {
			return failure(err), nil
		}
	}
	in.scope = t.affinityScope(req.Caller(), in.ThreadID)
	if err := t.bootstrapFromRoots(ctx, req, &in); err != nil {
		if mcp.IsInputRequired(err) {
			return nil, err
		}
		return failure(err), nil
	}
	return call(ctx, req.Caller().Principal, &in), nil
}

// failure is the result of a call that did nothing.
func failure(err error) *mcp.CallToolResult { return toolFailure(InitializeTool, err) }

// mode builds the mode the call asks for; root anchors relative globs.
// An absent mode_name gives the zero Mode (keep / default).
func (in *initializeInput) mode(root string) (Mode, error) {
	if in.CodeWriterConfig != nil && in.ModeName != ModeCodeWriter {
		// A stray config is still checked: a malformed one is never ignored.
		if _, err := codeWriterMode(in.CodeWriterConfig, root); err != nil {
			return Mode{}, err
		}
	}
	switch in.ModeName {
	case "":
		return Mode{}, nil
	case ModeCodeWriter:
		if in.CodeWriterConfig == nil {
			return Mode{}, &InputError{Msg: "mode_name code_writer needs code_writer_config with allowed_globs and allowed_commands"}
		}
		return codeWriterMode(in.CodeWriterConfig, root)
	}
	m := Mode{Name: in.ModeName}
	if err := m.Validate(); err != nil {
		return Mode{}, &InputError{Msg: fmt.Sprintf("mode_name %q is not one of %s, %s, %s", in.ModeName, ModeWCGW, ModeArchitect, ModeCodeWriter)}
	}
	return m, nil
}

func codeWriterMode(cfg *codeWriterConfig, root string) (Mode, error) {
	var c policy.CodeWriterConfig
	var err error
	if c.AllGlobs, c.AllowedGlobs, err = allOrList("code_writer_config.allowed_globs", cfg.AllowedGlobs); err != nil {
		return Mode{}, err
	}
	if c.AllCommands, c.AllowedCommands, err = allOrList("code_writer_config.allowed_commands", cfg.AllowedCommands); err != nil {
		return Mode{}, err
	}
	m, err := policy.ParseMode(ModeCodeWriter, &c, root)
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

// scratch returns the directory for scratch playgrounds.
func (t *initializer) scratch() string {
	if t.scratchRoot != "" {
		return t.scratchRoot
	}
	root, err := session.DefaultScratchRoot()
	if err != nil {
		return "" // ResolveWorkspace then answers ErrNoScratchRoot
	}
	return root
}

// resolve resolves the call's workspace and builds its mode.
func (t *initializer) resolve(in *initializeInput) (root string, scratch bool, mode Mode, err error) {
	root, scratch, err = session.ResolveWorkspace(in.AnyWorkspacePath, t.scratch())
	if err != nil {
		return "", false, Mode{}, err
	}
	if mode, err = in.mode(root); err != nil {
		discardScratch(root, scratch)
		return "", false, Mode{}, err
	}
	return root, scratch, mode, nil
}

// discardScratch removes a scratch playground that no session took; it is
// still empty, so os.Remove suffices and never touches user files.
func discardScratch(root string, scratch bool) {
	if scratch {
		os.Remove(root)
	}
}

func (t *initializer) firstCall(ctx context.Context, principal string, in *initializeInput) *mcp.CallToolResult {
	if in.AnyWorkspacePath == "" && in.ThreadID != "" {
		// A known conversation coming back without its path reattaches
		// rather than getting a new playground.
		if sess, err := t.sessions.ByThread(principal, in.ThreadID); err == nil {
			mode, err := in.mode(sess.Root)
			if err == nil && mode.Name != "" {
				err = sess.SetMode(policy.Mode(mode))
			}
			if err != nil {
				return failure(err)
			}
			return t.answer(ctx, in, sess, session.NormalizeThreadID(in.ThreadID), answerOpts{reattached: true})
		}
	}
	root, scratch, mode, err := t.resolve(in)
	if err != nil {
		return failure(err)
	}
	sess, created, err := t.sessions.AttachScoped(ctx, principal, in.scope, root, policy.Mode(mode), in.ThreadID, scratch)
	if err != nil {
		discardScratch(root, scratch)
		return failure(err)
	}
	// A session found running in its guardian after an adapter restart
	// reattaches like any repeated first call: same shell, compact answer.
	resumed := created && sess.Resumed()
	return t.answer(ctx, in, sess, session.ThreadIDOrDefault(in.ThreadID, sess.ExternalID), answerOpts{reattached: !created || resumed, overview: created && !resumed})
}

func (t *initializer) changeWorkspace(ctx context.Context, principal string, in *initializeInput) *mcp.CallToolResult {
	if t.affinity == AffinityConversation && t.transport == "http" {
		// A remote conversation stays with the workspace it started in.
		return failure(ErrWorkspaceChangeNeedsNewSession)
	}
	root, scratch, mode, err := t.resolve(in)
	if err != nil {
		return failure(err)
	}
	sess, created, err := t.sessions.ChangeWorkspaceScoped(ctx, principal, in.scope, root, policy.Mode(mode), in.ThreadID, scratch)
	if err != nil {
		discardScratch(root, scratch)
		return failure(err)
	}
	// The thread has not seen this workspace: show its context even when
	// another thread's session is reattached.
	return t.answer(ctx, in, sess, session.ThreadIDOrDefault(in.ThreadID, sess.ExternalID),
		answerOpts{reattached: !created, overview: true, note: "The thread now works in " + sess.Root + "."})
}

// existing finds the session a mode change or reset is about: by thread_id,
// checked against any_workspace_path when both are given, or by the
// workspace's default thread when only the path is.
func (t *initializer) existing(principal string, in *initializeInput) (*session.Session, string, error) {
	var root string
	if in.AnyWorkspacePath != "" {
		r, _, err := session.ResolveWorkspace(in.AnyWorkspacePath, "")
		if err != nil {
			return nil, "", err
		}
		root = r
	}
	switch {
	case in.ThreadID != "" && root != "":
		sess, err := t.sessions.Lookup(principal, in.ThreadID, root)
		return sess, session.NormalizeThreadID(in.ThreadID), err
	case in.ThreadID != "":
		sess, err := t.sessions.ByThread(principal, in.ThreadID)
		return sess, session.NormalizeThreadID(in.ThreadID), err
	case root != "":
		sess, err := t.sessions.Lookup(principal, "", root)
		if err != nil {
			return nil, "", err
		}
		return sess, sess.ExternalID, nil
	}
	return nil, "", session.ErrNotInitialized
}

func (t *initializer) modeChange(ctx context.Context, principal string, in *initializeInput) *mcp.CallToolResult {
	if in.ModeName == "" {
		return failure(&InputError{Msg: "user_asked_mode_change needs mode_name"})
	}
	sess, tid, err := t.existing(principal, in)
	if err != nil {
		return failure(err)
	}
	mode, err := in.mode(sess.Root)
	if err == nil {
		err = sess.SetMode(policy.Mode(mode))
	}
	if err != nil {
		return failure(err)
	}
	return t.answer(ctx, in, sess, tid, answerOpts{reattached: true, note: "Mode set to " + mode.Name + " as the user asked."})
}

func (t *initializer) resetShell(ctx context.Context, principal string, in *initializeInput) *mcp.CallToolResult {
	if in.ModeName != "" || in.CodeWriterConfig != nil {
		return failure(&InputError{Msg: "reset_shell keeps the mode; use user_asked_mode_change to change it"})
	}
	sess, tid, err := t.existing(principal, in)
	if err != nil {
		return failure(err)
	}
	oldPID := sess.Shell().PID(ctx)
	reset, err := t.sessions.ResetShell(ctx, sess)
	if err != nil {
		return failure(err)
	}
	opts := answerOpts{reattached: true, shellReset: &reset}
	if reset {
		opts.note = fmt.Sprintf("The shell was replaced (PID %d -> %d) in the same cwd and mode.", oldPID, sess.Shell().PID(ctx))
	} else {
		opts.skippedReset = true
		opts.note = fmt.Sprintf("The shell was already reset less than %d minutes ago and reports no failure, so it was kept (PID %d).",
			int(session.ResetInterval.Minutes()), oldPID)
	}
	return t.answer(ctx, in, sess, tid, opts)
}

// answerOpts shape the answer of a call that has a session.
type answerOpts struct {
	reattached   bool
	overview     bool // show the workspace context
	note         string
	shellReset   *bool
	skippedReset bool
}

// answer builds the result for a session: the thread line, the session
// facts, the workspace context when asked, and the initial files.
func (t *initializer) answer(ctx context.Context, in *initializeInput, sess *session.Session, tid string, o answerOpts) *mcp.CallToolResult {
	sh := sess.Shell()
	mode := sess.Mode()
	data := initializeData{
		ThreadID: tid, WorkspaceRoot: sess.Root, SessionID: sess.ExternalID,
		ShellPID: sh.PID(ctx), Cwd: sh.Cwd(ctx), Mode: mode.Name, TemporaryArtifactDir: sess.TempDir,
		Reattached: o.reattached, Scratch: sess.Scratch, ShellReset: o.shellReset,
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Use thread_id=%s for all winx tool calls.\n", tid)
	fmt.Fprintf(&b, "Pass workspace_root=%s with it.\n", sess.Root)
	fmt.Fprintf(&b, "Session %s: shell PID %d, cwd %s, mode %s.\n", sess.ExternalID, data.ShellPID, data.Cwd, mode.Name)
	fmt.Fprintf(&b, "Temporary artifacts go in %s (created when first written).\n", sess.TempDir)
	if sess.Scratch {
		b.WriteString("This is a scratch playground: no workspace path was given.\n")
	}
	if o.note != "" {
		b.WriteString(o.note + "\n")
	}
	message := "Session started for " + sess.Root + "."
	switch {
	case o.overview:
		if o.reattached {
			message = "Attached to the running session for " + sess.Root + "."
		}
		ov, err := wspace.NewOverview(ctx, sess.Root, t.overview)
		if err != nil {
			fmt.Fprintf(&b, "\nWorkspace context is unavailable: %v\n", err)
		} else {
			b.WriteString("\n" + ov.Text())
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
	env := mcp.Envelope{Status: mcp.StatusCompleted, Tool: InitializeTool, Message: message}
	if o.skippedReset {
		env.Status, env.ErrorCode = mcp.StatusCompletedWithIssues, codeResetSkippedHealthy
	}
	if in.resumed != nil {
		data.ResumedTask = in.resumed.ID
		t.resume.write(&b, sess, in.resumed)
	}
	notes, code := writeInitialFiles(&b, sess.Root, in.InitialFilesToRead)
	data.InitialFiles = notes
	if code != "" && env.Status == mcp.StatusCompleted {
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusCompletedWithIssues, code, true
		env.Message += " Some initial files could not be shown."
	}
	env.Data = data
	text, _ := t.redactor.String(b.String())
	return env.Result(text)
}

// writeInitialFiles shows the requested files within the limits and
// returns a note per file and the error code of the first that failed.
func writeInitialFiles(b *strings.Builder, root string, paths []string) ([]initialFileNote, string) {
	if len(paths) == 0 {
		return nil, ""
	}
	var notes []initialFileNote
	firstCode := ""
	budget := MaxInitialFilesBytes
	for i, p := range paths {
		note := initialFileNote{Path: p}
		switch {
		case i >= MaxInitialFiles || budget <= 0:
			note.Status = "skipped"
			fmt.Fprintf(b, "\n## %s: skipped, over the limit of initial files; read it with ReadFiles\n", p)
			notes = append(notes, note)
			continue
		case p == "":
			note.Status, note.ErrorCode = "not_found", codeFileNotFound
			b.WriteString("\n## (empty path): not read\n")
		}
		if note.Status == "" {
			f, err := wspace.ReadContained(root, p, min(MaxInitialFileBytes, budget))
			switch {
			case errors.Is(err, fs.ErrNotExist):
				note.Status, note.ErrorCode = "not_found", codeFileNotFound
				fmt.Fprintf(b, "\n## %s: not found\n", p)
			case errors.Is(err, wspace.ErrOutsideWorkspace):
				note.Status, note.ErrorCode = "denied", codeFileOperationDenied
				fmt.Fprintf(b, "\n## %s: refused, it resolves outside the workspace %s\n", p, root)
			case err != nil:
				note.Status, note.ErrorCode = "denied", codeFileOperationDenied
				fmt.Fprintf(b, "\n## %s: not read: %v\n", p, err)
			case f.Binary:
				note.Status, note.Bytes = "binary", f.Size
				fmt.Fprintf(b, "\n## %s: binary file (%d bytes), not shown\n", f.Rel, f.Size)
			default:
				note.Status, note.Bytes = "shown", f.Size
				budget -= len(f.Content)
				fmt.Fprintf(b, "\n## %s (%d bytes)\n", f.Rel, f.Size)
				b.WriteString(wspace.Fenced(string(f.Content)))
				if f.Truncated {
					note.Status = "truncated"
					fmt.Fprintf(b, "[%s truncated after %d bytes; read the rest with ReadFiles]\n", f.Rel, len(f.Content))
				}
			}
		}
		if firstCode == "" {
			firstCode = note.ErrorCode
		}
		notes = append(notes, note)
	}
	return notes, firstCode
}
