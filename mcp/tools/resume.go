package tools

import (
	"fmt"
	"strings"
	"sync"

	"winx/evidence"
	wspace "winx/mcp/workspace" // "workspace" names a test helper of this package
)

// Resuming a task saved with ContextSave: Initialize with
// task_id_to_resume loads the saved file, takes its project root as the
// workspace and shows the saved context once per session.

const (
	// DefaultResumeTokens bounds the saved context an Initialize answer
	// shows (about bytes/4).
	DefaultResumeTokens = 20000
	// maxResumeRecords bounds the memory of which saved contexts each
	// session was shown; past it the record starts over, and a context may
	// be shown a second time.
	maxResumeRecords = 4096
)

// resumer serves task_id_to_resume for Initialize.
type resumer struct {
	stateDir string // "" means nothing was ever saved
	tokens   int    // budget of the saved context in an answer

	mu    sync.Mutex      // guards shown
	shown map[string]bool // sessionKey NUL task id: that session was shown that context
}

func newResumer(opts Options) *resumer {
	return &resumer{stateDir: opts.StateDir, tokens: DefaultResumeTokens, shown: make(map[string]bool)}
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
		given, _, err := ResolveWorkspace(in.AnyWorkspacePath, "")
		if err != nil {
			return err
		}
		saved := sc.Root
		if c, err := canonicalPath(saved); err == nil {
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
func (r *resumer) write(b *strings.Builder, sess *Session, sc *wspace.SavedContext) {
	key := sess.Key + "\x00" + sc.ID
	r.mu.Lock()
	seen := r.shown[key]
	if !seen {
		if len(r.shown) >= maxResumeRecords {
			clear(r.shown)
		}
		r.shown[key] = true
	}
	r.mu.Unlock()
	if seen {
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
