package edit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSwappedParentNeverWritesOutside is the attack of a parent directory
// swapped for a symlink to the outside while files are created in it: a
// goroutine exchanges sub with a symlink to a directory outside the
// workspace (renameat2 RENAME_EXCHANGE, atomic) as fast as it can while the
// engine creates sub/race_N.txt. No file or temp file may ever appear
// outside, and every reported success must be a file really inside, in the
// directory that was sub when it was resolved.
func TestSwappedParentNeverWritesOutside(t *testing.T) {
	f := newFixture(t)
	outside := filepath.Join(filepath.Dir(f.root), "outside")
	sub := filepath.Join(f.root, "sub")
	swap := filepath.Join(f.root, "swap")
	for _, d := range []string{outside, sub} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, swap); err != nil {
		t.Fatal(err)
	}

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

	n := 1500
	if raceEnabled {
		n = 300
	}
	deadline := time.Now().Add(4 * time.Second)
	succeeded := map[string]string{} // base name -> content
	for i := 0; i < n && time.Now().Before(deadline); i++ {
		name := fmt.Sprintf("race_%d.txt", i)
		content := fmt.Sprintf("content %d\n", i)
		res, err := f.apply(FileEdit{Path: "sub/" + name, Mode: ModeReplace, Content: content})
		if err != nil {
			continue // refused or conflicting: allowed, as long as nothing leaked
		}
		p := res.Files[0].Path
		if !strings.HasPrefix(p, f.root+string(filepath.Separator)) || filepath.Base(p) != name {
			t.Errorf("success names %s, not a workspace path ending in %s", p, name)
		}
		succeeded[name] = content
	}
	close(stop)
	wg.Wait()

	ents, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("written outside the workspace: %s", filepath.Join(outside, e.Name()))
	}
	// The real directory is inside under one of the two names now.
	real := sub
	if fi, err := os.Lstat(sub); err != nil || !fi.IsDir() {
		real = swap
	}
	for name, content := range succeeded {
		b, err := os.ReadFile(filepath.Join(real, name))
		if err != nil || string(b) != content {
			t.Errorf("reported success for %s, but inside it holds %q (%v)", name, b, err)
		}
	}
	assertNoTemps(t, f.root)
	t.Logf("%d of %d creations succeeded", len(succeeded), n)
}
