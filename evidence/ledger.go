package evidence

import (
	"container/list"
	"math"
	"slices"
	"sync"
)

// DefaultLedgerPaths bounds a Ledger made with a limit <= 0, and the zero
// Ledger.
const DefaultLedgerPaths = 4096

// Ledger records, for one session, which complete lines of which revision of
// each file the model has been shown. It is safe for concurrent use. It
// holds at most its limit of paths; recording a new path beyond that forgets
// the path recorded least recently.
//
// Paths are compared as given: callers pass Snapshot.Path (canonical). A
// Record at a revision other than the one held replaces that path's
// coverage: line numbers of one revision say nothing about another.
//
// The zero Ledger is ready to use with DefaultLedgerPaths.
type Ledger struct {
	mu      sync.Mutex
	limit   int                      // set by NewLedger, then read-only; <= 0 means DefaultLedgerPaths
	entries map[string]*list.Element // guarded by mu; values are *ledgerEntry in order
	order   list.List                // guarded by mu; front is the most recently recorded
	// changes counts the changes of what Encode writes; guarded by mu.
	changes uint64
}

// ledgerEntry is the coverage of one path at one revision.
type ledgerEntry struct {
	path string
	rev  Revision
	// Invariant: sorted, 1 <= lo <= hi, and spans[i].hi+1 < spans[i+1].lo
	// (disjoint and not adjacent). hi == openEnd: to the end of the file.
	spans []span
	// earlier are revisions of path recorded before rev, newest last, at
	// most maxEarlierRevisions: a revision the session was given once
	// stays "issued" (WasShown) after the file moved on.
	earlier []Revision
}

// maxEarlierRevisions bounds ledgerEntry.earlier.
const maxEarlierRevisions = 16

type span struct{ lo, hi int }

// openEnd stands for "to the end of the file" inside the ledger's spans.
const openEnd = math.MaxInt

// NewLedger returns a Ledger holding at most maxPaths paths
// (DefaultLedgerPaths if maxPaths <= 0).
func NewLedger(maxPaths int) *Ledger {
	return &Ledger{limit: maxPaths}
}

// Record notes that the model was shown the complete lines of shown at
// revision rev of path. A zero shown records that rev was read without any
// line (an empty file, a binary file). End 0 means to the end of the file.
// Overlapping and adjacent ranges merge.
func (l *Ledger) Record(path string, rev Revision, shown Range) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.entries == nil {
		l.entries = make(map[string]*list.Element)
	}
	var e *ledgerEntry
	if el, ok := l.entries[path]; ok {
		if l.order.Front() != el {
			l.order.MoveToFront(el)
			l.changes++
		}
		e = el.Value.(*ledgerEntry)
		if e.rev != rev {
			l.changes++
			e.earlier = append(e.earlier, e.rev)
			if len(e.earlier) > maxEarlierRevisions {
				e.earlier = e.earlier[1:]
			}
			e.rev, e.spans = rev, nil
		}
	} else {
		l.changes++
		e = &ledgerEntry{path: path, rev: rev}
		l.entries[path] = l.order.PushFront(e)
		limit := l.limit
		if limit <= 0 {
			limit = DefaultLedgerPaths
		}
		for l.order.Len() > limit {
			old := l.order.Back()
			l.order.Remove(old)
			delete(l.entries, old.Value.(*ledgerEntry).path)
		}
	}
	if s, ok := toSpan(shown); ok {
		spans := addSpan(e.spans, s)
		if !slices.Equal(spans, e.spans) {
			l.changes++
		}
		e.spans = spans
	}
}

// Changes returns a count that grows whenever what Encode returns may have
// changed (a path recorded, moved to the front, given a new revision or
// more lines, forgotten or loaded). A caller that saved the encoding at one
// count need not encode again while the count stays the same: the same file
// read again changes nothing.
func (l *Ledger) Changes() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changes
}

// Missing returns the sub-ranges of want that were not shown at revision
// rev of path, in order; nil when all of want was shown. known is false if
// path was never recorded (or was forgotten); seenRev is the revision that
// was recorded, so a caller can say "you read X but the file is now Y": when
// seenRev != rev, missing is all of want.
//
// want's End 0 means to the end of the file, and a missing tail is returned
// with End 0 too; callers that know the line count should clamp want first
// (Range.Clamp) to get concrete ranges. The zero Range and a want with
// End < Start ask for nothing; otherwise a want with Start < 1 starts at 1
// (never "nothing", so a caller's off-by-one can not pass as covered).
func (l *Ledger) Missing(path string, rev Revision, want Range) (missing []Range, known bool, seenRev Revision) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w, ok := span{}, false
	if want != (Range{}) {
		w, ok = toSpan(Range{Start: max(want.Start, 1), End: want.End})
	}
	el, known := l.entries[path]
	if !known {
		if !ok {
			return nil, false, ""
		}
		return []Range{fromSpan(w)}, false, ""
	}
	e := el.Value.(*ledgerEntry)
	if !ok {
		return nil, true, e.rev
	}
	if e.rev != rev {
		return []Range{fromSpan(w)}, true, e.rev
	}
	return gaps(e.spans, w), true, e.rev
}

// Covers reports whether all of want was shown at revision rev of path.
func (l *Ledger) Covers(path string, rev Revision, want Range) bool {
	missing, known, seen := l.Missing(path, rev, want)
	return known && seen == rev && len(missing) == 0
}

// WasShown reports whether revision rev of path was recorded, now or
// before the path moved to its current revision (within a bound).
func (l *Ledger) WasShown(path string, rev Revision) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	el, ok := l.entries[path]
	if !ok {
		return false
	}
	e := el.Value.(*ledgerEntry)
	if e.rev == rev {
		return true
	}
	for _, r := range e.earlier {
		if r == rev {
			return true
		}
	}
	return false
}

// Issued returns the revisions of path the ledger holds as issued: the
// current one first, then the earlier ones, newest first.
func (l *Ledger) Issued(path string) []Revision {
	l.mu.Lock()
	defer l.mu.Unlock()
	el, ok := l.entries[path]
	if !ok {
		return nil
	}
	e := el.Value.(*ledgerEntry)
	out := make([]Revision, 0, 1+len(e.earlier))
	out = append(out, e.rev)
	for i := len(e.earlier) - 1; i >= 0; i-- {
		out = append(out, e.earlier[i])
	}
	return out
}

// Forget drops what was recorded for path (after the file was replaced by
// an edit whose new bytes the model has not seen, for instance).
func (l *Ledger) Forget(path string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if el, ok := l.entries[path]; ok {
		l.order.Remove(el)
		delete(l.entries, path)
		l.changes++
	}
}

// Recent returns up to n recorded paths, the most recently recorded (read
// or edited) first; n <= 0 returns none.
func (l *Ledger) Recent(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n <= 0 {
		return nil
	}
	out := make([]string, 0, min(n, l.order.Len()))
	for el := l.order.Front(); el != nil && len(out) < n; el = el.Next() {
		out = append(out, el.Value.(*ledgerEntry).path)
	}
	return out
}

// Len returns the number of paths held.
func (l *Ledger) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.order.Len()
}

func toSpan(r Range) (span, bool) {
	if r.Start < 1 {
		return span{}, false
	}
	if r.End == 0 {
		return span{r.Start, openEnd}, true
	}
	if r.End < r.Start {
		return span{}, false
	}
	return span{r.Start, r.End}, true
}

func fromSpan(s span) Range {
	if s.hi == openEnd {
		return Range{s.lo, 0}
	}
	return Range{s.lo, s.hi}
}

// addSpan inserts s into spans, keeping the invariant of ledgerEntry.spans.
func addSpan(spans []span, s span) []span {
	out := make([]span, 0, len(spans)+1)
	i := 0
	for ; i < len(spans) && spans[i].hi != openEnd && spans[i].hi+1 < s.lo; i++ {
		out = append(out, spans[i]) // wholly before s, not adjacent
	}
	for ; i < len(spans) && (s.hi == openEnd || spans[i].lo <= s.hi+1); i++ {
		s.lo = min(s.lo, spans[i].lo) // overlapping or adjacent: merge
		s.hi = max(s.hi, spans[i].hi)
	}
	out = append(out, s)
	return append(out, spans[i:]...)
}

// gaps returns the parts of w that no span covers.
func gaps(spans []span, w span) []Range {
	var out []Range
	cur := w.lo // first line of w not yet known to be covered
	for _, s := range spans {
		if s.hi < cur {
			continue
		}
		if s.lo > w.hi {
			break
		}
		if s.lo > cur {
			out = append(out, fromSpan(span{cur, s.lo - 1}))
		}
		if s.hi >= w.hi {
			return out
		}
		cur = s.hi + 1 // s.hi < w.hi <= openEnd, so no overflow
	}
	return append(out, fromSpan(span{cur, w.hi}))
}
