package guardian

import (
	"context"
	"time"
	"unicode/utf8"
)

// A session's command history outlives the adapters that ran its
// commands: an adapter that attaches later (after the one before it was
// killed or restarted) asks the session, not its own memory, what ran and
// how it ended. The history is a small ring of values, so it costs the
// guardian a bounded amount of memory whatever the commands printed.

// Bounds of a session's command history.
const (
	// MaxHistory is how many foreground commands History returns; older
	// ones are forgotten.
	MaxHistory = 16
	// MaxHistoryCommandBytes bounds the text of one remembered command;
	// a longer one is cut at a character boundary and ends with "…".
	MaxHistoryCommandBytes = 512
)

// CommandRun is one foreground command as the session remembers it.
type CommandRun struct {
	Generation uint64 `json:"generation"`
	// Command is the command line as typed, redacted with the session's
	// output (Shape.Redactor) and cut at MaxHistoryCommandBytes.
	Command  string `json:"command"`
	Running  bool   `json:"running,omitempty"`
	ExitCode int    `json:"exit_code"` // valid when !Running
	// Cwd is the shell's working directory when the command ended, ""
	// while it runs.
	Cwd      string    `json:"cwd,omitempty"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
}

// Historian is a terminal that remembers its foreground commands for
// every adapter of its session: the embedded Shell, and a guardian's
// client when the guardian serves the method.
type Historian interface {
	History(ctx context.Context) ([]CommandRun, error)
}

var _ Historian = (*Shell)(nil)

// history is the session's ring of its last commands, oldest first.
// Guarded by the owning Shell's mu.
type history struct {
	runs []CommandRun // at most MaxHistory
}

// noteLaunchLocked remembers the command c as running. s.mu is held.
func (s *Shell) noteLaunchLocked(c *command) {
	text := c.text
	if r := s.opts.Shape.Redactor; r != nil {
		text, _ = r.String(text)
	}
	h := &s.history
	if len(h.runs) >= MaxHistory {
		h.runs = append(h.runs[:0], h.runs[len(h.runs)-MaxHistory+1:]...)
	}
	h.runs = append(h.runs, CommandRun{Generation: c.gen, Command: cutCommand(text), Running: true, Started: c.started})
}

// endLocked finishes the foreground command c (command.finishLocked) and
// records how it ended, with the cwd the shell has now: the one its
// prompt reported, or the last one known when the shell went away. s.mu
// is held.
func (s *Shell) endLocked(c *command, code int, shellExited bool) {
	if c.done {
		return
	}
	c.finishLocked(code, shellExited)
	for i := len(s.history.runs) - 1; i >= 0; i-- {
		if r := &s.history.runs[i]; r.Generation == c.gen {
			r.Running, r.ExitCode, r.Cwd, r.Finished = false, code, s.cwd, c.finished
			return
		}
	}
}

// History returns the session's last foreground commands, the most recent
// first: at most MaxHistory of them, with their exit codes and the cwd each
// left. It serves every adapter of the session alike.
func (s *Shell) History(context.Context) ([]CommandRun, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]CommandRun, len(s.history.runs))
	for i, r := range s.history.runs {
		out[len(out)-1-i] = r
	}
	return out, nil
}

// cutCommand bounds a remembered command's text at MaxHistoryCommandBytes.
func cutCommand(text string) string {
	if len(text) <= MaxHistoryCommandBytes {
		return text
	}
	n := MaxHistoryCommandBytes
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return text[:n] + "…"
}
