package edit

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"winx/evidence"

	"golang.org/x/sys/unix"
)

// TestSwappedParentNeverWritesOutside is the attack of a directory on the
// way to the target swapped for a symlink to the outside while the engine
// writes: a goroutine exchanges sub with a symlink to a directory outside
// the workspace (renameat2 RENAME_EXCHANGE, atomic) as fast as it can while
// the engine creates or replaces files below sub. Nothing outside may ever
// change (no file, no temp file, no directory), and every reported success
// must be a file really inside, in the directory that was sub when it was
// resolved.
func TestSwappedParentNeverWritesOutside(t *testing.T) {
	for _, tc := range []struct {
		name string
		// target is the i-th file below sub; existing files (with an
		// identical copy outside, so only the path decides) are made first.
		target   func(i int) string
		existing bool
	}{
		{"create in parent", func(i int) string { return fmt.Sprintf("race_%d.txt", i) }, false},
		{"create in new directories", func(i int) string { return fmt.Sprintf("new_%d/x/race.txt", i) }, false},
		{"replace below grandparent", func(i int) string { return fmt.Sprintf("deep/exist_%d.txt", i) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			outside := filepath.Join(filepath.Dir(f.root), "outside")
			sub := filepath.Join(f.root, "sub")
			swap := filepath.Join(f.root, "swap")
			for _, d := range []string{outside, sub} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			n := 600
			if raceEnabled {
				n = 150
			}
			if tc.existing {
				for i := range n {
					for _, dir := range []string{sub, outside} {
						p := filepath.Join(dir, tc.target(i))
						if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
							t.Fatal(err)
						}
						if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			if err := os.Symlink(outside, swap); err != nil {
				t.Fatal(err)
			}
			before := tree(t, outside)

			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if err := unix.Renameat2(unix.AT_FDCWD, sub, unix.AT_FDCWD, swap, unix.RENAME_EXCHANGE); err != nil {
						t.Errorf("renameat2: %v", err)
						return
					}
				}
			}()

			deadline := time.Now().Add(2 * time.Second)
			succeeded := map[string]string{} // target -> content
			for i := 0; i < n && time.Now().Before(deadline); i++ {
				rel := tc.target(i)
				content := fmt.Sprintf("content %d\n", i)
				edit := FileEdit{Path: "sub/" + rel, Mode: ModeReplace, Content: content}
				if tc.existing {
					// Shown through whatever sub is now: the plan either
					// resolves inside or is refused.
					if s, err := evidence.ReadSnapshot(filepath.Join(f.root, "sub", rel), 0); err == nil {
						f.ledger.Record(s.Path, s.Revision, evidence.All)
					}
				}
				res, err := f.apply(edit)
				if err != nil {
					continue // refused or conflicting: allowed, as long as nothing leaked
				}
				p := res.Files[0].Path
				if !strings.HasPrefix(p, f.root+string(filepath.Separator)) || !strings.HasSuffix(p, "/"+rel) {
					t.Errorf("success names %s, not a workspace path ending in %s", p, rel)
				}
				succeeded[rel] = content
			}
			close(stop)
			wg.Wait()

			if after := tree(t, outside); !maps.Equal(before, after) {
				for p, c := range after {
					if before[p] != c {
						t.Errorf("outside the workspace, %s now holds %q (was %q)", p, c, before[p])
					}
				}
				for p := range before {
					if _, ok := after[p]; !ok {
						t.Errorf("outside the workspace, %s was removed", p)
					}
				}
			}
			// The real directory is inside under one of the two names now.
			real := sub
			if fi, err := os.Lstat(sub); err != nil || !fi.IsDir() {
				real = swap
			}
			for rel, content := range succeeded {
				b, err := os.ReadFile(filepath.Join(real, rel))
				if err != nil || string(b) != content {
					t.Errorf("reported success for %s, but inside it holds %q (%v)", rel, b, err)
				}
			}
			assertNoTemps(t, f.root)
			t.Logf("%d of %d writes succeeded", len(succeeded), n)
		})
	}
}

// tree maps every entry below dir (symlinks not followed) to its content
// ("dir/" for a directory).
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			out[p] = "dir/"
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[p] = string(b)
		default:
			out[p] = "other"
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
