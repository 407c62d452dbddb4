package tools

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	wspace "winx/mcp/workspace"
)

func TestResumeDamagedFile(t *testing.T) {
	state := t.TempDir()
	writeFile(t, filepath.Join(state, "contexts", "bad.txt"), "not a saved context\n")
	writeFile(t, filepath.Join(state, "contexts", "noroot.txt"), wspace.SavedContextMagic+"\nid: noroot\n\nbody\n")
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
		if !strings.Contains(res.Structured.Output, id) {
			t.Errorf("message %q does not name %s", res.Structured.Output, id)
		}
	}
}
