package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestOpenDirRefusesSymlinks(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(root, "real")
	if err := os.MkdirAll(filepath.Join(real, "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		path string
		opts DirOptions
		want error
	}{
		{"plain", filepath.Join(real, "deep"), DirOptions{}, nil},
		{"root", "/", DirOptions{}, nil},
		{"link last", filepath.Join(root, "link"), DirOptions{}, ErrSymlink},
		{"link in the middle", filepath.Join(root, "link", "deep"), DirOptions{}, ErrSymlink},
		{"link, creating", filepath.Join(root, "link", "new", "er"), DirOptions{Create: true, Perm: 0o755}, ErrSymlink},
		{"file", filepath.Join(root, "file", "x"), DirOptions{}, syscall.ENOTDIR},
		{"missing", filepath.Join(root, "none"), DirOptions{}, syscall.ENOENT},
		{"created", filepath.Join(real, "a", "b"), DirOptions{Create: true, Perm: 0o755}, nil},
		{"not clean", root + "/real/../real", DirOptions{}, ErrBadName},
		{"relative", "real", DirOptions{}, ErrBadName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := OpenDir(tc.path, tc.opts)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("OpenDir(%q) = %v, want success", tc.path, err)
				}
				d.Close()
				return
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("OpenDir(%q) = %v, want %v", tc.path, err, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(real, "new")); err == nil {
		t.Errorf("a directory was made through the symbolic link")
	}
}

// TestDirPinned: once open, a Dir's temp file, link and rename land in the
// directory that was opened even after its name points elsewhere.
func TestDirPinned(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sub, moved, outside := filepath.Join(root, "sub"), filepath.Join(root, "moved"), filepath.Join(root, "outside")
	for _, p := range []string{sub, outside} {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	d, err := OpenDir(sub, DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := os.Rename(sub, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, sub); err != nil {
		t.Fatal(err)
	}
	tmp, err := d.CreateTemp([]byte("new"), TempOptions{Perm: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	if err := tmp.LinkAt("a.txt"); err != nil {
		t.Fatal(err)
	}
	tmp, err = d.CreateTemp([]byte("two"), TempOptions{Perm: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	if err := tmp.RenameAt("a.txt"); err != nil {
		t.Fatal(err)
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(moved, "a.txt")); err != nil || string(b) != "two" {
		t.Errorf("pinned directory holds %q, %v; want %q", b, err, "two")
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("written through the swapped name: %d entries outside", len(ents))
	}
	if left := temps(t, moved); len(left) != 0 {
		t.Errorf("temp files left: %q", left)
	}
	if err := tmp.LinkAt("../x"); !errors.Is(err, ErrBadName) {
		t.Errorf("LinkAt(../x) = %v, want ErrBadName", err)
	}
}
