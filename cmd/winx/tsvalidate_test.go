package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The TypeScript SDK's client validates every answer's structuredContent
// against the tool's outputSchema once it has listed the tools. This runs
// the answers of the newer paths through it (a full-screen program's first
// answer, keys typed into it, a line typed at the idle prompt, a refused
// status_check, a search that misses with its candidate lines, a saved
// context, a mode change that copies workspace_root back, a denied
// command), over stdio against the built binary: the SDK refuses none.
func TestTypeScriptSDKValidatesAnswers(t *testing.T) {
	clients := mcpClients(t)
	bin := buildWinx(t)
	nodeBin := nodeFor(t, 18)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte("alpha\nbeta\ngamma\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bound := func(extra map[string]any) map[string]any {
		extra["thread_id"], extra["workspace_root"] = "$thread", "$root"
		return extra
	}
	command := func(c string) map[string]any {
		return bound(map[string]any{"action_json": map[string]any{"type": "command", "command": c}})
	}
	type call struct {
		Tool string         `json:"tool"`
		Args map[string]any `json:"args"`
	}
	calls := []call{
		{"Initialize", map[string]any{"type": "first_call", "any_workspace_path": ws}},
		{"BashCommand", command("echo hi")},
		{"BashCommand", command("less f.txt")},
		{"BashCommand", bound(map[string]any{"action_json": map[string]any{"type": "send_text", "send_text": "q"}})},
		{"BashCommand", bound(map[string]any{"action_json": map[string]any{"type": "send_text", "send_text": "echo typed", "submit": true}})},
		{"BashCommand", bound(map[string]any{"action_json": map[string]any{"type": "status_check"}})},
		{"ReadFiles", bound(map[string]any{"file_paths": []string{filepath.Join(ws, "f.txt")}})},
		{"EditFiles", bound(map[string]any{"files": []map[string]any{{"file_path": filepath.Join(ws, "f.txt"), "mode": "search_replace",
			"content": "<<<<<<< SEARCH\nbeta2\n=======\ndelta\n>>>>>>> REPLACE"}}})},
		{"ContextSave", bound(map[string]any{"id": "ts-validate", "description": "checking answers"})},
		{"Initialize", bound(map[string]any{"type": "user_asked_mode_change", "mode_name": "architect"})},
		{"BashCommand", command("touch made-in-architect")},
	}
	raw, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runClient(t, nodeBin, filepath.Join("testdata", "tsvalidate.mjs"),
		filepath.Join(clients, "node"), shellQuote(bin), string(raw))
	if code != 0 {
		t.Fatalf("tsvalidate exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	type answer struct {
		Tool, Status, ErrorCode, Refused string
	}
	var got []answer
	for line := range strings.Lines(stdout) {
		var a answer
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got = append(got, a)
	}
	if len(got) != len(calls) {
		t.Fatalf("%d answers for %d calls:\n%s", len(got), len(calls), stdout)
	}
	// The answers are the ones meant: the checks above validated shapes,
	// these make sure the paths were really taken.
	for i, want := range map[int]string{2: "awaiting_input", 7: "search_block_not_found", 10: "command_not_allowed"} {
		if got[i].Status != want && got[i].ErrorCode != want {
			t.Errorf("call %d (%s) = %+v, want %s", i, calls[i].Tool, got[i], want)
		}
	}
}
