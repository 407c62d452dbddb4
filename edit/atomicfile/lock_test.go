package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// Many writers, each with its own descriptor (as separate processes have),
// increment a counter file under LockFile or Dir.Lock: no increment is
// lost, and LockFile leaves no lock file behind.
func TestLocksSerializeWriters(t *testing.T) {
	for _, kind := range []string{"file", "dir"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			locks := filepath.Join(dir, "locks")
			if err := MkdirPrivate(locks); err != nil {
				t.Fatal(err)
			}
			counter := filepath.Join(dir, "n")
			os.WriteFile(counter, []byte("0"), 0o600)
			const workers, rounds = 8, 25
			var wg sync.WaitGroup
			for range workers {
				wg.Go(func() {
					for range rounds {
						var lk *Lock
						var err error
						var d *Dir
						if kind == "file" {
							lk, err = LockFile(locks, LockName(counter), 20*time.Second)
						} else {
							if d, err = OpenDir(dir, DirOptions{}); err == nil {
								lk, err = d.Lock(20 * time.Second)
							}
						}
						if err != nil {
							t.Error(err)
							return
						}
						b, _ := os.ReadFile(counter)
						n, _ := strconv.Atoi(string(b))
						os.WriteFile(counter, []byte(strconv.Itoa(n+1)), 0o600)
						lk.Unlock()
						if d != nil {
							d.Close()
						}
					}
				})
			}
			wg.Wait()
			if b, _ := os.ReadFile(counter); string(b) != strconv.Itoa(workers*rounds) {
				t.Errorf("counter = %s, want %d", b, workers*rounds)
			}
			if es, _ := os.ReadDir(locks); len(es) != 0 {
				t.Errorf("%d lock files left", len(es))
			}
		})
	}
}

// A lock held elsewhere costs a waiter ErrLockTimeout, not a hang; the
// lock file is created 0600.
func TestLockFileTimeout(t *testing.T) {
	// The waits are on the bubble's clock: the flocks are non-blocking
	// polls, so nothing here waits on the machine's clock.
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		held, err := LockFile(dir, "x.lock", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(filepath.Join(dir, "x.lock")); fi.Mode().Perm() != 0o600 {
			t.Errorf("lock file mode = %v, want 0600", fi.Mode().Perm())
		}
		if _, err := LockFile(dir, "x.lock", 100*time.Millisecond); !errors.Is(err, ErrLockTimeout) {
			t.Errorf("second LockFile = %v, want ErrLockTimeout", err)
		}
		held.Unlock()
		again, err := LockFile(dir, "x.lock", 5*time.Second)
		if err != nil {
			t.Fatalf("after unlock: %v", err)
		}
		again.Unlock()
		if _, err := LockFile(dir, "../x", time.Second); err == nil {
			t.Errorf("a lock name with a slash was accepted")
		}
	})
}
