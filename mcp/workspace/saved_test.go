package workspace

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"winx/auth"
	"winx/evidence/redact"
)

func TestResumeHeaderRoundTrip(t *testing.T) {
	for _, root := range []string{"/srv/proj", "/tmp/a b/\"quoted\"", "/tmp/line\nbreak", "/tmp/ü/\x01"} {
		cs := &Saver{Build: "v1 (abc)", Now: func() time.Time { return time.Unix(0, 0) }}
		var doc bytes.Buffer
		cs.writeHeader(&doc, "t", root)
		doc.WriteString("\n## Task description\nproject_root: \"/elsewhere\"\n")
		got, err := savedRoot(doc.String())
		if err != nil || got != root {
			t.Errorf("savedRoot(header of %q) = %q, %v", root, got, err)
		}
	}
	for _, text := range []string{"", "# Winx saved contexts\nproject_root: \"/x\"\n", SavedContextMagic + "\nid: x\n\nproject_root: \"/x\"\n",
		SavedContextMagic + "\nproject_root: /x\n", SavedContextMagic + "\nproject_root: \"\"\n"} {
		if got, err := savedRoot(text); err == nil {
			t.Errorf("savedRoot(%q) = %q, want an error", text, got)
		}
	}
}

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
