package guardian

import (
	"context"
	"time"
)

// ScreenSnapshot is the visible terminal.
type ScreenSnapshot struct {
	Rows      []string
	AltScreen bool
	Title     string
	// Changed lists the row indexes that differ from the last snapshot
	// (filled when a diff was asked for).
	Changed []int
}

// Screen returns the last `lines` rows of the visible screen (0 = all).
// With diff, only rows changed since the previous snapshot are kept.
func (s *Shell) Screen(_ context.Context, lines int, diff bool) ScreenSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil && !s.cmd.done {
		// The running command's rows the snapshot shows are on disk first,
		// as an answer's are (takeNewLocked).
		s.cmd.persistNewLocked()
	}
	// Every row the model sees is redacted here, as logical lines.
	rows, wrapped := s.screen.ScreenRows()
	crow, _ := s.screen.Cursor()
	rows = redactRows(rows, wrapped, crow, s.opts.Cols, s.opts.Shape.Redactor)
	snap := ScreenSnapshot{AltScreen: s.screen.AltScreenActive(), Title: s.screen.Title()}
	prev := s.lastScreen
	s.lastScreen = append([]string(nil), rows...)
	if diff {
		for i, r := range rows {
			if i >= len(prev) || prev[i] != r {
				snap.Changed = append(snap.Changed, i)
			}
		}
	}
	if lines > 0 && lines < len(rows) {
		rows = rows[len(rows)-lines:]
	}
	snap.Rows = rows
	return snap
}

// WaitForTurn waits until the PTY has been quiet for quiet (a TUI waiting for
// input, a prompt) or timeout passed; it reports whether it went quiet.
// Quiet counts from the later of the last output and the call: input typed
// just before has its moment to be echoed and answered.
func (s *Shell) WaitForTurn(ctx context.Context, quiet, timeout time.Duration) (bool, error) {
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		s.mu.Lock()
		last, ch := s.lastOut, s.changed
		s.mu.Unlock()
		if last.Before(start) {
			last = start
		}
		idle := time.Since(last)
		if idle >= quiet {
			return true, nil
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		t := time.NewTimer(min(quiet-idle, time.Until(deadline)))
		select {
		case <-ch:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		}
		t.Stop()
	}
}
