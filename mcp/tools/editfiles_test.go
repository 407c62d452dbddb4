package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"winx/evidence"
)

func (e *bashEnv) edit(args map[string]any) (*toolResult, editData) {
	e.t.Helper()
	args["thread_id"], args["workspace_root"] = e.thread, e.root
	r := e.call(EditFilesTool, args)
	var d editData
	if len(r.Structured.Data) > 0 {
		json.Unmarshal(r.Structured.Data, &d)
	}
	return r, d
}

// callNext sends a nextAction exactly as the server gave it.
func (e *bashEnv) callNext(t *testing.T, r *toolResult) *toolResult {
	t.Helper()
	na := r.Structured.NextAction
	if na == nil {
		t.Fatalf("no nextAction in %+v", r.Structured)
	}
	return e.call(na.Tool, na.Arguments)
}

func revisionOf(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(evidence.RevisionOf(b))
}

func linePatch(path, rev string, start, del int, repl string) map[string]any {
	return map[string]any{"files": []any{map[string]any{
		"file_path": path, "mode": "line_patch", "expected_revision": rev,
		"patches": []any{map[string]any{"start_line": start, "delete_lines": del, "replacement": repl}},
	}}}
}

func TestEditNeedsReadThenSucceeds(t *testing.T) {
	e := newBashEnv(t, "")
	path := filepath.Join(e.root, "a.txt")
	writeFile(t, path, numbered(30))
	rev := revisionOf(t, path)
	r, _ := e.edit(linePatch(path, rev, 5, 1, "changed\n"))
	if r.Structured.Status != "needs_read" || r.Structured.ErrorCode != "read_required" || !r.IsError {
		t.Fatalf("edit of an unread file = %+v", r.Structured)
	}
	if r.Structured.NextAction == nil || r.Structured.NextAction.Tool != ReadFilesTool {
		t.Fatalf("nextAction = %+v, want ReadFiles", r.Structured.NextAction)
	}
	if got := e.callNext(t, r); got.IsError {
		t.Fatalf("the nextAction as given failed: %+v", got.Structured)
	}
	r, d := e.edit(linePatch(path, rev, 5, 1, "changed\n"))
	if r.Structured.Status != "completed" || !d.EditApplied || len(d.Files) != 1 {
		t.Fatalf("retried edit = %+v", r.Structured)
	}
	b, _ := os.ReadFile(path)
	if lines := strings.Split(string(b), "\n"); lines[4] != "changed" || lines[3] != "line xxxx" {
		t.Errorf("file after edit: %q", lines[:6])
	}
	if d.Files[0].Revision != evidence.Revision(revisionOf(t, path)).Short() {
		t.Errorf("reported revision %s is not the file's", d.Files[0].Revision)
	}
}

func TestEditOutsideShownLinesNeedsExactRange(t *testing.T) {
	e := newBashEnv(t, "")
	path := filepath.Join(e.root, "b.txt")
	writeFile(t, path, numbered(100))
	rev := revisionOf(t, path)
	e.read("b.txt:1-20")
	r, _ := e.edit(linePatch(path, rev, 40, 2, "x\ny\n"))
	if r.Structured.Status != "needs_read" {
		t.Fatalf("edit outside shown lines = %+v", r.Structured)
	}
	na := r.Structured.NextAction
	paths, _ := na.Arguments["file_paths"].([]any)
	if len(paths) != 1 || !strings.HasSuffix(paths[0].(string), ":40-41") {
		t.Errorf("nextAction file_paths = %v, want exactly lines 40-41", paths)
	}
}

func TestEditRefusedAfterExternalChange(t *testing.T) {
	e := newBashEnv(t, "")
	path := filepath.Join(e.root, "c.txt")
	writeFile(t, path, numbered(10))
	rev := revisionOf(t, path)
	e.read("c.txt")
	newer := "someone else wrote this\n"
	writeFile(t, path, newer)
	r, _ := e.edit(linePatch(path, rev, 1, 1, "mine\n"))
	if r.Structured.Status != "conflict" || (r.Structured.ErrorCode != "revision_mismatch" && r.Structured.ErrorCode != "file_changed_after_read") {
		t.Fatalf("edit after an external change = %+v", r.Structured)
	}
	if b, _ := os.ReadFile(path); string(b) != newer {
		t.Errorf("newer content was touched: %q", b)
	}
}

func TestEditBatchWithBadSearchWritesNothing(t *testing.T) {
	e := newBashEnv(t, "")
	var files []any
	before := map[string]string{}
	for _, n := range []string{"x", "y", "z"} {
		p := filepath.Join(e.root, n+".go")
		writeFile(t, p, "package "+n+"\n\nfunc F() int { return 1 }\n")
		before[p] = "package " + n + "\n\nfunc F() int { return 1 }\n"
		e.read(n + ".go")
		search := "func F() int { return 1 }"
		if n == "z" {
			search = "func G() string { return \"nope\" }"
		}
		files = append(files, map[string]any{"file_path": p, "mode": "search_replace",
			"content": "<<<<<<< SEARCH\n" + search + "\n=======\nfunc F() int { return 2 }\n>>>>>>> REPLACE\n"})
	}
	r, _ := e.edit(map[string]any{"files": files})
	if r.Structured.Status != "conflict" || r.Structured.ErrorCode != "search_block_not_found" {
		t.Fatalf("batch with a bad block = %+v", r.Structured)
	}
	for p, want := range before {
		if b, _ := os.ReadFile(p); string(b) != want {
			t.Errorf("%s changed although the batch failed", p)
		}
	}
}

func TestEditEscapesDenied(t *testing.T) {
	e := newBashEnv(t, "")
	outside := t.TempDir()
	os.Symlink(outside, filepath.Join(e.root, "out"))
	for _, p := range []string{"../evil.txt", filepath.Join(outside, "evil.txt"), "out/evil.txt", "/etc/winx-evil"} {
		r, _ := e.edit(map[string]any{"files": []any{map[string]any{"file_path": p, "mode": "replace", "content": "x\n"}}})
		if r.Structured.Status != "denied" || !r.IsError {
			t.Errorf("write to %q = %s %s, want denied", p, r.Structured.Status, r.Structured.Output)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("something was written outside: %v", entries)
	}
}

func TestEditUndoAndConcurrentIdenticalCalls(t *testing.T) {
	e := newBashEnv(t, "")
	path := filepath.Join(e.root, "u.txt")
	original := numbered(5)
	writeFile(t, path, original)
	e.read("u.txt")
	rev := revisionOf(t, path)
	args := func() map[string]any { return linePatch(path, rev, 2, 1, "two\n") }
	var wg sync.WaitGroup
	results := make([]editData, 2)
	statuses := make([]string, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r *toolResult
			r, results[i] = e.edit(args())
			statuses[i] = r.Structured.Status + " " + r.Structured.ErrorCode + ": " + r.Structured.Output
		}()
	}
	wg.Wait()
	replayed := 0
	for _, d := range results {
		if len(d.Files) == 1 && d.Files[0].Replayed {
			replayed++
		}
	}
	if replayed != 1 {
		t.Errorf("concurrent identical calls: %d replays, want exactly one write and one replay (%q, %+v)", replayed, statuses, results)
	}
	undoID := ""
	for _, d := range results {
		if len(d.Files) == 1 && !d.Files[0].Replayed {
			undoID = d.Files[0].UndoID
		}
	}
	if undoID == "" {
		t.Fatal("no undo_id")
	}
	r, _ := e.edit(map[string]any{"operation": "undo", "files": []any{map[string]any{"undo_id": undoID}}})
	if r.Structured.Status != "completed" {
		t.Fatalf("undo = %+v", r.Structured)
	}
	if b, _ := os.ReadFile(path); string(b) != original {
		t.Errorf("undo did not restore: %q", b)
	}
}

func TestEditVerifyCommand(t *testing.T) {
	e := newBashEnv(t, "")
	path := filepath.Join(e.root, "v.txt")
	r, d := e.edit(map[string]any{"files": []any{map[string]any{"file_path": path, "mode": "replace", "content": "new\n"}},
		"verify_command": "grep -q old " + path})
	if r.Structured.Status != "completed_with_issues" || r.Structured.ErrorCode != "verification_failed" || !d.EditApplied {
		t.Fatalf("failing verify = %+v", r.Structured)
	}
	if na := r.Structured.NextAction; na == nil || na.Tool != BashCommandTool {
		t.Errorf("nextAction = %+v, want a BashCommand rerun of the check", na)
	}
	if b, _ := os.ReadFile(path); string(b) != "new\n" {
		t.Errorf("file = %q", b)
	}
}

func TestEditDeniedByMode(t *testing.T) {
	e := newBashEnv(t, "")
	path := filepath.Join(e.root, "m.txt")
	r := e.call(InitializeTool, map[string]any{"type": "user_asked_mode_change", "mode_name": "architect",
		"thread_id": e.thread, "any_workspace_path": e.root})
	if r.IsError {
		t.Fatalf("mode change = %+v", r.Structured)
	}
	r, _ = e.edit(map[string]any{"files": []any{map[string]any{"file_path": path, "mode": "replace", "content": "x\n"}}})
	if r.Structured.Status != "denied" {
		t.Errorf("architect write = %+v, want denied", r.Structured)
	}
	r = e.call(InitializeTool, map[string]any{"type": "user_asked_mode_change", "mode_name": "code_writer", "thread_id": e.thread,
		"any_workspace_path": e.root, "code_writer_config": map[string]any{"allowed_globs": []string{"src/**"}, "allowed_commands": "all"}})
	if r.IsError {
		t.Fatalf("code_writer mode = %+v", r.Structured)
	}
	if r, _ := e.edit(map[string]any{"files": []any{map[string]any{"file_path": path, "mode": "replace", "content": "x\n"}}}); r.Structured.Status != "denied" {
		t.Errorf("code_writer write outside globs = %+v, want denied", r.Structured)
	}
	inside := filepath.Join(e.root, "src", "ok.txt")
	if r, _ := e.edit(map[string]any{"files": []any{map[string]any{"file_path": inside, "mode": "replace", "content": "x\n"}}}); r.Structured.Status != "completed" {
		t.Errorf("code_writer write inside globs = %+v", r.Structured)
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("a denied write happened")
	}
}
