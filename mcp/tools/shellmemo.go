package tools

// What the BashCommand adapter remembers of each shell between calls, so
// that its answers can say more than the shell contract returns: the
// command it started last (a refused second command names it) and the last
// foreground generation whose end it reported (a status_check with nothing
// running says so instead of repeating an old exit code). An adapter that
// restarts forgets it and answers as before.

import (
	"sync"

	"winx/guardian"
)

// maxShellMemos bounds the memos; past it they are forgotten all at once
// (a replaced shell leaves its memo behind).
const maxShellMemos = 4096

// maxMemoCommand bounds the command text a memo keeps.
const maxMemoCommand = 200

type shellMemos struct {
	mu sync.Mutex
	m  map[terminal]*shellMemo
}

func newShellMemos() *shellMemos {
	return &shellMemos{m: make(map[terminal]*shellMemo)}
}

// of returns the memo of term, creating it.
func (s *shellMemos) of(term terminal) *shellMemo {
	if s == nil || term == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.m[term]
	if !ok {
		if len(s.m) >= maxShellMemos {
			clear(s.m)
		}
		m = &shellMemo{}
		s.m[term] = m
	}
	return m
}

type shellMemo struct {
	mu       sync.Mutex
	command  string // the last foreground command started
	gen      uint64 // its generation, once an answer named it
	running  bool   // the last answer about gen said it runs
	reported uint64 // the generation whose end an answer reported
}

func (m *shellMemo) started(cmd string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(cmd) > maxMemoCommand {
		cmd = cmd[:maxMemoCommand] + "…"
	}
	m.command = cmd
}

// observed records a foreground outcome an answer is about to report.
func (m *shellMemo) observed(o *guardian.Outcome) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if o.Generation != m.gen {
		m.gen = o.Generation
		if o.Command != "" {
			m.command = o.Command
			if len(m.command) > maxMemoCommand {
				m.command = m.command[:maxMemoCommand] + "…"
			}
		}
	}
	m.running = o.Running
	if !o.Running {
		m.reported = o.Generation
	}
}

// alreadyReported: o is the end of a command whose end was reported and
// brings nothing new.
func (m *shellMemo) alreadyReported(o *guardian.Outcome) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !o.Running && o.Generation != 0 && o.Generation == m.reported && o.Output.Text == ""
}

// runningCommand is the command the memo last saw running, "" when none or
// unknown.
func (m *shellMemo) runningCommand() string {
	if m == nil {
		return ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.running {
		return ""
	}
	return m.command
}
