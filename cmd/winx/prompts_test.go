package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPromptsThroughBinary drives the built binaries (daemon runtime, a
// guardian process): a yes/no prompt answers awaiting_input at once and
// the answer to it shows the result without the prompt again; a scripted
// TUI reaches awaiting_approval through the configured recognizer; Ctrl-c
// with a bg_command_id ends that background command only.
func TestPromptsThroughBinary(t *testing.T) {
	d := newDaemonEnv(t, `WINX_TURN_RECOGNIZER_CONFIG={"busy":["WORKING..."],"awaiting_approval":["re:APPLY PLAN\\?\\s*$"]}`)
	a := d.adapter()
	s := a.mustInit(t.TempDir())

	r := a.bash(s, command(`read -p 'Overwrite? [y/N] ' a; echo got=$a`), 15)
	if r.Status != "awaiting_input" || !strings.Contains(r.Output, "Overwrite? [y/N]") {
		t.Fatalf("prompt: %q %q, want awaiting_input with the prompt", r.Status, r.Output)
	}
	r2 := a.bash(s, map[string]any{"type": "send_text", "send_text": "n", "submit": true}, 15)
	if r2.Status != "completed" || !strings.Contains(r2.Output, "got=n") {
		t.Errorf("answer: %q %q, want completed with got=n", r2.Status, r2.Output)
	}
	if n := strings.Count(r.Output+r2.Output, "Overwrite?"); n != 1 {
		t.Errorf("the prompt appears %d times: %q + %q", n, r.Output, r2.Output)
	}

	script := filepath.Join(t.TempDir(), "tui.sh")
	os.WriteFile(script, []byte("#!/bin/bash\nprintf 'WORKING...'; sleep 2; printf '\\rAPPLY PLAN? '; read a; echo \"applied $a\"\n"), 0o700)
	a.bash(s, command(script), 0)
	r = a.bash(s, map[string]any{"type": "wait_for_turn", "recognizer": "configurable", "quiet_ms": 300, "timeout_seconds": 20}, 15)
	if r.Status != "awaiting_approval" {
		t.Fatalf("wait_for_turn: %q %q, want awaiting_approval", r.Status, r.Output)
	}
	if r = a.bash(s, map[string]any{"type": "send_text", "send_text": "yes", "submit": true}, 15); !strings.Contains(r.Output, "applied yes") {
		t.Errorf("TUI answer: %q %q", r.Status, r.Output)
	}

	bg := a.bash(s, map[string]any{"type": "command", "command": "sleep 100", "is_background": true}, 0)
	var id struct {
		BgCommandID string `json:"bg_command_id"`
	}
	if err := json.Unmarshal(bg.Data, &id); err != nil || id.BgCommandID == "" {
		t.Fatalf("background: %+v", bg)
	}
	a.bash(s, map[string]any{"type": "send_specials", "send_specials": []string{"ctrl-C"}, "bg_command_id": id.BgCommandID}, 10)
	r = a.bash(s, map[string]any{"type": "status_check", "bg_command_id": id.BgCommandID}, 10)
	if r.Status != "completed" || exitCode(r) != 130 {
		t.Errorf("background after Ctrl-c: %q exit %d %q, want ended by SIGINT", r.Status, exitCode(r), r.Output)
	}
	if r = a.bash(s, command("echo still-here"), 15); exitCode(r) != 0 || !strings.Contains(r.Output, "still-here") {
		t.Errorf("main shell after the background Ctrl-c: %q", r.Output)
	}
}

// TestTurnRecognizerConfigChecked: an invalid WINX_TURN_RECOGNIZER_CONFIG
// stops winx at start with a message naming the variable.
func TestTurnRecognizerConfigChecked(t *testing.T) {
	d := newDaemonEnv(t, `WINX_TURN_RECOGNIZER_CONFIG={"busy":["re:("]}`)
	cmd := exec.Command(filepath.Join(d.bins, "winx"))
	cmd.Env = d.env
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "WINX_TURN_RECOGNIZER_CONFIG") {
		t.Errorf("winx with an invalid recognizer: %v %q, want a failure naming the variable", err, out)
	}
}
