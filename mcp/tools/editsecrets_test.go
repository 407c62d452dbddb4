package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A token the github-token rule redacts; built at run time so the source
// holds no secret-shaped literal.
var testGHToken = "ghp_" + strings.Repeat("a1B2", 9)

const ghPlaceholder = "[REDACTED:github-token]"

// secretFile writes a file whose line 2 holds a token and reads it whole
// through ReadFiles, which shows the placeholder.
func secretFile(t *testing.T, e *bashEnv) string {
	t.Helper()
	path := filepath.Join(e.root, "cfg.txt")
	writeFile(t, path, "name = demo\ntoken = "+testGHToken+" # ci\nmode = fast\n")
	r, _ := e.read(path)
	text := ""
	for _, c := range r.Content {
		text += c.Text
	}
	if strings.Contains(text, testGHToken) || !strings.Contains(text, ghPlaceholder) {
		t.Fatalf("ReadFiles showed %q, want the placeholder and not the token", text)
	}
	return path
}

func fileText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func answerText(r *toolResult) string {
	s := r.Structured.Message + r.Structured.Output + string(r.Structured.Data)
	for _, c := range r.Content {
		s += c.Text
	}
	return s
}

func searchReplace(path, search, replace string) map[string]any {
	return map[string]any{"files": []any{map[string]any{"file_path": path, "mode": "search_replace",
		"content": "<<<<<<< SEARCH\n" + search + "=======\n" + replace + ">>>>>>> REPLACE\n"}}}
}

// A SEARCH copied from ReadFiles (with the placeholder) matches the real
// line, the same placeholder in REPLACE keeps the real token, and neither
// the diff nor any other part of the answer shows the token.
func TestEditSecretPlaceholderMapsBack(t *testing.T) {
	e := newBashEnv(t, "")
	path := secretFile(t, e)
	r, _ := e.edit(searchReplace(path, "token = "+ghPlaceholder+" # ci\n", "token = "+ghPlaceholder+" # ci, rotated\n"))
	if r.Structured.Status != "completed" {
		t.Fatalf("edit with the placeholder = %s %s: %s", r.Structured.Status, r.Structured.ErrorCode, r.Structured.Message)
	}
	if got, want := fileText(t, path), "name = demo\ntoken = "+testGHToken+" # ci, rotated\nmode = fast\n"; got != want {
		t.Errorf("file = %q, want %q", got, want)
	}
	if s := answerText(r); strings.Contains(s, testGHToken) {
		t.Errorf("the answer shows the token: %q", s)
	}

	// A context line of the diff holds the token: redacted too.
	r, _ = e.edit(searchReplace(path, "mode = fast\n", "mode = slow\n"))
	if r.Structured.Status != "completed" {
		t.Fatalf("second edit = %+v", r.Structured)
	}
	if s := answerText(r); strings.Contains(s, testGHToken) {
		t.Errorf("the diff shows the token in context: %q", s)
	}
}

// A SEARCH that misses near the token: the nearest candidate is the
// redacted line.
func TestEditSecretNearestCandidateRedacted(t *testing.T) {
	e := newBashEnv(t, "")
	path := secretFile(t, e)
	r, _ := e.edit(searchReplace(path, "token = "+ghPlaceholder+" # cd\n", "x\n"))
	if r.Structured.Status == "completed" {
		t.Fatalf("a SEARCH that does not match was applied")
	}
	if s := answerText(r); strings.Contains(s, testGHToken) {
		t.Errorf("the miss shows the token: %q", s)
	}
	if !strings.Contains(fileText(t, path), testGHToken) {
		t.Errorf("the file lost its token")
	}
}

// Writing a placeholder that stands for no secret of the replaced text is
// refused in every mode, and the real token is never overwritten by one.
func TestEditSecretPlaceholderRefused(t *testing.T) {
	e := newBashEnv(t, "")
	path := secretFile(t, e)
	before := fileText(t, path)
	rev := revisionOf(t, path)
	cases := map[string]map[string]any{
		// the placeholder moved to a line that held no secret
		"search_replace elsewhere": searchReplace(path, "name = demo\n", "name = "+ghPlaceholder+"\n"),
		// another rule's placeholder for the github token
		"search_replace other rule": searchReplace(path, "token = "+ghPlaceholder+" # ci\n", "token = [REDACTED:aws-access-key] # ci\n"),
		// a made-up rule name
		"search_replace made-up": searchReplace(path, "mode = fast\n", "mode = [REDACTED:whatever]\n"),
		// line_patch of a line without the secret
		"line_patch": linePatch(path, rev, 1, 1, "name = "+ghPlaceholder+"\n"),
		// line_patch inserting it
		"line_patch insert": linePatch(path, rev, 2, 0, "copy = "+ghPlaceholder+"\n"),
		// a new file
		"replace new": {"files": []any{map[string]any{"file_path": filepath.Join(e.root, "new.txt"), "mode": "replace", "content": "t = " + ghPlaceholder + "\n"}}},
	}
	for name, args := range cases {
		r, _ := e.edit(args)
		if r.Structured.Status != "invalid_input" || r.Structured.ErrorCode != "redacted_placeholder" {
			t.Errorf("%s: %s/%s (%s), want invalid_input/redacted_placeholder", name, r.Structured.Status, r.Structured.ErrorCode, r.Structured.Message)
		}
		if got := fileText(t, path); got != before {
			t.Fatalf("%s: file changed to %q", name, got)
		}
	}
	if _, err := os.Stat(filepath.Join(e.root, "new.txt")); err == nil {
		t.Errorf("new.txt was created with a placeholder")
	}

	// line_patch of the secret's own line and a whole-file replace keep
	// the token where the placeholder stands.
	r, _ := e.edit(linePatch(path, rev, 2, 1, "token = "+ghPlaceholder+" # patched\n"))
	if r.Structured.Status != "completed" {
		t.Fatalf("line_patch of the token's line = %+v", r.Structured)
	}
	if !strings.Contains(fileText(t, path), "token = "+testGHToken+" # patched\n") {
		t.Errorf("line_patch lost the token: %q", fileText(t, path))
	}
	content := "name = demo\ntoken = " + ghPlaceholder + " # replaced\n"
	r, _ = e.edit(map[string]any{"files": []any{map[string]any{"file_path": path, "mode": "replace", "content": content}}})
	if r.Structured.Status != "completed" {
		t.Fatalf("replace = %+v", r.Structured)
	}
	if got := fileText(t, path); got != "name = demo\ntoken = "+testGHToken+" # replaced\n" {
		t.Errorf("replace wrote %q", got)
	}
	if s := answerText(r); strings.Contains(s, testGHToken) {
		t.Errorf("the replace answer shows the token: %q", s)
	}
}
