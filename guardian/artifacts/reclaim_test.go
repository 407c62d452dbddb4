package artifacts

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// farFuture is a clock reading after every file the tests create.
var farFuture = time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)

// touchTree sets the mtime of dir and everything below it. Inside a synctest
// bubble time.Now starts at 2000-01-01, so file times are set from the
// bubble's clock rather than left at the real time of creation. Symlinks
// are skipped: os.Chtimes would follow them.
func touchTree(t *testing.T, dir string, mtime time.Time) {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
		case d.IsDir():
			dirs = append(dirs, p)
		default:
			return os.Chtimes(p, mtime, mtime)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Directories last, deepest first: nothing below changes them after.
	slices.Reverse(dirs)
	for _, d := range dirs {
		if err := os.Chtimes(d, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func TestReclaimStaleBoundary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := t.TempDir()
		a, b := SessionDir(root, idA), SessionDir(root, idB)
		sparse(t, filepath.Join(a, "f"), 200<<20)
		sparse(t, filepath.Join(b, "f"), 100<<20)
		start := time.Now()
		touchTree(t, a, start)
		touchTree(t, b, start)

		// One second short of StaleAfter: over the mark, yet nothing goes.
		time.Sleep(StaleAfter - time.Second)
		res, err := Reclaim(root, time.Now(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Removed) != 0 || !exists(a) || !exists(b) {
			t.Fatalf("Reclaim at 24h-1s removed %v", res.Removed)
		}
		if res.Usage.Bytes != 300<<20 {
			t.Errorf("usage = %d, want %d", res.Usage.Bytes, 300<<20)
		}

		// At StaleAfter both are eligible; removing one is enough.
		time.Sleep(time.Second)
		res, err = Reclaim(root, time.Now(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Removed) != 1 || res.Bytes != 200<<20 && res.Bytes != 100<<20 {
			t.Fatalf("Reclaim at 24h = %v (%d bytes), want one session", res.Removed, res.Bytes)
		}
		if exists(res.Removed[0]) {
			t.Errorf("%s still exists", res.Removed[0])
		}
		if res.Usage.Bytes > MaxWorkspaceBytes {
			t.Errorf("after Reclaim usage = %d, over the mark", res.Usage.Bytes)
		}
	})
}

func TestReclaimOldestFirstStopsAtMark(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := t.TempDir()
		ids := []string{idA, idB, idC} // oldest first
		now := time.Now()
		for i, id := range ids {
			dir := SessionDir(root, id)
			sparse(t, filepath.Join(dir, "f"), 100<<20)
			touchTree(t, dir, now.Add(-StaleAfter-time.Duration(3-i)*time.Hour))
		}
		res, err := Reclaim(root, now, map[string]bool{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{SessionDir(root, idA)}; !slices.Equal(res.Removed, want) {
			t.Fatalf("Reclaim removed %v, want %v (the oldest, then stop at the mark)", res.Removed, want)
		}
		if exists(SessionDir(root, idA)) || !exists(SessionDir(root, idB)) || !exists(SessionDir(root, idC)) {
			t.Errorf("disk does not match the report")
		}
		after, err := Scan(root)
		if err != nil {
			t.Fatal(err)
		}
		if after.Bytes != 200<<20 || res.Usage.Bytes != after.Bytes || res.Bytes != 100<<20 || res.Files != 1 {
			t.Errorf("reported usage %d, freed %d in %d files; scan says %d; want 200 MiB left, 100 MiB in 1 file freed",
				res.Usage.Bytes, res.Bytes, res.Files, after.Bytes)
		}
		if _, ok := res.Usage.Sessions[idA]; ok {
			t.Errorf("reported usage still lists the removed session")
		}

		// Under the mark nothing more goes, however old.
		res, err = Reclaim(root, now.Add(1000*time.Hour), nil, nil)
		if err != nil || len(res.Removed) != 0 {
			t.Errorf("Reclaim under the mark = %v, %v; want nothing", res.Removed, err)
		}
	})
}

func TestReclaimLiveSessionsAndHelpers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := t.TempDir()
		live := SessionDir(root, idA)
		sparse(t, filepath.Join(live, "own"), 200<<20)
		sparse(t, filepath.Join(live, "oldhelper", "f"), 30<<20)
		sparse(t, filepath.Join(live, "newhelper", "f"), 30<<20)
		young := SessionDir(root, idB) // not live, but recent
		sparse(t, filepath.Join(young, "f"), 40<<20)
		sparse(t, filepath.Join(young, "oldhelper", "f"), 10<<20)
		sparse(t, filepath.Join(Dir(root), "loose"), 50<<20)

		now := time.Now()
		old := now.Add(-3 * StaleAfter)
		touchTree(t, live, old)
		touchTree(t, filepath.Join(live, "newhelper"), now.Add(-time.Hour))
		touchTree(t, young, now.Add(-time.Hour))
		touchTree(t, filepath.Join(young, "oldhelper"), old)
		touchTree(t, filepath.Join(Dir(root), "loose"), old)

		res, err := Reclaim(root, now, map[string]bool{idA: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Total 360 MiB; the two stale helpers (40 MiB) are all it may take,
		// so it stays over the mark and everything else survives.
		want := []string{filepath.Join(live, "oldhelper"), filepath.Join(young, "oldhelper")}
		got := slices.Sorted(slices.Values(res.Removed))
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("Reclaim removed %v, want %v", got, want)
		}
		for _, p := range []string{filepath.Join(live, "own"), filepath.Join(live, "newhelper"), filepath.Join(young, "f"), filepath.Join(Dir(root), "loose")} {
			if !exists(p) {
				t.Errorf("%s was removed", p)
			}
		}
		if res.Usage.Bytes != 320<<20 {
			t.Errorf("usage after = %d MiB, want 320", res.Usage.Bytes>>20)
		}
		if err := res.Usage.Check(idA, nil); err == nil {
			t.Errorf("a live session over its budget passed Check after Reclaim")
		}
	})
}

// TestReclaimDoesNotFollowSymlinks runs on the real clock: a symlink's own
// mtime cannot be set with the os package, so now is a day past its creation.
func TestReclaimDoesNotFollowSymlinks(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "keep")
	sparse(t, target, 1)
	dir := SessionDir(root, idA)
	sparse(t, filepath.Join(dir, "h", "f"), 300<<20)
	if err := os.Symlink(outside, filepath.Join(dir, "h", "link")); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Add(StaleAfter + time.Hour)
	touchTree(t, dir, now.Add(-2*StaleAfter))
	res, err := Reclaim(root, now, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Removed) != 1 || exists(dir) {
		t.Fatalf("Reclaim removed %v, want the session", res.Removed)
	}
	if !exists(target) {
		t.Errorf("Reclaim deleted through a symlink")
	}
}
