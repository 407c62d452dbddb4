package tools

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"winx/guardian/runtime"
	"winx/mcp"
	"winx/mcp/mcptest"
	"winx/mcp/session"
	wspace "winx/mcp/workspace"
)

// worktreeEnv is a server over embedded sessions whose shells can commit
// (author and committer from the environment, HOME a temp dir), a
// repository with one commit, and a client.
type worktreeEnv struct {
	readOnly *mcptest.Client // a caller with the read-only profile
	confined *mcptest.Client // a caller whose allowed_roots hold only the repository
	t        *testing.T
	client   *mcptest.Client
	repo     string
	stateDir string
	gitEnv   []string
}

func newWorktreeEnv(t *testing.T) *worktreeEnv {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	home := t.TempDir()
	gitEnv := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "LANG=C.UTF-8", "PATH=" + os.Getenv("PATH"),
		"GIT_AUTHOR_NAME=winx", "GIT_AUTHOR_EMAIL=winx@example.invalid", "GIT_COMMITTER_NAME=winx", "GIT_COMMITTER_EMAIL=winx@example.invalid",
		"GIT_CONFIG_NOSYSTEM=1"}
	sessions := session.NewSessions(runtime.Embedded(runtime.Options{BaseEnv: gitEnv}), time.Now)
	t.Cleanup(func() { sessions.Close() })
	e := &worktreeEnv{t: t, repo: canon(t, t.TempDir()), stateDir: t.TempDir(), gitEnv: gitEnv}
	reg := NewRegistry(Options{Build: "test", Transport: "http", Sessions: sessions, ScratchRoot: t.TempDir(), StateDir: e.stateDir})
	srv := mcp.NewServer(mcp.Implementation{Name: "winx", Version: "test"}, reg, nil)
	e.client = &mcptest.Client{Handler: mcp.NewHTTPHandler(srv, &mcp.HTTPOptions{Auth: principalAuth("p")})}
	e.readOnly = &mcptest.Client{Handler: mcp.NewHTTPHandler(srv, &mcp.HTTPOptions{Auth: profileAuth{"r", ProfileFor("read-only", nil)}})}
	e.confined = &mcptest.Client{Handler: mcp.NewHTTPHandler(srv, &mcp.HTTPOptions{Auth: rootsAuth{"c", []string{e.repo}}})}
	writeFile(t, filepath.Join(e.repo, "main.txt"), "one\n")
	e.git("init", "-q", "-b", "main")
	e.git("add", ".")
	e.git("commit", "-q", "-m", "init")
	return e
}

func (e *worktreeEnv) git(args ...string) string {
	e.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = e.repo, e.gitEnv
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// worktreeCall is an Initialize with the repository and args.
func (e *worktreeEnv) worktreeCall(args map[string]any) *toolResult {
	e.t.Helper()
	if _, ok := args["any_workspace_path"]; !ok {
		args["any_workspace_path"] = e.repo
	}
	b := &bashEnv{t: e.t, client: e.client}
	return b.call(InitializeTool, args)
}

// session starts (or reattaches) the session of worktree name.
func (e *worktreeEnv) session(name string) (*bashEnv, initializeData) {
	e.t.Helper()
	r := e.worktreeCall(map[string]any{"worktree": name})
	var d initializeData
	if err := json.Unmarshal(r.Structured.Data, &d); err != nil || r.IsError || d.Worktree == nil {
		e.t.Fatalf("Initialize worktree %s = %s (%v)", name, r.Structured.Output, err)
	}
	return &bashEnv{t: e.t, client: e.client, root: d.WorkspaceRoot, thread: d.ThreadID}, d
}

func TestWorktreeTwoSessions(t *testing.T) {
	e := newWorktreeEnv(t)
	head := strings.TrimSpace(e.git("rev-parse", "HEAD"))
	alpha, ad := e.session("alpha")
	beta, bd := e.session("beta")
	if ad.WorkspaceRoot == bd.WorkspaceRoot || ad.SessionID == bd.SessionID || ad.ShellPID == bd.ShellPID {
		t.Fatalf("two worktrees share a session: %+v %+v", ad, bd)
	}
	for _, d := range []initializeData{ad, bd} {
		wt := d.Worktree
		if d.WorkspaceRoot != wt.Path || wt.Base != head || wt.Branch != "winx/"+wt.Name || wt.Repo != e.repo ||
			!strings.HasPrefix(wt.Path, canon(t, e.stateDir)+"/worktrees/") || d.Cwd != wt.Path {
			t.Errorf("worktree session %+v, worktree %+v; want bound to the managed worktree at base %s", d, wt, head)
		}
	}

	// Alpha: a file written by EditFiles and committed by a command.
	if r, d := alpha.edit(map[string]any{"files": []any{map[string]any{"file_path": filepath.Join(alpha.root, "alpha.txt"), "mode": "replace", "content": "from alpha\n"}}}); !d.EditApplied {
		t.Fatalf("alpha edit: %s", r.Structured.Output)
	}
	if r, d := alpha.bash(cmd("git add alpha.txt && git commit -q -m alpha-commit && git log --oneline | wc -l"), 20); d.ExitCode == nil || *d.ExitCode != 0 || !strings.Contains(output(r), "2") {
		t.Fatalf("alpha commit: %s", r.Structured.Output)
	}
	// Beta: an uncommitted edit and an untracked file.
	if r, d := beta.edit(map[string]any{"files": []any{map[string]any{"file_path": filepath.Join(beta.root, "beta.txt"), "mode": "replace", "content": "from beta\n"}}}); !d.EditApplied {
		t.Fatalf("beta edit: %s", r.Structured.Output)
	}
	if r, d := beta.bash(cmd("echo two >> main.txt && pwd"), 20); d.ExitCode == nil || *d.ExitCode != 0 || !strings.Contains(output(r), beta.root) {
		t.Fatalf("beta command: %s", r.Structured.Output)
	}

	changes := func(name string) string {
		r := e.worktreeCall(map[string]any{"worktree": name, "worktree_action": "changes"})
		if r.IsError || r.Structured.Status != "completed" {
			t.Fatalf("changes %s: %s", name, r.Structured.Output)
		}
		return r.Structured.Output
	}
	a, b := changes("alpha"), changes("beta")
	for _, want := range []string{"alpha-commit", "A alpha.txt +1 -0", "1 commit(s); 1 file(s) changed"} {
		if !strings.Contains(a, want) {
			t.Errorf("alpha changes lack %q:\n%s", want, a)
		}
	}
	for _, want := range []string{"0 commit(s); 2 file(s) changed", "M main.txt +1 -0", "?? beta.txt (untracked)"} {
		if !strings.Contains(b, want) {
			t.Errorf("beta changes lack %q:\n%s", want, b)
		}
	}
	if strings.Contains(a, "beta") || strings.Contains(a, "main.txt") || strings.Contains(b, "alpha") {
		t.Errorf("changes mix the worktrees:\n%s\n%s", a, b)
	}

	// A repeated first_call reattaches to the same worktree and shell.
	_, again := e.session("alpha")
	if !again.Reattached || again.ShellPID != ad.ShellPID || again.Worktree.Path != ad.Worktree.Path {
		t.Errorf("second first_call for alpha = %+v, want the same session", again)
	}

	r := e.worktreeCall(map[string]any{"worktree_action": "list"})
	var ld worktreeData
	json.Unmarshal(r.Structured.Data, &ld)
	states := map[string]string{}
	for _, wt := range ld.Worktrees {
		states[wt.Name] = wt.State
	}
	if len(states) != 2 || states["alpha"] != wspace.WorktreeClean || states["beta"] != wspace.WorktreeDirty {
		t.Errorf("list = %v\n%s", states, r.Structured.Output)
	}

	// Removal: refused with uncommitted changes, forced works, clean works.
	r = e.worktreeCall(map[string]any{"worktree": "beta", "worktree_action": "remove"})
	if !r.IsError || r.Structured.ErrorCode != codeWorktreeDirty || !strings.Contains(r.Structured.Output, "force") {
		t.Errorf("remove dirty beta = %s %s", r.Structured.ErrorCode, r.Structured.Output)
	}
	if _, err := os.Stat(filepath.Join(beta.root, "beta.txt")); err != nil {
		t.Fatalf("a refused removal lost beta.txt: %v", err)
	}
	for _, args := range []map[string]any{
		{"worktree": "beta", "worktree_action": "remove", "force": true},
		{"worktree": "alpha", "worktree_action": "remove"},
	} {
		r = e.worktreeCall(args)
		if r.IsError || !strings.Contains(r.Structured.Output, "is kept") || !strings.Contains(r.Structured.Output, "Ended 1 session(s) bound to it") {
			t.Errorf("remove %v = %s", args, r.Structured.Output)
		}
	}
	for _, p := range []string{alpha.root, beta.root} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s still exists: %v", p, err)
		}
	}
	// The sessions ended with their worktrees: no shell goes on in a
	// deleted directory, and the thread must initialize again.
	for _, d := range []initializeData{ad, bd} {
		deadline := time.Now().Add(10 * time.Second)
		for syscall.Kill(d.ShellPID, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if syscall.Kill(d.ShellPID, 0) == nil {
			t.Errorf("the shell %d of a removed worktree still runs", d.ShellPID)
		}
	}
	if r, _ := alpha.bash(cmd("pwd"), 5); r.Structured.Status != "needs_initialize" {
		t.Errorf("a command on a removed worktree's thread = %s %s", r.Structured.Status, r.Structured.Output)
	}
	if got := e.git("branch", "--list", "winx/*"); !strings.Contains(got, "winx/alpha") || !strings.Contains(got, "winx/beta") {
		t.Errorf("branches not kept: %q", got)
	}

	// The main checkout is untouched.
	if st := e.git("status", "--porcelain", "--untracked-files=all", "--ignored"); st != "" {
		t.Errorf("main checkout changed: %q", st)
	}
	entries, _ := os.ReadDir(e.repo)
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
	}
	if !slices.Equal(names, []string{".git", "main.txt"}) {
		t.Errorf("main checkout holds %v", names)
	}
}

func TestWorktreeInitializeRefusals(t *testing.T) {
	e := newWorktreeEnv(t)
	notRepo := t.TempDir()
	for _, tc := range []struct {
		name string
		args map[string]any
		code string
	}{
		{"bad name", map[string]any{"worktree": "../escape"}, codeInvalidToolInput},
		{"option name", map[string]any{"worktree": "-b"}, codeInvalidToolInput},
		{"lock name", map[string]any{"worktree": "a.lock"}, codeInvalidToolInput},
		{"not a repository", map[string]any{"worktree": "a", "any_workspace_path": notRepo}, codeInvalidToolInput},
		{"list outside a repository", map[string]any{"worktree_action": "list", "any_workspace_path": notRepo}, codeInvalidToolInput},
		{"no path", map[string]any{"worktree": "a", "any_workspace_path": ""}, codeInvalidToolInput},
		{"bad base", map[string]any{"worktree": "a", "worktree_base": "--orphan"}, codeInvalidToolInput},
		{"unknown action", map[string]any{"worktree": "a", "worktree_action": "prune"}, codeInvalidToolInput},
		{"changes without a name", map[string]any{"worktree_action": "changes"}, codeInvalidToolInput},
		{"force without remove", map[string]any{"worktree": "a", "force": true}, codeInvalidToolInput},
		{"other type", map[string]any{"worktree": "a", "type": "reset_shell"}, codeInvalidToolInput},
		{"unknown worktree", map[string]any{"worktree": "nope", "worktree_action": "changes"}, codeWorktreeNotFound},
	} {
		r := e.worktreeCall(tc.args)
		if !r.IsError || r.Structured.ErrorCode != tc.code {
			t.Errorf("%s: errorCode %q (%s), want %q", tc.name, r.Structured.ErrorCode, r.Structured.Output, tc.code)
		}
	}
	e.git("branch", "winx/mine")
	if r := e.worktreeCall(map[string]any{"worktree": "mine"}); !r.IsError || r.Structured.ErrorCode != codeWorktreeConflict {
		t.Errorf("worktree over the user's branch: %q %s", r.Structured.ErrorCode, r.Structured.Output)
	}
	if entries, _ := os.ReadDir(filepath.Join(e.stateDir, "worktrees")); len(entries) > 1 {
		t.Errorf("refused calls left worktrees: %v", entries)
	}
	if st := e.git("status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("main checkout changed: %q", st)
	}
}

// profileAuth lets every request in as one principal with one profile.
type profileAuth struct {
	principal string
	profile   mcp.Profile
}

func (p profileAuth) Authenticate(*http.Request) (mcp.Caller, error) {
	return mcp.Caller{Principal: p.principal, Profile: p.profile}, nil
}

// A caller whose profile writes nothing may list worktrees and see their
// changes, but neither make nor remove one.
func TestWorktreeReadOnlyProfile(t *testing.T) {
	e := newWorktreeEnv(t)
	e.session("kept")
	ro := &bashEnv{t: t, client: e.readOnly}
	for _, args := range []map[string]any{
		{"worktree": "made"},
		{"worktree": "kept", "worktree_action": "remove", "force": true},
	} {
		args["any_workspace_path"] = e.repo
		if r := ro.call(InitializeTool, args); !r.IsError || r.Structured.ErrorCode != codeFileOperationDenied {
			t.Errorf("read-only %v: errorCode %q (%s), want %q", args, r.Structured.ErrorCode, r.Structured.Output, codeFileOperationDenied)
		}
	}
	for _, action := range []string{"list", "changes"} {
		r := ro.call(InitializeTool, map[string]any{"worktree": "kept", "worktree_action": action, "any_workspace_path": e.repo})
		if r.IsError {
			t.Errorf("read-only %s: %s", action, r.Structured.Output)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(e.stateDir, "worktrees")); len(entries) != 1 {
		t.Fatalf("worktree dirs = %v", entries)
	}
	if got := e.git("branch", "--list", "winx/*"); strings.Contains(got, "made") || !strings.Contains(got, "kept") {
		t.Errorf("branches after the read-only calls: %q", got)
	}
}

// rootsAuth lets every request in as one principal confined to roots.
type rootsAuth struct {
	principal string
	roots     []string
}

func (p rootsAuth) Authenticate(*http.Request) (mcp.Caller, error) {
	return mcp.Caller{Principal: p.principal, Roots: p.roots, Profile: mcp.FullProfile()}, nil
}

// A first_call with worktree that the call then refuses (the worktree lies
// outside the caller's allowed_roots, the mode is invalid, the thread is
// bound elsewhere) must be refused before git runs: otherwise each try
// leaves a branch winx/<name> and a full checkout in the state directory,
// and a caller can fill the disk with calls that all fail.
func TestWorktreeRefusedCallLeavesNothing(t *testing.T) {
	e := newWorktreeEnv(t)
	// Thread "bound" works in the main checkout.
	if r := e.worktreeCall(map[string]any{"thread_id": "bound"}); r.IsError {
		t.Fatalf("first_call in the repository: %s", r.Structured.Output)
	}
	for _, tc := range []struct {
		name   string
		client *mcptest.Client
		args   map[string]any
		status mcp.Status
		code   string
	}{
		{"outside allowed_roots", e.confined, map[string]any{"worktree": "roots"}, mcp.StatusDenied, codeFileOperationDenied},
		{"unknown mode", e.client, map[string]any{"worktree": "mode", "mode_name": "root"}, mcp.StatusInvalidInput, codeInvalidToolInput},
		{"code_writer without config", e.client, map[string]any{"worktree": "cw", "mode_name": ModeCodeWriter}, mcp.StatusInvalidInput, codeInvalidToolInput},
		{"thread bound elsewhere", e.client, map[string]any{"worktree": "thread", "thread_id": "bound"}, mcp.StatusConflict, codeWorkspaceAlreadyBound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.args["any_workspace_path"] = e.repo
			for range 3 {
				r := (&bashEnv{t: t, client: tc.client}).call(InitializeTool, tc.args)
				if !r.IsError || r.Structured.Status != string(tc.status) || r.Structured.ErrorCode != tc.code {
					t.Fatalf("Initialize %v = %s %q (%s), want %s %q", tc.args, r.Structured.Status, r.Structured.ErrorCode, r.Structured.Output, tc.status, tc.code)
				}
			}
			name := tc.args["worktree"].(string)
			if got := e.git("branch", "--list", "winx/*"); got != "" {
				t.Errorf("a refused call left branches: %q", got)
			}
			if got := e.git("worktree", "list", "--porcelain"); strings.Count(got, "worktree ") != 1 {
				t.Errorf("a refused call left worktrees:\n%s", got)
			}
			for _, pattern := range []string{
				filepath.Join(e.stateDir, "worktrees", "*", name),
				filepath.Join(e.stateDir, "worktree-meta", "*", name+".json"),
			} {
				if got, _ := filepath.Glob(pattern); len(got) != 0 {
					t.Errorf("a refused call left %v", got)
				}
			}
		})
	}
	// The same worktree, admitted, is made: the refusals were the call's.
	if _, d := e.session("mode"); d.Worktree.Repo != e.repo || !strings.Contains(e.git("branch", "--list", "winx/*"), "winx/mode") {
		t.Errorf("an admitted call = %+v", d.Worktree)
	}
}
