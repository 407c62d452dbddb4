package edit

// The engine's memory of its own commits, so that an expected_revision the
// session's own later edit made stale is answered with where the file is
// now and which lines that edit changed (the model still knows every other
// line), and an expected_revision that was never issued to the session
// (neither read nor written) is told apart from one that was.

import (
	"fmt"

	"winx/evidence"
)

// maxHistory bounds the commits an engine remembers; past it the oldest
// is forgotten, and a stale revision from before it is answered like one
// another writer made stale.
const maxHistory = 256

// ownEdit is one committed file: its revision before and after, and the
// line hunks between them.
type ownEdit struct {
	path           string
	oldRev, newRev evidence.Revision
	oldTotal       int
	hunks          []hunk
}

// remember notes a committed file. e.mu is not held.
func (e *Engine) remember(pf *PlannedFile, oldTotal int, hs []hunk) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.history = append(e.history, ownEdit{path: pf.Path, oldRev: pf.OldRev, newRev: pf.NewRev, oldTotal: oldTotal, hunks: hs})
	if len(e.history) > maxHistory {
		e.history = append(e.history[:0:0], e.history[len(e.history)-maxHistory:]...)
	}
}

// ownChain reports whether this engine's own commits lead path from
// revision from to revision to, and if so which lines of to they changed
// (concrete ranges; a deletion marks the line after it).
func (e *Engine) ownChain(path string, from, to evidence.Revision) ([]evidence.Range, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var changed []evidence.Range
	r, at := from, -1
	for r != to {
		j := -1
		for i := at + 1; i < len(e.history); i++ {
			if h := e.history[i]; h.path == path && h.oldRev == r {
				j = i
				break
			}
		}
		if j < 0 {
			return nil, false
		}
		h := e.history[j]
		changed = carryRanges(mergeRanges(changed), h.hunks, h.oldTotal)
		for _, hk := range h.hunks {
			if hk.newCount > 0 {
				changed = append(changed, evidence.Range{Start: hk.newStart, End: hk.newStart + hk.newCount - 1})
			} else {
				changed = append(changed, evidence.Range{Start: max(hk.newStart, 1), End: max(hk.newStart, 1)})
			}
		}
		r, at = h.newRev, j
	}
	return mergeRanges(changed), true
}

// issued reports whether rev of path was ever given to this session: the
// revision its ledger holds, or one its own commits started from or made.
func (e *Engine) issued(path string, rev evidence.Revision) bool {
	if e.ledger.WasShown(path, rev) {
		return true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, h := range e.history {
		if h.path == path && (h.oldRev == rev || h.newRev == rev) {
			return true
		}
	}
	return false
}

// resolveShort returns the full revision of path that the short revision
// short names among those issued to the session (read, or written by its
// own edits). Only issued revisions are candidates, never the file's
// current bytes: a file crafted to share a short prefix with a revision
// the model read must not pass for it. No candidate leaves short as it is
// (it then fails every comparison and is answered as never issued); two
// candidates are refused, as the model must name one.
func (e *Engine) resolveShort(path string, short evidence.Revision) (evidence.Revision, error) {
	var found evidence.Revision
	note := func(r evidence.Revision) error {
		if r == "" || r == found || !short.Matches(r) {
			return nil
		}
		if found != "" {
			return &InvalidError{Path: path, Msg: fmt.Sprintf("expected_revision %s names two revisions issued for this file (%s and %s): pass the full revision", short, found, r)}
		}
		found = r
		return nil
	}
	for _, r := range e.ledger.Issued(path) {
		if err := note(r); err != nil {
			return "", err
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, h := range e.history {
		if h.path != path {
			continue
		}
		if err := note(h.oldRev); err != nil {
			return "", err
		}
		if err := note(h.newRev); err != nil {
			return "", err
		}
	}
	if found == "" {
		return short, nil
	}
	return found, nil
}
