package workspace

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
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

func TestCheckRoot(t *testing.T) {
	root := canon(t, t.TempDir())
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	for _, saved := range []string{root, link} {
		sc := &SavedContext{ID: "t", Root: saved}
		if err := sc.CheckRoot(root); err != nil {
			t.Errorf("CheckRoot(%q) of a context saved for %q = %v, want nil", root, saved, err)
		}
		var me *RootMismatchError
		if err := sc.CheckRoot(filepath.Dir(root)); !errors.As(err, &me) || me.Saved != saved {
			t.Errorf("CheckRoot(parent) of a context saved for %q = %v, want a *RootMismatchError naming it", saved, err)
		}
	}
}
