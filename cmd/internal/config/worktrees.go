package config

import (
	"flag"
	"fmt"
	"io"

	"winx/guardian/wire"
)

// CommandWorktrees is `winx worktrees`: the managed git worktrees of a
// repository (no guardian is involved).
const CommandWorktrees = "worktrees"

// Worktree actions of `winx worktrees`.
const (
	WorktreesList    = "list"
	WorktreesChanges = "changes"
	WorktreesRemove  = "remove"
)

// worktreesUsage is the command line of `winx worktrees`.
const worktreesUsage = "winx worktrees [--workspace DIR] [list | changes NAME | remove NAME [--force]]"

// Worktrees is `winx worktrees`.
type Worktrees struct {
	Workspace string // --workspace; "" means the working directory
	Action    string // WorktreesList (default), WorktreesChanges or WorktreesRemove
	Name      string // the task name of changes and remove
	Force     bool   // --force: remove despite uncommitted changes
	StateDir  string // where the worktrees are managed; "" when HOME and XDG_STATE_HOME are unset
}

// loadWorktrees parses `winx worktrees`; flags may follow the action and
// its name.
func loadWorktrees(args []string, getenv func(string) string, stderr io.Writer) (Worktrees, error) {
	w := Worktrees{StateDir: wire.StateDir(getenv)}
	fs := flag.NewFlagSet("winx "+CommandWorktrees, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&w.Workspace, "workspace", "", "a path inside the repository (default: the working directory)")
	fs.BoolVar(&w.Force, "force", false, "remove even with uncommitted changes or untracked files")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage:", worktreesUsage)
		printDefaults(fs)
	}
	var rest []string
	for next := args; ; {
		if err := parseFlags(fs, next); err != nil {
			return w, err
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		next = fs.Args()[1:]
	}
	w.Action = WorktreesList
	if len(rest) > 0 {
		w.Action = rest[0]
	}
	ok := false
	switch w.Action {
	case WorktreesList:
		ok = len(rest) <= 1 && !w.Force
	case WorktreesChanges:
		ok = len(rest) == 2 && !w.Force
	case WorktreesRemove:
		ok = len(rest) == 2
	}
	if !ok {
		fs.Usage()
		return w, ErrUsage
	}
	if len(rest) == 2 {
		w.Name = rest[1]
	}
	return w, nil
}
