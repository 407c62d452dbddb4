package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestReadContained(t *testing.T) {
	base := canon(t, t.TempDir())
	root := filepath.Join(base, "root")
	writeFile(t, filepath.Join(root, "a.txt"), "line one\nline two\nline three\n")
	writeFile(t, filepath.Join(root, "bin.dat"), "ab\x00cd")
	writeFile(t, filepath.Join(base, "secret.txt"), "secret\n")
	if err := os.Symlink(filepath.Join(base, "secret.txt"), filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(root, "alias")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		path      string
		limit     int
		content   string
		truncated bool
		binary    bool
		wantErr   error
	}{
		{name: "whole", path: "a.txt", limit: 100, content: "line one\nline two\nline three\n"},
		{name: "cut to a line", path: "a.txt", limit: 12, content: "line one\n", truncated: true},
		{name: "absolute inside", path: filepath.Join(root, "a.txt"), limit: 100, content: "line one\nline two\nline three\n"},
		{name: "symlink inside", path: "alias", limit: 100, content: "line one\nline two\nline three\n"},
		{name: "binary", path: "bin.dat", limit: 100, binary: true},
		{name: "dot dot", path: "../secret.txt", limit: 100, wantErr: ErrOutsideWorkspace},
		{name: "symlink out", path: "escape", limit: 100, wantErr: ErrOutsideWorkspace},
		{name: "absolute outside", path: filepath.Join(base, "secret.txt"), limit: 100, wantErr: ErrOutsideWorkspace},
		{name: "directory", path: ".", limit: 100, wantErr: ErrNotRegularFile},
		{name: "missing", path: "nope.txt", limit: 100, wantErr: fs.ErrNotExist},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ReadContained(root, tc.path, tc.limit)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("ReadContained(%q) error = %v, want %v", tc.path, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ReadContained(%q): %v", tc.path, err)
			}
			if string(f.Content) != tc.content || f.Truncated != tc.truncated || f.Binary != tc.binary {
				t.Errorf("ReadContained(%q) = %q truncated=%v binary=%v, want %q %v %v",
					tc.path, f.Content, f.Truncated, f.Binary, tc.content, tc.truncated, tc.binary)
			}
		})
	}
}

func TestCutToLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a\nb", "a\n"},
		{"abc", "abc"},
		{"ab\xc3", "ab"},         // half of é
		{"ab\xe2\x82", "ab"},     // two thirds of €
		{"\xff\xfe", "\xff\xfe"}, // not UTF-8 at all: kept
		{"", ""},
	}
	for _, tc := range tests {
		if got := string(CutToLine([]byte(tc.in))); got != tc.want {
			t.Errorf("CutToLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
