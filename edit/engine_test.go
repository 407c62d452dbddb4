package edit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"

	"winx/edit/atomicfile"
	"winx/evidence"
)

// rootChecker confines paths to one canonical root directory, the way
// auth.PathPolicy does for the workspace (simplified: no allow list).
type rootChecker struct {
	root   string
	denied string // a client path refused outright, to test DeniedError
}

func (c *rootChecker) Resolve(path string) (string, error) {
	if path == c.denied {
		return "", errors.New("test: path denied")
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(c.root, path)
	}
	p := filepath.Clean(path)
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	} else if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		p = filepath.Join(dir, filepath.Base(p))
	}
	if p != c.root && !strings.HasPrefix(p, c.root+string(filepath.Separator)) {
		return "", errors.New("test: outside the root")
	}
	return p, nil
}

func (c *rootChecker) Recheck(canonical string) error {
	if fi, err := os.Lstat(canonical); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return errors.New("test: now a symlink")
	}
	got, err := c.Resolve(canonical)
	if err != nil {
		return err
	}
	if got != canonical {
		return errors.New("test: changed")
	}
	return nil
}

type fixture struct {
	t      testing.TB
	root   string
	state  string
	ledger *evidence.Ledger
	eng    *Engine
	check  *rootChecker
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, root: filepath.Join(root, "ws"), state: filepath.Join(root, "state"), ledger: evidence.NewLedger(0)}
	if err := os.Mkdir(f.root, 0o755); err != nil {
		t.Fatal(err)
	}
	f.check = &rootChecker{root: f.root}
	f.eng = f.engine(nil)
	return f
}

func (f *fixture) engine(locks *PathLocks) *Engine {
	f.t.Helper()
	e, err := NewEngine(EngineOptions{Ledger: f.ledger, Paths: f.check, StateDir: f.state, Session: "alice/s1", Locks: locks})
	if err != nil {
		f.t.Fatal(err)
	}
	return e
}

// write creates name under the root with content and returns its path.
func (f *fixture) write(name, content string) string {
	f.t.Helper()
	p := filepath.Join(f.root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return p
}

func (f *fixture) read(p string) string {
	f.t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

// show records lines r of p as shown at its current revision and returns it.
func (f *fixture) show(p string, r evidence.Range) evidence.Revision {
	f.t.Helper()
	s, err := evidence.ReadSnapshot(p, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	f.ledger.Record(s.Path, s.Revision, r)
	return s.Revision
}

func (f *fixture) apply(edits ...FileEdit) (*Result, error) {
	p, err := f.eng.Plan(edits)
	if err != nil {
		return nil, err
	}
	return f.eng.Commit(context.Background(), p)
}

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func revOf(s string) evidence.Revision { return evidence.RevisionOf([]byte(s)) }

func TestNeverReadNeedsRead(t *testing.T) {
	f := newFixture(t)
	body := numbered(10)
	p := f.write("a.txt", body)
	tests := []struct {
		name string
		edit FileEdit
		want []evidence.Range
	}{
		{"line_patch", FileEdit{Path: "a.txt", Mode: ModeLinePatch, ExpectedRevision: revOf(body), Patches: []Patch{{StartLine: 3, DeleteLines: 2, Replacement: "x\n"}}}, []evidence.Range{{Start: 3, End: 4}}},
		{"replace", FileEdit{Path: "a.txt", Mode: ModeReplace, Content: "new\n"}, []evidence.Range{{Start: 1, End: 10}}},
		{"search_replace", FileEdit{Path: "a.txt", Mode: ModeSearchReplace, Content: "<<<<<<< SEARCH\nline 7\nline 8\n=======\nseven\n>>>>>>> REPLACE\n"}, []evidence.Range{{Start: 7, End: 8}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.apply(tt.edit)
			var nr *NeedsReadError
			if !errors.As(err, &nr) {
				t.Fatalf("apply = %v, want *NeedsReadError", err)
			}
			want := []RequiredRead{{Path: p, Ranges: tt.want}}
			if !reflect.DeepEqual(nr.Reads, want) {
				t.Errorf("Reads = %+v, want %+v", nr.Reads, want)
			}
			if got := f.read(p); got != body {
				t.Errorf("file changed by a failed plan: %q", got)
			}
		})
	}
	// Read what was asked, then the same edit succeeds.
	f.show(p, evidence.Range{Start: 3, End: 4})
	res, err := f.apply(tests[0].edit)
	if err != nil {
		t.Fatalf("after the read: %v", err)
	}
	if want := strings.Replace(body, "line 3\nline 4\n", "x\n", 1); f.read(p) != want {
		t.Errorf("content = %q, want %q", f.read(p), want)
	}
	if r := res.Files[0]; r.NewRevision != revOf(f.read(p)) || r.OldRevision != revOf(body) || r.UndoID == "" || !strings.Contains(r.Diff, "-line 3\n-line 4\n+x\n") {
		t.Errorf("result = %+v", r)
	}
}

func TestLinePatchCoverage(t *testing.T) {
	body := numbered(10)
	tests := []struct {
		name  string
		shown []evidence.Range
		patch Patch
		want  []evidence.Range // nil: allowed
	}{
		{"inside", []evidence.Range{{Start: 1, End: 5}}, Patch{StartLine: 2, DeleteLines: 3, Replacement: "x"}, nil},
		{"tail outside", []evidence.Range{{Start: 1, End: 5}}, Patch{StartLine: 5, DeleteLines: 3, Replacement: "x"}, []evidence.Range{{Start: 6, End: 7}}},
		{"hole", []evidence.Range{{Start: 1, End: 3}, {Start: 6, End: 10}}, Patch{StartLine: 2, DeleteLines: 6}, []evidence.Range{{Start: 4, End: 5}}},
		{"insert after seen line", []evidence.Range{{Start: 4, End: 4}}, Patch{StartLine: 5, Replacement: "x"}, nil},
		{"insert before seen line", []evidence.Range{{Start: 5, End: 5}}, Patch{StartLine: 5, Replacement: "x"}, nil},
		{"insert unseen", []evidence.Range{{Start: 1, End: 2}}, Patch{StartLine: 5, Replacement: "x"}, []evidence.Range{{Start: 4, End: 5}}},
		{"append after last seen", []evidence.Range{{Start: 10, End: 10}}, Patch{StartLine: 11, Replacement: "x"}, nil},
		{"append unseen", []evidence.Range{{Start: 1, End: 2}}, Patch{StartLine: 11, Replacement: "x"}, []evidence.Range{{Start: 10, End: 10}}},
		{"insert at top", []evidence.Range{{Start: 1, End: 1}}, Patch{StartLine: 1, Replacement: "x"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			p := f.write("a.txt", body)
			for _, r := range tt.shown {
				f.show(p, r)
			}
			_, err := f.apply(FileEdit{Path: p, Mode: ModeLinePatch, ExpectedRevision: revOf(body), Patches: []Patch{tt.patch}})
			var nr *NeedsReadError
			switch {
			case tt.want == nil && err != nil:
				t.Fatalf("apply = %v, want success", err)
			case tt.want != nil && !errors.As(err, &nr):
				t.Fatalf("apply = %v, want *NeedsReadError", err)
			case tt.want != nil && !reflect.DeepEqual(nr.Reads, []RequiredRead{{Path: p, Ranges: tt.want}}):
				t.Errorf("Reads = %+v, want ranges %v", nr.Reads, tt.want)
			}
		})
	}
}

func TestApplyPatches(t *testing.T) {
	tests := []struct {
		name, old string
		patches   []Patch
		want      string
		seen      []evidence.Range
	}{
		{"replace middle", "a\nb\nc\n", []Patch{{2, 1, "B"}}, "a\nB\nc\n", []evidence.Range{{Start: 2, End: 2}}},
		{"delete", "a\nb\nc\n", []Patch{{2, 1, ""}}, "a\nc\n", nil},
		{"insert two", "a\nb\n", []Patch{{2, 0, "x\ny\n"}}, "a\nx\ny\nb\n", []evidence.Range{{Start: 2, End: 3}}},
		{"append", "a\nb\n", []Patch{{3, 0, "c"}}, "a\nb\nc\n", []evidence.Range{{Start: 3, End: 3}}},
		{"append no final newline", "a\nb", []Patch{{3, 0, "c"}}, "a\nb\nc", []evidence.Range{{Start: 3, End: 3}}},
		{"replace last no final newline", "a\nb", []Patch{{2, 1, "B"}}, "a\nB", []evidence.Range{{Start: 2, End: 2}}},
		{"crlf", "a\r\nb\r\n", []Patch{{1, 1, "A"}}, "A\r\nb\r\n", []evidence.Range{{Start: 1, End: 1}}},
		{"two patches shift", "1\n2\n3\n4\n5\n", []Patch{{1, 1, "x\ny\n"}, {4, 2, "z"}}, "x\ny\n2\n3\nz\n", []evidence.Range{{Start: 1, End: 2}, {Start: 5, End: 5}}},
		{"empty file", "", []Patch{{1, 0, "hello"}}, "hello\n", []evidence.Range{{Start: 1, End: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, k, err := applyPatches([]byte(tt.old), evidence.IndexLines([]byte(tt.old)), tt.patches)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want || !reflect.DeepEqual(k.seen, tt.seen) {
				t.Errorf("applyPatches(%q) = %q, seen %v; want %q, %v", tt.old, got, k.seen, tt.want, tt.seen)
			}
		})
	}
	if _, _, err := applyPatches([]byte("a\n"), evidence.IndexLines([]byte("a\n")), []Patch{{1, 2, ""}}); err == nil {
		t.Error("deleting past the end: no error")
	}
}

func TestInvalidPayloads(t *testing.T) {
	f := newFixture(t)
	rev := revOf("x\n")
	many := make([]FileEdit, MaxBatchFiles+1)
	for i := range many {
		many[i] = FileEdit{Path: fmt.Sprintf("f%d", i), Mode: ModeReplace, Content: "x"}
	}
	tests := []struct {
		name  string
		edits []FileEdit
	}{
		{"empty batch", nil},
		{"too many", many},
		{"duplicate", []FileEdit{{Path: "a", Mode: ModeReplace}, {Path: f.root + "/a", Mode: ModeReplace}}},
		{"unknown mode", []FileEdit{{Path: "a", Mode: "patch"}}},
		{"line_patch without revision", []FileEdit{{Path: "a", Mode: ModeLinePatch, Patches: []Patch{{1, 1, ""}}}}},
		{"line_patch no patches", []FileEdit{{Path: "a", Mode: ModeLinePatch, ExpectedRevision: rev}}},
		{"unordered", []FileEdit{{Path: "a", Mode: ModeLinePatch, ExpectedRevision: rev, Patches: []Patch{{3, 1, ""}, {1, 1, ""}}}}},
		{"overlapping", []FileEdit{{Path: "a", Mode: ModeLinePatch, ExpectedRevision: rev, Patches: []Patch{{1, 3, ""}, {2, 1, ""}}}}},
		{"bad revision", []FileEdit{{Path: "a", Mode: ModeReplace, ExpectedRevision: "md5:x"}}},
		{"undo not alone", []FileEdit{{Mode: ModeUndo, UndoID: strings.Repeat("0", 32)}, {Path: "a", Mode: ModeReplace}}},
		{"search_replace empty", []FileEdit{{Path: "a", Mode: ModeSearchReplace}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.eng.Plan(tt.edits)
			var ie *InvalidError
			if !errors.As(err, &ie) {
				t.Errorf("Plan = %v, want *InvalidError", err)
			}
		})
	}
}

func TestChangedAfterRead(t *testing.T) {
	f := newFixture(t)
	p := f.write("a.txt", numbered(5))
	rev := f.show(p, evidence.All)
	newer := "someone else\n"
	f.write("a.txt", newer)

	_, err := f.apply(FileEdit{Path: p, Mode: ModeLinePatch, ExpectedRevision: rev, Patches: []Patch{{1, 1, "x"}}})
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Reason != ReasonRevisionMismatch || ce.Want != rev || ce.Got != revOf(newer) {
		t.Errorf("line_patch = %v, want revision_mismatch", err)
	}
	_, err = f.apply(FileEdit{Path: p, Mode: ModeSearchReplace, Content: "<<<<<<< SEARCH\nline 1\n=======\nx\n>>>>>>> REPLACE\n"})
	if !errors.As(err, &ce) || ce.Reason != ReasonChangedAfterRead {
		t.Errorf("search_replace = %v, want file_changed_after_read", err)
	}
	_, err = f.apply(FileEdit{Path: p, Mode: ModeReplace, Content: "mine\n"})
	if !errors.As(err, &ce) || ce.Reason != ReasonChangedAfterRead {
		t.Errorf("replace = %v, want file_changed_after_read", err)
	}
	if got := f.read(p); got != newer {
		t.Errorf("newer content changed: %q", got)
	}

	// Changed between Plan and Commit.
	rev = f.show(p, evidence.All)
	plan, err := f.eng.Plan([]FileEdit{{Path: p, Mode: ModeLinePatch, ExpectedRevision: rev, Patches: []Patch{{1, 1, "x"}}}})
	if err != nil {
		t.Fatal(err)
	}
	newest := "newest\n"
	f.write("a.txt", newest)
	_, err = f.eng.Commit(context.Background(), plan)
	var cm *CommitError
	if !errors.As(err, &cm) || !errors.As(err, &ce) || ce.Reason != ReasonChangedAfterRead || len(cm.Committed) != 0 {
		t.Errorf("Commit = %v, want a CommitError wrapping file_changed_after_read", err)
	}
	if got := f.read(p); got != newest {
		t.Errorf("newest content changed: %q", got)
	}
	assertNoTemps(t, f.root)
}

func TestBatchBadSearchLast(t *testing.T) {
	f := newFixture(t)
	var paths []string
	var edits []FileEdit
	for i := range 3 {
		p := f.write(fmt.Sprintf("f%d.txt", i), numbered(5))
		f.show(p, evidence.All)
		paths = append(paths, p)
		edits = append(edits, FileEdit{Path: p, Mode: ModeSearchReplace, Content: "<<<<<<< SEARCH\nline 2\n=======\ntwo\n>>>>>>> REPLACE\n"})
	}
	edits[2].Content = "<<<<<<< SEARCH\nno such line\n=======\ntwo\n>>>>>>> REPLACE\n"
	_, err := f.apply(edits...)
	var fe *FileError
	var me *MatchError
	if !errors.As(err, &fe) || fe.Path != paths[2] || !errors.As(err, &me) || me.Kind != NotFound {
		t.Fatalf("apply = %v, want a FileError for %s wrapping NotFound", err, paths[2])
	}
	for _, p := range paths {
		if got := f.read(p); got != numbered(5) {
			t.Errorf("%s changed: %q", p, got)
		}
	}
	assertNoTemps(t, f.root)
}

// TestCommitFailureOnSecondOfThree: an I/O failure on the second file of
// three restores the first and leaves the third untouched.
func TestCommitFailureOnSecondOfThree(t *testing.T) {
	for _, kind := range []string{"directory", "fifo", "parent is a file"} {
		t.Run(kind, func(t *testing.T) {
			f := newFixture(t)
			var paths []string
			var edits []FileEdit
			for i := range 3 {
				p := f.write(fmt.Sprintf("d%d/f.txt", i), numbered(3))
				paths = append(paths, p)
				edits = append(edits, FileEdit{Path: p, Mode: ModeLinePatch, ExpectedRevision: f.show(p, evidence.All), Patches: []Patch{{2, 1, "changed"}}})
			}
			plan, err := f.eng.Plan(edits)
			if err != nil {
				t.Fatal(err)
			}
			// Inject the failure (chmod does not stop root).
			if err := os.Remove(paths[1]); err != nil {
				t.Fatal(err)
			}
			switch kind {
			case "directory":
				err = os.Mkdir(paths[1], 0o755)
			case "fifo":
				err = syscall.Mkfifo(paths[1], 0o644)
			case "parent is a file":
				dir := filepath.Dir(paths[1])
				if err = os.Remove(dir); err == nil {
					err = os.WriteFile(dir, []byte("a file\n"), 0o644)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.eng.Commit(context.Background(), plan)
			var cm *CommitError
			if !errors.As(err, &cm) {
				t.Fatalf("Commit = %v, want *CommitError", err)
			}
			// All or nothing: the file written before the failure is
			// restored, and the error says so.
			if len(cm.Committed) != 0 || !reflect.DeepEqual(cm.RolledBack, paths[:1]) || cm.RestoreErr != nil ||
				cm.Failed != paths[1] || !reflect.DeepEqual(cm.Untouched, paths[2:]) {
				t.Errorf("CommitError = committed %v, rolled back %v (%v), failed %s, untouched %v", cm.Committed, cm.RolledBack, cm.RestoreErr, cm.Failed, cm.Untouched)
			}
			if got := f.read(paths[0]); got != numbered(3) {
				t.Errorf("first file = %q, want restored", got)
			}
			if ents, _ := os.ReadDir(filepath.Join(f.eng.stateDir, intentDir)); len(ents) != 0 {
				t.Errorf("intent records left: %v", ents)
			}
			if got := f.read(paths[2]); got != numbered(3) {
				t.Errorf("third file = %q, want untouched", got)
			}
			assertNoTemps(t, f.root)
		})
	}
}

func TestConcurrentIdenticalCalls(t *testing.T) {
	f := newFixture(t)
	p := f.write("a.txt", numbered(5))
	rev := f.show(p, evidence.All)
	edit := FileEdit{Path: p, Mode: ModeLinePatch, ExpectedRevision: rev, Patches: []Patch{{3, 1, "three"}}}
	locks := &PathLocks{}
	engines := []*Engine{f.engine(locks), f.engine(locks)}
	results := make([]*Result, 2)
	errs := make([]error, 2)
	var ready, wg sync.WaitGroup
	ready.Add(2)
	start := make(chan struct{})
	for i := range 2 {
		wg.Go(func() {
			plan, err := engines[i].Plan([]FileEdit{edit})
			ready.Done()
			<-start
			if err != nil {
				errs[i] = err
				return
			}
			results[i], errs[i] = engines[i].Commit(context.Background(), plan)
		})
	}
	ready.Wait()
	close(start)
	wg.Wait()
	replayed := 0
	for i := range 2 {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if results[i].Files[0].Replayed {
			replayed++
		}
	}
	if replayed != 1 {
		t.Errorf("%d replays, want exactly 1 (one write)", replayed)
	}
	if n := countFiles(t, filepath.Join(f.state, undoDir)); n != 1 {
		t.Errorf("%d undo records, want 1 (one write)", n)
	}
	if got := f.read(p); got != "line 1\nline 2\nthree\nline 4\nline 5\n" {
		t.Errorf("content = %q", got)
	}
	// Repeated later, it still replays; after an external change it does not.
	if res, err := f.apply(edit); err != nil || !res.Files[0].Replayed {
		t.Errorf("repeat = %+v, %v; want a replay", res, err)
	}
	f.write("a.txt", "other\n")
	var ce *ConflictError
	if _, err := f.apply(edit); !errors.As(err, &ce) {
		t.Errorf("repeat after a change = %v, want a conflict", err)
	}
}

func TestConcurrentDifferentEdits(t *testing.T) {
	f := newFixture(t)
	p := f.write("a.txt", numbered(5))
	rev := f.show(p, evidence.All)
	edits := []FileEdit{
		{Path: p, Mode: ModeLinePatch, ExpectedRevision: rev, Patches: []Patch{{1, 1, "first"}}},
		{Path: p, Mode: ModeLinePatch, ExpectedRevision: rev, Patches: []Patch{{5, 1, "fifth"}}},
	}
	plans := make([]*Plan, 2)
	for i := range plans {
		var err error
		if plans[i], err = f.eng.Plan(edits[i : i+1]); err != nil {
			t.Fatal(err)
		}
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() { _, errs[i] = f.eng.Commit(context.Background(), plans[i]) })
	}
	wg.Wait()
	wins, conflicts := 0, 0
	for _, err := range errs {
		var ce *ConflictError
		switch {
		case err == nil:
			wins++
		case errors.As(err, &ce):
			conflicts++
		default:
			t.Errorf("unexpected error %v", err)
		}
	}
	if wins != 1 || conflicts != 1 {
		t.Errorf("%d wins, %d conflicts; want 1 and 1", wins, conflicts)
	}
	if got := f.read(p); got != strings.Replace(numbered(5), "line 1\n", "first\n", 1) && got != strings.Replace(numbered(5), "line 5\n", "fifth\n", 1) {
		t.Errorf("content = %q, want exactly one edit", got)
	}
}

func TestUndo(t *testing.T) {
	f := newFixture(t)
	body := numbered(4)
	p := f.write("a.txt", body)
	if err := os.Chmod(p, 0o751); err != nil {
		t.Fatal(err)
	}
	res, err := f.apply(FileEdit{Path: p, Mode: ModeLinePatch, ExpectedRevision: f.show(p, evidence.All), Patches: []Patch{{2, 1, "two"}}})
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o751 {
		t.Errorf("mode after edit = %v, want 0751", fi.Mode().Perm())
	}
	id := res.Files[0].UndoID
	checkStateModes(t, f.state)

	ures, err := f.apply(FileEdit{Mode: ModeUndo, UndoID: id})
	if err != nil {
		t.Fatalf("undo: %v", err)
	}
	if got := f.read(p); got != body {
		t.Errorf("after undo = %q, want %q", got, body)
	}
	if ures.Files[0].NewRevision != revOf(body) || ures.Files[0].Path != p {
		t.Errorf("undo result = %+v", ures.Files[0])
	}

	// The undo keeps the ledger: lines known before it and the lines it
	// restored (its diff showed them whole) are known at the restored
	// revision, so the whole file is, and no read is needed.
	if !f.ledger.Covers(p, revOf(body), evidence.Range{Start: 1, End: 4}) {
		t.Errorf("after undo the ledger does not cover the restored file")
	}
	// Undo after an external change is refused and the change is kept.
	if res, err = f.apply(FileEdit{Path: p, Mode: ModeReplace, Content: "replaced\n"}); err != nil {
		t.Fatal(err)
	}
	f.write("a.txt", "external\n")
	_, err = f.apply(FileEdit{Mode: ModeUndo, UndoID: res.Files[0].UndoID})
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Reason != ReasonChangedSinceEdit {
		t.Errorf("undo after a change = %v, want file_changed_since_edit", err)
	}
	if got := f.read(p); got != "external\n" {
		t.Errorf("external change lost: %q", got)
	}

	// Undo of a creation removes the file; an unknown id is not found.
	np := filepath.Join(f.root, "new", "n.txt")
	res, err = f.apply(FileEdit{Path: np, Mode: ModeReplace, Content: "n\n"})
	if err != nil || !res.Files[0].Created {
		t.Fatalf("create = %+v, %v", res, err)
	}
	if _, err := f.apply(FileEdit{Mode: ModeUndo, UndoID: res.Files[0].UndoID}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(np); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("created file still there after undo: %v", err)
	}
	var nf *NotFoundError
	if _, err := f.apply(FileEdit{Mode: ModeUndo, UndoID: strings.Repeat("ab", 16)}); !errors.As(err, &nf) {
		t.Errorf("unknown undo id = %v, want *NotFoundError", err)
	}
}

func TestDenied(t *testing.T) {
	f := newFixture(t)
	f.check.denied = "secret.txt"
	_, err := f.apply(FileEdit{Path: "secret.txt", Mode: ModeReplace, Content: "x"})
	var de *DeniedError
	if !errors.As(err, &de) || !errors.Is(err, ErrDenied) {
		t.Fatalf("apply = %v, want *DeniedError", err)
	}
	if _, err := os.Lstat(filepath.Join(f.root, "secret.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("denied file written: %v", err)
	}
	outside := filepath.Join(filepath.Dir(f.root), "outside.txt")
	if _, err := f.apply(FileEdit{Path: outside, Mode: ModeReplace, Content: "x"}); !errors.As(err, &de) {
		t.Errorf("outside = %v, want *DeniedError", err)
	}
	if _, err := os.Lstat(outside); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("outside file written: %v", err)
	}
}

func TestSymlinkSwappedBeforeCommit(t *testing.T) {
	f := newFixture(t)
	p := f.write("a.txt", "mine\n")
	outside := filepath.Join(filepath.Dir(f.root), "outside.txt")
	if err := os.WriteFile(outside, []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.show(p, evidence.All)
	plan, err := f.eng.Plan([]FileEdit{{Path: p, Mode: ModeReplace, Content: "new\n"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, p); err != nil {
		t.Fatal(err)
	}
	_, err = f.eng.Commit(context.Background(), plan)
	var de *DeniedError
	if !errors.As(err, &de) {
		t.Fatalf("Commit = %v, want a *DeniedError", err)
	}
	if got := f.read(outside); got != "outside\n" {
		t.Errorf("outside file = %q", got)
	}
	if fi, err := os.Lstat(p); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("symlink replaced: %v", err)
	}
	// Without the checker's help the engine refuses it too.
	d, err := atomicfile.OpenDir(filepath.Dir(p), atomicfile.DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := verifyTarget(d, &plan.Files[0], DefaultMaxFileBytes); !errors.As(err, &de) {
		t.Errorf("verifyTarget = %v, want *DeniedError", err)
	}
}

func TestRecoveryExhausted(t *testing.T) {
	f := newFixture(t)
	p := f.write("a.txt", numbered(3))
	f.show(p, evidence.All)
	bad := FileEdit{Path: p, Mode: ModeSearchReplace, Content: "<<<<<<< SEARCH\nnope\n=======\nx\n>>>>>>> REPLACE\n"}
	for i := 1; i <= 3; i++ {
		_, err := f.apply(bad)
		var re *RecoveryExhaustedError
		if got := errors.As(err, &re); got != (i == 3) {
			t.Errorf("conflict %d: %v (exhausted %v)", i, err, got)
		}
	}
	// Success resets the count.
	f.apply(bad)
	if _, err := f.apply(FileEdit{Path: p, Mode: ModeSearchReplace, Content: "<<<<<<< SEARCH\nline 1\n=======\none\n>>>>>>> REPLACE\n"}); err != nil {
		t.Fatal(err)
	}
	f.apply(bad)
	var re *RecoveryExhaustedError
	if _, err := f.apply(bad); errors.As(err, &re) {
		t.Errorf("second conflict after a success = %v, want a plain conflict", err)
	}
}

// TestLedgerCarriesForward: after an edit the model may patch again, at the
// new revision, the lines it saw and the lines it wrote, without a read.
func TestLedgerCarriesForward(t *testing.T) {
	f := newFixture(t)
	p := f.write("a.txt", numbered(10))
	f.show(p, evidence.Range{Start: 1, End: 5})
	res, err := f.apply(FileEdit{Path: p, Mode: ModeLinePatch, ExpectedRevision: revOf(numbered(10)), Patches: []Patch{{2, 1, "a\nb\nc\n"}}})
	if err != nil {
		t.Fatal(err)
	}
	rev := res.Files[0].NewRevision
	// New lines 1..7 are known (1 seen, 2-4 written, 5-7 were 3-5); 8 was line 6.
	if !f.ledger.Covers(p, rev, evidence.Range{Start: 1, End: 7}) || f.ledger.Covers(p, rev, evidence.Range{Start: 8, End: 8}) {
		m, _, _ := f.ledger.Missing(p, rev, evidence.Range{Start: 1, End: 12})
		t.Errorf("coverage after the edit: missing %v, want exactly 8-12", m)
	}
	if _, err := f.apply(FileEdit{Path: p, Mode: ModeLinePatch, ExpectedRevision: rev, Patches: []Patch{{6, 2, "x"}}}); err != nil {
		t.Errorf("second patch on carried lines: %v", err)
	}
}

func TestNewFileModeAndStaleTemps(t *testing.T) {
	f := newFixture(t)
	stale := filepath.Join(f.root, TempPrefix+"dead")
	if err := os.WriteFile(stale, []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A live writer's temp file (locked) must survive the sweep.
	live, err := os.OpenFile(filepath.Join(f.root, TempPrefix+"live"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err := syscall.Flock(int(live.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	res, err := f.apply(FileEdit{Path: "n.txt", Mode: ModeReplace, Content: "n\n"})
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(res.Files[0].Path); fi.Mode().Perm() != 0o640 {
		t.Errorf("new file mode = %v, want 0644 less umask 027", fi.Mode().Perm())
	}
	if _, err := os.Lstat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stale temp file not swept: %v", err)
	}
	if _, err := os.Lstat(live.Name()); err != nil {
		t.Errorf("live temp file swept: %v", err)
	}
}

func TestLineHunks(t *testing.T) {
	split := func(s string) evidence.Lines { return evidence.IndexLines([]byte(s)) }
	cases := [][2]string{
		{"a\nb\nc\n", "a\nb\nc\n"},
		{"a\nb\nc\n", "a\nx\nc\n"},
		{"", "a\n"},
		{"a\n", ""},
		{"a\nb\nc\nd\ne\n", "x\nb\nc\ny\ne\nz\n"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n3\n2\n4\n5\n7\n9\n"},
	}
	for _, c := range cases {
		a, b := split(c[0]), split(c[1])
		hs := lineHunks(a, b)
		// Rebuild b from a and the hunks.
		var out []byte
		o := 1
		for _, h := range hs {
			for ; o < h.oldStart; o++ {
				out = append(out, a.Line(o)...)
			}
			for i := 0; i < h.newCount; i++ {
				out = append(out, b.Line(h.newStart+i)...)
			}
			o += h.oldCount
		}
		for ; o <= a.Count(); o++ {
			out = append(out, a.Line(o)...)
		}
		if string(out) != c[1] {
			t.Errorf("lineHunks(%q, %q) = %+v rebuilds %q", c[0], c[1], hs, out)
		}
	}
}

func assertNoTemps(t *testing.T, root string) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), TempPrefix) {
			t.Errorf("temp file left: %s", p)
		}
		return nil
	})
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func checkStateModes(t *testing.T, state string) {
	t.Helper()
	filepath.WalkDir(state, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, _ := d.Info()
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if p != state && fi.Mode().Perm() != want {
			t.Errorf("%s mode %v, want %v", p, fi.Mode().Perm(), want)
		}
		return nil
	})
}
