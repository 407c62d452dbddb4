package codemap

import (
	"path/filepath"
	"sync"
	"testing"
)

func canonicalTempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestIndexCacheSharesAndEvictsLeastUsed(t *testing.T) {
	var c IndexCache
	roots := make([]string, MaxCachedIndexes+1)
	first := make([]*Index, len(roots))
	for i := range roots {
		roots[i] = canonicalTempDir(t)
	}
	for i, r := range roots[:MaxCachedIndexes] {
		ix, err := c.Get(r)
		if err != nil {
			t.Fatalf("Get(%s): %v", r, err)
		}
		first[i] = ix
	}
	// Root 0 is used again, so root 1 is now the least recently used.
	if ix, _ := c.Get(roots[0]); ix != first[0] {
		t.Errorf("Get(%s) again = a new index, want the shared one", roots[0])
	}
	if _, err := c.Get(roots[MaxCachedIndexes]); err != nil {
		t.Fatal(err)
	}
	if len(c.slots) != MaxCachedIndexes {
		t.Errorf("cache holds %d indexes, want %d", len(c.slots), MaxCachedIndexes)
	}
	if _, ok := c.slots[roots[1]]; ok {
		t.Errorf("the least recently used root %s was kept", roots[1])
	}
	for _, i := range []int{0, 2, 3} {
		if ix, _ := c.Get(roots[i]); ix != first[i] {
			t.Errorf("Get(root %d) = a new index, want the cached one", i)
		}
	}
}

func TestIndexCacheErrorsAreNotCached(t *testing.T) {
	var c IndexCache
	if _, err := c.Get("relative"); err == nil {
		t.Errorf("Get(relative) = nil error, want one")
	}
	if _, err := c.Get(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Errorf("Get(missing) = nil error, want one")
	}
	if len(c.slots) != 0 {
		t.Errorf("cache holds %d indexes after failures, want 0", len(c.slots))
	}
}

func TestIndexCacheConcurrentGet(t *testing.T) {
	var c IndexCache
	roots := make([]string, MaxCachedIndexes+2)
	for i := range roots {
		roots[i] = canonicalTempDir(t)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				r := roots[(g+i)%len(roots)]
				if ix, err := c.Get(r); err != nil || ix.Root() != r {
					t.Errorf("Get(%s) = %v, %v", r, ix, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if len(c.slots) > MaxCachedIndexes {
		t.Errorf("cache holds %d indexes, want at most %d", len(c.slots), MaxCachedIndexes)
	}
}

func TestRepoRoot(t *testing.T) {
	ws := canonicalTempDir(t)
	extra := canonicalTempDir(t)
	writeTree(t, extra, map[string]string{
		"repo/.git/HEAD": "ref: refs/heads/main\n",
		"repo/pkg/a.go":  "package pkg\n",
		"loose/b.go":     "package loose\n",
	})
	roots := []string{ws, extra}
	tests := []struct {
		path  string
		isDir bool
		want  string
	}{
		{filepath.Join(ws, "sub"), true, ws},
		{filepath.Join(extra, "repo", "pkg", "a.go"), false, filepath.Join(extra, "repo")},
		{filepath.Join(extra, "repo", "pkg"), true, filepath.Join(extra, "repo")},
		{filepath.Join(extra, "loose", "b.go"), false, filepath.Join(extra, "loose")},
	}
	for _, tc := range tests {
		if got := RepoRoot(tc.path, tc.isDir, ws, roots); got != tc.want {
			t.Errorf("RepoRoot(%s) = %s, want %s", tc.path, got, tc.want)
		}
	}
}
