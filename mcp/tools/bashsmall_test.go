package tools

import (
	"strings"
	"testing"
)

// TestBashScreenLinesCountFromLastWritten: lines N shows the last N rows
// that hold something, not the blank rows below the prompt.
func TestBashScreenLinesCountFromLastWritten(t *testing.T) {
	e := newBashEnv(t, "")
	e.bash(cmd("clear; for i in 1 2 3 4 5; do echo row$i; done"), 10)
	r, _ := e.bash(map[string]any{"type": "screen", "lines": 4}, 0)
	if !strings.Contains(r.Structured.Output, "row5") || strings.TrimSpace(r.Structured.Output) == "" {
		t.Errorf("screen lines 4 = %q, want the last written rows", r.Structured.Output)
	}
}

// TestBashStatusCheckIdleSaysSo: a status_check after the command's end was
// reported says nothing runs instead of repeating the exit code.
func TestBashStatusCheckIdleSaysSo(t *testing.T) {
	e := newBashEnv(t, "")
	if r, _ := e.bash(cmd("false"), 10); r.Structured.Status != "completed" {
		t.Fatalf("false = %+v", r.Structured)
	}
	r, _ := e.bash(map[string]any{"type": "status_check"}, 1)
	if strings.Contains(r.Content[0].Text, "exit code: 1") || !strings.Contains(strings.ToLower(r.Content[0].Text), "no command is running") {
		t.Errorf("idle status_check = %q", r.Content[0].Text)
	}
	// A command that was reported running and ended since is reported.
	e.bash(cmd("sleep 1; echo done-now"), 0.2)
	var last *toolResult
	for range 20 {
		last, _ = e.bash(map[string]any{"type": "status_check"}, 5)
		if last.Structured.Status == "completed" {
			break
		}
	}
	if !strings.Contains(last.Content[0].Text, "exit code: 0") {
		t.Errorf("status_check after the end = %q, want the exit code", last.Content[0].Text)
	}
}

// TestBashAlreadyRunningNamesCommand: the refusal names what runs.
func TestBashAlreadyRunningNamesCommand(t *testing.T) {
	e := newBashEnv(t, "")
	e.bash(cmd("sleep 30 # marker-xyz"), 0.3)
	r, _ := e.bash(cmd("echo hi"), 1)
	if r.Structured.ErrorCode != codeCommandAlreadyRunning || !strings.Contains(r.Content[0].Text, "marker-xyz") {
		t.Errorf("second command = %q (%s)", r.Content[0].Text, r.Structured.ErrorCode)
	}
	r, _ = e.bash(map[string]any{"type": "send_specials", "send_specials": []any{"ctrl-C"}}, 5)
	if r.Structured.Status != "completed" {
		t.Errorf("send_specials ctrl-C = %+v", r.Structured)
	}
	r, _ = e.bash(map[string]any{"type": "send_specials", "send_specials": []any{"Ctrl-q"}}, 1)
	if r.Structured.Status != "invalid_input" || !strings.Contains(r.Content[0].Text, "Key-up") {
		t.Errorf("unknown key = %q", r.Content[0].Text)
	}
}

// TestBashUntilCompleteBackgroundCorrected: the combination cannot work; the
// answer is a corrected call, ready to send.
func TestBashUntilCompleteBackgroundCorrected(t *testing.T) {
	e := newBashEnv(t, "")
	r := e.call(BashCommandTool, map[string]any{
		"action_json": map[string]any{"type": "command", "command": "echo bg", "is_background": true},
		"wait_policy": "until_complete", "thread_id": e.thread, "workspace_root": e.root,
	})
	if r.Structured.Status != "invalid_input" || r.Structured.NextAction == nil {
		t.Fatalf("until_complete + is_background = %+v", r.Structured)
	}
	if _, ok := r.Structured.NextAction.Arguments["wait_policy"]; ok {
		t.Errorf("the corrected call still has wait_policy: %+v", r.Structured.NextAction.Arguments)
	}
	if got := e.callNext(t, r); got.Structured.Status != "running" {
		t.Errorf("the corrected call = %+v", got.Structured)
	}
}
