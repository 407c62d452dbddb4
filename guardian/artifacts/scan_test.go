package artifacts

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	idA = "0123456789abcdef"
	idB = "fedcba9876543210"
	idC = "00000000000000c0"
)

// sparse creates path (and its parents) as a sparse file of size bytes.
func sparse(t testing.TB, path string, size int64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

func TestScanMissingDir(t *testing.T) {
	root := t.TempDir()
	u, err := Scan(root)
	if err != nil {
		t.Fatalf("Scan(no .winx) = %v", err)
	}
	if u.Bytes != 0 || u.Files != 0 || len(u.Sessions) != 0 || u.Truncated {
		t.Errorf("Scan(no .winx) = %+v, want empty", u)
	}
	if err := u.Check(idA, nil); err != nil {
		t.Errorf("Check on empty = %v", err)
	}
}

func TestScanAccounting(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	sparse(t, filepath.Join(outside, "huge"), 1<<30)
	sparse(t, filepath.Join(outside, "dir", "inner"), 1<<30)

	a := SessionDir(root, idA)
	sparse(t, filepath.Join(a, "top.log"), 1000)
	sparse(t, filepath.Join(a, "agent1", "x"), 2000)
	sparse(t, filepath.Join(a, "agent1", "deep", "er", "y"), 3000)
	sparse(t, filepath.Join(a, "agent2", "z"), 10)
	if err := os.Mkdir(filepath.Join(a, "empty"), 0o700); err != nil {
		t.Fatal(err)
	}
	// Symlinks are entries of their own (lstat) size; their targets and
	// directories behind them are never counted.
	linkFile := filepath.Join(outside, "huge")
	linkDir := filepath.Join(outside, "dir")
	if err := os.Symlink(linkFile, filepath.Join(a, "agent2", "l")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(linkDir, filepath.Join(a, "ldir")); err != nil {
		t.Fatal(err)
	}
	sparse(t, filepath.Join(SessionDir(root, idB), "b"), 5)
	// Not session directories: counted to the workspace only.
	sparse(t, filepath.Join(Dir(root), "loose"), 7)
	sparse(t, filepath.Join(Dir(root), "session-NOTHEX0000000000", "f"), 11)
	sparse(t, filepath.Join(Dir(root), "session-0123456789ABCDEF", "f"), 13)

	u, err := Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	s := u.Sessions[idA]
	if s == nil {
		t.Fatalf("Scan: no session %s in %v", idA, u.Sessions)
	}
	wantA := int64(1000 + 2000 + 3000 + 10 + len(linkFile) + len(linkDir))
	if s.Bytes != wantA || s.Files != 6 {
		t.Errorf("session A = %d bytes, %d files; want %d bytes, 6 files", s.Bytes, s.Files, wantA)
	}
	if s.Dir != a {
		t.Errorf("session A dir = %q, want %q", s.Dir, a)
	}
	if got := len(s.Helpers); got != 3 {
		t.Errorf("session A helpers = %v, want agent1, agent2, empty", s.Helpers)
	}
	if h := s.Helpers["agent1"]; h == nil || h.Bytes != 5000 || h.Files != 2 {
		t.Errorf("helper agent1 = %+v, want 5000 bytes, 2 files", h)
	}
	if h := s.Helpers["agent2"]; h == nil || h.Bytes != int64(10+len(linkFile)) || h.Files != 2 {
		t.Errorf("helper agent2 = %+v, want %d bytes, 2 files", h, 10+len(linkFile))
	}
	if h := s.Helpers["empty"]; h == nil || h.Bytes != 0 || h.Files != 0 {
		t.Errorf("helper empty = %+v, want zero", h)
	}
	if _, ok := s.Helpers["ldir"]; ok {
		t.Errorf("a symlink to a directory counted as a helper")
	}
	if s.Largest != "agent1" || s.LargestBytes != 5000 {
		t.Errorf("largest = %s (%d), want agent1 (5000)", s.Largest, s.LargestBytes)
	}
	if b := u.Sessions[idB]; b == nil || b.Bytes != 5 || b.Files != 1 {
		t.Errorf("session B = %+v, want 5 bytes, 1 file", b)
	}
	if len(u.Sessions) != 2 {
		t.Errorf("sessions = %d, want 2 (malformed names are not sessions)", len(u.Sessions))
	}
	if want := wantA + 5 + 7 + 11 + 13; u.Bytes != want {
		t.Errorf("workspace bytes = %d, want %d", u.Bytes, want)
	}
	if want := 6 + 1 + 3; u.Files != want {
		t.Errorf("workspace files = %d, want %d", u.Files, want)
	}
	if s.Newest.IsZero() {
		t.Errorf("session A newest mtime is zero")
	}
	if z := u.Session(idC); z.Bytes != 0 || z.Dir != SessionDir(root, idC) {
		t.Errorf("Session(absent) = %+v", z)
	}
}

func TestScanUnsafeDir(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, root, elsewhere string)
	}{
		{"winx symlink", func(t *testing.T, root, elsewhere string) {
			if err := os.Symlink(elsewhere, filepath.Join(root, ".winx")); err != nil {
				t.Fatal(err)
			}
		}},
		{"tmp symlink", func(t *testing.T, root, elsewhere string) {
			os.Mkdir(filepath.Join(root, ".winx"), 0o700)
			if err := os.Symlink(elsewhere, Dir(root)); err != nil {
				t.Fatal(err)
			}
		}},
		{"tmp file", func(t *testing.T, root, elsewhere string) {
			sparse(t, Dir(root), 1)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, elsewhere := t.TempDir(), t.TempDir()
			sparse(t, filepath.Join(elsewhere, "tmp", SessionPrefix+idA, "f"), 1<<30)
			tt.setup(t, root, elsewhere)
			u, err := Scan(root)
			var se *ScanError
			if !errors.Is(err, ErrUnsafeDir) || !errors.As(err, &se) {
				t.Fatalf("Scan = %+v, %v; want a *ScanError wrapping ErrUnsafeDir", u, err)
			}
			if _, err := Reclaim(root, farFuture, nil, nil); !errors.Is(err, ErrUnsafeDir) {
				t.Errorf("Reclaim = %v, want ErrUnsafeDir", err)
			}
			if _, err := os.Stat(filepath.Join(elsewhere, "tmp", SessionPrefix+idA, "f")); err != nil {
				t.Errorf("target behind the symlink was touched: %v", err)
			}
		})
	}
}

func TestScanDepthCap(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(SessionDir(root, idA), "h")
	for range MaxScanDepth + 2 {
		deep = filepath.Join(deep, "d")
	}
	sparse(t, filepath.Join(deep, "f"), 1)
	u, err := Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	if !u.Truncated {
		t.Fatalf("Scan of a %d-deep tree not truncated", MaxScanDepth+3)
	}
	var oe *OverBudgetError
	if err := u.Check(idB, nil); !errors.As(err, &oe) || oe.Limit != LimitWorkspaceEntries {
		t.Errorf("Check(truncated) = %v, want %s", err, LimitWorkspaceEntries)
	}
}

func TestScanEntryCap(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(Dir(root), "flood")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range MaxScanEntries + 10 {
		f, err := os.Create(filepath.Join(dir, fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	u, err := Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	if !u.Truncated || u.Entries != MaxScanEntries {
		t.Errorf("Scan = truncated %v after %d entries, want truncated after %d", u.Truncated, u.Entries, MaxScanEntries)
	}
	err = u.Check(idA, nil)
	if err == nil || !strings.Contains(err.Error(), string(LimitWorkspaceEntries)) {
		t.Errorf("Check = %v, want the entry limit", err)
	}
}

func TestSessionID(t *testing.T) {
	tests := []struct {
		name string
		id   string
		ok   bool
	}{
		{"session-" + idA, idA, true},
		{"session-0123456789ABCDEF", "", false},
		{"session-0123456789abcde", "", false},
		{"session-0123456789abcdef0", "", false},
		{"session-0123456789abcdeg", "", false},
		{"sessions-0123456789abcdef", "", false},
		{idA, "", false},
	}
	for _, tt := range tests {
		id, ok := SessionID(tt.name)
		if id != tt.id || ok != tt.ok {
			t.Errorf("SessionID(%q) = %q, %v; want %q, %v", tt.name, id, ok, tt.id, tt.ok)
		}
	}
}
