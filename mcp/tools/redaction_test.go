package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"winx/codemap"
)

// Test secrets: a GitHub token and URL credentials. Each leaves the server
// only as a placeholder, wherever it would appear in an answer.
const (
	testGitHubToken = "ghp_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c"
	testURLPass     = "s3cretPass77"
	testURL         = "https://alice:" + testURLPass + "@git.example.com/repo.git"
)

// rawCall sends a tools/call and returns the whole JSON-RPC result as text.
func (e *bashEnv) rawCall(tool string, args map[string]any) string {
	e.t.Helper()
	args["thread_id"], args["workspace_root"] = e.thread, e.root
	resp, err := e.client.Call(context.Background(), "tools/call", map[string]any{"name": tool, "arguments": args})
	if err != nil {
		e.t.Fatalf("%s: %v", tool, err)
	}
	return string(resp.Result)
}

func wantNoSecret(t *testing.T, where, answer string) {
	t.Helper()
	for _, secret := range []string{testGitHubToken, testURLPass} {
		if strings.Contains(answer, secret) {
			t.Errorf("%s: the answer holds the secret %q:\n%s", where, secret, answer)
		}
	}
}

func TestRedactionEveryAnswer(t *testing.T) {
	e := newBashEnv(t, "")
	path := filepath.Join(e.root, "conf.txt")
	var b strings.Builder
	for i := 1; i <= 12; i++ {
		switch i {
		case 5:
			b.WriteString("token = \"" + testGitHubToken + "\"\n")
		case 6:
			b.WriteString("remote = " + testURL + "\n")
		default:
			b.WriteString("line number " + string(rune('a'+i)) + "\n")
		}
	}
	writeFile(t, path, b.String())
	read := e.rawCall(ReadFilesTool, map[string]any{"file_paths": []any{path}})
	wantNoSecret(t, "ReadFiles", read)

	// A SEARCH next to the secrets that misses (its first line is not in
	// the file); the nearest candidate shown must not be the raw line.
	miss := e.rawCall(EditFilesTool, map[string]any{"files": []any{map[string]any{
		"file_path": path, "mode": "search_replace",
		"content": "<<<<<<< SEARCH\nline number E\ntoken = \"[REDACTED:github-token]\"\nremote = https://alice:[REDACTED:url-credentials]@git.example.com/repo.git\n=======\ntoken = \"\"\n>>>>>>> REPLACE\n",
	}}})
	if !strings.Contains(miss, "Nearest candidate") {
		t.Errorf("the miss shows no nearest candidate: %s", miss)
	}
	wantNoSecret(t, "EditFiles miss", miss)

	// A successful edit next to the secrets shows them in its diff context.
	ok := e.rawCall(EditFilesTool, map[string]any{"files": []any{map[string]any{
		"file_path": path, "mode": "search_replace",
		"content": "<<<<<<< SEARCH\nline number h\n=======\nline number H\n>>>>>>> REPLACE\n",
	}}})
	if !strings.Contains(ok, `"completed"`) {
		t.Fatalf("edit did not complete: %s", ok)
	}
	wantNoSecret(t, "EditFiles diff", ok)

	// An error message that echoes a path holding a secret.
	bad := filepath.Join(e.root, "missing-"+testGitHubToken+".txt")
	notFound := e.rawCall(ReadFilesTool, map[string]any{"file_paths": []any{bad}})
	wantNoSecret(t, "ReadFiles error", notFound)
	ws := e.call(InitializeTool, map[string]any{"type": "first_call", "any_workspace_path": "/nonexistent/" + testURL})
	for _, s := range []string{ws.Structured.Output, ws.Structured.Output, ws.Content[0].Text} {
		wantNoSecret(t, "Initialize error", s)
	}

	// The terminal: the command's output, the screen and wait_for_turn.
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Skip("no bash")
	}
	out := e.rawCall(BashCommandTool, map[string]any{"action_json": cmd("echo " + testGitHubToken + "; echo " + testURL), "wait_for_seconds": 10})
	wantNoSecret(t, "command", out)
	scr := e.rawCall(BashCommandTool, map[string]any{"action_json": map[string]any{"type": "screen"}})
	wantNoSecret(t, "screen", scr)
	if !strings.Contains(scr, "[REDACTED:") {
		t.Errorf("screen shows no placeholder: %s", scr)
	}
	wt := e.rawCall(BashCommandTool, map[string]any{"action_json": map[string]any{"type": "wait_for_turn", "timeout_seconds": 2}})
	wantNoSecret(t, "wait_for_turn", wt)
	// A command echoed back in an error.
	e.rawCall(BashCommandTool, map[string]any{"action_json": cmd("sleep 30 # " + testGitHubToken), "wait_for_seconds": 0.5})
	busy := e.rawCall(BashCommandTool, map[string]any{"action_json": cmd("echo again"), "wait_for_seconds": 1})
	wantNoSecret(t, "busy", busy)
	e.rawCall(BashCommandTool, map[string]any{"action_json": map[string]any{"type": "send_specials", "send_specials": []any{"Ctrl-c"}}})
}

// TestRedactionSavedContextAndCodeMap: a saved context file and a CodeMap
// snippet never hold a raw secret, whichever part carries it.
func TestRedactionSavedContextAndCodeMap(t *testing.T) {
	e := newBashEnv(t, "")
	writeFile(t, filepath.Join(e.root, "svc.go"), "package svc\n\n// Token is "+testGitHubToken+"\nfunc Token() string { return \""+testURL+"\" }\n\nvar _ = Token()\n")
	saved := e.rawCall(ContextSaveTool, map[string]any{"id": "sec", "description": "resume with " + testGitHubToken + " and " + testURL,
		"relevant_file_globs": []any{"*.go"}})
	wantNoSecret(t, "ContextSave answer", saved)
	if !strings.Contains(saved, `"completed"`) {
		t.Fatalf("ContextSave = %s", saved)
	}
	var d struct {
		StructuredContent struct {
			Data struct {
				Path string `json:"path"`
			} `json:"data"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal([]byte(saved), &d); err != nil || d.StructuredContent.Data.Path == "" {
		t.Fatalf("ContextSave data: %v %s", err, saved)
	}
	path := d.StructuredContent.Data.Path
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("saved context %q: %v", path, err)
	}
	wantNoSecret(t, "saved context file", string(b))
	if !codemap.Available() {
		return
	}
	refs := e.rawCall(CodeMapTool, map[string]any{"operation": "references", "name": "Token"})
	wantNoSecret(t, "CodeMap references", refs)
	outline := e.rawCall(CodeMapTool, map[string]any{"operation": "outline", "path": "svc.go"})
	wantNoSecret(t, "CodeMap outline", outline)
}
