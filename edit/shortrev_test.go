package edit

import (
	"errors"
	"strings"
	"testing"

	"winx/evidence"
)

// lookalike returns a full revision that shares rev's short form and
// differs after it: what a file crafted to collide on the short prefix
// would have.
func lookalike(rev evidence.Revision) evidence.Revision {
	tail := strings.Repeat("0", len(rev)-len(rev.Short()))
	if strings.HasPrefix(string(rev[len(rev.Short()):]), tail) {
		tail = strings.Repeat("1", len(tail))
	}
	return evidence.Revision(rev.Short() + tail)
}

// TestShortRevisionResolvesToIssued: a short expected_revision stands for
// the revision the session was issued, never for whatever bytes the file
// holds now; two issued revisions sharing the short form are refused.
func TestShortRevisionResolvesToIssued(t *testing.T) {
	patch := []Patch{{StartLine: 1, DeleteLines: 1, Replacement: "X\n"}}
	t.Run("resolves", func(t *testing.T) {
		f := newFixture(t)
		p := f.write("a.txt", "a\nb\n")
		rev := f.show(p, evidence.All)
		if _, err := f.apply(FileEdit{Path: p, Mode: ModeLinePatch, ExpectedRevision: evidence.Revision(rev.Short()), Patches: patch}); err != nil {
			t.Fatalf("line_patch with the short revision: %v", err)
		}
		if got := f.read(p); got != "X\nb\n" {
			t.Errorf("file = %q", got)
		}
	})
	t.Run("file swapped for a lookalike", func(t *testing.T) {
		// The session was issued one revision; the file now holds bytes
		// whose revision shares its short form. The short form names the
		// issued revision, so the edit is a conflict.
		f := newFixture(t)
		p := f.write("a.txt", "a\nb\n")
		cur := evidence.RevisionOf([]byte("a\nb\n"))
		issued := lookalike(cur)
		f.ledger.Record(p, issued, evidence.All)
		_, err := f.apply(FileEdit{Path: p, Mode: ModeLinePatch, ExpectedRevision: evidence.Revision(issued.Short()), Patches: patch})
		var ce *ConflictError
		if !errors.As(err, &ce) || ce.Want != issued {
			t.Errorf("line_patch against a lookalike = %v, want a conflict naming the issued revision", err)
		}
		if got := f.read(p); got != "a\nb\n" {
			t.Errorf("file = %q, want it untouched", got)
		}
	})
	t.Run("ambiguous", func(t *testing.T) {
		f := newFixture(t)
		p := f.write("a.txt", "a\nb\n")
		rev := f.show(p, evidence.All)
		f.ledger.Record(p, lookalike(rev), evidence.All) // rev stays issued, as an earlier one
		_, err := f.apply(FileEdit{Path: p, Mode: ModeLinePatch, ExpectedRevision: evidence.Revision(rev.Short()), Patches: patch})
		var ie *InvalidError
		if !errors.As(err, &ie) || !strings.Contains(ie.Msg, "full revision") {
			t.Errorf("line_patch with a short revision naming two = %v, want refused as ambiguous", err)
		}
		if got := f.read(p); got != "a\nb\n" {
			t.Errorf("file = %q, want it untouched", got)
		}
	})
}
