package workspace

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// worktreeIntentFor writes an intent for name at the repository's HEAD, as
// a creation does before it makes anything.
func worktreeIntentFor(t *testing.T, w *Worktrees, repoDir, name string) (*repo, *worktreeIntent) {
	t.Helper()
	r, err := w.open(context.Background(), repoDir)
	if err != nil {
		t.Fatal(err)
	}
	head := strings.TrimSpace(gitOut(t, repoDir, "rev-parse", "HEAD"))
	in := &worktreeIntent{Name: name, Repo: r.top, Branch: WorktreeBranchPrefix + name, Base: head, BaseRef: "HEAD",
		Path: filepath.Join(r.managed, name), PID: 1, Created: time.Now().UTC()}
	if err := r.writeIntent(in); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(r.intentPath(name)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("intent %v, %v; want a 0600 file", fi, err)
	}
	return r, in
}

// A cut-off creation whose branch has since gained a commit is work winx
// did not make: Create refuses, saying what is there and what to do, and
// Remove undoes the rest but keeps the branch.
func TestWorktreeIntentBranchWithCommits(t *testing.T) {
	ctx := context.Background()
	repoDir, _, w := worktreeRepo(t)
	r, _ := worktreeIntentFor(t, w, repoDir, "worked")
	git(t, repoDir, "branch", "winx/worked")
	tree := strings.TrimSpace(gitOut(t, repoDir, "rev-parse", "HEAD^{tree}"))
	cmd := exec.Command("git", "-c", "user.name=winx", "-c", "user.email=winx@example.invalid", "commit-tree", tree, "-p", "HEAD", "-m", "work")
	cmd.Dir, cmd.Env = repoDir, gitEnv()
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	work := strings.TrimSpace(string(out))
	git(t, repoDir, "update-ref", "refs/heads/winx/worked", work)

	_, _, err = w.Create(ctx, repoDir, "worked", "")
	var we *WorktreeError
	if !errors.As(err, &we) || !errors.Is(err, ErrWorktreeTaken) ||
		!strings.Contains(we.Detail, "commits of its own") || !strings.Contains(we.Detail, "git branch -m winx/worked") || !strings.Contains(we.Detail, "was cut off") {
		t.Fatalf("Create over a worked-on branch = %v, want ErrWorktreeTaken saying what is there", err)
	}
	if got := strings.TrimSpace(gitOut(t, repoDir, "rev-parse", "winx/worked")); got != work {
		t.Fatalf("branch moved to %s, want %s", got, work)
	}
	if _, err := os.Stat(r.intentPath("worked")); err != nil {
		t.Fatalf("a refusal dropped the intent: %v", err)
	}
	wt, err := w.Remove(ctx, repoDir, "worked", false)
	if err != nil || wt.BranchDeleted || !wt.Recovered {
		t.Fatalf("Remove of the cut-off creation = %+v, %v; want undone, branch kept", wt, err)
	}
	if got := strings.TrimSpace(gitOut(t, repoDir, "rev-parse", "winx/worked")); got != work {
		t.Errorf("Remove moved the branch to %s, want %s", got, work)
	}
	if _, err := os.Stat(r.intentPath("worked")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("intent after Remove: %v", err)
	}
}

// A registration git left locked "initializing", with a partial checkout,
// on a branch still at the base: Create clears it and adds the worktree
// again onto the branch.
func TestWorktreeIntentHalfRegistered(t *testing.T) {
	ctx := context.Background()
	repoDir, marker, w := worktreeRepo(t)
	r, in := worktreeIntentFor(t, w, repoDir, "half")
	git(t, repoDir, "worktree", "add", "-b", in.Branch, "--", in.Path, in.Base)
	gitDir := strings.TrimSpace(gitOut(t, in.Path, "rev-parse", "--absolute-git-dir"))
	if err := os.WriteFile(filepath.Join(gitDir, "locked"), []byte("initializing"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(in.Path, "main.txt")); err != nil {
		t.Fatal(err)
	}
	os.Remove(marker) // the test's own add ran the hook

	if list, err := w.List(ctx, repoDir); err != nil || len(list) != 0 {
		t.Errorf("List shows a half-made worktree: %+v, %v", list, err)
	}
	wt, created, err := w.Create(ctx, repoDir, "half", "")
	if err != nil || !created || !wt.Recovered || wt.Path != in.Path || wt.Base != in.Base {
		t.Fatalf("Create over a half-made worktree = %+v, %v, %v", wt, created, err)
	}
	if left := inspectLeft(t, repoDir, w.StateDir, "half"); !left.finished() {
		t.Errorf("after recovery: %v", left)
	}
	if _, err := os.Stat(filepath.Join(wt.Path, "main.txt")); err != nil {
		t.Errorf("checkout not completed: %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the repository's post-checkout hook ran")
	}
	if _, err := os.Stat(r.intentPath("half")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("intent left: %v", err)
	}
	// Now a normal worktree: reattached, and removed keeping its branch.
	if again, created, err := w.Create(ctx, repoDir, "half", ""); err != nil || created || again.Recovered {
		t.Errorf("second Create = %+v, %v, %v; want a plain reattach", again, created, err)
	}
}
