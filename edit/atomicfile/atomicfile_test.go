package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// temps lists the temp files left in dir.
func temps(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), TempPrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestWriteFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    Durability
	}{
		{"no sync", Durability{}},
		{"sync file", Durability{SyncFile: true}},
		{"sync dir", Durability{SyncDir: true}},
		{"durable", Durability{SyncFile: true, SyncDir: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.json")
			if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			old := syscall.Umask(0o077) // perm is exact: the umask must not apply
			err := WriteFile(path, []byte("new"), 0o640, tc.d)
			syscall.Umask(old)
			if err != nil {
				t.Fatalf("WriteFile = %v", err)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != "new" {
				t.Errorf("file = %q, %v; want %q", got, err, "new")
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode = %v, want 0640", fi.Mode().Perm())
			}
			if left := temps(t, dir); len(left) != 0 {
				t.Errorf("temp files left: %q", left)
			}
		})
	}
}

// TestWriteFileFailureKeepsOld: a rename that cannot happen (the target is
// a non-empty directory) leaves the old target and no temp file.
func TestWriteFileFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "busy")
	if err := os.MkdirAll(filepath.Join(target, "inside"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(target, []byte("x"), 0o600, Durability{SyncFile: true, SyncDir: true}); err == nil {
		t.Fatal("WriteFile over a non-empty directory succeeded")
	}
	if fi, err := os.Stat(filepath.Join(target, "inside")); err != nil || !fi.IsDir() {
		t.Errorf("the old target changed: %v", err)
	}
	if left := temps(t, dir); len(left) != 0 {
		t.Errorf("temp files left: %q", left)
	}

	// A missing directory fails before anything is written.
	if err := WriteFile(filepath.Join(dir, "nope", "f"), []byte("x"), 0o600, Durability{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("WriteFile into a missing directory = %v, want fs.ErrNotExist", err)
	}
}

func TestTempUmaskAndLink(t *testing.T) {
	dir := t.TempDir()
	old := syscall.Umask(0o027)
	tmp, err := CreateTemp(dir, []byte("n\n"), TempOptions{Perm: 0o644, Umask: true, Sync: true})
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(tmp.Name()), TempPrefix) {
		t.Errorf("temp name %q lacks %q", tmp.Name(), TempPrefix)
	}
	target := filepath.Join(dir, "n.txt")
	if err := os.WriteFile(target, []byte("someone else\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := tmp.Link(target); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Link over an existing file = %v, want fs.ErrExist", err)
	}
	if got, _ := os.ReadFile(target); string(got) != "someone else\n" {
		t.Errorf("Link clobbered the target: %q", got)
	}
	os.Remove(target)
	if err := tmp.Link(target); err != nil {
		t.Fatal(err)
	}
	tmp.Discard() // after Link: nothing
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("linked file: %v, %v; want mode 0644 less umask 027", fi, err)
	}
	if left := temps(t, dir); len(left) != 0 {
		t.Errorf("temp files left: %q", left)
	}
}

func TestDiscardAndSweep(t *testing.T) {
	dir := t.TempDir()
	live, err := CreateTemp(dir, []byte("live"), TempOptions{Perm: 0o600})
	if err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(dir, TempPrefix+"dead")
	if err := os.WriteFile(dead, []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "keep.tmp")
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	Sweep(dir)
	if _, err := os.Lstat(dead); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a dead writer's temp file survived the sweep: %v", err)
	}
	if _, err := os.Lstat(live.Name()); err != nil {
		t.Errorf("a live writer's temp file was swept: %v", err)
	}
	if _, err := os.Lstat(other); err != nil {
		t.Errorf("a file without the prefix was swept: %v", err)
	}
	live.Discard()
	if _, err := os.Lstat(live.Name()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Discard left the temp file: %v", err)
	}
}

func TestMkdirPrivate(t *testing.T) {
	base := t.TempDir()
	fresh := filepath.Join(base, "a", "b")
	if err := MkdirPrivate(fresh); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := MkdirPrivate(open); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{fresh, open} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("MkdirPrivate(%s): mode %v, %v; want 0700", d, fi.Mode().Perm(), err)
		}
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(open, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, file} {
		if err := MkdirPrivate(p); !errors.Is(err, syscall.ENOTDIR) {
			t.Errorf("MkdirPrivate(%s) = %v, want ENOTDIR", p, err)
		}
	}
}
