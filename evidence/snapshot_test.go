package evidence

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// tempDir returns a canonical temporary directory, so paths compare equal to
// Snapshot.Path.
func tempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// replace atomically renames a new file with content over path.
func replace(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	writeFile(t, tmp, content)
	if err := os.Rename(tmp, path); err != nil {
		t.Error(err)
	}
}

func TestReadSnapshot(t *testing.T) {
	dir := tempDir(t)
	tests := []struct{ name, content string }{
		{"empty", ""},
		{"text", "a\nb\n"},
		{"crlf no trailing newline", "a\r\nb"},
		{"binary", "\x00\x01\xff"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, fmt.Sprintf("f%d", i))
			writeFile(t, p, tt.content)
			s, err := ReadSnapshot(p, 0)
			if err != nil {
				t.Fatalf("ReadSnapshot(%q) error = %v", p, err)
			}
			fi, _ := os.Stat(p)
			st := fi.Sys().(*syscall.Stat_t)
			if s.Path != p || string(s.Bytes) != tt.content || s.Revision != RevisionOf([]byte(tt.content)) ||
				s.Size != int64(len(tt.content)) || s.Mode != fi.Mode() || !s.ModTime.Equal(fi.ModTime()) ||
				s.Ino != st.Ino || s.Dev != uint64(st.Dev) {
				t.Errorf("ReadSnapshot(%q) = %+v, want the file's bytes and metadata", p, s)
			}
		})
	}
}

func TestReadSnapshotRelativeAndSymlink(t *testing.T) {
	dir := tempDir(t)
	target := filepath.Join(dir, "real", "t.txt")
	if err := os.Mkdir(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, target, "x\n")
	// A symlinked file and a symlinked parent directory both resolve.
	if err := os.Symlink(target, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "dirlink")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, p := range []string{"link", filepath.Join(dir, "dirlink", "t.txt"), "real/../real/t.txt", "dirlink/t.txt"} {
		s, err := ReadSnapshot(p, 0)
		if err != nil || s.Path != target || string(s.Bytes) != "x\n" {
			t.Errorf("ReadSnapshot(%q) = %+v, %v, want Path %q", p, s, err, target)
		}
	}
	// A dangling symlink is not found.
	if err := os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSnapshot("dangling", 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadSnapshot(dangling) error = %v, want fs.ErrNotExist", err)
	}
}

func TestReadSnapshotErrors(t *testing.T) {
	dir := tempDir(t)
	big := filepath.Join(dir, "big")
	writeFile(t, big, "0123456789")
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sub")
	if err := os.Mkdir(sock, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		max  int64
		want error
	}{
		{"missing", filepath.Join(dir, "nope"), 0, fs.ErrNotExist},
		{"missing parent", filepath.Join(dir, "nope", "x"), 0, fs.ErrNotExist},
		{"file as parent", filepath.Join(big, "x"), 0, syscall.ENOTDIR},
		{"directory", dir, 0, ErrNotRegular},
		{"fifo does not block", fifo, 0, ErrNotRegular},
		{"char device", "/dev/null", 0, ErrNotRegular},
		{"too large", big, 9, ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				_, err := ReadSnapshot(tt.path, tt.max)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("ReadSnapshot(%q) blocked", tt.path)
			}
			var re *ReadError
			if !errors.Is(err, tt.want) || !errors.As(err, &re) || re.Path != tt.path {
				t.Errorf("ReadSnapshot(%q, %d) error = %v, want *ReadError wrapping %v", tt.path, tt.max, err, tt.want)
			}
		})
	}
	if s, err := ReadSnapshot(big, 10); err != nil || s.Size != 10 {
		t.Errorf("ReadSnapshot at exactly the limit = %v, %v, want the file", s, err)
	}
}

func TestReadSnapshotPermission(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads files regardless of mode")
	}
	p := filepath.Join(tempDir(t), "secret")
	writeFile(t, p, "x")
	if err := os.Chmod(p, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSnapshot(p, 0); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("ReadSnapshot(mode 0) error = %v, want fs.ErrPermission", err)
	}
}

// TestReadSnapshotRetry replaces or changes the file from another goroutine
// between the read and the re-check, deterministically, through the reader's
// test hook.
func TestReadSnapshotRetry(t *testing.T) {
	tests := []struct {
		name     string
		changes  int // attempts whose read is followed by a change
		change   func(t *testing.T, path string, attempt int)
		want     string
		unstable bool
	}{
		{
			name: "renamed over once", changes: 1,
			change: func(t *testing.T, p string, n int) { replace(t, p, fmt.Sprintf("v%d\n", n+1)) },
			want:   "v1\n",
		},
		{
			name: "renamed over three times", changes: 3,
			change: func(t *testing.T, p string, n int) { replace(t, p, fmt.Sprintf("v%d\n", n+1)) },
			want:   "v3\n",
		},
		{
			name: "renamed over every time", changes: 99,
			change:   func(t *testing.T, p string, n int) { replace(t, p, fmt.Sprintf("v%d\n", n+1)) },
			unstable: true,
		},
		{
			name: "appended in place", changes: 1,
			change: func(t *testing.T, p string, n int) {
				f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Error(err)
					return
				}
				f.WriteString("more\n")
				f.Close()
			},
			want: "v0\nmore\n",
		},
		{
			name: "same size rewritten in place", changes: 1,
			change: func(t *testing.T, p string, n int) {
				if err := os.WriteFile(p, []byte("w0\n"), 0o644); err != nil {
					t.Error(err)
				}
				// Make the mtime change visible whatever the clock granularity.
				future := time.Now().Add(time.Hour)
				os.Chtimes(p, future, future)
			},
			want: "w0\n",
		},
		{
			name: "deleted after read", changes: 1,
			change: func(t *testing.T, p string, n int) {
				os.Remove(p)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(tempDir(t), "f")
			writeFile(t, p, "v0\n")
			attempts := 0
			r := snapshotReader{afterRead: func(attempt int) {
				attempts++
				if attempt >= tt.changes {
					return
				}
				// Another goroutine does the change while the reader waits.
				var wg sync.WaitGroup
				wg.Go(func() { tt.change(t, p, attempt) })
				wg.Wait()
			}}
			s, err := r.read(p)
			switch {
			case tt.unstable:
				if !errors.Is(err, ErrUnstable) || attempts != maxRetries+1 {
					t.Errorf("read = %v after %d attempts, want ErrUnstable after %d", err, attempts, maxRetries+1)
				}
			case tt.want == "":
				if !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("read = %v, want fs.ErrNotExist", err)
				}
			default:
				if err != nil || string(s.Bytes) != tt.want || s.Revision != RevisionOf([]byte(tt.want)) {
					t.Fatalf("read = %+v, %v, want %q", s, err, tt.want)
				}
				if attempts != tt.changes+1 {
					t.Errorf("read took %d attempts, want %d", attempts, tt.changes+1)
				}
			}
		})
	}
}

// TestReadSnapshotConcurrentReplace races real readers against a writer
// that keeps renaming new versions over the file: every snapshot that
// succeeds is one whole version whose revision matches its bytes.
func TestReadSnapshotConcurrentReplace(t *testing.T) {
	p := filepath.Join(tempDir(t), "f")
	version := func(i int) []byte {
		return bytes.Repeat([]byte(fmt.Sprintf("version %d\n", i)), 500+i%7)
	}
	if err := os.WriteFile(p, version(0), 0o644); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			tmp := fmt.Sprintf("%s.%d", p, i)
			if err := os.WriteFile(tmp, version(i), 0o644); err != nil {
				t.Error(err)
				return
			}
			if err := os.Rename(tmp, p); err != nil {
				t.Error(err)
				return
			}
		}
	})
	var ok, unstable int
	for range 500 {
		s, err := ReadSnapshot(p, 0)
		if errors.Is(err, ErrUnstable) {
			unstable++
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		ok++
		var n int
		if _, err := fmt.Sscanf(string(s.Bytes), "version %d\n", &n); err != nil || !bytes.Equal(s.Bytes, version(n)) {
			t.Fatalf("snapshot is not one whole version: %.40q", s.Bytes)
		}
		if s.Revision != RevisionOf(s.Bytes) {
			t.Fatal("revision does not match bytes")
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d stable snapshots, %d ErrUnstable", ok, unstable)
}
