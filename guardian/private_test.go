package guardian

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWritePrivateFileReplacesPlantedNames: whatever sits under a name the
// session is about to write (a symbolic link to a file elsewhere, a FIFO
// whose reader would swallow the bytes, a file of other content) is
// replaced by a new regular file: the link's target is untouched and the
// write does not block.
func TestWritePrivateFileReplacesPlantedNames(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(outside, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	plant := map[string]func(path string) error{
		"symlink": func(path string) error { return os.Symlink(outside, path) },
		"fifo":    func(path string) error { return syscall.Mkfifo(path, 0o600) },
		"file":    func(path string) error { return os.WriteFile(path, []byte("planted"), 0o644) },
		"dangling": func(path string) error {
			return os.Symlink(filepath.Join(t.TempDir(), "created-through-link"), path)
		},
	}
	for name, plantAt := range plant {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, "cmd-"+name+".sh")
			if err := plantAt(path); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- writePrivateFile(path, []byte("echo mine\n")) }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("writePrivateFile over a %s: %v", name, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("writePrivateFile over a %s blocked", name)
			}
			fi, err := os.Lstat(path)
			if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
				t.Fatalf("after writing over a %s: %v, %v; want a regular 0600 file", name, fi, err)
			}
			if b, _ := os.ReadFile(path); string(b) != "echo mine\n" {
				t.Errorf("content = %q", b)
			}
		})
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep" {
		t.Errorf("the symbolic link's target became %q", b)
	}
}

// TestPrivateRootChecks: a session's private directory is made only in a
// root that is this user's real directory and that nobody else may write.
func TestPrivateRootChecks(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{"", "relative/dir", link, open} {
		if _, err := makePrivateDir(root); !errors.Is(err, ErrPrivateRoot) {
			t.Errorf("makePrivateDir(%q) = %v, want ErrPrivateRoot", root, err)
		}
	}
	if os.Geteuid() == 0 {
		other := filepath.Join(base, "other")
		if err := os.Mkdir(other, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, err := makePrivateDir(other); !errors.Is(err, ErrPrivateRoot) {
			t.Errorf("makePrivateDir(a root of another uid) = %v, want ErrPrivateRoot", err)
		}
	}
	own, err := makePrivateDir(filepath.Join(real, "made"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{own.Dir, own.Tmp} {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want a 0700 directory", d, fi, err)
		}
	}
}

// TestPrintedOutputReachesDisk: what a command printed is on disk while
// the command still runs and prints nothing more, the journal's buffered
// lines and the screen's last lines (sidecar) together, so a guardian
// killed then loses none of it.
func TestPrintedOutputReachesDisk(t *testing.T) {
	s := newTestSession(t, "")
	o, err := s.Run(t.Context(), "seq 1 3000; sleep 60", 200*time.Millisecond)
	if err != nil || !o.Running {
		t.Fatalf("Run: %+v, %v", o, err)
	}
	journal := filepath.Join(s.PrivateDir(), "output-1.txt")
	var lines []string
	deadline := time.Now().Add(10 * time.Second)
	for {
		j, _ := os.ReadFile(journal)
		sc, _ := os.ReadFile(journal + ScreenSuffix)
		lines = strings.Fields(string(j) + string(sc))
		if len(lines) >= 3000 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(lines) != 3000 || lines[0] != "1" || lines[2999] != "3000" {
		t.Fatalf("on disk while the command sleeps: %d lines (first %q), want 1..3000", len(lines), lines[:min(3, len(lines))])
	}
	for i, l := range lines {
		if l != strconv.Itoa(i+1) {
			t.Fatalf("line %d on disk = %q, want %d (lost or doubled between journal and screen)", i+1, l, i+1)
		}
	}
	if _, err := s.Interrupt(t.Context(), 0); err != nil {
		t.Logf("interrupt: %v", err)
	}
}
