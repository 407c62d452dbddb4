package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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

// TestWorktreesAfterKilledAdapter: the built winx is SIGKILLed while its
// Initialize makes a worktree (its git slowed down by a wrapper first in
// PATH that announces itself on a FIFO and pauses 0-200 ms before and
// after the real git, so the kill lands in or around `git worktree add`).
// Then `winx worktrees remove` of the name leaves nothing of it, or a new
// winx's Initialize of the name answers a proper worktree on its branch.
func TestWorktreesAfterKilledAdapter(t *testing.T) {
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	repo, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gitEnv := append(os.Environ(), "GIT_AUTHOR_NAME=winx", "GIT_AUTHOR_EMAIL=winx@example.invalid",
		"GIT_COMMITTER_NAME=winx", "GIT_COMMITTER_EMAIL=winx@example.invalid", "GIT_CONFIG_NOSYSTEM=1")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(realGit, args...)
		cmd.Dir, cmd.Env = repo, gitEnv
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	for i := range 600 { // a checkout that takes a while
		p := filepath.Join(repo, "d"+strconv.Itoa(i%20), strconv.Itoa(i)+".txt")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "init")
	head := strings.TrimSpace(git("rev-parse", "HEAD"))

	bin, fifo := t.TempDir(), filepath.Join(t.TempDir(), "calls")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ff, err := os.OpenFile(fifo, os.O_RDWR, 0) // never a writer without a reader
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ff.Close() })
	calls := make(chan string, 256)
	go func() {
		for sc := bufio.NewScanner(ff); sc.Scan(); {
			calls <- sc.Text()
		}
	}()
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >'" + fifo + "'\n" +
		"pause() { n=$(od -An -N1 -tu1 /dev/urandom | tr -d ' '); sleep \"0.$(printf %03d $((n * 200 / 255)))\"; }\n" +
		"pause\n'" + realGit + "' \"$@\"\nrc=$?\npause\nexit $rc\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	path := os.Getenv("PATH")
	initialize := func(c *stdioClient, name string) {
		args, _ := json.Marshal(map[string]any{"any_workspace_path": repo, "worktree": name})
		c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Initialize","arguments":` + string(args) + `,` + modernMeta + `}}`)
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
	for i := range 4 {
		name := "killed-" + strconv.Itoa(i)
		for len(calls) > 0 {
			<-calls
		}
		t.Setenv("PATH", bin+string(os.PathListSeparator)+path)
		c := startStdio(t)
		t.Setenv("PATH", path)
		initialize(c, name)
		select {
		case <-func() chan struct{} {
			seen := make(chan struct{})
			go func() {
				for call := range calls {
					if strings.Contains(call, "worktree add") {
						close(seen)
						return
					}
				}
			}()
			return seen
		}():
		case <-time.After(30 * time.Second):
			t.Fatalf("run %d: winx never ran git worktree add", i)
		}
		time.Sleep(time.Duration(rand.IntN(350)) * time.Millisecond) // the fault's timing
		c.cmd.Process.Kill()
		c.cmd.Wait()

		if i%2 == 0 {
			out, code := winx("worktrees", "--workspace", repo, "remove", name)
			if code != 0 && !strings.Contains(out, "no such managed worktree") {
				t.Errorf("run %d: winx worktrees remove after the kill = %d %q", i, code, out)
			}
			// The killed git may still have been finishing when remove
			// waited for it; afterwards nothing of the name is left.
			if got := git("branch", "--list", "winx/"+name); got != "" && !strings.Contains(out, "branch winx/"+name+" is kept") {
				t.Errorf("run %d: branch left after remove (%q): %q", i, out, got)
			}
			if got := git("worktree", "list", "--porcelain"); strings.Contains(got, "/"+name+"\n") {
				t.Errorf("run %d: registration left after remove (%q):\n%s", i, out, got)
			}
			continue
		}
		c = startStdio(t)
		initialize(c, name)
		var res struct {
			IsError    bool `json:"isError"`
			Structured struct {
				Output string `json:"output"`
				Data   struct {
					Worktree struct{ Path, Branch, Base string } `json:"worktree"`
				} `json:"data"`
			} `json:"structuredContent"`
		}
		raw, _ := json.Marshal(c.recv()["result"])
		if err := json.Unmarshal(raw, &res); err != nil || res.IsError {
			t.Errorf("run %d: Initialize after the kill = %s (%v)", i, raw, err)
			continue
		}
		wt := res.Structured.Data.Worktree
		if wt.Branch != "winx/"+name || wt.Base != head {
			t.Errorf("run %d: worktree %+v, want winx/%s at %s", i, wt, name, head)
		}
		list := git("worktree", "list", "--porcelain")
		if !strings.Contains(list, "worktree "+wt.Path+"\nHEAD "+head+"\nbranch refs/heads/winx/"+name+"\n\n") {
			t.Errorf("run %d: %s is not a plain registered worktree:\n%s", i, wt.Path, list)
		}
		if got, _ := filepath.Glob(filepath.Join(state, "winx", "worktree-meta", "*", name+".intent")); len(got) != 0 {
			t.Errorf("run %d: intent left: %v", i, got)
		}
	}
}
