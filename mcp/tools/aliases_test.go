package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLegacyAliasesAreHiddenAndLowered(t *testing.T) {
	e := newBashEnv(t, "")
	for _, tool := range listedTools(t, e.client) {
		switch tool.Name {
		case FileWriteOrEditTool, MultiFileEditTool, ApplyPatchTool, UndoEditTool:
			t.Errorf("alias %s is listed", tool.Name)
		}
	}

	// FileWriteOrEdit creates a new file (no read needed) with only thread_id.
	path := filepath.Join(e.root, "legacy.go")
	r := e.call(FileWriteOrEditTool, map[string]any{"file_path": path, "percentage_to_change": 100,
		"file_content_or_search_replace_blocks": "package legacy\n\nfunc A() int {\n\treturn 1\n}\n", "thread_id": e.thread})
	if r.Structured.Status != "completed" {
		t.Fatalf("FileWriteOrEdit create = %+v", r.Structured)
	}
	// Overwriting a file changed outside the session needs a read first,
	// exactly as EditFiles.
	other := filepath.Join(e.root, "other.txt")
	writeFile(t, other, "written by someone else\n")
	r = e.call(FileWriteOrEditTool, map[string]any{"file_path": other, "file_content_or_search_replace_blocks": "mine\n", "thread_id": e.thread})
	if r.Structured.Status != "needs_read" {
		t.Errorf("FileWriteOrEdit overwrite without read = %+v", r.Structured)
	}
	r = e.call(ApplyPatchTool, map[string]any{"thread_id": e.thread, "workspace_root": e.root, "patch": "--- a/legacy.go\n+++ b/legacy.go\n@@ -3,3 +3,3 @@\n func A() int {\n-\treturn 1\n+\treturn 2\n }\n"})
	if r.Structured.Status != "completed" {
		t.Fatalf("ApplyPatch = %+v", r.Structured)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "return 2") {
		t.Errorf("after ApplyPatch: %q", b)
	}
	var data editData
	if err := json.Unmarshal(r.Structured.Data, &data); err != nil || len(data.Files) != 1 || data.Files[0].UndoID == "" {
		t.Fatalf("ApplyPatch data = %s (%v)", r.Structured.Data, err)
	}
	undoID := data.Files[0].UndoID
	r = e.call(UndoEditTool, map[string]any{"undo_id": undoID, "thread_id": e.thread})
	if r.Structured.Status != "completed" {
		t.Fatalf("UndoEdit = %+v", r.Structured)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "return 1") {
		t.Errorf("after UndoEdit: %q", b)
	}
	r = e.call(ApplyPatchTool, map[string]any{"thread_id": e.thread, "patch": "--- a/legacy.go\n+++ b/legacy.go\n@@ -3,3 +3,3 @@\n func A() int {\n-\treturn 99\n+\treturn 2\n }\n"})
	if r.Structured.Status != "conflict" {
		t.Errorf("ApplyPatch with a stale hunk = %+v, want a conflict", r.Structured)
	}
}
