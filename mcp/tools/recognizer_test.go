package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"winx/guardian"
	"winx/guardian/runtime"
	"winx/mcp"
	"winx/mcp/mcptest"
	"winx/mcp/session"
)

// newRecognizerEnv is newBashEnv with a configured turn recognizer.
func newRecognizerEnv(t *testing.T, rec *guardian.TurnRecognizer) *bashEnv {
	t.Helper()
	env := []string{"HOME=" + t.TempDir(), "LANG=C.UTF-8", "PATH=" + os.Getenv("PATH")}
	sessions := session.NewSessions(runtime.Embedded(runtime.Options{BaseEnv: env}), time.Now)
	t.Cleanup(func() { sessions.Close() })
	reg := NewRegistry(Options{Build: "test", Transport: "http", Sessions: sessions, ScratchRoot: t.TempDir(), StateDir: t.TempDir(), TurnRecognizer: rec})
	srv := mcp.NewServer(mcp.Implementation{Name: "winx", Version: "test"}, reg, nil)
	e := &bashEnv{t: t, client: &mcptest.Client{Handler: mcp.NewHTTPHandler(srv, &mcp.HTTPOptions{Auth: principalAuth("p")})}}
	e.root = t.TempDir()
	r := e.call(InitializeTool, map[string]any{"any_workspace_path": e.root})
	var data struct {
		ThreadID      string `json:"thread_id"`
		WorkspaceRoot string `json:"workspace_root"`
	}
	if err := json.Unmarshal(r.Structured.Data, &data); err != nil || data.ThreadID == "" {
		t.Fatalf("Initialize = %+v (%v)", r.Structured, err)
	}
	e.thread, e.root = data.ThreadID, data.WorkspaceRoot
	return e
}

// TestWaitForTurnConfigurable drives a scripted TUI with wait_for_turn and
// the configurable recognizer: a busy marker keeps it waiting through a
// quiet moment, an approval marker answers awaiting_approval, an input
// marker awaiting_input.
func TestWaitForTurnConfigurable(t *testing.T) {
	rec, err := guardian.ParseTurnRecognizer(`{"busy": ["WORKING..."], "awaiting_approval": ["re:APPLY PLAN\\?\\s*$"], "awaiting_input": ["ENTER NAME>"]}`)
	if err != nil {
		t.Fatal(err)
	}
	e := newRecognizerEnv(t, rec)
	script := filepath.Join(t.TempDir(), "tui.sh")
	body := "#!/bin/bash\nprintf 'WORKING...'; sleep 2; printf '\\rAPPLY PLAN? '; read a\nprintf 'ENTER NAME> '; read b\necho \"done $a $b\"\n"
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	// Started with no wait: the answer is running.
	if r, _ := e.bash(cmd(script), 0); r.Structured.Status != string(mcp.StatusRunning) {
		t.Fatalf("start: %q %q", r.Structured.Status, r.Content[0].Text)
	}
	turn := map[string]any{"type": "wait_for_turn", "recognizer": "configurable", "quiet_ms": 300, "timeout_seconds": 20}
	r, _ := e.bash(turn, 15)
	if r.Structured.Status != string(mcp.StatusAwaitingApproval) || !strings.Contains(r.Content[0].Text, "APPLY PLAN?") {
		t.Fatalf("wait_for_turn = %q %q, want awaiting_approval at APPLY PLAN?", r.Structured.Status, r.Content[0].Text)
	}
	if na := r.Structured.NextAction; na == nil || !strings.Contains(string(mustJSON(na.Arguments)), "send_text") {
		t.Errorf("next action %+v, want send_text", na)
	}
	e.bash(map[string]any{"type": "send_text", "send_text": "y", "submit": true}, 0)
	r, _ = e.bash(turn, 15)
	if r.Structured.Status != string(mcp.StatusAwaitingInput) {
		t.Fatalf("wait_for_turn = %q %q, want awaiting_input at ENTER NAME>", r.Structured.Status, r.Content[0].Text)
	}
	r, _ = e.bash(map[string]any{"type": "send_text", "send_text": "ann", "submit": true}, 15)
	if !strings.Contains(r.Content[0].Text, "done y ann") {
		t.Errorf("the TUI's end: %q", r.Content[0].Text)
	}
	// Without a configuration, configurable is refused with a reason.
	plain := newBashEnv(t, "")
	r, _ = plain.bash(turn, 15)
	if r.Structured.Status != string(mcp.StatusInvalidInput) || !strings.Contains(r.Content[0].Text, "WINX_TURN_RECOGNIZER_CONFIG") {
		t.Errorf("configurable without a configuration = %q %q", r.Structured.Status, r.Content[0].Text)
	}
}

// TestWaitForTurnBuiltinApproval: the built-in recognizer turns a quiet
// yes/no prompt into awaiting_approval.
func TestWaitForTurnBuiltinApproval(t *testing.T) {
	e := newBashEnv(t, "")
	e.bash(cmd(`read -p 'Proceed with the upgrade? (yes/no) ' a; echo a=$a`), 0)
	r, _ := e.bash(map[string]any{"type": "wait_for_turn", "quiet_ms": 300, "timeout_seconds": 20}, 15)
	if r.Structured.Status != string(mcp.StatusAwaitingApproval) {
		t.Errorf("wait_for_turn = %q %q, want awaiting_approval", r.Structured.Status, r.Content[0].Text)
	}
}
