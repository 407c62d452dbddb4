package session

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"winx/edit/atomicfile"
	"winx/guardian/runtime"
)

// A session is lost when the process serving its shell dies (a guardian
// killed, closed by `winx kill`, an idle sweep or a reclaim). The registry
// never hands out a lost shell as "reattached": every path that attaches a
// caller to a known session checks that its shell is alive in the same
// call (Revive), and a dead one is replaced by a fresh shell in the same
// workspace and mode. What was lost is kept as a LostReport until a caller
// takes it to tell the model (TakeLost).

// maxLostJournals bounds the lost journals a session remembers having
// reported (and lets its principal read, LostJournal).
const maxLostJournals = 8

// LostReport is what the model is told of a session's lost shell.
type LostReport struct {
	runtime.Lost
	// PID is the lost shell's process id, 0 when unknown.
	PID int
	// CommandRunning: Command was running when the shell was lost (the
	// guardian's files or the adapter's record say so); otherwise it is
	// the last command known to have run, or "".
	CommandRunning bool
}

// lostState is a session's pending loss report and the journals it reported.
type lostState struct {
	mu       sync.Mutex // guards the fields below
	pending  *LostReport
	journals []string // at most maxLostJournals, oldest first
}

// noteLost records that sess's shell (pid) was lost and replaced; l is
// what its guardian left, nil when nothing of it was found.
func (s *Session) noteLost(l *runtime.Lost, pid int) {
	r := &LostReport{PID: pid}
	if l != nil {
		r.Lost = *l
	}
	st := &s.lost
	st.mu.Lock()
	defer st.mu.Unlock()
	st.pending = r
	if r.Journal != "" && !slices.Contains(st.journals, r.Journal) {
		st.journals = append(st.journals, r.Journal)
		if len(st.journals) > maxLostJournals {
			st.journals = st.journals[1:]
		}
	}
}

// TakeLost returns, once, the report of the session's shell lost since it
// was last taken. The lost command is the guardian's when its files name
// it, else the session's own record of its last command (CommandHistory,
// and the one UseHistoryDir loaded).
func (s *Session) TakeLost() (LostReport, bool) {
	st := &s.lost
	st.mu.Lock()
	r := st.pending
	st.pending = nil
	st.mu.Unlock()
	if r == nil {
		return LostReport{}, false
	}
	if r.Command != "" {
		r.CommandRunning = true
	} else if rec, ok := s.lastCommand(); ok && (r.Generation == 0 || rec.Generation == 0 || rec.Generation == r.Generation) {
		// The record speaks of the journal's command (or nothing says
		// otherwise): a newer journal would be a command this adapter
		// did not see.
		r.Command, r.CommandRunning = rec.Command, rec.Running
	}
	s.forgetRunning()
	return *r, true
}

// LostJournal reports whether path is the journal of a lost shell of this
// session that a report named: the session's principal may read it.
func (s *Session) LostJournal(path string) bool {
	st := &s.lost
	st.mu.Lock()
	defer st.mu.Unlock()
	return slices.Contains(st.journals, path)
}

// Revive replaces the session's shell when it is lost (runtime.Gone): a
// fresh shell in the workspace root, with the session's mode, and a loss
// report for TakeLost. It reports whether it replaced the shell; a shell
// that is alive, or whose guardian does not answer in time, is kept.
func (s *Sessions) Revive(ctx context.Context, sess *Session) (bool, error) {
	sess.resetMu.Lock()
	defer sess.resetMu.Unlock()
	old := sess.Shell()
	if old == nil || !runtime.Gone(ctx, old) {
		return false, nil
	}
	pid := old.PID(ctx)
	st, err := s.replaceShellLocked(ctx, sess, sess.Root, old, false)
	if err != nil {
		return false, err
	}
	if st.Lost == nil {
		// The guardian ended its session itself (winx kill, a sweep) and
		// took its files: what is known is the adapter's record.
		sess.noteLost(nil, pid)
	}
	return true, nil
}

// historyRecord is a foreground command as kept on disk, so that an
// adapter that did not run it can name it when its session is lost, and
// report it when the shell keeps no record of its own (a guardian older
// than guardian.Historian).
type historyRecord struct {
	Generation uint64    `json:"generation"`
	Command    string    `json:"command"`
	Running    bool      `json:"running"`
	ExitCode   int       `json:"exit_code,omitempty"` // valid when !Running
	Cwd        string    `json:"cwd,omitempty"`
	At         time.Time `json:"at"`
}

// historyFile is the file: the last commands, oldest first, and the last
// one again as the top-level fields, which is all an adapter that predates
// the list reads (and all it wrote).
type historyFile struct {
	Commands []historyRecord `json:"commands,omitempty"`
	historyRecord
}

// maxHistoryFile bounds the history file, written or read back: a writer
// leaves out the oldest commands that do not fit.
const maxHistoryFile = 64 << 10

// historyStore is where a session keeps its last commands on disk.
type historyStore struct {
	mu   sync.Mutex // guards the fields below and serializes writes
	set  bool
	path string
	// saved is what was last written or read, oldest first: at most
	// MaxCommandHistory commands.
	saved []historyRecord
}

// last is the newest saved command. st.mu is held.
func (st *historyStore) lastLocked() (historyRecord, bool) {
	if n := len(st.saved); n > 0 {
		return st.saved[n-1], true
	}
	return historyRecord{}, false
}

// UseHistoryDir keeps the session's last foreground commands in dir (a
// principal's state directory): on the first call it loads what a previous
// adapter process saved for this session, later calls do nothing. An empty
// dir turns persistence off; a missing or malformed file is ignored.
func (s *Session) UseHistoryDir(dir string) {
	st := &s.historyFile
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.set {
		return
	}
	st.set = true
	if dir == "" {
		return
	}
	st.path = s.stateFile(dir, "commands")
	b, ok := readStateFile(st.path, maxHistoryFile)
	if !ok {
		return
	}
	var f historyFile
	if json.Unmarshal(b, &f) != nil {
		return
	}
	list := f.Commands
	if len(list) == 0 && f.Command != "" {
		list = []historyRecord{f.historyRecord}
	}
	if len(list) > MaxCommandHistory || slices.ContainsFunc(list, func(r historyRecord) bool { return r.Command == "" }) {
		return
	}
	st.saved = list
}

// saveHistory writes r as the session's newest command, or as the new
// state of the newest one when it names its generation, when it changed.
func (s *Session) saveHistory(r CommandRecord) {
	st := &s.historyFile
	st.mu.Lock()
	defer st.mu.Unlock()
	rec := historyRecord{Generation: r.Generation, Command: r.Command, Running: r.Running, ExitCode: r.ExitCode, Cwd: r.Cwd, At: r.At}
	list := slices.Clone(st.saved)
	if old, ok := st.lastLocked(); ok && rec.Generation != 0 && old.Generation == rec.Generation {
		if old.Command == rec.Command && old.Running == rec.Running && old.ExitCode == rec.ExitCode && old.Cwd == rec.Cwd {
			return
		}
		list[len(list)-1] = rec
	} else {
		list = append(list, rec)
		if len(list) > MaxCommandHistory {
			list = list[len(list)-MaxCommandHistory:]
		}
	}
	if st.path == "" {
		st.saved = list
		return
	}
	b, list := encodeHistory(list)
	if b == nil || atomicfile.MkdirPrivate(filepath.Dir(st.path)) != nil {
		return
	}
	// Best effort, not durable: the record must outlive a guardian, not
	// the machine.
	if atomicfile.WriteFile(st.path, b, 0o600, atomicfile.Durability{}) == nil {
		st.saved = list
	}
}

// encodeHistory encodes the newest commands of list that fit
// maxHistoryFile and returns them; nil when not even the newest fits.
func encodeHistory(list []historyRecord) ([]byte, []historyRecord) {
	for len(list) > 0 {
		b, err := json.Marshal(historyFile{Commands: list, historyRecord: list[len(list)-1]})
		if err == nil && len(b) <= maxHistoryFile {
			return b, list
		}
		list = list[1:]
	}
	return nil, nil
}

// savedCommands returns the commands saved on disk, the most recent first.
func (s *Session) savedCommands() []CommandRecord {
	st := &s.historyFile
	st.mu.Lock()
	defer st.mu.Unlock()
	out := make([]CommandRecord, len(st.saved))
	for i, r := range st.saved {
		out[len(out)-1-i] = CommandRecord{Generation: r.Generation, Command: r.Command, Running: r.Running, ExitCode: r.ExitCode, Cwd: r.Cwd, At: r.At}
	}
	return out
}

// lastCommand is the session's last foreground command: this adapter's
// record, else the one a previous adapter saved.
func (s *Session) lastCommand() (historyRecord, bool) {
	if h := s.CommandHistory(); len(h) > 0 {
		r := h[0]
		return historyRecord{Generation: r.Generation, Command: r.Command, Running: r.Running, ExitCode: r.ExitCode, Cwd: r.Cwd, At: r.At}, true
	}
	st := &s.historyFile
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.lastLocked()
}

// forgetRunning marks the last command as no longer running once its loss
// was reported: the next loss must not name it again as running.
func (s *Session) forgetRunning() {
	h := &s.history
	h.mu.Lock()
	var last CommandRecord
	if n := len(h.recs); n > 0 {
		h.recs[n-1].Running = false
		last = h.recs[n-1]
	}
	h.mu.Unlock()
	st := &s.historyFile
	st.mu.Lock()
	saved, _ := st.lastLocked()
	st.mu.Unlock()
	if last.Command == "" && saved.Command != "" {
		last = CommandRecord{Generation: saved.Generation, Command: saved.Command, ExitCode: saved.ExitCode, Cwd: saved.Cwd, At: saved.At}
	}
	if last.Command != "" {
		last.Running = false
		s.saveHistory(last)
	}
}
