package tools

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"winx/mcp"
	"winx/mcp/session/sessiontest"
)

func TestInstructionsContract(t *testing.T) {
	base := Instructions("  ")
	for _, want := range []string{"Initialize once", "thread_id and workspace_root", "Read before you edit", "line_patch", "Never repeat a rejected call unchanged"} {
		if !strings.Contains(base, want) {
			t.Errorf("built-in instructions lack %q", want)
		}
	}
	got := Instructions("Run make lint before every commit.\n")
	if !strings.HasPrefix(got, base) || !strings.HasSuffix(got, "Instructions from the operator of this server:\nRun make lint before every commit.") {
		t.Errorf("operator instructions not appended after the built-in ones:\n%s", got)
	}
}

func TestInitializeRepeatsOperatorInstructions(t *testing.T) {
	s, _, _ := sessiontest.NewSessions(t)
	reg := NewRegistry(Options{Build: "test", Transport: "http", Sessions: s, ScratchRoot: filepath.Join(t.TempDir(), "p"),
		ServerInstructions: "Never push to main."})
	e := &initEnv{srv: mcp.NewServer(mcp.Implementation{Name: "winx", Version: "test"}, reg, nil), sessions: s}
	root, _ := workspace(t)
	c := e.client("alice")
	first := callInit(t, c, map[string]any{"any_workspace_path": root})
	if !strings.Contains(first.text(), "Instructions from the operator of this server:\nNever push to main.") {
		t.Errorf("a new session's answer lacks the operator instructions:\n%s", first.text())
	}
	again := callInit(t, c, map[string]any{"any_workspace_path": root})
	if strings.Contains(again.text(), "Never push to main.") {
		t.Error("a compact reattach repeats the operator instructions")
	}
}

func TestHandoverPrompt(t *testing.T) {
	s, _, _ := sessiontest.NewSessions(t)
	reg := NewRegistry(Options{Build: "test", Transport: "http", Sessions: s})
	srv := mcp.NewServer(mcp.Implementation{Name: "winx", Version: "test"}, reg, nil)
	c := (&initEnv{srv: srv}).client("alice")
	resp, err := c.Call(context.Background(), "prompts/get", map[string]any{"name": HandoverPrompt, "arguments": map[string]string{"task_id": "fix-login", "note": "mention the flaky test"}})
	if err != nil || resp.Error != nil {
		t.Fatalf("prompts/get: %v %v", err, resp.Error)
	}
	var got struct {
		Messages []struct {
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(resp.Result, &got); err != nil || len(got.Messages) != 1 {
		t.Fatalf("decode %s: %v", resp.Result, err)
	}
	text := got.Messages[0].Content.Text
	for _, want := range []string{"ContextSave", `id "fix-login"`, "relevant_file_globs", "task_id_to_resume", "mention the flaky test"} {
		if !strings.Contains(text, want) {
			t.Errorf("handover prompt lacks %q:\n%s", want, text)
		}
	}
}
