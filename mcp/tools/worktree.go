package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"winx/auth"
	"winx/mcp"
	"winx/mcp/session"
	wspace "winx/mcp/workspace"
)

// Initialize's worktree_action values: they answer without a session.
const (
	worktreeList    = "list"
	worktreeChanges = "changes"
	worktreeRemove  = "remove"
)

// Error codes of the worktree calls.
const (
	codeWorktreeConflict = "worktree_conflict"
	codeWorktreeNotFound = "worktree_not_found"
	codeWorktreeDirty    = "worktree_dirty"
)

// worktreeInput is Initialize's worktree arguments, embedded in
// initializeInput (its fields decode as Initialize's own).
type worktreeInput struct {
	Worktree       string `json:"worktree"`
	WorktreeBase   string `json:"worktree_base"`
	WorktreeAction string `json:"worktree_action"`
	Force          bool   `json:"force"`

	// worktree is the managed worktree a first_call works in, and
	// worktreeCreated whether the call made it (not client input).
	worktree        *wspace.Worktree
	worktreeCreated bool
}

// errWorktreeReadOnly refuses making or removing a worktree to a caller
// whose tool profile writes nothing.
var errWorktreeReadOnly = errors.New("tools: this caller's tool profile cannot write")

// profileWrites reports a profile with a tool that changes files.
func profileWrites(p mcp.Profile) bool {
	return p.Allows(EditFilesTool) || p.Allows(BashCommandTool)
}

// worktreeData is the envelope's data of a worktree_action.
type worktreeData struct {
	Action    string                  `json:"action"`
	Worktrees []wspace.Worktree       `json:"worktrees,omitempty"`
	Changes   *wspace.WorktreeChanges `json:"changes,omitempty"`
	Removed   *wspace.Worktree        `json:"removed,omitempty"`
}

// worktrees is the service over the server's state directory.
func (t *initializer) worktrees() *wspace.Worktrees { return &wspace.Worktrees{StateDir: t.stateDir} }

// worktree handles Initialize's worktree arguments before the call type
// runs. A worktree_action is answered here (done true), without a session.
// A first_call with worktree gets its managed worktree (made, or found
// again) and goes on with any_workspace_path pointing into it, so the
// session, the mode's globs and the root checks all bind to the worktree.
func (t *initializer) worktree(ctx context.Context, principal string, in *initializeInput, profile mcp.Profile) (*mcp.CallToolResult, bool) {
	w := &in.worktreeInput
	if w.Worktree == "" && w.WorktreeBase == "" && w.WorktreeAction == "" && !w.Force {
		return nil, false
	}
	fail := func(err error) (*mcp.CallToolResult, bool) { return worktreeFailure(err, in), true }
	if in.Type != initFirstCall {
		return fail(&InputError{Msg: "worktree, worktree_base, worktree_action and force work only with type first_call"})
	}
	if in.AnyWorkspacePath == "" {
		return fail(&InputError{Msg: "worktree needs any_workspace_path inside a git repository"})
	}
	// The repository path passes the checks any_workspace_path passes.
	root, _, err := session.ResolveWorkspace(in.AnyWorkspacePath, "")
	if err == nil {
		err = checkRoot(mcp.Caller{Roots: in.roots}, root, in.AnyWorkspacePath)
	}
	if err != nil {
		return fail(err)
	}
	// Making a worktree adds a branch and a checkout; removing one may
	// discard work. A caller whose profile cannot write (read-only) may
	// list and inspect worktrees, nothing more.
	if w.WorktreeAction != worktreeList && w.WorktreeAction != worktreeChanges && !profileWrites(profile) {
		return fail(errWorktreeReadOnly)
	}
	svc := t.worktrees()
	needName := func() error {
		if w.Worktree == "" {
			return &InputError{Msg: "worktree_action " + w.WorktreeAction + " needs worktree (the task name)"}
		}
		return nil
	}
	if w.WorktreeAction != worktreeRemove && w.Force {
		return fail(&InputError{Msg: "force works only with worktree_action remove"})
	}
	if w.WorktreeAction != "" && w.WorktreeBase != "" {
		return fail(&InputError{Msg: "worktree_base works only when a worktree is made (no worktree_action)"})
	}
	var b strings.Builder
	data := worktreeData{Action: w.WorktreeAction}
	message := ""
	switch w.WorktreeAction {
	case "":
		if err := needName(); err != nil {
			return fail(&InputError{Msg: "worktree_base needs worktree (the task name)"})
		}
		// What the first call then checks on the worktree's path is
		// checked before git makes it: a call refused afterwards would
		// leave a branch and a checkout behind at every try, outside any
		// quota.
		svc.Admit = func(dir string) error {
			if err := checkRoot(mcp.Caller{Roots: in.roots}, dir, dir); err != nil {
				return err
			}
			if _, err := in.mode(dir); err != nil {
				return err
			}
			return t.sessions.CheckAttach(principal, in.scope, dir, in.ThreadID)
		}
		wt, created, err := svc.Create(ctx, root, w.Worktree, w.WorktreeBase)
		var be *session.ThreadBindingError
		if errors.As(err, &be) {
			return t.bindingFailure(err), true
		}
		if err != nil {
			return fail(err)
		}
		w.worktree, w.worktreeCreated = wt, created
		in.AnyWorkspacePath = wt.Path
		return nil, false
	case worktreeList:
		list, err := svc.List(ctx, root)
		if err != nil {
			return fail(err)
		}
		data.Worktrees = list
		message = fmt.Sprintf("%d managed worktree(s).", len(list))
		writeWorktreeList(&b, list)
	case worktreeChanges:
		if err := needName(); err != nil {
			return fail(err)
		}
		c, err := svc.Changes(ctx, root, w.Worktree, wspace.DefaultChangesTokens)
		if err != nil {
			return fail(err)
		}
		data.Changes = c
		message = fmt.Sprintf("Changes of worktree %s against its base.", c.Name)
		b.WriteString(c.Text)
	case worktreeRemove:
		if err := needName(); err != nil {
			return fail(err)
		}
		wt, err := svc.Remove(ctx, root, w.Worktree, w.Force)
		if err != nil {
			return fail(err)
		}
		data.Removed = wt
		// The sessions bound to it would go on in a deleted directory.
		gone := wt.Path
		if c, err := auth.CanonicalPlanned(gone); err == nil {
			gone = c // sessions hold canonical roots
		}
		if n := t.sessions.EndWorkspace(gone); n > 0 {
			fmt.Fprintf(&b, "Ended %d session(s) bound to it.\n", n)
		}
		if wt.BranchDeleted {
			// Undoing a creation that was cut off: its branch had no
			// commits of its own.
			message = fmt.Sprintf("Interrupted creation of worktree %s undone; branch %s, without commits of its own, is deleted.", wt.Name, wt.Branch)
			fmt.Fprintf(&b, "Undid the interrupted creation of worktree %s (%s) and deleted branch %s, which had no commits of its own.\n", wt.Name, wt.Path, wt.Branch)
			break
		}
		message = fmt.Sprintf("Worktree %s removed; branch %s is kept.", wt.Name, wt.Branch)
		fmt.Fprintf(&b, "Removed worktree %s (%s). Branch %s is kept: merge it or delete it with git.\n", wt.Name, wt.Path, wt.Branch)
	default:
		return fail(&InputError{Msg: fmt.Sprintf("worktree_action %q is not one of %s, %s, %s", w.WorktreeAction, worktreeList, worktreeChanges, worktreeRemove)})
	}
	env := mcp.Envelope{Status: mcp.StatusCompleted, Tool: InitializeTool, Message: message, Data: data}
	text, _ := t.redactor.String(b.String())
	return env.Result(text), true
}

// writeWorktreeList writes one line per worktree.
func writeWorktreeList(b *strings.Builder, list []wspace.Worktree) {
	if len(list) == 0 {
		b.WriteString("No managed worktrees for this repository.\n")
		return
	}
	for _, wt := range list {
		fmt.Fprintf(b, "%s  %s  branch %s  base %s  %s\n", wt.Name, wt.State, wt.Branch, shortBase(wt), wt.Path)
	}
}

func shortBase(wt wspace.Worktree) string {
	s := wt.Base[:min(len(wt.Base), 12)]
	if s == "" {
		s = "unknown"
	}
	if wt.BaseRef != "" {
		s += " (" + wt.BaseRef + ")"
	}
	return s
}

// writeWorktree adds a first_call's worktree to its answer.
func (in *initializeInput) writeWorktree(b *strings.Builder, data *initializeData) {
	wt := in.worktree
	if wt == nil {
		return
	}
	data.Worktree = wt
	verb := "Reattached to"
	if in.worktreeCreated {
		verb = "Created"
	}
	fmt.Fprintf(b, "%s worktree %s: branch %s, base %s, path %s (the main checkout is %s).\n",
		verb, wt.Name, wt.Branch, shortBase(*wt), wt.Path, wt.Repo)
	if !in.worktreeCreated && in.WorktreeBase != "" {
		b.WriteString("worktree_base was ignored: the worktree already existed.\n")
	}
}

// worktreeFailure maps the worktree service's errors to envelopes; others
// go to errorEnvelope. in is the call, for a next action that repeats it
// corrected.
func worktreeFailure(err error, in *initializeInput) *mcp.CallToolResult {
	env := errorEnvelope(InitializeTool, err)
	var we *wspace.WorktreeError
	errors.As(err, &we)
	switch {
	case errors.Is(err, wspace.ErrWorktreeName), errors.Is(err, wspace.ErrWorktreeBase), errors.Is(err, wspace.ErrNotRepository):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusInvalidInput, codeInvalidToolInput, true
		env.Message = "Invalid input: " + err.Error() + "."
		if errors.Is(err, wspace.ErrNotRepository) {
			env.Message = "Invalid input: worktree needs any_workspace_path inside a git repository; " + we.Path + " is not."
		}
	case errors.Is(err, wspace.ErrWorktreeTaken):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusConflict, codeWorktreeConflict, false
		env.Message = "Worktree name " + we.Name + " is taken: " + we.Detail + "."
	case errors.Is(err, wspace.ErrWorktreeNotFound):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusNotFound, codeWorktreeNotFound, false
		env.Message = "No managed worktree " + we.Name + " in this repository; worktree_action list shows them."
		env.NextAction = &mcp.NextAction{Tool: InitializeTool, Instruction: "List the repository's managed worktrees.",
			Arguments: map[string]any{"type": initFirstCall, "any_workspace_path": in.AnyWorkspacePath, "worktree_action": worktreeList}}
	case errors.Is(err, wspace.ErrWorktreeDirty):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusConflict, codeWorktreeDirty, true
		env.Message = "Worktree " + we.Name + " has uncommitted changes or untracked files (" + we.Detail +
			"); commit them, or pass force: true to discard them."
		// The corrected call is known: the same removal with force. It
		// discards work, so the instruction says to keep it first unless
		// the user accepts the loss.
		env.NextAction = &mcp.NextAction{Tool: InitializeTool,
			Instruction: "To keep the changes, commit them in " + we.Path + " (git -C " + shellQuote(we.Path) + " add -A && git -C " + shellQuote(we.Path) +
				" commit -m ...) and remove again; only if the user accepts losing them, remove with force true.",
			Arguments: map[string]any{"type": initFirstCall, "any_workspace_path": in.AnyWorkspacePath,
				"worktree": we.Name, "worktree_action": worktreeRemove, "force": true}}
	case errors.Is(err, errWorktreeReadOnly):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusDenied, codeFileOperationDenied, false
		env.Message = "This caller's tool profile writes nothing (no EditFiles, no BashCommand): it may list worktrees and see their changes, not make or remove one."
	case errors.Is(err, wspace.ErrNoStateDir):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusFailed, codeExecutionFailed, false
		env.Message = "Managed worktrees need the server's state directory, and none is configured."
	}
	return env.Result(env.Message)
}
