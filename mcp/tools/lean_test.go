package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"winx/evidence"
)

// leanViews splits a raw result into its text view and the members of its
// JSON view (structuredContent).
func leanViews(t *testing.T, raw []byte) (text string, structured []byte, members map[string]json.RawMessage) {
	t.Helper()
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Structured json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	for _, c := range res.Content {
		text += c.Text
	}
	if err := json.Unmarshal(res.Structured, &members); err != nil {
		t.Fatalf("structuredContent %s: %v", res.Structured, err)
	}
	return text, res.Structured, members
}

// TestLeanCompletedCommand: a completed BashCommand's JSON view carries
// only what the model acts on (no retry flags, no message restating the
// exit code, no zero counters, generation or timing), stays within its
// text plus 100 bytes, and writes <, > and & as they are.
func TestLeanCompletedCommand(t *testing.T) {
	e := newBashEnv(t, "")
	raw := []byte(e.rawCall(BashCommandTool, map[string]any{"action_json": cmd(`echo '<a> & b'`), "wait_for_seconds": 10}))
	text, structured, m := leanViews(t, raw)
	for _, k := range []string{"retryable", "retrySameCall", "message", "errorCode"} {
		if v, ok := m[k]; ok {
			t.Errorf("completed command has %s = %s: %s", k, v, structured)
		}
	}
	var data map[string]json.RawMessage
	if err := json.Unmarshal(m["data"], &data); err != nil {
		t.Fatalf("data %s: %v", m["data"], err)
	}
	for _, k := range []string{"command_generation", "running_time_ms", "temp_artifacts", "cwd"} {
		if v, ok := data[k]; ok {
			t.Errorf("completed command data has %s = %s", k, v)
		}
	}
	if string(data["exit_code"]) != "0" {
		t.Errorf("data = %s, want exit_code 0", m["data"])
	}
	for _, want := range []string{"<a> & b\n", "exit code: 0", "cwd: " + e.root} {
		if !strings.Contains(text, want) {
			t.Errorf("text %q lacks %q", text, want)
		}
	}
	if len(structured) > len(text)+100 {
		t.Errorf("JSON view is %d bytes for %d bytes of text, want at most text + 100: %s", len(structured), len(text), structured)
	}
	for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
		if strings.Contains(string(raw), esc) {
			t.Errorf("result escapes HTML (%s): %s", esc, raw)
		}
	}
	if !strings.Contains(string(structured), `<a> & b`) {
		t.Errorf("structuredContent %s lacks the literal output", structured)
	}
}

// TestLeanShortRevisionRoundTrip: reads and edits show short revisions; a
// short revision passed back resolves to the one issued and edits; one
// never issued is not taken for the file's current bytes.
func TestLeanShortRevisionRoundTrip(t *testing.T) {
	e := newBashEnv(t, "")
	path := filepath.Join(e.root, "a.txt")
	writeFile(t, path, "one\ntwo\nthree\n")
	r, d := e.read(path)
	full := evidence.RevisionOf([]byte("one\ntwo\nthree\n"))
	rev := d.Files[0].Revision
	if rev != full.Short() || !strings.Contains(r.Structured.Output, "revision "+rev+";") || strings.Contains(r.Structured.Output, string(full)) {
		t.Fatalf("read revision = %q, text %q; want the short %q only", rev, r.Structured.Output, full.Short())
	}
	if !strings.Contains(r.Structured.Output, "\n1\tone\n2\ttwo\n3\tthree") {
		t.Errorf("read text = %q, want the gutter as wide as the numbers", r.Structured.Output)
	}
	r, ed := e.edit(linePatch(path, rev, 2, 1, "TWO\n"))
	if r.Structured.Status != "completed" {
		t.Fatalf("line_patch with the short revision = %s/%s %q", r.Structured.Status, r.Structured.ErrorCode, r.Structured.Message)
	}
	b, _ := os.ReadFile(path)
	if string(b) != "one\nTWO\nthree\n" || ed.Files[0].Revision != evidence.RevisionOf(b).Short() {
		t.Errorf("after the edit: %q, reported revision %q", b, ed.Files[0].Revision)
	}
	// The edit's own short revision goes on working.
	if r, _ := e.edit(linePatch(path, ed.Files[0].Revision, 1, 1, "ONE\n")); r.Structured.Status != "completed" {
		t.Errorf("line_patch with the edit's short revision = %s/%s %q", r.Structured.Status, r.Structured.ErrorCode, r.Structured.Message)
	}
	// A short revision no read or edit gave: the current bytes are not
	// taken on trust by prefix; the model is sent to read.
	cur, _ := os.ReadFile(path)
	bogus := "sha256:" + strings.Repeat("0", evidence.ShortRevisionHex)
	if evidence.Revision(bogus).Matches(evidence.RevisionOf(cur)) {
		t.Skip("the file's revision starts with the bogus prefix")
	}
	r, _ = e.edit(linePatch(path, bogus, 1, 1, "x\n"))
	if r.Structured.Status == "completed" {
		t.Errorf("line_patch with a never-issued short revision = completed, want refused")
	}
	if got, _ := os.ReadFile(path); string(got) != string(cur) {
		t.Errorf("refused edit wrote %q", got)
	}
}

// TestLeanRepeatedUndoSaysWhatHappened: an identical undo repeated does
// not claim an edit; its answer says once that nothing was written.
func TestLeanRepeatedUndoSaysWhatHappened(t *testing.T) {
	e := newBashEnv(t, "")
	path := filepath.Join(e.root, "u.txt")
	writeFile(t, path, "a\nb\n")
	_, d := e.read(path)
	r, ed := e.edit(linePatch(path, d.Files[0].Revision, 1, 1, "A\n"))
	if r.Structured.Status != "completed" || ed.Files[0].UndoID == "" {
		t.Fatalf("edit = %+v", r.Structured)
	}
	undo := func() *toolResult {
		r, _ := e.edit(map[string]any{"operation": "undo", "files": []any{map[string]any{"undo_id": ed.Files[0].UndoID}}})
		return r
	}
	if r := undo(); r.Structured.Status != "completed" {
		t.Fatalf("undo = %s/%s %q", r.Structured.Status, r.Structured.ErrorCode, r.Structured.Output)
	}
	r = undo()
	both := r.Structured.Message + "\n" + r.Structured.Output
	if r.Structured.Status != "completed" || !strings.Contains(both, "already applied") || strings.Contains(both, "Edited") {
		t.Errorf("repeated undo = %s, message %q, text %q; want it to say only that it was already applied", r.Structured.Status, r.Structured.Message, r.Structured.Output)
	}
	if b, _ := os.ReadFile(path); string(b) != "a\nb\n" {
		t.Errorf("file after the undos = %q", b)
	}
}

// TestModeChangeNote: the words of a mode change name what changed.
func TestModeChangeNote(t *testing.T) {
	tests := []struct {
		from, to       string
		oldPID, newPID int
		want, not      string
	}{
		{"wcgw", "architect", 10, 11, "Mode set to architect as the user asked (it was wcgw); the shell was replaced (PID 10 -> 11) in the same cwd.", "same shell"},
		{"architect", "code_writer", 10, 10, "Mode set to code_writer as the user asked (it was architect); same shell (PID 10) and cwd.", "replaced"},
		{"wcgw", "wcgw", 7, 7, "Mode set to wcgw as the user asked (it already was wcgw); same shell (PID 7) and cwd.", "replaced"},
	}
	for _, tt := range tests {
		got := modeChangeNote(tt.from, tt.to, tt.oldPID, tt.newPID)
		if got != tt.want || strings.Contains(got, tt.not) {
			t.Errorf("modeChangeNote(%q, %q, %d, %d) = %q, want %q", tt.from, tt.to, tt.oldPID, tt.newPID, got, tt.want)
		}
	}
}
