package session

import (
	"context"
	"fmt"
	"sync"
	"time"

	"winx/guardian"
)

// MaxCommandHistory is how many foreground commands a session remembers
// for ContextSave's terminal state; older ones are forgotten.
const MaxCommandHistory = 16

// maxHistoryCommandBytes bounds the text of one remembered command.
const maxHistoryCommandBytes = 512

// CommandRecord is one foreground command of a session's shell as
// BashCommand answers reported it.
type CommandRecord struct {
	Generation uint64 // the shell's command generation; 0 when unknown
	Command    string
	Running    bool // the last answer about it said it still runs
	ExitCode   int  // valid when !Running
	Cwd        string
	At         time.Time // when the last answer about it was built
}

// commandHistory is a bounded ring of a session's last commands, newest
// last. It lives in the adapter: a restarted adapter starts it afresh.
type commandHistory struct {
	mu   sync.Mutex
	recs []CommandRecord
}

// NoteCommand records what a BashCommand answer reported about a
// foreground command. An answer about the generation recorded last (a
// status check of a running command) updates that record, keeping its
// command text when r has none; an answer without command text about a
// generation never recorded is dropped, as nothing could name it.
func (s *Session) NoteCommand(r CommandRecord) {
	if len(r.Command) > maxHistoryCommandBytes {
		r.Command = r.Command[:maxHistoryCommandBytes] + "…"
	}
	h := &s.history
	h.mu.Lock()
	if n := len(h.recs); n > 0 && r.Generation != 0 && h.recs[n-1].Generation == r.Generation {
		if r.Command == "" {
			r.Command = h.recs[n-1].Command
		}
		h.recs[n-1] = r
	} else if r.Command == "" {
		h.mu.Unlock()
		return
	} else {
		if len(h.recs) >= MaxCommandHistory {
			h.recs = append(h.recs[:0], h.recs[1:]...)
		}
		h.recs = append(h.recs, r)
	}
	h.mu.Unlock()
	// The newest command is kept on disk (UseHistoryDir), so that a loss
	// of the shell can name it from another adapter process.
	s.saveHistory(r)
}

// CommandHistory returns the remembered commands, the most recent first.
func (s *Session) CommandHistory() []CommandRecord {
	h := &s.history
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]CommandRecord, len(h.recs))
	for i, r := range h.recs {
		out[len(h.recs)-1-i] = r
	}
	return out
}

// Commands returns the session's last foreground commands, the most recent
// first, for what a saved context reports. The shell's own record comes
// first (guardian.Historian): it holds every command of the session, those
// an earlier adapter ran included, and how each ended even when the
// adapter that ran it was gone by then. A shell that keeps no record (a
// guardian older than the method) or does not answer leaves the commands
// the session's adapters saved (UseHistoryDir), else this adapter's record.
func (s *Session) Commands(ctx context.Context) []CommandRecord {
	if h, ok := s.Shell().(guardian.Historian); ok {
		if runs, err := h.History(ctx); err == nil {
			out := make([]CommandRecord, 0, min(len(runs), MaxCommandHistory))
			for _, r := range runs[:min(len(runs), MaxCommandHistory)] {
				at := r.Finished
				if r.Running {
					at = r.Started
				}
				out = append(out, CommandRecord{Generation: r.Generation, Command: r.Command, Running: r.Running,
					ExitCode: r.ExitCode, Cwd: r.Cwd, At: at})
			}
			return out
		}
	}
	// The commands saved on disk include this adapter's (every record is
	// saved as it is noted) and an earlier adapter's.
	if h := s.savedCommands(); len(h) > 0 {
		return h
	}
	return s.CommandHistory()
}

// Budget of CodeMap calls on a session's own temporary files (helper
// scripts and generated sources under WINX_TEMP_DIR): canonical source
// files are not charged.
const (
	MaxHelperCodeMapCalls = 64
	MaxHelperCodeMapFiles = 24
)

// HelperCodeMapError: the session spent its helper CodeMap budget.
type HelperCodeMapError struct {
	Calls, Files int // what the session has used
	// NewFile is set when the refused call named a file not mapped before
	// (the unique-file limit); otherwise the call limit was reached.
	NewFile bool
}

func (e *HelperCodeMapError) Error() string {
	if e.NewFile {
		return fmt.Sprintf("session: the helper CodeMap budget of %d unique files is spent", MaxHelperCodeMapFiles)
	}
	return fmt.Sprintf("session: the helper CodeMap budget of %d calls is spent", MaxHelperCodeMapCalls)
}

// helperCodeMap counts a session's CodeMap calls on its temporary files.
type helperCodeMap struct {
	mu    sync.Mutex
	calls int
	files map[string]bool
}

// ChargeHelperCodeMap charges one CodeMap call on the temporary file path
// (canonical) to the session, or returns a *HelperCodeMapError and charges
// nothing when the call would exceed MaxHelperCodeMapCalls calls or
// MaxHelperCodeMapFiles unique files. It returns the usage after the call.
func (s *Session) ChargeHelperCodeMap(path string) (calls, files int, err error) {
	h := &s.helperMaps
	h.mu.Lock()
	defer h.mu.Unlock()
	isNew := !h.files[path]
	switch {
	case h.calls >= MaxHelperCodeMapCalls:
		return h.calls, len(h.files), &HelperCodeMapError{Calls: h.calls, Files: len(h.files)}
	case isNew && len(h.files) >= MaxHelperCodeMapFiles:
		return h.calls, len(h.files), &HelperCodeMapError{Calls: h.calls, Files: len(h.files), NewFile: true}
	}
	if h.files == nil {
		h.files = make(map[string]bool)
	}
	h.calls++
	h.files[path] = true
	return h.calls, len(h.files), nil
}
