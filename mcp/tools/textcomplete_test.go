package tools

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestTextCarriesStatusAndNextAction: a client that shows only the text
// still sees a still-running check, the status and the next call; message
// never repeats the text.
func TestTextCarriesStatusAndNextAction(t *testing.T) {
	e := newBashEnv(t, "")
	path := filepath.Join(e.root, "v.txt")
	r, _ := e.edit(map[string]any{"files": []any{map[string]any{"file_path": path, "mode": "replace", "content": "a\nb\n"}},
		"verify_command": "sleep 3; echo checked", "verify_wait_for_seconds": 0.5})
	text := r.Content[0].Text
	if r.Structured.Status != "completed_with_issues" || !strings.Contains(text, "still running") ||
		!strings.Contains(text, "status: completed_with_issues") || !strings.Contains(text, `next: BashCommand {"action_json":{"type":"status_check"}}`) {
		t.Errorf("still-running verify: text %q, status %s", text, r.Structured.Status)
	}
	if strings.Contains(text, "a\nb") {
		t.Errorf("the created file was echoed: %q", text)
	}
	if !strings.Contains(text, "created with 2 lines (4 bytes)") {
		t.Errorf("the creation is not summarised: %q", text)
	}
	// A needs_read answer: status and the ReadFiles call are in the text.
	other := filepath.Join(e.root, "o.txt")
	writeFile(t, other, numbered(10))
	r, _ = e.edit(linePatch(other, revisionOf(t, other), 2, 1, "x\n"))
	text = r.Content[0].Text
	if !strings.Contains(text, "status: needs_read (read_required)") || !strings.Contains(text, "next: ReadFiles") {
		t.Errorf("needs_read text = %q", text)
	}
	if r.Structured.Message == text {
		t.Errorf("message repeats the text")
	}
	// The bash refusal in the text names the status too.
	b, _ := e.bash(map[string]any{"type": "send_text", "send_text": ""}, 1)
	if !strings.Contains(b.Content[0].Text, "status: invalid_input") {
		t.Errorf("invalid input text = %q", b.Content[0].Text)
	}
}
