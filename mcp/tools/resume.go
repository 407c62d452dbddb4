package tools

import (
	"fmt"
	"strings"

	"winx/evidence"
	"winx/mcp/session"
	wspace "winx/mcp/workspace" // "workspace" names a test helper of this package
)

// Resuming a task saved with ContextSave: Initialize with
// task_id_to_resume loads the saved file, takes its project root as the
// workspace and shows the saved context once per session.

const (
	// DefaultResumeTokens bounds the saved context an Initialize answer
	// shows (about bytes/4).
	DefaultResumeTokens = 20000
)

// resumer serves task_id_to_resume for Initialize.
type resumer struct {
	stateDir string // "" means nothing was ever saved
	tokens   int    // budget of the saved context in an answer
	// Which contexts a session was shown is the session's own state
	// (session.Session.MarkResumeShown).
}

func newResumer(opts Options) *resumer {
	return &resumer{stateDir: opts.StateDir, tokens: DefaultResumeTokens}
}

// prepare loads the saved context of a first_call's task_id_to_resume and
// points the call at its project root. A different any_workspace_path is
// refused rather than guessed between.
func (r *resumer) prepare(in *initializeInput) error {
	if in.Type != initFirstCall {
		return &InputError{Msg: "task_id_to_resume works only with type first_call"}
	}
	sc, err := wspace.Load(r.stateDir, in.TaskIDToResume)
	if err != nil {
		return taskIDInput(err)
	}
	if in.AnyWorkspacePath != "" {
		given, _, err := session.ResolveWorkspace(in.AnyWorkspacePath, "")
		if err != nil {
			return err
		}
		saved := sc.Root
		if c, err := session.CanonicalPath(saved); err == nil {
			saved = c
		}
		if given != saved {
			return &InputError{Msg: fmt.Sprintf("task %s was saved for %s, not %s; omit any_workspace_path to resume it there",
				sc.ID, sc.Root, in.AnyWorkspacePath)}
		}
	} else {
		in.AnyWorkspacePath = sc.Root
	}
	in.resumed = sc
	return nil
}

// write adds the saved context to the answer of sess, within the token
// budget, unless this session was already shown it.
func (r *resumer) write(b *strings.Builder, sess *session.Session, sc *wspace.SavedContext) {
	if sess.MarkResumeShown(sc.ID) {
		fmt.Fprintf(b, "Resumed task %s: its saved context was shown to this session before and is not repeated.\n", sc.ID)
		return
	}
	text, limit := sc.Text, r.tokens*evidence.BytesPerToken
	truncated := sc.Truncated
	if len(text) > limit {
		text, truncated = string(wspace.CutToLine([]byte(text[:limit]))), true
	}
	fmt.Fprintf(b, "\n## Resumed task %s\n", sc.ID)
	b.WriteString(wspace.Fenced(text))
	if truncated {
		fmt.Fprintf(b, "[saved context truncated to about %d tokens; the whole file is %s]\n", r.tokens, wspace.ContextPath(r.stateDir, sc.ID))
	}
}
