package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"winx/auth"
	"winx/auth/policy"
	"winx/edit"
	"winx/evidence"
	"winx/evidence/redact"
	"winx/guardian"
	"winx/mcp"
	"winx/mcp/session"
	wspace "winx/mcp/workspace" // "workspace" names a test helper of this package
)

// EditFilesTool is the guarded edit tool's name.
const EditFilesTool = "EditFiles"

// EditFiles limits.
const (
	maxEditFiles           = 100
	defaultVerifyWait      = 15
	maxVerifyWait          = 60
	maxNearestMessageBytes = 4 << 10
)

// Error codes of EditFiles.
const (
	codeReadRequired          = "read_required"
	codeSearchBlockNotFound   = "search_block_not_found"
	codeSearchBlockAmbiguous  = "search_block_ambiguous"
	codeVerificationFailed    = "verification_failed"
	codeRecoveryExhausted     = "recovery_exhausted"
	codeEditCommitIncomplete  = "execution_failed"
	codeUndoNotFound          = "undo_not_found"
	codeSearchBlockConflicted = "search_block_conflict"
	// codeRedactedPlaceholder: new text would write a [REDACTED:...]
	// placeholder that stands for no secret of the text it replaces.
	codeRedactedPlaceholder = "redacted_placeholder"
)

type editTool struct {
	// affinity is the catalog's session affinity (the scope of a reattach).
	affinity   string
	sessions   *session.Sessions
	allowPaths []string
	protected  *auth.Protected
	stateDir   string
	editors    *editors // builds sessions' engines, shared with ReadFiles
	redactor   *redact.Redactor
}

type editInput struct {
	Operation            string          `json:"operation"`
	Files                []editFileInput `json:"files"`
	VerifyCommand        string          `json:"verify_command"`
	VerifyWaitForSeconds *float64        `json:"verify_wait_for_seconds"`
	ThreadID             string          `json:"thread_id"`
	WorkspaceRoot        string          `json:"workspace_root"`
}

type editFileInput struct {
	FilePath         string       `json:"file_path"`
	Mode             string       `json:"mode"`
	ExpectedRevision string       `json:"expected_revision"`
	Patches          []patchInput `json:"patches"`
	Content          *string      `json:"content"`
	UndoID           string       `json:"undo_id"`
}

type patchInput struct {
	StartLine   int    `json:"start_line"`
	DeleteLines int    `json:"delete_lines"`
	Replacement string `json:"replacement"`
}

func addEditFiles(reg *mcp.Registry, opts Options, eds *editors) *editTool {
	t := &editTool{sessions: opts.Sessions, affinity: opts.Affinity, allowPaths: opts.AllowPaths, protected: opts.Protected, stateDir: opts.StateDir,
		editors: eds, redactor: opts.redactor()}
	reg.AddTool(mcp.Tool{
		Name:         EditFilesTool,
		Title:        "Edit files",
		Description:  editDescription,
		InputSchema:  editSchema,
		OutputSchema: mcp.EnvelopeOutputSchema,
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    mcp.Bool(false),
			DestructiveHint: mcp.Bool(true),
			OpenWorldHint:   mcp.Bool(true),
		},
	}, t.handle)
	return t
}

const editDescription = `Edit files atomically, only where you have read them. Modes: line_patch (expected_revision and patches {start_line, delete_lines, replacement} in the lines of that revision), search_replace (<<<<<<< SEARCH / ======= / >>>>>>> REPLACE blocks; "@N" after SEARCH pins a line), replace (the whole file; overwriting needs a full read), undo (an earlier undo_id).
A batch writes nothing if any file fails. verify_command runs once after the edit in the session's shell.`

var editSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "operation": {"type": "string", "enum": ["apply", "undo"]},
    "files": {
      "type": "array", "minItems": 1, "maxItems": 100,
      "items": {
        "type": "object",
        "properties": {
          "file_path": {"type": "string"},
          "mode": {"type": "string", "enum": ["line_patch", "search_replace", "replace", "undo"]},
          "expected_revision": {"type": "string", "description": "the revision the patches refer to, as a read or edit gave it (line_patch)"},
          "patches": {
            "type": "array", "minItems": 1, "maxItems": 256,
            "items": {
              "type": "object",
              "properties": {
                "start_line": {"type": "integer", "minimum": 1},
                "delete_lines": {"type": "integer", "minimum": 0, "description": "0 inserts before start_line"},
                "replacement": {"type": "string"}
              },
              "required": ["start_line", "delete_lines", "replacement"],
              "additionalProperties": false
            }
          },
          "content": {"type": "string"},
          "undo_id": {"type": "string"}
        },
        "additionalProperties": false
      }
    },
    "verify_command": {"type": "string", "description": "A shell command run once after the edit, e.g. a build or test"},
    "verify_wait_for_seconds": {"type": "number", "minimum": 0, "maximum": 60},
    "thread_id": {"type": "string", "minLength": 1},
    "workspace_root": {"type": "string", "minLength": 1}
  },
  "required": ["files", "thread_id", "workspace_root"],
  "additionalProperties": false
}`)

func (t *editTool) handle(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
	var in editInput
	if err := decodeArguments(req.Arguments, &in); err != nil {
		return toolFailure(EditFilesTool, err), nil
	}
	return t.apply(ctx, req.Caller(), &in), nil
}

// apply runs one validated-shape call of caller; the legacy aliases lower
// into it.
func (t *editTool) apply(ctx context.Context, caller mcp.Caller, in *editInput) *mcp.CallToolResult {
	if in.VerifyCommand != "" && !caller.Profile.Allows(BashCommandTool) {
		// verify_command runs a shell command: that is BashCommand's
		// authority, whatever tool carries it. Refused before anything
		// is planned or written.
		return toolFailure(EditFilesTool, fmt.Errorf("%w: verify_command runs a shell command, which needs %s; nothing was written", ErrToolNotAllowed, BashCommandTool))
	}
	edits, err := in.edits()
	if err != nil {
		return toolFailure(EditFilesTool, err)
	}
	mcp.NoteCall(ctx, mcp.CallFacts{Batch: len(edits)})
	wait := time.Duration(defaultVerifyWait) * time.Second
	if in.VerifyWaitForSeconds != nil {
		if *in.VerifyWaitForSeconds < 0 || *in.VerifyWaitForSeconds > maxVerifyWait {
			return toolFailure(EditFilesTool, &InputError{Msg: "verify_wait_for_seconds must be between 0 and 60"})
		}
		wait = time.Duration(*in.VerifyWaitForSeconds * float64(time.Second))
	}
	if in.WorkspaceRoot == "" {
		return toolFailure(EditFilesTool, session.ErrWorkspaceBindingRequired)
	}
	sess, err := lookupSession(ctx, t.sessions, t.affinity, caller, in.ThreadID, in.WorkspaceRoot)
	if err != nil {
		return toolFailure(EditFilesTool, err)
	}
	eng, err := t.engine(caller, sess)
	if err != nil {
		return toolFailure(EditFilesTool, err)
	}
	mode := sess.Mode()
	if res := t.editGate(ctx, sess, in); res != nil { // architect, verify_command (modepolicy.go)
		return res
	}
	plan, err := eng.Plan(edits)
	if err != nil {
		return t.failure(in, err)
	}
	for _, f := range plan.Files {
		if err := mode.AllowsWrite(f.Path); err != nil {
			return t.failure(in, err)
		}
	}
	syntax := syntaxBaseline(plan) // before Commit: which targets parse cleanly now
	res, err := eng.Commit(ctx, plan)
	sess.SaveLedger() // a commit moves the ledger, even one that stopped part-way
	noteEdits(sess, res)
	if err != nil {
		return t.failure(in, err)
	}
	return syntax.annotate(t.success(ctx, in, sess, res, wait), res, in)
}

// noteEdits records the files res wrote in the session's work record, on
// disk before the answer, so an adapter that serves the session next
// reports them (ContextSave).
func noteEdits(sess *session.Session, res *edit.Result) {
	if res == nil {
		return
	}
	for _, f := range res.Files {
		if !f.Replayed {
			sess.NoteEdit(f.Path, f.Wrote)
		}
	}
	sess.SaveWork()
}

// edits lowers the input into engine edits, checking the shape rules the
// schema cannot express.
func (in *editInput) edits() ([]edit.FileEdit, error) {
	switch in.Operation {
	case "", "apply", "undo":
	default:
		return nil, &InputError{Msg: fmt.Sprintf("operation %q is not one of apply, undo", in.Operation)}
	}
	if len(in.Files) == 0 || len(in.Files) > maxEditFiles {
		return nil, &InputError{Msg: fmt.Sprintf("files needs 1 to %d entries", maxEditFiles)}
	}
	out := make([]edit.FileEdit, 0, len(in.Files))
	for i, f := range in.Files {
		mode := f.Mode
		if in.Operation == "undo" {
			if mode != "" && mode != string(edit.ModeUndo) {
				return nil, &InputError{Msg: fmt.Sprintf("files[%d]: operation undo takes only undo entries", i)}
			}
			mode = string(edit.ModeUndo)
		}
		if mode == "" {
			mode = inferEditMode(f)
		}
		fe := edit.FileEdit{Path: f.FilePath, Mode: edit.Mode(mode), UndoID: f.UndoID}
		if f.ExpectedRevision != "" {
			rev, err := evidence.ParseRevisionRef(f.ExpectedRevision)
			if err != nil {
				return nil, &InputError{Msg: fmt.Sprintf("files[%d].expected_revision: %v", i, err)}
			}
			fe.ExpectedRevision = rev
		}
		if f.Content != nil {
			fe.Content = *f.Content
		}
		for _, p := range f.Patches {
			fe.Patches = append(fe.Patches, edit.Patch{StartLine: p.StartLine, DeleteLines: p.DeleteLines, Replacement: p.Replacement})
		}
		out = append(out, fe)
	}
	return out, nil
}

// inferEditMode picks the mode an entry's payload implies.
func inferEditMode(f editFileInput) string {
	switch {
	case f.UndoID != "":
		return string(edit.ModeUndo)
	case len(f.Patches) > 0:
		return string(edit.ModeLinePatch)
	case f.Content != nil && strings.Contains(*f.Content, "<<<<<<< SEARCH"):
		return string(edit.ModeSearchReplace)
	}
	return string(edit.ModeReplace)
}

// engine returns the session's edit engine (editors.engine).
func (t *editTool) engine(caller mcp.Caller, sess *session.Session) (*edit.Engine, error) {
	return t.editors.engine(caller, sess)
}

// editors builds sessions' edit engines the one way, for EditFiles and for
// the reads that first settle an interrupted batch: one set of in-process
// path locks for every session's engine.
type editors struct {
	allowPaths []string
	protected  *auth.Protected
	stateDir   string
	locks      *edit.PathLocks
	redactor   *redact.Redactor
}

func newEditors(opts Options) *editors {
	return &editors{allowPaths: opts.AllowPaths, protected: opts.Protected, stateDir: opts.StateDir, locks: &edit.PathLocks{}, redactor: opts.redactor()}
}

// engine returns the session's edit engine, which the session builds on
// its first use: confined to caller's allowed_roots, with receipts, undo
// records and batch intents in the principal's own state directory.
func (d *editors) engine(caller mcp.Caller, sess *session.Session) (*edit.Engine, error) {
	if err := checkRoot(caller, sess.Root, ""); err != nil {
		return nil, err
	}
	sess.UseLedgerDir(wspace.PrincipalStateDir(d.stateDir, sess.Key.Principal))
	sess.UseWorkDir(wspace.PrincipalStateDir(d.stateDir, sess.Key.Principal))
	lockDir := ""
	if d.stateDir != "" {
		// Shared by every principal: two principals may edit one file.
		lockDir = filepath.Join(d.stateDir, "edit-locks")
	}
	return sess.EditEngine(session.EditConfig{AllowPaths: auth.ConfineRoots(d.allowPaths, caller.Roots), Protected: d.protected,
		StateDir: d.engineStateDir(sess), Locks: d.locks, LockDir: lockDir, Redactor: d.redactor})
}

// engineStateDir is where the session's engine keeps its state (intents
// among it).
func (d *editors) engineStateDir(sess *session.Session) string {
	return wspace.PrincipalStateDir(d.stateDir, sess.Key.Principal)
}

// settle rolls back an interrupted batch of the caller's that names path
// before path is read: a read never sees a batch half done. Nothing is
// built or locked while no batch of the principal was interrupted.
func (d *editors) settle(caller mcp.Caller, sess *session.Session, path string) error {
	if d.stateDir == "" || !edit.Interrupted(session.EngineStateDir(d.engineStateDir(sess))) {
		return nil
	}
	eng, err := d.engine(caller, sess)
	if err != nil {
		return err
	}
	return eng.Settle([]string{path})
}

type editFileData struct {
	Path       string   `json:"path"`
	Revision   string   `json:"revision,omitempty"`
	UndoID     string   `json:"undo_id,omitempty"`
	Created    bool     `json:"created,omitempty"`
	Deleted    bool     `json:"deleted,omitempty"` // undo of a creation removed the file
	Replayed   bool     `json:"replayed,omitempty"`
	Tolerances []string `json:"tolerances,omitempty"`
}

type editData struct {
	Files       []editFileData `json:"files,omitempty"`
	EditApplied bool           `json:"edit_applied"`
	Committed   []string       `json:"committed,omitempty"`
	Failed      string         `json:"failed,omitempty"`
	Untouched   []string       `json:"untouched,omitempty"`
	// RolledBack: files of a failed batch written and then restored.
	RolledBack []string `json:"rolled_back,omitempty"`
	// Recovered: this call finished the same batch an earlier call left
	// part-way.
	Recovered bool `json:"recovered,omitempty"`
	// Revision and ChangedRanges answer a revision_mismatch that the
	// session's own edit caused: the file's revision now and the lines
	// of it that edit changed.
	Revision      string   `json:"revision,omitempty"`
	ChangedRanges []string `json:"changed_ranges,omitempty"`
	VerifyExit    *int     `json:"verify_exit_code,omitempty"`
}

// trimDiffHeader drops the "--- path" / "+++ path" lines of a diff of
// path: the line before it already names the file.
func trimDiffHeader(diff, path string) string {
	head := "--- " + path + "\n+++ " + path + "\n"
	return strings.TrimPrefix(diff, head)
}

// createdSize counts the lines and bytes a creation diff adds (its "+"
// lines, the "+++" header excluded).
func createdSize(diff string) (lines, bytes int) {
	for l := range strings.SplitSeq(diff, "\n") {
		if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
			lines++
			bytes += len(l) // the line without its "+", plus its newline
		}
	}
	return lines, bytes
}

func (t *editTool) success(ctx context.Context, in *editInput, sess *session.Session, res *edit.Result, wait time.Duration) *mcp.CallToolResult {
	data := editData{EditApplied: true}
	var b strings.Builder
	for _, f := range res.Files {
		data.Files = append(data.Files, editFileData{Path: f.Path, Revision: f.NewRevision.Short(),
			UndoID: f.UndoID, Created: f.Created, Deleted: f.Removed, Replayed: f.Replayed, Tolerances: f.Tolerances})
		switch {
		case f.Replayed:
			fmt.Fprintf(&b, "%s: already applied (an identical earlier call); nothing written\n", f.Path)
		case f.Removed:
			fmt.Fprintf(&b, "%s: deleted (the undo removed the file the edit had created)", f.Path)
			if f.UndoID != "" {
				fmt.Fprintf(&b, " (undo_id %s)", f.UndoID)
			}
			b.WriteString("\n")
		default:
			fmt.Fprintf(&b, "%s: now %s", f.Path, f.NewRevision.Short())
			if f.UndoID != "" {
				fmt.Fprintf(&b, " (undo_id %s)", f.UndoID)
			}
			if len(f.Tolerances) > 0 {
				fmt.Fprintf(&b, "; matched with tolerances: %s", strings.Join(f.Tolerances, ", "))
			}
			b.WriteString("\n")
			if f.Created && f.Diff != "" {
				// The model wrote every line itself: echoing the new file
				// back costs its whole size again.
				lines, bytes := createdSize(f.Diff)
				fmt.Fprintf(&b, "created with %d lines (%d bytes)\n", lines, bytes)
				break
			}
			if diff := trimDiffHeader(f.Diff, f.Path); diff != "" {
				b.WriteString(diff)
				if !strings.HasSuffix(diff, "\n") {
					b.WriteString("\n")
				}
			}
		}
	}
	// No message: the text says per file what happened (written, deleted,
	// or already applied by an identical earlier call), and a count would
	// either repeat it or, for a replay, claim an edit that did not happen.
	env := mcp.Envelope{Status: mcp.StatusCompleted, Tool: EditFilesTool, Data: &data}
	if res.Recovered {
		// The same call had been cut off part-way (its writer died): this
		// one finished it, as the model meant it.
		env.Message = fmt.Sprintf("Finished an interrupted batch (an earlier identical call stopped part-way): all %d file(s) now hold the new text.", len(res.Files))
		data.Recovered = true
	}
	if in.VerifyCommand != "" {
		t.verify(ctx, in, sess, wait, &env, &data, &b)
	}
	return env.Result(strings.TrimRight(b.String(), "\n"))
}

// verify runs verify_command once in the session's shell. A failing check
// leaves the edit applied and says so.
func (t *editTool) verify(ctx context.Context, in *editInput, sess *session.Session, wait time.Duration, env *mcp.Envelope, data *editData, b *strings.Builder) {
	rerun := &mcp.NextAction{Tool: BashCommandTool, Instruction: "Rerun only the check; the edit is already applied.",
		Arguments: map[string]any{"action_json": map[string]any{"type": actCommand, "command": in.VerifyCommand},
			"thread_id": in.ThreadID, "workspace_root": in.WorkspaceRoot}}
	term := sess.Shell()
	if term == nil {
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusCompletedWithIssues, codeVerificationFailed, true
		env.Message = "The edit was applied; the session has no shell to run verify_command."
		return
	}
	o, err := term.Run(ctx, in.VerifyCommand, wait)
	switch {
	case errors.Is(err, guardian.ErrCommandRunning):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusCompletedWithIssues, codeVerificationFailed, true
		env.Message = "The edit was applied; verify_command did not run because a command is already running."
		env.NextAction = rerun
	case err != nil:
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusCompletedWithIssues, codeVerificationFailed, true
		env.Message = "The edit was applied; verify_command could not run: " + err.Error()
		env.NextAction = rerun
	case o.Running:
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusCompletedWithIssues, codeVerificationFailed, true
		env.Message = fmt.Sprintf("The edit was applied; verify_command was still running after %.0f s.", wait.Seconds())
		env.NextAction = &mcp.NextAction{Tool: BashCommandTool, Instruction: "Wait for the check to finish.",
			Arguments: map[string]any{"action_json": map[string]any{"type": actStatusCheck}, "thread_id": in.ThreadID, "workspace_root": in.WorkspaceRoot}}
		fmt.Fprintf(b, "---\nverify_command still running after %.0f s\n%s\n", wait.Seconds(), o.Output.Text)
	default:
		code := o.ExitCode
		data.VerifyExit = &code
		fmt.Fprintf(b, "---\nverify_command exited with %d\n%s\n", code, o.Output.Text)
		if code != 0 {
			env.Status, env.ErrorCode, env.Retryable = mcp.StatusCompletedWithIssues, codeVerificationFailed, true
			env.Message = fmt.Sprintf("The edit was applied; verify_command exited with %d.", code)
			env.NextAction = rerun
		}
	}
}

// failure maps the engine's typed errors to the envelope.
func (t *editTool) failure(in *editInput, err error) *mcp.CallToolResult {
	var (
		nr  *edit.NeedsReadError
		ce  *edit.ConflictError
		nf  *edit.NotFoundError
		re  *edit.RecoveryExhaustedError
		me  *edit.MatchError
		bse *edit.BlockSyntaxError
		cm  *edit.CommitError
		wd  *policy.WriteDeniedError
		sp  *edit.SecretPlaceholderError
	)
	env := mcp.Envelope{Tool: EditFilesTool, Retryable: true}
	switch {
	// A commit that stopped part-way wraps its cause; it must be told
	// apart first, because files before the failure were written. A
	// commit that stopped at its first file wrote nothing: it is its
	// cause (a conflict found at commit time is a conflict).
	case errors.As(err, &cm) && len(cm.Committed) > 0:
		env.Status, env.ErrorCode = mcp.StatusFailed, codeEditCommitIncomplete
		if errors.As(cm.Err, &ce) {
			env.Status, env.ErrorCode = mcp.StatusConflict, ce.Reason
			env.NextAction = readNext(in, ce.Path)
		}
		data := editData{EditApplied: true, Failed: cm.Failed, Untouched: cm.Untouched, RolledBack: cm.RolledBack}
		var undo []string
		for _, f := range cm.Committed {
			data.Committed = append(data.Committed, f.Path)
			data.Files = append(data.Files, editFileData{Path: f.Path, Revision: f.NewRevision.Short(),
				UndoID: f.UndoID, Created: f.Created, Tolerances: f.Tolerances})
			if f.UndoID != "" {
				undo = append(undo, f.Path+" (undo_id "+f.UndoID+")")
			}
		}
		env.Data = data
		env.Message = fmt.Sprintf("Writing %s failed (%v). Committed before it: %s. Untouched: %s.",
			cm.Failed, cm.Err, listOrNone(data.Committed), listOrNone(cm.Untouched))
		if cm.RestoreErr != nil {
			env.Message += fmt.Sprintf(" Restoring them failed too (%v).", cm.RestoreErr)
		}
		if len(cm.RolledBack) > 0 {
			env.Message += " Restored to their original text: " + strings.Join(cm.RolledBack, ", ") + "."
		}
		if len(undo) > 0 {
			env.Message += " To revert the committed files: " + strings.Join(undo, ", ") + "."
		}
	case errors.As(err, &cm) && cm.Err != nil && !errors.As(cm.Err, &nr) && !errors.As(cm.Err, &ce) && !errors.Is(cm.Err, edit.ErrDenied) && !errors.Is(cm.Err, edit.ErrInvalid):
		// Nothing was written, for a reason that is no edit error (I/O).
		env.Status, env.ErrorCode = mcp.StatusFailed, codeEditCommitIncomplete
		env.Data = editData{Failed: cm.Failed, Untouched: cm.Untouched, RolledBack: cm.RolledBack}
		env.Message = fmt.Sprintf("Writing %s failed (%v). Nothing was written.", cm.Failed, cm.Err)
		if len(cm.RolledBack) > 0 {
			env.Message = fmt.Sprintf("Writing %s failed (%v). The file(s) written before it were restored (%s): nothing changed.",
				cm.Failed, cm.Err, strings.Join(cm.RolledBack, ", "))
		}
	case errors.As(err, &nr):
		env.Status, env.ErrorCode = mcp.StatusNeedsRead, codeReadRequired
		var specs []string
		for _, r := range nr.Reads {
			rr := mcp.RequiredRead{Path: r.Path}
			for _, rg := range r.Ranges {
				rr.Ranges = append(rr.Ranges, rangeText(rg))
				specs = append(specs, r.Path+":"+rangeText(rg))
			}
			env.RequiredReads = append(env.RequiredReads, rr)
		}
		env.Message = "Read these lines first: " + strings.Join(specs, ", ") + ". Nothing was written."
		env.NextAction = &mcp.NextAction{Tool: ReadFilesTool, Instruction: "Read exactly these ranges, then repeat the edit.",
			Arguments: map[string]any{"file_paths": specs, "thread_id": in.ThreadID, "workspace_root": in.WorkspaceRoot}}
	case errors.As(err, &re):
		env.Status, env.ErrorCode = mcp.StatusRecoveryExhausted, codeRecoveryExhausted
		env.Message = "Three SEARCH blocks in a row failed on " + re.Path + "; read the file again and use line_patch. Nothing was written."
		env.NextAction = readNext(in, re.Path)
	case errors.As(err, &ce):
		env.Status, env.ErrorCode = mcp.StatusConflict, ce.Reason
		env.Message = fmt.Sprintf("%s changed since you read it (you saw %s, it is %s now); read it again. Nothing was written.", ce.Path, ce.Want.Short(), revOrGone(ce.Got))
		switch {
		case ce.OwnEdit:
			changed := make([]string, len(ce.Changed))
			for i, r := range ce.Changed {
				changed[i] = rangeText(r)
			}
			env.Data = editData{Revision: ce.Got.Short(), ChangedRanges: changed}
			env.Message = fmt.Sprintf("expected_revision %s is stale because of your own edit: %s is now %s, and your edits changed lines %s of it. The other lines you read are still known at %s: redo the patch with expected_revision %s and that revision's line numbers (no read needed). Nothing was written.",
				ce.Want.Short(), ce.Path, ce.Got.Short(), listOrNone(changed), ce.Got.Short(), ce.Got.Short())
			env.NextAction = nil
		case ce.NeverIssued:
			// No read gave that revision: a read is what is missing, not a
			// change since one (the contract's needs_read). The session
			// does know the current revision, so it is named.
			env.Status, env.ErrorCode = mcp.StatusNeedsRead, codeReadRequired
			env.RequiredReads = []mcp.RequiredRead{{Path: ce.Path}}
			env.Data = editData{Revision: ce.Got.Short()}
			env.Message = fmt.Sprintf("expected_revision %s was never given to this session for %s (no read or edit returned it); the file is at %s, which you have read: use that revision. Nothing was written.", ce.Want.Short(), ce.Path, ce.Got.Short())
			env.NextAction = nil
		}
		if ce.Reason == edit.ReasonBusy {
			env.Message = ce.Path + " is being written by another writer that holds its lock; read it again and retry. Nothing was written."
		}
		if ce.Reason == edit.ReasonChangedSinceEdit {
			env.Message = ce.Path + " changed after the edit; undo would overwrite that change, so it was refused."
		}
		env.NextAction = readNext(in, ce.Path)
	case errors.As(err, &me):
		env.Status = mcp.StatusConflict
		env.ErrorCode = codeSearchBlockNotFound
		if me.Kind == edit.Ambiguous {
			env.ErrorCode = codeSearchBlockAmbiguous
		} else if me.Kind != edit.NotFound {
			env.ErrorCode = codeSearchBlockConflicted
		}
		msg := err.Error()
		var fe *edit.FileError
		if errors.As(err, &fe) {
			msg = fe.Path + ": " + strings.TrimPrefix(me.Error(), "edit: ")
		}
		if me.Nearest != nil && fe != nil {
			near := me.Nearest.Text
			if len(near) > maxNearestMessageBytes {
				near = near[:maxNearestMessageBytes] + "\n..."
			}
			msg = fmt.Sprintf("%s: %s was not found in the file. Nearest candidate (~ marks lines that differ from the SEARCH):\n%s", fe.Path, me.BlockName(), near)
		}
		env.Message = msg + "\nNothing was written."
		if me.Kind == edit.NotFound && fe != nil {
			env.NextAction = nearestNext(in, fe.Path, me.Nearest)
		}
	case errors.As(err, &sp):
		env.Status, env.ErrorCode = mcp.StatusInvalidInput, codeRedactedPlaceholder
		env.Message = err.Error() + ". Nothing was written."
	case errors.As(err, &bse):
		env.Status, env.ErrorCode = mcp.StatusInvalidInput, codeInvalidToolInput
		env.Message = err.Error() + ". Nothing was written."
	case errors.As(err, &nf):
		env.Status, env.ErrorCode = mcp.StatusNotFound, codeFileNotFound
		if nf.UndoID != "" {
			env.ErrorCode = codeUndoNotFound
		}
		env.Message = err.Error() + ". Nothing was written."
	case errors.As(err, &wd):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusDenied, codeFileOperationDenied, false
		env.Message = wd.Denial() + "; ask the user to change the mode (Initialize user_asked_mode_change). Nothing was written."
	case errors.Is(err, edit.ErrDenied):
		env.Status, env.ErrorCode = mcp.StatusDenied, codeFileOperationDenied
		env.Message = err.Error() + ". Nothing was written."
	case errors.Is(err, edit.ErrInvalid):
		env.Status, env.ErrorCode = mcp.StatusInvalidInput, codeInvalidToolInput
		env.Message = err.Error() + ". Nothing was written."
	default:
		return toolFailure(EditFilesTool, err)
	}
	return env.Result(env.Message)
}

// nearestContext is how many lines around a nearest candidate its next
// action reads, so the retried SEARCH can take its exact neighbours.
const nearestContext = 3

// nearestNext is the next action of a SEARCH that was not found: read the
// nearest candidate's lines (with a little context) to copy their exact
// text, or the whole file when no line is like the SEARCH.
func nearestNext(in *editInput, path string, n *edit.Nearest) *mcp.NextAction {
	if n == nil {
		next := readNext(in, path)
		next.Instruction = "No line of the file is like the SEARCH text: read the file, then retry with text copied from it."
		return next
	}
	spec := fmt.Sprintf("%s:%d-%d", path, max(1, n.StartLine-nearestContext), n.EndLine+nearestContext)
	return &mcp.NextAction{Tool: ReadFilesTool,
		Instruction: "Read the candidate's lines, then retry the block with their exact text (or a line_patch of them).",
		Arguments:   map[string]any{"file_paths": []string{spec}, "thread_id": in.ThreadID, "workspace_root": in.WorkspaceRoot}}
}

func readNext(in *editInput, path string) *mcp.NextAction {
	return &mcp.NextAction{Tool: ReadFilesTool, Instruction: "Read the file again at its current revision.",
		Arguments: map[string]any{"file_paths": []string{path}, "thread_id": in.ThreadID, "workspace_root": in.WorkspaceRoot}}
}

// rangeText renders a range the way requiredReads and ReadFiles want it:
// always "A-B" or "A-".
func rangeText(r evidence.Range) string {
	if r.End == 0 {
		return fmt.Sprintf("%d-", r.Start)
	}
	return fmt.Sprintf("%d-%d", r.Start, r.End)
}

// revOrGone names a revision a conflict found, "" meaning the file is gone.
func revOrGone(r evidence.Revision) string {
	if r == "" {
		return "gone"
	}
	return r.Short()
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}
