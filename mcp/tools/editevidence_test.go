package tools

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"winx/edit"
	"winx/evidence"
)

// Lines the model wrote need no read; a revision its own edit made stale
// answers with the new revision and the changed lines; a revision never
// issued asks for a read; undoing a creation says the file was deleted.
func TestEditEvidenceCostsFewerReads(t *testing.T) {
	e := newBashEnv(t, "")
	path := filepath.Join(e.root, "ev.txt")
	var body strings.Builder
	for i := 1; i <= 20; i++ {
		body.WriteString("row " + strings.Repeat("i", i) + "\n")
	}
	writeFile(t, path, body.String())

	// Never issued: a revision the session was not given, of a file it
	// has not read.
	r, _ := e.edit(linePatch(path, "sha256:"+strings.Repeat("ab", 32), 1, 1, "x\n"))
	if r.Structured.Status != "needs_read" {
		t.Errorf("never-issued expected_revision = %s/%s %q, want needs_read", r.Structured.Status, r.Structured.ErrorCode, r.Structured.Message)
	}

	e.read(path + ":7-7")
	b, _ := os.ReadFile(path)
	line7 := strings.Split(string(b), "\n")[6]
	r, d := e.edit(searchReplace(path, line7+"\n", "seven\nseven b\n"))
	if r.Structured.Status != "completed" || len(d.Files) != 1 {
		t.Fatalf("search_replace = %s %s", r.Structured.Status, r.Structured.Message)
	}
	rev1 := d.Files[0].Revision
	// Line 8 is "seven b", which the model wrote: no read needed.
	r, d = e.edit(linePatch(path, rev1, 8, 1, "seven c\n"))
	if r.Structured.Status != "completed" {
		t.Fatalf("line_patch of a written line = %s/%s %q, want completed without a read", r.Structured.Status, r.Structured.ErrorCode, r.Structured.Message)
	}
	rev2 := d.Files[0].Revision

	// The same line_patch again at rev1: stale by the session's own edit.
	r, _ = e.edit(linePatch(path, rev1, 7, 1, "SEVEN\n"))
	var cd editData
	json.Unmarshal(r.Structured.Data, &cd)
	if r.Structured.Status != "conflict" || r.Structured.ErrorCode != "revision_mismatch" || cd.Revision != rev2 || len(cd.ChangedRanges) == 0 {
		t.Fatalf("stale by own edit = %s/%s data %s, want revision_mismatch with revision %s and changed ranges", r.Structured.Status, r.Structured.ErrorCode, r.Structured.Data, rev2)
	}
	if strings.Contains(r.Structured.Message, "changed since you read it") {
		t.Errorf("own-edit mismatch blames another writer: %q", r.Structured.Message)
	}
	// Redone at the revision it names, without a read.
	if r, _ = e.edit(linePatch(path, cd.Revision, 7, 1, "SEVEN\n")); r.Structured.Status != "completed" {
		t.Errorf("redo at the named revision = %s %q", r.Structured.Status, r.Structured.Message)
	}

	// Undo of a creation says the file was deleted.
	np := filepath.Join(e.root, "created.txt")
	r, d = e.edit(map[string]any{"files": []any{map[string]any{"file_path": np, "mode": "replace", "content": "new\n"}}})
	if r.Structured.Status != "completed" || len(d.Files) != 1 {
		t.Fatalf("create = %+v", r.Structured)
	}
	r, d = e.edit(map[string]any{"operation": "undo", "files": []any{map[string]any{"undo_id": d.Files[0].UndoID}}})
	text := ""
	for _, c := range r.Content {
		text += c.Text
	}
	if r.Structured.Status != "completed" || !strings.Contains(text, "deleted") || len(d.Files) != 1 || !d.Files[0].Deleted {
		t.Errorf("undo of a creation = %q %+v, want it to say the file was deleted", text, d)
	}
	if _, err := os.Stat(np); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("created file still there: %v", err)
	}
}

// A batch that committed some files before failing returns their undo ids.
func TestEditPartialCommitReturnsUndoIDs(t *testing.T) {
	tool := &editTool{}
	in := &editInput{ThreadID: "t", WorkspaceRoot: "/w"}
	cm := &edit.CommitError{
		Committed: []edit.FileResult{{Path: "/w/a", NewRevision: "sha256:aa", UndoID: "0123456789abcdef0123456789abcdef"}},
		Failed:    "/w/b", Untouched: []string{"/w/c"},
		Err: &edit.ConflictError{Path: "/w/b", Want: "sha256:bb", Got: "sha256:cc", Reason: edit.ReasonChangedAfterRead},
	}
	res := tool.failure(in, cm)
	b, _ := json.Marshal(res)
	var out struct {
		StructuredContent struct {
			Status, ErrorCode, Output string
			Data                      editData
		} `json:"structuredContent"`
	}
	json.Unmarshal(b, &out)
	sc := out.StructuredContent
	if sc.Status != "conflict" || sc.ErrorCode != edit.ReasonChangedAfterRead {
		t.Errorf("status = %s/%s, want conflict/%s", sc.Status, sc.ErrorCode, edit.ReasonChangedAfterRead)
	}
	if len(sc.Data.Files) != 1 || sc.Data.Files[0].UndoID != "0123456789abcdef0123456789abcdef" || !strings.Contains(sc.Output, "0123456789abcdef0123456789abcdef") {
		t.Errorf("partial commit answer = %+v, want the committed file's undo id in data and text", sc)
	}
}

// Initial files are shown with line numbers and their revision and count
// as reads: a line_patch of them needs no ReadFiles.
func TestInitialFilesCountAsRead(t *testing.T) {
	e := newBashEnv(t, "")
	path := filepath.Join(e.root, "init.txt")
	writeFile(t, path, "alpha\nbeta\ngamma\n")
	r := e.call(InitializeTool, map[string]any{"any_workspace_path": e.root, "thread_id": e.thread, "initial_files_to_read": []string{"init.txt"}})
	text := ""
	for _, c := range r.Content {
		text += c.Text
	}
	// The revision is shown short, and the short form is what the model
	// passes back: it resolves to the revision Initialize issued.
	rev := evidence.Revision(revisionOf(t, path)).Short()
	if !strings.Contains(text, "revision "+rev+";") || !strings.Contains(text, "\n1\talpha\n2\tbeta\n") {
		t.Fatalf("Initialize did not show init.txt with its revision and line numbers:\n%s", text)
	}
	if r, _ := e.edit(linePatch(path, rev, 2, 1, "BETA\n")); r.Structured.Status != "completed" {
		t.Errorf("line_patch of an initial file = %s/%s %q, want completed without a read", r.Structured.Status, r.Structured.ErrorCode, r.Structured.Message)
	}
}
