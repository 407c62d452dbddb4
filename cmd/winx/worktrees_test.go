package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorktreesThroughBinary: the built winx makes a managed worktree
// through Initialize over stdio, and `winx worktrees` (the same binary, as
// the operator runs it) lists it, shows its changes and removes it.
func TestWorktreesThroughBinary(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state) // the server and the operator command share it
	repo, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gitEnv := append(os.Environ(), "GIT_AUTHOR_NAME=winx", "GIT_AUTHOR_EMAIL=winx@example.invalid",
		"GIT_COMMITTER_NAME=winx", "GIT_COMMITTER_EMAIL=winx@example.invalid", "GIT_CONFIG_NOSYSTEM=1")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = repo, gitEnv
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if err := os.WriteFile(filepath.Join(repo, "main.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "init")

	c := startStdio(t)
	args, _ := json.Marshal(map[string]any{"any_workspace_path": repo, "worktree": "bin-task"})
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Initialize","arguments":` + string(args) + `,` + modernMeta + `}}`)
	m := c.recv()
	var res struct {
		IsError    bool `json:"isError"`
		Structured struct {
			Output string `json:"output"`
			Data   struct {
				WorkspaceRoot string `json:"workspace_root"`
				ThreadID      string `json:"thread_id"`
				Worktree      struct {
					Path, Branch string
				} `json:"worktree"`
			} `json:"data"`
		} `json:"structuredContent"`
	}
	raw, _ := json.Marshal(m["result"])
	if err := json.Unmarshal(raw, &res); err != nil || res.IsError {
		t.Fatalf("Initialize with a worktree = %s (%v)", raw, err)
	}
	wt := res.Structured.Data.Worktree
	if wt.Branch != "winx/bin-task" || res.Structured.Data.WorkspaceRoot != wt.Path || !strings.HasPrefix(wt.Path, filepath.Join(state, "winx", "worktrees")+"/") {
		t.Fatalf("worktree %+v, root %s; want winx/bin-task under the state directory", wt, res.Structured.Data.WorkspaceRoot)
	}

	winx := func(args ...string) (string, int) {
		t.Helper()
		out, err := exec.Command(buildWinx(t), args...).CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	out, code := winx("worktrees", "--workspace", repo)
	if code != 0 || !strings.Contains(out, "bin-task\tclean\twinx/bin-task\t") || !strings.Contains(out, wt.Path) {
		t.Errorf("winx worktrees = %d %q, want bin-task listed clean", code, out)
	}
	// The worktree lies under the state directory, which file tools
	// refuse; the managed worktrees stay usable.
	edit, _ := json.Marshal(map[string]any{"thread_id": res.Structured.Data.ThreadID, "workspace_root": wt.Path,
		"files": []any{map[string]any{"file_path": filepath.Join(wt.Path, "new.txt"), "mode": "replace", "content": "x\n"}}})
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"EditFiles","arguments":` + string(edit) + `,` + modernMeta + `}}`)
	if raw, _ := json.Marshal(c.recv()["result"]); strings.Contains(string(raw), `"isError":true`) {
		t.Fatalf("EditFiles in the worktree = %s", raw)
	}
	if out, code = winx("worktrees", "--workspace", repo, "changes", "bin-task"); code != 0 || !strings.Contains(out, "?? new.txt (untracked)") {
		t.Errorf("winx worktrees changes = %d %q", code, out)
	}
	if out, code = winx("worktrees", "remove", "bin-task", "--workspace", repo); code != 1 || !strings.Contains(out, "--force") {
		t.Errorf("winx worktrees remove of a dirty worktree = %d %q, want a refusal naming --force", code, out)
	}
	if out, code = winx("worktrees", "remove", "bin-task", "--force", "--workspace", repo); code != 0 || !strings.Contains(out, "branch winx/bin-task is kept") {
		t.Errorf("winx worktrees remove --force = %d %q", code, out)
	}
	if out, code = winx("worktrees", "--workspace", repo, "list"); code != 0 || !strings.Contains(out, "no managed worktrees") {
		t.Errorf("winx worktrees after removal = %d %q", code, out)
	}
	if _, code = winx("worktrees", "prune"); code != 2 {
		t.Errorf("winx worktrees prune exit %d, want 2 (usage)", code)
	}
	if help, _ := winx("--help"); !strings.Contains(help, "\n  worktrees ") {
		t.Errorf("winx --help does not list worktrees:\n%s", help)
	}
	if st := git("status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("main checkout changed: %q", st)
	}
}
