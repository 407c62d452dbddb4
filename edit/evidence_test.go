package edit

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"winx/edit/atomicfile"
	"winx/evidence"
)

// Lines a search_replace wrote count as shown at the new revision: a
// line_patch of them needs no read.
func TestSearchReplaceLinesCountAsRead(t *testing.T) {
	f := newFixture(t)
	p := f.write("a.txt", numbered(10))
	f.show(p, evidence.Range{Start: 4, End: 4})
	res, err := f.apply(FileEdit{Path: p, Mode: ModeSearchReplace, Content: "<<<<<<< SEARCH\nline 4\n=======\nfour\nfour and a half\n>>>>>>> REPLACE\n"})
	if err != nil {
		t.Fatal(err)
	}
	rev := res.Files[0].NewRevision
	if !f.ledger.Covers(p, rev, evidence.Range{Start: 4, End: 5}) {
		t.Fatalf("the lines search_replace wrote are not known at %s", rev)
	}
	if _, err := f.apply(FileEdit{Path: p, Mode: ModeLinePatch, ExpectedRevision: rev, Patches: []Patch{{5, 1, "4.5"}}}); err != nil {
		t.Errorf("line_patch of a line the model wrote = %v, want success", err)
	}
}

// An expected_revision the session's own later edit made stale answers
// with the current revision and the lines that edit changed; one that was
// never issued asks for a read.
func TestExpectedRevisionOwnEditAndNeverIssued(t *testing.T) {
	f := newFixture(t)
	p := f.write("a.txt", numbered(10))
	rev0 := f.show(p, evidence.All)
	res, err := f.apply(FileEdit{Path: p, Mode: ModeLinePatch, ExpectedRevision: rev0, Patches: []Patch{{3, 1, "three\nthree b"}}})
	if err != nil {
		t.Fatal(err)
	}
	rev1 := res.Files[0].NewRevision
	_, err = f.apply(FileEdit{Path: p, Mode: ModeLinePatch, ExpectedRevision: rev0, Patches: []Patch{{8, 1, "eight"}}})
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Reason != ReasonRevisionMismatch || !ce.OwnEdit || ce.Got != rev1 {
		t.Fatalf("stale by own edit = %v, want revision_mismatch from an own edit at %s", err, rev1)
	}
	if len(ce.Changed) != 1 || ce.Changed[0] != (evidence.Range{Start: 3, End: 4}) {
		t.Errorf("changed ranges = %v, want [3-4]", ce.Changed)
	}

	// A made-up revision of a file the session has not read: needs_read.
	q := f.write("b.txt", numbered(3))
	made := evidence.RevisionOf([]byte("never shown\n"))
	_, err = f.apply(FileEdit{Path: q, Mode: ModeLinePatch, ExpectedRevision: made, Patches: []Patch{{1, 1, "x"}}})
	var nr *NeedsReadError
	if !errors.As(err, &nr) {
		t.Errorf("never-issued revision = %v, want a read request", err)
	}
	// Of a file read whole at its current revision: a mismatch that
	// says it was never issued.
	_, err = f.apply(FileEdit{Path: p, Mode: ModeLinePatch, ExpectedRevision: made, Patches: []Patch{{1, 1, "x"}}})
	if !errors.As(err, &ce) || !ce.NeverIssued || ce.Got != rev1 {
		t.Errorf("never-issued revision of a known file = %v, want NeverIssued", err)
	}
}

// A target whose cross-process lock another writer holds past the wait is
// a conflict (file_busy), and nothing is written; both lock schemes.
func TestCommitWaitsForTheTargetLock(t *testing.T) {
	for _, withDir := range []bool{true, false} {
		f := newFixture(t)
		lockDir := ""
		if withDir {
			lockDir = filepath.Join(f.state, "locks")
		}
		e, err := NewEngine(EngineOptions{Ledger: f.ledger, Paths: f.check, StateDir: f.state, LockDir: lockDir, LockWait: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		p := f.write("a.txt", numbered(3))
		rev := f.show(p, evidence.All)
		var held *atomicfile.Lock
		if withDir {
			held, err = atomicfile.LockFile(lockDir, atomicfile.LockName(p), time.Second)
		} else {
			d, derr := atomicfile.OpenDir(f.root, atomicfile.DirOptions{})
			if derr != nil {
				t.Fatal(derr)
			}
			defer d.Close()
			held, err = d.Lock(time.Second)
		}
		if err != nil {
			t.Fatal(err)
		}
		plan, err := e.Plan([]FileEdit{{Path: p, Mode: ModeLinePatch, ExpectedRevision: rev, Patches: []Patch{{1, 1, "x"}}}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.Commit(context.Background(), plan)
		var ce *ConflictError
		if !errors.As(err, &ce) || ce.Reason != ReasonBusy {
			t.Errorf("lock dir %v: commit under a held lock = %v, want file_busy", withDir, err)
		}
		if f.read(p) != numbered(3) {
			t.Errorf("lock dir %v: the file was written under another's lock", withDir)
		}
		held.Unlock()
		if _, err := e.Commit(context.Background(), plan); err != nil {
			t.Errorf("lock dir %v: commit after the lock was freed = %v", withDir, err)
		}
	}
}
