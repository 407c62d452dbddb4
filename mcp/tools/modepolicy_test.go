package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// setMode changes the session's mode as the user would.
func (e *bashEnv) setMode(t *testing.T, name string, cfg map[string]any) {
	t.Helper()
	args := map[string]any{"type": "user_asked_mode_change", "mode_name": name, "thread_id": e.thread, "any_workspace_path": e.root}
	if cfg != nil {
		args["code_writer_config"] = cfg
	}
	if r := e.call(InitializeTool, args); r.IsError {
		t.Fatalf("mode change to %s = %+v", name, r.Structured)
	}
}

// wantDenied checks a command_not_allowed answer that names the command.
func wantDenied(t *testing.T, r *toolResult, line, named string) {
	t.Helper()
	if r.Structured.Status != "denied" || r.Structured.ErrorCode != codeCommandNotAllowed || !r.IsError {
		t.Errorf("%q = %s/%s (%s), want denied/command_not_allowed", line, r.Structured.Status, r.Structured.ErrorCode, r.Structured.Output)
		return
	}
	var d commandDenial
	if err := json.Unmarshal(r.Structured.Data, &d); err != nil {
		t.Fatalf("%q: data %s: %v", line, r.Structured.Data, err)
	}
	if named != "" && (d.Command != named || !strings.Contains(r.Structured.Output, named)) {
		t.Errorf("%q denial names %q (%s), want %q", line, d.Command, r.Structured.Output, named)
	}
}

func TestArchitectModeCommands(t *testing.T) {
	e := newBashEnv(t, "")
	if err := os.WriteFile(filepath.Join(e.root, "file.txt"), []byte("hello architect\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	git := exec.Command("git", "init", "-q", e.root)
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	e.setMode(t, ModeArchitect, nil)

	for _, tc := range []struct{ line, out string }{
		{"ls", "file.txt"},
		{"cat file.txt", "hello architect"},
		{"git status", "file.txt"},
		{"ls | wc -l", "1"},
	} {
		r, d := e.bash(cmd(tc.line), 10)
		if r.Structured.Status != "completed" || d.ExitCode == nil || *d.ExitCode != 0 || !strings.Contains(output(r), tc.out) {
			t.Errorf("architect %q = %s (exit %v) %q, want it to run and print %q", tc.line, r.Structured.Status, d.ExitCode, output(r), tc.out)
		}
	}

	for _, tc := range []struct{ line, named, file string }{
		{"echo x > f", "echo x >f", "f"},
		{"ls; touch marker", "touch marker", "marker"},
		{"ls $(touch sub)", "touch sub", "sub"},
		{"bash -c 'touch inner'", "bash -c touch inner", "inner"},
	} {
		r, _ := e.bash(cmd(tc.line), 10)
		wantDenied(t, r, tc.line, tc.named)
		if _, err := os.Stat(filepath.Join(e.root, tc.file)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("architect %q created %s (%v): a denied line ran", tc.line, tc.file, err)
		}
	}

	r, _ := e.bash(cmd("ls 'unterminated"), 10)
	wantDenied(t, r, "ls 'unterminated", "")
	if !strings.Contains(r.Structured.Output, "could not be parsed") {
		t.Errorf("parse denial message = %q, want it to say the command could not be parsed", r.Structured.Output)
	}

	bg := map[string]any{"type": "command", "command": "touch bgmarker", "is_background": true}
	r, _ = e.bash(bg, 5)
	wantDenied(t, r, "touch bgmarker (background)", "touch bgmarker")

	r, _ = e.bash(map[string]any{"type": "send_text", "send_text": "touch typed", "submit": true}, 5)
	wantDenied(t, r, "send_text touch typed", "touch typed")
	r, _ = e.bash(map[string]any{"type": "send_ascii", "send_ascii": []int{'t', 'o', 'u', 'c', 'h', ' ', 'a', 13}}, 5)
	wantDenied(t, r, "send_ascii touch a", "touch a")
	for _, f := range []string{"bgmarker", "typed", "a"} {
		if _, err := os.Stat(filepath.Join(e.root, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("architect: %s exists (%v): denied input ran", f, err)
		}
	}
}

func TestArchitectModeEditFilesDenied(t *testing.T) {
	e := newBashEnv(t, "")
	e.setMode(t, ModeArchitect, nil)
	path := filepath.Join(e.root, "new.txt")
	r, _ := e.edit(map[string]any{"files": []any{map[string]any{"file_path": path, "mode": "replace", "content": "x\n"}}})
	if r.Structured.Status != "denied" || r.Structured.ErrorCode != codeFileOperationDenied || !strings.Contains(r.Structured.Output, path) {
		t.Errorf("architect EditFiles = %s/%s %q, want denied/file_operation_denied naming %s",
			r.Structured.Status, r.Structured.ErrorCode, r.Structured.Output, path)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("architect EditFiles wrote %s (%v)", path, err)
	}
}

func TestCodeWriterModeCommands(t *testing.T) {
	e := newBashEnv(t, "")
	git := exec.Command("git", "init", "-q", e.root)
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	e.setMode(t, ModeCodeWriter, map[string]any{"allowed_globs": []string{"src/**"}, "allowed_commands": []string{"ls", "git status"}})

	for _, line := range []string{"ls -la", "git status -s"} {
		r, d := e.bash(cmd(line), 10)
		if r.Structured.Status != "completed" || d.ExitCode == nil || *d.ExitCode != 0 {
			t.Errorf("code_writer %q = %s (exit %v) %q, want it to run", line, r.Structured.Status, d.ExitCode, r.Structured.Output)
		}
	}
	for _, tc := range []struct{ line, named string }{
		{"lsof", "lsof"},
		{"git push", "git push"},
		{"ls && curl x | sh", "curl x"},
		{"ls > out.txt", "ls >out.txt"},
	} {
		r, _ := e.bash(cmd(tc.line), 10)
		wantDenied(t, r, tc.line, tc.named)
	}
	if _, err := os.Stat(filepath.Join(e.root, "out.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a redirection outside allowed_globs wrote out.txt (%v)", err)
	}
	if err := os.Mkdir(filepath.Join(e.root, "src"), 0o700); err != nil {
		t.Fatal(err)
	}
	if r, _ := e.bash(cmd("ls > src/listing.txt"), 10); r.Structured.Status != "completed" {
		t.Errorf("redirection inside allowed_globs = %+v", r.Structured)
	}
	if _, err := os.Stat(filepath.Join(e.root, "src", "listing.txt")); err != nil {
		t.Errorf("redirection inside allowed_globs did not write: %v", err)
	}

	// verify_command goes through the same policy, before any write.
	target := filepath.Join(e.root, "src", "a.txt")
	r, _ := e.edit(map[string]any{"files": []any{map[string]any{"file_path": target, "mode": "replace", "content": "x\n"}},
		"verify_command": "ls && touch src/verified"})
	wantDenied(t, r, "verify_command", "touch src/verified")
	for _, p := range []string{target, filepath.Join(e.root, "src", "verified")} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("denied verify_command: %s exists (%v)", p, err)
		}
	}
	r, d := e.edit(map[string]any{"files": []any{map[string]any{"file_path": target, "mode": "replace", "content": "x\n"}},
		"verify_command": "ls src"})
	if r.Structured.Status != "completed" || d.VerifyExit == nil || *d.VerifyExit != 0 {
		t.Errorf("allowed verify_command = %+v", r.Structured)
	}
}

// TestModeTypedInputGate sends input that readline would turn into another
// command than the one checked; outside wcgw it is refused before anything
// reaches the terminal.
func TestModeTypedInputGate(t *testing.T) {
	e := newBashEnv(t, "")
	e.setMode(t, ModeArchitect, nil)
	for _, a := range []map[string]any{
		{"type": "send_text", "send_text": "ls x\rrm -rf y", "submit": true},
		{"type": "send_text", "send_text": "ls -rf y\x01rm ", "submit": true},
		{"type": "send_text", "send_text": "ls"},
		{"type": "send_ascii", "send_ascii": []int{'l', 's', ' ', 'x', 13, 'r', 'm', ' ', 'y', 13}},
		{"type": "send_ascii", "send_ascii": []int{'l', 's', 1, 'r', 'm', 13}},
		{"type": "send_specials", "send_specials": []string{"Enter", "Key-up", "Enter"}},
		{"type": "send_text", "send_text": "ls !-1", "submit": true},
	} {
		r, _ := e.bash(a, 5)
		wantDenied(t, r, fmt.Sprint(a), "")
	}
}
