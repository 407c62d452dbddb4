package tools

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"

	"winx/mcp/session"
)

// Resuming a task saved with ContextSave: Initialize with
// task_id_to_resume loads the saved file, takes its project root as the
// workspace and shows the saved context once per session.

const (
	// DefaultResumeTokens bounds the saved context an Initialize answer
	// shows (about bytes/4).
	DefaultResumeTokens = 20000
	// maxSavedHeaderLines bounds the header lines parsed.
	maxSavedHeaderLines = 32
)

// savedContext is a saved context read back.
type savedContext struct {
	ID        string
	Root      string // project root as saved
	Text      string // the file, at most MaxSavedContextBytes
	Truncated bool   // the file was longer than MaxSavedContextBytes
}

// loadSavedContext reads the context saved under id. Errors: *InputError
// for a malformed id, ErrTaskNotFound (naming the id) when nothing is saved
// under it, or a read error.
func loadSavedContext(stateDir, id string) (*savedContext, error) {
	if err := validTaskID(id); err != nil {
		return nil, err
	}
	if stateDir == "" {
		return nil, fmt.Errorf("%w: no saved context has id %q (this server has no state directory); call Initialize without task_id_to_resume",
			ErrTaskNotFound, id)
	}
	path := contextFile(stateDir, id)
	// Never follow a link planted in the state directory, never block on a
	// FIFO, and judge the file by what was opened, not by an earlier lstat.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: no saved context has id %q; save one with ContextSave or call Initialize without task_id_to_resume",
			ErrTaskNotFound, id)
	case errors.Is(err, syscall.ELOOP):
		return nil, fmt.Errorf("%w: the saved context of %q is not a regular file", ErrTaskNotFound, id)
	case err != nil:
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: the saved context of %q is not a regular file", ErrTaskNotFound, id)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxSavedContextBytes+1))
	if err != nil {
		return nil, err
	}
	sc := &savedContext{ID: id}
	if len(b) > MaxSavedContextBytes {
		b, sc.Truncated = cutToLine(b[:MaxSavedContextBytes]), true
	}
	sc.Text = string(b)
	if sc.Root, err = savedRoot(sc.Text); err != nil {
		return nil, fmt.Errorf("%w: the saved context of %q is damaged: %v", ErrTaskNotFound, id, err)
	}
	return sc, nil
}

// savedRoot finds the project_root line of a saved context's header.
func savedRoot(text string) (string, error) {
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 64<<10)
	if !sc.Scan() || sc.Text() != savedContextMagic {
		return "", errors.New("it does not start with the saved context header")
	}
	for n := 0; n < maxSavedHeaderLines && sc.Scan() && sc.Text() != ""; n++ {
		if v, ok := strings.CutPrefix(sc.Text(), "project_root: "); ok {
			root, err := strconv.Unquote(v)
			if err != nil || root == "" {
				return "", errors.New("its project_root is malformed")
			}
			return root, nil
		}
	}
	return "", errors.New("its header has no project_root")
}

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
	sc, err := loadSavedContext(r.stateDir, in.TaskIDToResume)
	if err != nil {
		return err
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
func (r *resumer) write(b *strings.Builder, sess *session.Session, sc *savedContext) {
	if sess.MarkResumeShown(sc.ID) {
		fmt.Fprintf(b, "Resumed task %s: its saved context was shown to this session before and is not repeated.\n", sc.ID)
		return
	}
	text, limit := sc.Text, r.tokens*bytesPerToken
	truncated := sc.Truncated
	if len(text) > limit {
		text, truncated = string(cutToLine([]byte(text[:limit]))), true
	}
	fmt.Fprintf(b, "\n## Resumed task %s\n", sc.ID)
	b.WriteString(fenced(text))
	if truncated {
		fmt.Fprintf(b, "[saved context truncated to about %d tokens; the whole file is %s]\n", r.tokens, contextFile(r.stateDir, sc.ID))
	}
}
