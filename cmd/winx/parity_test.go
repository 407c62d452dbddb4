package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// toolText calls a tool with the given _meta (a 2026-07-28 request) and
// returns the text content and the structured envelope; adapter.tool is
// this with the default _meta.
func (a *adapter) toolText(name string, args map[string]any, meta string) (string, daemonToolResult) {
	a.tb.Helper()
	a.id++
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": a.id, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args, "_meta": json.RawMessage(meta)}})
	if _, err := a.in.Write(append(req, '\n')); err != nil {
		a.tb.Fatalf("write: %v", err)
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-a.lines:
			if !ok {
				a.tb.Fatal("winx closed stdout")
			}
			var m struct {
				ID     int `json:"id"`
				Result struct {
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
					Structured daemonToolResult `json:"structuredContent"`
				} `json:"result"`
				Error json.RawMessage `json:"error"`
			}
			if json.Unmarshal([]byte(line), &m) != nil || m.ID != a.id {
				continue // a notification
			}
			if m.Error != nil {
				a.tb.Fatalf("%s: wire error %s", name, m.Error)
			}
			if len(m.Result.Content) == 0 {
				a.tb.Fatalf("%s: no content: %s", name, line)
			}
			return m.Result.Content[0].Text, m.Result.Structured
		case <-timeout:
			a.tb.Fatalf("%s: no answer within 30s", name)
		}
	}
}

// TestSeedParityThroughBinary runs the seed's contract points that have no
// other binary-level test through the built binaries with real bash: the
// compact Bash output extension on and off, the temporary-artifact rules
// (a write into .winx/tmp outside the session's directory is refused, every
// Bash result carries the usage), the helper CodeMap budget, and ContextSave
// listing active files and the last commands.
func TestSeedParityThroughBinary(t *testing.T) {
	d := newDaemonEnv(t)
	a := d.adapter()
	root := canonDir(t, t.TempDir())
	s := a.mustInit(root)
	call := func(action map[string]any) map[string]any {
		return map[string]any{"action_json": action, "wait_for_seconds": 10, "thread_id": s.ThreadID, "workspace_root": s.WorkspaceRoot}
	}
	const plainMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"test","version":"1"}}`
	const compactMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.winx/compact-bash-output":{}}},"io.modelcontextprotocol/clientInfo":{"name":"test","version":"1"}}`

	// Compact output: without the extension the trailer is there, with it
	// the text is the output alone and the exit code stays structured.
	text, _ := a.toolText("BashCommand", call(command("echo hi")), plainMeta)
	if want := "hi\n---\nexit code: 0\ncwd: " + root; text != want {
		t.Errorf("plain client text %q, want %q", text, want)
	}
	text, r := a.toolText("BashCommand", call(command("echo hi; false")), compactMeta)
	if text != "hi" || exitCode(r) != 1 {
		t.Errorf("compact client text %q exit %d, want %q and 1", text, exitCode(r), "hi")
	}

	// Temporary artifacts.
	r = a.bash(s, command(`echo x > .winx/tmp/stray`), 10)
	if r.Status != "denied" || r.ErrorCode != "temporary_artifact_policy" {
		t.Errorf("write into .winx/tmp = %s/%s %q, want denied/temporary_artifact_policy", r.Status, r.ErrorCode, r.Output)
	}
	if _, err := os.Stat(filepath.Join(root, ".winx", "tmp", "stray")); !os.IsNotExist(err) {
		t.Errorf("the refused write happened: %v", err)
	}
	r = a.bash(s, command(`head -c 5000 /dev/zero > "$WINX_TEMP_DIR/blob"; echo "$WINX_TEMP_DIR"`), 10)
	var usage struct {
		Temp *struct {
			Files int   `json:"files"`
			Bytes int64 `json:"bytes"`
		} `json:"temp_artifacts"`
	}
	if json.Unmarshal(r.Data, &usage) != nil || usage.Temp == nil || usage.Temp.Files < 1 || usage.Temp.Bytes < 5000 {
		t.Errorf("a Bash result carries no artifact usage counting the new file: %s", r.Data)
	}
	tmp := strings.TrimSpace(strings.Split(r.Output, "\n")[0])
	if !strings.HasPrefix(tmp, filepath.Join(root, ".winx", "tmp")) {
		t.Fatalf("WINX_TEMP_DIR = %q", tmp)
	}

	// Helper CodeMap: one file, capped, and a budget of unique files.
	big := filepath.Join(tmp, "big.go")
	var src strings.Builder
	src.WriteString("package x\n\n")
	for i := range 2000 {
		fmt.Fprintf(&src, "func LongFunctionName%04d() {}\n", i)
	}
	if err := os.WriteFile(big, []byte(src.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	codemap := func(p string) daemonToolResult {
		return a.tool("CodeMap", map[string]any{"operation": "outline", "path": p, "thread_id": s.ThreadID, "workspace_root": s.WorkspaceRoot})
	}
	if r := codemap(big); r.Status != "completed" || len(r.Output) > 12<<10 {
		t.Errorf("helper CodeMap of a 2000-function file = %s, %d bytes, want completed within 12 KiB", r.Status, len(r.Output))
	}
	if r := codemap(tmp); r.Status == "completed" {
		t.Errorf("helper CodeMap of a directory = %s, want refused", r.Status)
	}
	denied := false
	for i := range 30 {
		p := filepath.Join(tmp, fmt.Sprintf("h%02d.go", i))
		os.WriteFile(p, []byte("package x\n\nfunc F() {}\n"), 0o600)
		if r := codemap(p); r.Status == "denied" && r.ErrorCode == "helper_codemap_budget" {
			denied = true
			if i < 20 {
				t.Errorf("helper budget refused file %d already", i+2)
			}
			break
		}
	}
	if !denied {
		t.Error("the helper CodeMap budget never refused a new file")
	}
	os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	if r := codemap(filepath.Join(root, "main.go")); r.Status != "completed" {
		t.Errorf("a workspace CodeMap after the helper budget = %s %s, want completed", r.Status, r.Output)
	}

	// ContextSave lists the active files and the last commands.
	notes := filepath.Join(root, "notes.txt")
	os.WriteFile(notes, []byte("n\n"), 0o644)
	a.tool("ReadFiles", map[string]any{"file_paths": []string{notes}, "thread_id": s.ThreadID, "workspace_root": s.WorkspaceRoot})
	a.bash(s, command(`(exit 3)`), 10)
	r = a.tool("ContextSave", map[string]any{"id": "parity-task", "description": "carry on", "thread_id": s.ThreadID, "workspace_root": s.WorkspaceRoot})
	var saved struct {
		Path string `json:"path"`
	}
	if r.Status != "completed" || json.Unmarshal(r.Data, &saved) != nil {
		t.Fatalf("ContextSave = %+v", r)
	}
	b, err := os.ReadFile(saved.Path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Active files", "notes.txt", "## Terminal", "(exit 3)", "exit 3"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("saved context lacks %q:\n%s", want, b)
		}
	}
}
