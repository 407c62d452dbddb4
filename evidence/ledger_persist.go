package evidence

// A ledger on disk. The read ledger belongs to a session, and a session
// outlives the adapter process that served it (a client restarting the
// server, an HTTP server upgrade): the adapter that serves it next loads
// what the model was shown, so an edit at an unchanged revision does not
// ask for a read the model already made. The encoding is versioned JSON,
// bounded on both sides, and everything loaded is validated as if it came
// from a stranger (it came from a file).

import (
	"container/list"
	"encoding/json"
	"errors"
	"fmt"
)

// MaxLedgerBytes bounds an encoded ledger: Encode keeps the most recently
// recorded paths that fit, Decode refuses a larger input.
const MaxLedgerBytes = 1 << 20

// maxPersistSpans bounds the spans of one path in an encoding.
const maxPersistSpans = 4096

// ErrLedgerFormat: an encoded ledger is malformed.
var ErrLedgerFormat = errors.New("evidence: malformed ledger")

const ledgerVersion = 1

type ledgerFile struct {
	Version int            `json:"version"`
	Entries []ledgerEntryJ `json:"entries"` // most recently recorded first
}

type ledgerEntryJ struct {
	Path    string     `json:"path"`
	Rev     Revision   `json:"rev"`
	Spans   [][2]int   `json:"spans,omitempty"` // [lo, hi]; hi 0: to the end
	Earlier []Revision `json:"earlier,omitempty"`
}

// Encode returns the ledger's content for Decode: the most recently
// recorded paths first, as many as fit in MaxLedgerBytes.
func (l *Ledger) Encode() []byte {
	l.mu.Lock()
	f := ledgerFile{Version: ledgerVersion}
	size := 64
	for el := l.order.Front(); el != nil; el = el.Next() {
		e := el.Value.(*ledgerEntry)
		j := ledgerEntryJ{Path: e.path, Rev: e.rev, Earlier: e.earlier}
		for _, s := range e.spans[:min(len(e.spans), maxPersistSpans)] {
			hi := s.hi
			if hi == openEnd {
				hi = 0
			}
			j.Spans = append(j.Spans, [2]int{s.lo, hi})
		}
		// An estimate that errs large: the path, the revisions, the spans.
		n := len(e.path)*2 + 100 + (len(e.earlier)+1)*80 + len(j.Spans)*24
		if size+n > MaxLedgerBytes {
			break
		}
		size += n
		f.Entries = append(f.Entries, j)
	}
	l.mu.Unlock()
	b, err := json.Marshal(f)
	if err != nil || len(b) > MaxLedgerBytes {
		// Impossible with the estimate above; an empty ledger is safe.
		b, _ = json.Marshal(ledgerFile{Version: ledgerVersion})
	}
	return b
}

// Decode adds the paths of an encoded ledger that l does not hold yet
// (what this process recorded is newer than what it loads), up to l's
// limit. Every revision and span is checked; on any error nothing is added.
func (l *Ledger) Decode(b []byte) error {
	if len(b) > MaxLedgerBytes {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrLedgerFormat, len(b), MaxLedgerBytes)
	}
	var f ledgerFile
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("%w: %v", ErrLedgerFormat, err)
	}
	if f.Version != ledgerVersion {
		return fmt.Errorf("%w: version %d", ErrLedgerFormat, f.Version)
	}
	entries := make([]*ledgerEntry, 0, len(f.Entries))
	for _, j := range f.Entries {
		if j.Path == "" || j.Path[0] != '/' {
			return fmt.Errorf("%w: path %q", ErrLedgerFormat, j.Path)
		}
		if _, err := ParseRevision(string(j.Rev)); err != nil {
			return fmt.Errorf("%w: %v", ErrLedgerFormat, err)
		}
		if len(j.Spans) > maxPersistSpans || len(j.Earlier) > maxEarlierRevisions {
			return fmt.Errorf("%w: %s: too many spans or revisions", ErrLedgerFormat, j.Path)
		}
		e := &ledgerEntry{path: j.Path, rev: j.Rev}
		for _, r := range j.Earlier {
			if _, err := ParseRevision(string(r)); err != nil {
				return fmt.Errorf("%w: %v", ErrLedgerFormat, err)
			}
			e.earlier = append(e.earlier, r)
		}
		for _, sp := range j.Spans {
			s, ok := toSpan(Range{Start: sp[0], End: sp[1]})
			if !ok || sp[0] > MaxLineNumber || sp[1] > MaxLineNumber {
				return fmt.Errorf("%w: %s: span %v", ErrLedgerFormat, j.Path, sp)
			}
			e.spans = addSpan(e.spans, s)
		}
		entries = append(entries, e)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.entries == nil {
		l.entries = make(map[string]*list.Element)
	}
	limit := l.limit
	if limit <= 0 {
		limit = DefaultLedgerPaths
	}
	// Loaded paths are older than anything recorded here: they go to the
	// back, most recent of them first.
	for _, e := range entries {
		if l.order.Len() >= limit {
			break
		}
		if _, ok := l.entries[e.path]; ok {
			continue
		}
		l.entries[e.path] = l.order.PushBack(e)
		l.changes++
	}
	return nil
}
