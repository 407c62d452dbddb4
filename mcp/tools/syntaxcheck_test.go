//go:build cgo

package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const syntaxCleanGo = "package p\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int {\n\treturn 2\n}\n"

// readAll shows the whole file to the session, as a model would before editing.
func (e *bashEnv) readAll(t *testing.T, path string) {
	t.Helper()
	r := e.call(ReadFilesTool, map[string]any{"file_paths": []string{path}, "thread_id": e.thread, "workspace_root": e.root})
	if r.IsError {
		t.Fatalf("ReadFiles(%s) = %+v", path, r.Structured)
	}
}

type syntaxResult struct {
	EditApplied    bool            `json:"edit_applied"`
	SyntaxWarnings []syntaxWarning `json:"syntax_warnings"`
}

func syntaxDataOf(t *testing.T, r *toolResult) syntaxResult {
	t.Helper()
	var d syntaxResult
	if err := json.Unmarshal(r.Structured.Data, &d); err != nil {
		t.Fatalf("data %s: %v", r.Structured.Data, err)
	}
	return d
}

func TestSyntaxWarningOnBrokenEdit(t *testing.T) {
	e := newBashEnv(t, "")
	path := filepath.Join(e.root, "p.go")
	writeFile(t, path, syntaxCleanGo)
	e.readAll(t, path)

	// Line 8 "\treturn 2" becomes an unbalanced expression.
	args := linePatch(path, revisionOf(t, path), 8, 1, "\treturn (2 +\n")
	args["thread_id"], args["workspace_root"] = e.thread, e.root
	resp, err := e.client.Call(context.Background(), "tools/call", map[string]any{"name": EditFilesTool, "arguments": args})
	if err != nil {
		t.Fatal(err)
	}
	var r *toolResult
	var retry struct {
		Structured struct {
			Retryable bool `json:"retryable"`
		} `json:"structuredContent"`
	}
	if err := resp.Decode(&r); err != nil {
		t.Fatal(err)
	}
	if err := resp.Decode(&retry); err != nil || !retry.Structured.Retryable {
		t.Errorf("retryable = %v (%v), want true", retry.Structured.Retryable, err)
	}
	s := r.Structured
	if s.Status != "completed_with_issues" || s.ErrorCode != codeSyntaxErrorIntroduced || r.IsError {
		t.Fatalf("breaking edit = %+v, want completed_with_issues / %s", s, codeSyntaxErrorIntroduced)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), "return (2 +") {
		t.Fatalf("the edit was not kept on disk: %q", b)
	}
	d := syntaxDataOf(t, r)
	if !d.EditApplied || len(d.SyntaxWarnings) != 1 {
		t.Fatalf("data = %+v, want edit_applied and one syntax warning", d)
	}
	w := d.SyntaxWarnings[0]
	if w.Path != path || w.Line < 8 || w.Line > 9 || w.Column < 1 {
		t.Errorf("warning = %+v, want %s at line 8 or 9", w, path)
	}
	if want := fmt.Sprintf("%s line %d", path, w.Line); !strings.Contains(s.Message, want) {
		t.Errorf("message %q does not name %q", s.Message, want)
	}
	if !strings.Contains(s.Output, "no longer parses") {
		t.Errorf("text %q has no warning", s.Output)
	}
	if s.NextAction == nil || s.NextAction.Tool != ReadFilesTool {
		t.Errorf("nextAction = %+v, want ReadFiles around the error", s.NextAction)
	}
	if !strings.Contains(string(r.Structured.Data), `"files"`) {
		t.Errorf("data lost the edit's files: %s", r.Structured.Data)
	}

	// The file is broken now: a further edit that leaves it broken is not
	// warned about again.
	e.readAll(t, path)
	r, _ = e.edit(linePatch(path, revisionOf(t, path), 4, 1, "\treturn 10\n"))
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "return 10") {
		t.Fatalf("the second edit was not applied: %q", b)
	}
	if r.Structured.Status != "completed" || r.Structured.ErrorCode != "" {
		t.Fatalf("edit of an already broken file = %+v, want completed without warning", r.Structured)
	}
	if d := syntaxDataOf(t, r); len(d.SyntaxWarnings) != 0 || !d.EditApplied {
		t.Errorf("data = %+v, want no syntax warnings", d)
	}
}

func TestSyntaxCleanEditHasNoWarning(t *testing.T) {
	e := newBashEnv(t, "")
	path := filepath.Join(e.root, "p.go")
	writeFile(t, path, syntaxCleanGo)
	e.readAll(t, path)
	r, _ := e.edit(linePatch(path, revisionOf(t, path), 8, 1, "\treturn 3\n"))
	if r.Structured.Status != "completed" {
		t.Fatalf("clean edit = %+v", r.Structured)
	}
	if d := syntaxDataOf(t, r); len(d.SyntaxWarnings) != 0 {
		t.Errorf("data = %+v, want no syntax warnings", d)
	}
	// A language codemap does not parse is never checked.
	txt := filepath.Join(e.root, "notes.txt")
	r, _ = e.edit(map[string]any{"files": []any{map[string]any{"file_path": txt, "mode": "replace", "content": "func (((\n"}}})
	if r.Structured.Status != "completed" {
		t.Fatalf("new text file = %+v", r.Structured)
	}
}
