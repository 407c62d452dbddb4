package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"winx/auth"
	"winx/evidence"
	"winx/evidence/redact"
	"winx/mcp"
	"winx/mcp/session"
	wspace "winx/mcp/workspace" // "workspace" names a test helper of this package
)

// ContextSaveTool is the name of the tool that saves a task's context for a
// later Initialize with task_id_to_resume.
const ContextSaveTool = "ContextSave"

// Input limits of ContextSave; the collection's own limits are
// mcp/workspace's.
const (
	// MaxContextDescriptionBytes bounds the description.
	MaxContextDescriptionBytes = 64 << 10
	// MaxContextGlobs bounds relevant_file_globs.
	MaxContextGlobs = 64
)

// codeStateDirUnavailable: the server has no state directory to save into.
const codeStateDirUnavailable = "state_dir_unavailable"

// ErrStateDirUnavailable: no state directory is configured.
var ErrStateDirUnavailable = wspace.ErrNoStateDir

var contextSaveSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "id": {"type": "string", "maxLength": 64,
      "description": "A-Z a-z 0-9 _ . -; empty: generated; an existing id is overwritten"},
    "project_root_path": {"type": "string",
      "description": "default: the workspace root"},
    "description": {"type": "string", "minLength": 1,
      "description": "The task, what was done, what is left"},
    "relevant_file_globs": {"type": "array", "maxItems": 64, "items": {"type": "string", "minLength": 1},
      "description": "Files to save; relative globs join the project root; ** spans directories"},
    "thread_id": {"type": "string"},
    "workspace_root": {"type": "string"}
  },
  "required": ["description"],
  "additionalProperties": false
}`)

const contextSaveDescription = `Save the task to resume it later: the description, workspace context, git status and diff, and the files matching relevant_file_globs (token-capped, redacted) go into one private file. ` +
	`Resume with Initialize task_id_to_resume set to the returned id.`

type contextSaveInput struct {
	ID                string   `json:"id"`
	ProjectRootPath   string   `json:"project_root_path"`
	Description       string   `json:"description"`
	RelevantFileGlobs []string `json:"relevant_file_globs"`
	ThreadID          string   `json:"thread_id"`
	WorkspaceRoot     string   `json:"workspace_root"`
}

// contextSaver serves ContextSave: it resolves the session and the path
// policy, and mcp/workspace collects and saves.
type contextSaver struct {
	// affinity is the catalog's session affinity (the scope of a reattach).
	affinity   string
	sessions   *session.Sessions
	allowPaths []string
	protected  *auth.Protected
	saver      *wspace.Saver
	redactor   *redact.Redactor
	// open shows the saved file to the user (WINX_OPEN_CONTEXT=1); nil
	// leaves it alone. It returns the opener's name.
	open func(path string) (string, error)
}

func addContextSave(reg *mcp.Registry, opts Options) {
	t := &contextSaver{
		sessions: opts.Sessions, affinity: opts.Affinity, allowPaths: opts.AllowPaths, protected: opts.Protected, redactor: opts.redactor(),
		saver: &wspace.Saver{StateDir: opts.StateDir, Build: opts.Build, Overview: opts.protectedOverview(), Redactor: opts.redactor()},
	}
	if opts.OpenContext {
		t.open = wspace.OpenWithDesktop
	}
	reg.AddTool(mcp.Tool{
		Name:         ContextSaveTool,
		Title:        "Save the task context",
		Description:  contextSaveDescription,
		InputSchema:  contextSaveSchema,
		OutputSchema: mcp.EnvelopeOutputSchema,
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    mcp.Bool(false),
			DestructiveHint: mcp.Bool(false),
			OpenWorldHint:   mcp.Bool(false),
		},
	}, t.handle)
}

// taskIDInput turns a malformed task id into the tools' *InputError, so
// that it answers invalid_input.
func taskIDInput(err error) error {
	var te *wspace.TaskIDError
	if errors.As(err, &te) {
		return &InputError{Msg: te.Msg}
	}
	return err
}

func (t *contextSaver) handle(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
	var in contextSaveInput
	if err := decodeArguments(req.Arguments, &in); err != nil {
		return contextFailure(err), nil
	}
	return t.save(ctx, req.Caller(), &in), nil
}

func (t *contextSaver) save(ctx context.Context, caller mcp.Caller, in *contextSaveInput) *mcp.CallToolResult {
	principal := caller.Principal
	if in.ID == "" {
		in.ID = wspace.NewTaskID()
	}
	if err := wspace.ValidTaskID(in.ID); err != nil {
		return contextFailure(taskIDInput(err))
	}
	switch {
	case strings.TrimSpace(in.Description) == "":
		return contextFailure(&InputError{Msg: "description is required"})
	case len(in.Description) > MaxContextDescriptionBytes:
		return contextFailure(&InputError{Msg: fmt.Sprintf("description is longer than %d bytes", MaxContextDescriptionBytes)})
	case len(in.RelevantFileGlobs) > MaxContextGlobs:
		return contextFailure(&InputError{Msg: fmt.Sprintf("relevant_file_globs has more than %d entries", MaxContextGlobs)})
	}
	for i, g := range in.RelevantFileGlobs {
		if err := wspace.CheckGlob(g); err != nil {
			return contextFailure(&InputError{Msg: fmt.Sprintf("relevant_file_globs[%d] %q: %v", i, g, err)})
		}
	}
	if t.saver.StateDir == "" {
		return contextFailure(ErrStateDirUnavailable)
	}
	sess, err := t.session(ctx, caller, in)
	if err != nil {
		return contextFailure(err)
	}
	policy, err := filePolicy(caller, sess, t.allowPaths, t.protected)
	if err != nil {
		return contextFailure(err)
	}
	root := sess.Root
	if in.ProjectRootPath != "" {
		if root, err = policy.Resolve(in.ProjectRootPath); err != nil {
			return contextFailure(err)
		}
		if fi, err := os.Stat(root); err != nil {
			return contextFailure(&session.WorkspaceError{Path: in.ProjectRootPath, Err: session.ErrWorkspaceNotFound})
		} else if !fi.IsDir() {
			return contextFailure(&InputError{Msg: fmt.Sprintf("project_root_path %q is not a directory", in.ProjectRootPath)})
		}
	}

	// Task ids are the principal's own: one principal can neither read
	// nor overwrite another's context under the same id.
	saver := *t.saver
	saver.StateDir = wspace.PrincipalStateDir(saver.StateDir, principal)
	// What the session did is read from where it outlives this adapter:
	// its work record in the state directory, and its shell's own record
	// of the commands.
	sess.UseWorkDir(saver.StateDir)
	sess.UseHistoryDir(saver.StateDir)
	data, err := saver.Save(ctx, wspace.Task{ID: in.ID, Root: root, Description: in.Description,
		Globs: in.RelevantFileGlobs, Policy: policy, ActiveFiles: activeFiles(sess),
		Terminal: terminalState(ctx, sess)})
	if err != nil {
		return contextFailure(err)
	}
	if t.open != nil {
		// Showing the file is a courtesy: its failure never fails the save.
		if name, err := t.open(data.Path); err == nil {
			data.OpenedWith = name
		}
	}
	return t.answer(data)
}

// activeFiles are the files the session read or edited for a saved
// context (session.Work), the most recently touched first.
func activeFiles(sess *session.Session) []wspace.ActiveFile {
	ranges := func(rs [][2]int) []evidence.Range {
		out := make([]evidence.Range, len(rs))
		for i, r := range rs {
			out[i] = evidence.Range{Start: r[0], End: r[1]}
		}
		return out
	}
	var out []wspace.ActiveFile
	for _, f := range sess.Work() {
		out = append(out, wspace.ActiveFile{Path: f.Path, Read: ranges(f.Read), Edited: f.Edited, Wrote: ranges(f.Wrote)})
	}
	return out
}

// terminalState is the session's shell for a saved context: its cwd now
// and its last commands (session.Commands: the shell's own record, so
// commands an earlier adapter ran count); nil when the session has no
// shell.
func terminalState(ctx context.Context, sess *session.Session) *wspace.TerminalState {
	sh := sess.Shell()
	if sh == nil {
		return nil
	}
	st := &wspace.TerminalState{Cwd: sh.Cwd(ctx)}
	for i, r := range sess.Commands(ctx) {
		if i == 0 && r.Running {
			st.Running = r.Command
		}
		st.Commands = append(st.Commands, wspace.CommandRun{Command: r.Command, Running: r.Running, ExitCode: r.ExitCode, Cwd: r.Cwd})
	}
	if st.Cwd == "" && len(st.Commands) > 0 {
		st.Cwd = st.Commands[0].Cwd
	}
	return st
}

// session finds the session the call works in: by workspace_root (with
// thread_id), by thread_id alone, or by project_root_path as a workspace.
func (t *contextSaver) session(ctx context.Context, caller mcp.Caller, in *contextSaveInput) (*session.Session, error) {
	principal := caller.Principal
	switch {
	case in.WorkspaceRoot != "":
		return lookupSession(ctx, t.sessions, t.affinity, caller, in.ThreadID, in.WorkspaceRoot)
	case in.ThreadID != "":
		return t.sessions.ByThread(principal, in.ThreadID)
	case in.ProjectRootPath != "":
		return t.sessions.Lookup(principal, "", in.ProjectRootPath)
	}
	return nil, session.ErrNotInitialized
}

func (t *contextSaver) answer(data *wspace.SaveResult) *mcp.CallToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "Saved the context of task %s to %s (%d bytes, about %d tokens).\n", data.ID, data.Path, data.Bytes, data.Tokens)
	fmt.Fprintf(&b, "Project root: %s.\n", data.ProjectRoot)
	fmt.Fprintf(&b, "Files saved: %d", len(data.FilesIncluded))
	if len(data.FilesTruncated) > 0 {
		fmt.Fprintf(&b, " (%d truncated)", len(data.FilesTruncated))
	}
	fmt.Fprintf(&b, "; left out: %d.\n", len(data.FilesOmitted)+data.FilesOmittedMore)
	for _, o := range data.FilesOmitted {
		fmt.Fprintf(&b, "- %s: %s\n", o.Path, o.Reason)
	}
	if data.FilesOmittedMore > 0 {
		fmt.Fprintf(&b, "- and %d more\n", data.FilesOmittedMore)
	}
	if len(data.UnmatchedGlobs) > 0 {
		fmt.Fprintf(&b, "Globs that matched nothing: %s.\n", strings.Join(data.UnmatchedGlobs, ", "))
	}
	if data.ScanTruncated {
		b.WriteString("Matching stopped early; narrow the globs to save the rest.\n")
	}
	if data.OpenedWith != "" {
		fmt.Fprintf(&b, "Opened with %s.\n", data.OpenedWith)
	}
	fmt.Fprintf(&b, "Resume with Initialize type first_call and task_id_to_resume=%s.\n", data.ID)
	env := mcp.Envelope{Status: mcp.StatusCompleted, Tool: ContextSaveTool, Data: data,
		Message: fmt.Sprintf("Saved task %s.", data.ID)}
	text, _ := t.redactor.String(b.String())
	return env.Result(text)
}

// contextFailure is the result of a save that wrote nothing.
func contextFailure(err error) *mcp.CallToolResult {
	var env mcp.Envelope
	switch {
	case errors.Is(err, ErrStateDirUnavailable):
		env = mcp.Envelope{Tool: ContextSaveTool, Status: mcp.StatusFailed, ErrorCode: codeStateDirUnavailable,
			Message: "This server has no state directory (set XDG_STATE_HOME or HOME), so contexts cannot be saved."}
	case errors.Is(err, auth.ErrPathProtected):
		env = mcp.Envelope{Tool: ContextSaveTool, Status: mcp.StatusDenied, ErrorCode: codeFileOperationDenied,
			Message: "project_root_path is " + protectedPathText + "."}
	case errors.Is(err, auth.ErrPathDenied):
		env = mcp.Envelope{Tool: ContextSaveTool, Status: mcp.StatusDenied, ErrorCode: codeFileOperationDenied, Retryable: true,
			Message: "project_root_path is outside the workspace and the allowed paths: " + err.Error()}
	case errors.Is(err, auth.ErrPathInvalid):
		env = mcp.Envelope{Tool: ContextSaveTool, Status: mcp.StatusInvalidInput, ErrorCode: codeInvalidToolInput, Retryable: true,
			Message: "Invalid project_root_path: " + err.Error()}
	default:
		env = errorEnvelope(ContextSaveTool, err)
	}
	return env.Result(env.Message)
}
