package tools

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestResumeHeaderRoundTrip(t *testing.T) {
	for _, root := range []string{"/srv/proj", "/tmp/a b/\"quoted\"", "/tmp/line\nbreak", "/tmp/ü/\x01"} {
		cs := &contextSaver{build: "v1 (abc)", now: func() time.Time { return time.Unix(0, 0) }}
		var doc bytes.Buffer
		cs.writeHeader(&doc, "t", root)
		doc.WriteString("\n## Task description\nproject_root: \"/elsewhere\"\n")
		got, err := savedRoot(doc.String())
		if err != nil || got != root {
			t.Errorf("savedRoot(header of %q) = %q, %v", root, got, err)
		}
	}
	for _, text := range []string{"", "# Winx saved contexts\nproject_root: \"/x\"\n", savedContextMagic + "\nid: x\n\nproject_root: \"/x\"\n",
		savedContextMagic + "\nproject_root: /x\n", savedContextMagic + "\nproject_root: \"\"\n"} {
		if got, err := savedRoot(text); err == nil {
			t.Errorf("savedRoot(%q) = %q, want an error", text, got)
		}
	}
}

func TestResumeDamagedFile(t *testing.T) {
	state := t.TempDir()
	writeFile(t, filepath.Join(state, "contexts", "bad.txt"), "not a saved context\n")
	writeFile(t, filepath.Join(state, "contexts", "noroot.txt"), savedContextMagic+"\nid: noroot\n\nbody\n")
	if err := os.Symlink(filepath.Join(state, "contexts", "bad.txt"), filepath.Join(state, "contexts", "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(state, "contexts", "fifo.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newAdapter(t, Options{StateDir: state})
	// A FIFO must be refused, not waited on.
	for _, id := range []string{"bad", "noroot", "link", "fifo"} {
		res := a.init(map[string]any{"task_id_to_resume": id})
		wantStatus(t, res, "not_found", codeTaskNotFound, true)
		if !strings.Contains(res.Structured.Message, id) {
			t.Errorf("message %q does not name %s", res.Structured.Message, id)
		}
	}
}
