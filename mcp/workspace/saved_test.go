package workspace

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"winx/auth"
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

func TestPrincipalStateDir(t *testing.T) {
	state := t.TempDir()
	if got := PrincipalStateDir(state, ""); got != state {
		t.Errorf("PrincipalStateDir(%q, \"\") = %q, want the state directory itself", state, got)
	}
	if got := PrincipalStateDir("", "alice"); got != "" {
		t.Errorf("PrincipalStateDir(\"\", alice) = %q, want \"\"", got)
	}
	alice, bob := PrincipalStateDir(state, "alice"), PrincipalStateDir(state, "bob")
	if alice == bob || filepath.Dir(alice) != filepath.Join(state, "principals") || strings.Contains(alice, "alice") {
		t.Errorf("PrincipalStateDir = %q and %q, want two hashed directories under %s/principals", alice, bob, state)
	}
	// A context saved for alice is not bob's, nor the local caller's.
	s := &Saver{StateDir: alice, Build: "test"}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	policy, err := auth.NewPathPolicy(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Save(context.Background(), Task{ID: "same", Root: root, Description: "alice's", Policy: policy}); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{bob, state} {
		if _, err := Load(dir, "same"); !errors.Is(err, ErrTaskNotFound) {
			t.Errorf("Load(%s, same) = %v, want ErrTaskNotFound", dir, err)
		}
	}
	if sc, err := Load(alice, "same"); err != nil || !strings.Contains(sc.Text, "alice's") {
		t.Errorf("Load(alice, same) = %v, %v", sc, err)
	}
}
