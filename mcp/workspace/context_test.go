package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"winx/auth"
	"winx/evidence/redact"
)

// TestContextSaveReadRechecksContainment: a directory swapped for a symlink
// to somewhere outside the workspace between policy.Resolve and the read
// (a command racing the save) must not carry the read out.
func TestContextSaveReadRechecksContainment(t *testing.T) {
	root := canon(t, t.TempDir())
	outside := canon(t, t.TempDir())
	writeFile(t, filepath.Join(root, "sub", "a.txt"), "inside\n")
	writeFile(t, filepath.Join(outside, "a.txt"), "OUTSIDE-CONTENT\n")
	policy, err := auth.NewPathPolicy(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs := &Saver{Redactor: redact.New(false), FileTokens: DefaultContextFileTokens}
	resolved, err := policy.Resolve("sub/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if f, reason := cs.readFile(policy, resolved, "sub/a.txt"); reason != "" || f.text != "inside\n" {
		t.Fatalf("readFile before the swap = %+v, %q", f, reason)
	}
	// The swap, after Resolve and before the read.
	if err := os.Rename(filepath.Join(root, "sub"), filepath.Join(root, "sub.old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "sub")); err != nil {
		t.Fatal(err)
	}
	f, reason := cs.readFile(policy, resolved, "sub/a.txt")
	if reason != "outside the workspace and the allowed paths" || strings.Contains(f.text, "OUTSIDE") {
		t.Errorf("readFile after the swap = %+v, %q; want it refused as outside", f, reason)
	}
	// A FIFO put in a file's place is refused without blocking on it.
	fifo := filepath.Join(root, "sub.old", "a.txt")
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, reason := cs.readFile(policy, fifo, "sub.old/a.txt"); reason != "not a regular file" {
		t.Errorf("readFile(FIFO) reason %q, want not a regular file", reason)
	}
}
