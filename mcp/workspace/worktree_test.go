package workspace

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// worktreeRepo is a repository with one commit and a post-checkout hook that
// leaves a marker file, plus the state directory of a worktree service.
func worktreeRepo(t *testing.T) (repoDir, marker string, w *Worktrees) {
	t.Helper()
	needGit(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repoDir, marker = filepath.Join(base, "my repo"), filepath.Join(base, "hook-ran")
	writeFile(t, filepath.Join(repoDir, "main.txt"), "one\n")
	git(t, repoDir, "init", "-q")
	git(t, repoDir, "add", ".")
	git(t, repoDir, "commit", "-q", "-m", "init")
	hook := filepath.Join(repoDir, ".git", "hooks", "post-checkout")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\n: > '"+marker+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return repoDir, marker, &Worktrees{StateDir: filepath.Join(base, "state")}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, gitEnv()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

func TestValidWorktreeName(t *testing.T) {
	good := []string{"a", "fix-login", "v1.2_x", "A.b-c", strings.Repeat("x", MaxWorktreeName)}
	bad := []string{"", ".hidden", "-opt", "a..b", "x.lock", "x.", "a/b", "a b", "a\x00", "ä", "$(id)", "a;b",
		strings.Repeat("x", MaxWorktreeName+1), "..", "@{-1}", "a\\b", "HEAD~1", "x:y", "*"}
	for _, n := range good {
		if err := ValidWorktreeName(n); err != nil {
			t.Errorf("ValidWorktreeName(%q) = %v, want nil", n, err)
		}
	}
	for _, n := range bad {
		if err := ValidWorktreeName(n); !errors.Is(err, ErrWorktreeName) {
			t.Errorf("ValidWorktreeName(%q) = %v, want ErrWorktreeName", n, err)
		}
	}
}

func TestWorktreeLifecycle(t *testing.T) {
	ctx := context.Background()
	repoDir, marker, w := worktreeRepo(t)
	head := strings.TrimSpace(gitOut(t, repoDir, "rev-parse", "HEAD"))

	wt, created, err := w.Create(ctx, repoDir, "task-a", "")
	if err != nil || !created {
		t.Fatalf("Create = %+v, %v, %v", wt, created, err)
	}
	wantDir := filepath.Join(w.StateDir, "worktrees")
	if !strings.HasPrefix(wt.Path, wantDir+"/my repo-") || filepath.Base(wt.Path) != "task-a" {
		t.Errorf("path %s, want under %s/my repo-<hash>/task-a", wt.Path, wantDir)
	}
	if wt.Branch != "winx/task-a" || wt.Base != head || wt.BaseRef != "HEAD" || wt.Repo != repoDir {
		t.Errorf("worktree %+v, want branch winx/task-a base %s", wt, head)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the repository's post-checkout hook ran")
	}
	for _, d := range []string{wt.Path, filepath.Dir(wt.Path)} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want a 0700 directory", d, fi, err)
		}
	}
	if _, err := os.Stat(filepath.Join(wt.Path, "main.txt")); err != nil {
		t.Errorf("checkout: %v", err)
	}
	// Reattach: the same worktree, no second add; from inside it too.
	again, created, err := w.Create(ctx, wt.Path, "task-a", "")
	if err != nil || created || again.Path != wt.Path || again.Base != head {
		t.Errorf("second Create = %+v, %v, %v; want the same worktree", again, created, err)
	}

	// Changes: a commit, an unstaged edit and an untracked file.
	writeFile(t, filepath.Join(wt.Path, "new.txt"), "a\nb\n")
	git(t, wt.Path, "add", "new.txt")
	git(t, wt.Path, "commit", "-q", "-m", "add new")
	writeFile(t, filepath.Join(wt.Path, "main.txt"), "one\ntwo\n")
	writeFile(t, filepath.Join(wt.Path, "scratch.txt"), "x\n")
	c, err := w.Changes(ctx, repoDir, "task-a", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"add new", "A new.txt +2 -0", "M main.txt +1 -0", "?? scratch.txt (untracked)", "1 commit(s); 3 file(s) changed, +3 -0, 1 untracked"} {
		if !strings.Contains(c.Text, want) {
			t.Errorf("changes lack %q:\n%s", want, c.Text)
		}
	}

	list, err := w.List(ctx, repoDir)
	if err != nil || len(list) != 1 || list[0].Name != "task-a" || list[0].State != WorktreeDirty {
		t.Fatalf("List = %+v, %v; want task-a dirty", list, err)
	}

	// Removal: refused while dirty, forced works, the branch stays.
	if _, err := w.Remove(ctx, repoDir, "task-a", false); !errors.Is(err, ErrWorktreeDirty) {
		t.Fatalf("Remove dirty = %v, want ErrWorktreeDirty", err)
	}
	if _, err := os.Stat(wt.Path); err != nil {
		t.Fatalf("a refused removal removed: %v", err)
	}
	if _, err := w.Remove(ctx, repoDir, "task-a", true); err != nil {
		t.Fatalf("forced Remove: %v", err)
	}
	if _, err := os.Stat(wt.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("worktree still there: %v", err)
	}
	if got := gitOut(t, repoDir, "branch", "--list", "winx/task-a"); !strings.Contains(got, "winx/task-a") {
		t.Errorf("branch winx/task-a was not kept: %q", got)
	}
	// The kept branch is not a managed worktree any more: the name is taken.
	if _, _, err := w.Create(ctx, repoDir, "task-a", ""); !errors.Is(err, ErrWorktreeTaken) {
		t.Errorf("Create over a kept branch = %v, want ErrWorktreeTaken", err)
	}
	if _, err := w.Remove(ctx, repoDir, "task-a", false); !errors.Is(err, ErrWorktreeNotFound) {
		t.Errorf("Remove of a removed worktree = %v, want ErrWorktreeNotFound", err)
	}
	if st := gitOut(t, repoDir, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("main checkout changed: %q", st)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the repository's post-checkout hook ran")
	}
}

func TestWorktreeCleanRemoveAndBase(t *testing.T) {
	ctx := context.Background()
	repoDir, _, w := worktreeRepo(t)
	first := strings.TrimSpace(gitOut(t, repoDir, "rev-parse", "HEAD"))
	writeFile(t, filepath.Join(repoDir, "later.txt"), "later\n")
	git(t, repoDir, "add", ".")
	git(t, repoDir, "commit", "-q", "-m", "later")

	wt, _, err := w.Create(ctx, repoDir, "old", "HEAD~1")
	if err != nil || wt.Base != first || wt.BaseRef != "HEAD~1" {
		t.Fatalf("Create from HEAD~1 = %+v, %v; want base %s", wt, err, first)
	}
	if _, err := os.Stat(filepath.Join(wt.Path, "later.txt")); err == nil {
		t.Errorf("the worktree is not at its base")
	}
	for _, base := range []string{"--output=/tmp/x", "no-such-ref", "-b"} {
		if _, _, err := w.Create(ctx, repoDir, "x", base); !errors.Is(err, ErrWorktreeBase) {
			t.Errorf("Create base %q = %v, want ErrWorktreeBase", base, err)
		}
	}
	c, err := w.Changes(ctx, repoDir, "old", 0)
	if err != nil || !strings.Contains(c.Text, "No file differs from the base.") || c.Commits != 0 {
		t.Errorf("Changes of a fresh worktree = %+v, %v", c, err)
	}
	if _, err := w.Remove(ctx, repoDir, "old", false); err != nil {
		t.Errorf("clean Remove: %v", err)
	}
	if list, err := w.List(ctx, repoDir); err != nil || len(list) != 0 {
		t.Errorf("List after removal = %+v, %v", list, err)
	}
	// A branch the user made is never adopted.
	git(t, repoDir, "branch", "winx/mine")
	if _, _, err := w.Create(ctx, repoDir, "mine", ""); !errors.Is(err, ErrWorktreeTaken) {
		t.Errorf("Create over the user's branch = %v, want ErrWorktreeTaken", err)
	}
}

func TestWorktreeChangesBudget(t *testing.T) {
	ctx := context.Background()
	repoDir, _, w := worktreeRepo(t)
	wt, _, err := w.Create(ctx, repoDir, "many", "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		writeFile(t, filepath.Join(wt.Path, "dir", strings.Repeat("f", 40)+string(rune('a'+i%26))+strings.Repeat("0", i/26)+".txt"), "x\n")
	}
	c, err := w.Changes(ctx, repoDir, "many", 500)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Text) > 500*bytesPerToken || c.Omitted == 0 || !strings.Contains(c.Text, "more files\n") || c.Files != 300 {
		t.Errorf("changes of 300 files in 500 tokens: %d bytes, omitted %d, files %d:\n%s", len(c.Text), c.Omitted, c.Files, c.Text)
	}
}

func TestWorktreeNotRepository(t *testing.T) {
	needGit(t)
	w := &Worktrees{StateDir: t.TempDir()}
	if _, _, err := w.Create(context.Background(), t.TempDir(), "a", ""); !errors.Is(err, ErrNotRepository) {
		t.Errorf("Create outside a repository = %v, want ErrNotRepository", err)
	}
	if _, err := w.List(context.Background(), t.TempDir()); !errors.Is(err, ErrNotRepository) {
		t.Errorf("List outside a repository = %v, want ErrNotRepository", err)
	}
}
