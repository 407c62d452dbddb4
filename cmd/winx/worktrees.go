package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"winx/cmd/internal/config"
	wspace "winx/mcp/workspace"
)

// runWorktrees is `winx worktrees`: the operator's view of the managed
// worktrees, served by the same workspace service as Initialize's
// worktree_action, in plain text.
func runWorktrees(ctx context.Context, c config.Worktrees, stdout io.Writer) error {
	dir := c.Workspace
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	svc := &wspace.Worktrees{StateDir: c.StateDir}
	switch c.Action {
	case config.WorktreesChanges:
		ch, err := svc.Changes(ctx, dir, c.Name, wspace.DefaultChangesTokens)
		if err != nil {
			return worktreesError(err)
		}
		_, err = io.WriteString(stdout, ch.Text)
		return err
	case config.WorktreesRemove:
		wt, err := svc.Remove(ctx, dir, c.Name, c.Force)
		if err != nil {
			return worktreesError(err)
		}
		if wt.BranchDeleted {
			_, err = fmt.Fprintf(stdout, "undid the interrupted creation of worktree %s (%s); branch %s had no commits of its own and is deleted\n", wt.Name, wt.Path, wt.Branch)
			return err
		}
		_, err = fmt.Fprintf(stdout, "removed worktree %s (%s); branch %s is kept\n", wt.Name, wt.Path, wt.Branch)
		return err
	}
	list, err := svc.List(ctx, dir)
	if err != nil {
		return worktreesError(err)
	}
	if len(list) == 0 {
		_, err = fmt.Fprintln(stdout, "no managed worktrees for this repository")
		return err
	}
	for _, wt := range list {
		base := wt.Base[:min(len(wt.Base), 12)]
		if base == "" {
			base = "unknown"
		}
		if _, err := fmt.Fprintf(stdout, "%s\t%s\t%s\tbase %s\t%s\n", wt.Name, wt.State, wt.Branch, base, wt.Path); err != nil {
			return err
		}
	}
	return nil
}

// worktreesError adds what the operator can do to a refusal.
func worktreesError(err error) error {
	switch {
	case errors.Is(err, wspace.ErrWorktreeDirty):
		return fmt.Errorf("winx worktrees: %w; commit them, or pass --force to discard them", err)
	case errors.Is(err, wspace.ErrNotRepository):
		return fmt.Errorf("winx worktrees: %w; pass --workspace with a path inside the repository", err)
	}
	return fmt.Errorf("winx worktrees: %w", err)
}
