package config

import (
	"errors"
	"io"
	"testing"
)

func TestLoadWorktrees(t *testing.T) {
	env := []string{"XDG_STATE_HOME=/st"}
	for _, tc := range []struct {
		args []string
		want Worktrees
	}{
		{[]string{"worktrees"}, Worktrees{Action: WorktreesList, StateDir: "/st/winx"}},
		{[]string{"worktrees", "--workspace", "/r", "list"}, Worktrees{Workspace: "/r", Action: WorktreesList, StateDir: "/st/winx"}},
		{[]string{"worktrees", "changes", "t1", "--workspace=/r"}, Worktrees{Workspace: "/r", Action: WorktreesChanges, Name: "t1", StateDir: "/st/winx"}},
		{[]string{"worktrees", "remove", "t1", "--force"}, Worktrees{Action: WorktreesRemove, Name: "t1", Force: true, StateDir: "/st/winx"}},
	} {
		a, err := LoadAdapter(tc.args, env, testCatalog, io.Discard)
		if err != nil || a.Command != CommandWorktrees || a.Worktree != tc.want {
			t.Errorf("LoadAdapter(%q) = %+v, %v; want %+v", tc.args, a, err, tc.want)
		}
	}
	for _, args := range [][]string{
		{"worktrees", "prune"}, {"worktrees", "changes"}, {"worktrees", "remove"}, {"worktrees", "list", "x"},
		{"worktrees", "changes", "a", "b"}, {"worktrees", "list", "--force"}, {"worktrees", "--bogus"},
	} {
		if _, err := LoadAdapter(args, env, testCatalog, io.Discard); !errors.Is(err, ErrUsage) {
			t.Errorf("LoadAdapter(%q) = %v, want a usage error", args, err)
		}
	}
}
