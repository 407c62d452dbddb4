package session

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"winx/edit/atomicfile"
)

// Workspace resolution and identity. A workspace is a canonical directory:
// absolute, cleaned, every symlink resolved, so that two spellings of one
// project share one session.

// ResolveWorkspace turns a client's any_workspace_path into a canonical
// workspace root. An empty path creates a fresh scratch playground (0700)
// under scratchRoot and reports scratch; a file means its directory; a
// leading "~/" is the user's home. The path must be absolute and exist.
// Errors are *WorkspaceError wrapping ErrWorkspaceNotFound,
// ErrWorkspaceRelative, ErrNoScratchRoot or the file system's error.
func ResolveWorkspace(anyPath string, scratchRoot string) (root string, scratch bool, err error) {
	if anyPath == "" {
		root, err = newScratchWorkspace(scratchRoot)
		return root, err == nil, err
	}
	p := anyPath
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", false, &WorkspaceError{Path: anyPath, Err: err}
		}
		p = filepath.Join(home, p[1:])
	}
	if !filepath.IsAbs(p) {
		return "", false, &WorkspaceError{Path: anyPath, Err: ErrWorkspaceRelative}
	}
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, &WorkspaceError{Path: anyPath, Err: ErrWorkspaceNotFound}
	}
	if err != nil {
		return "", false, &WorkspaceError{Path: anyPath, Err: err}
	}
	if !fi.IsDir() {
		p = filepath.Dir(p)
	}
	root, err = CanonicalPath(p)
	if err != nil {
		return "", false, &WorkspaceError{Path: anyPath, Err: err}
	}
	return root, false, nil
}

// DefaultScratchRoot is where scratch playgrounds live:
// $XDG_STATE_HOME/winx/playground, else ~/.local/state/winx/playground
// (a relative XDG_STATE_HOME is ignored, as the XDG spec asks).
func DefaultScratchRoot() (string, error) {
	state := os.Getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(state) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("session: no state directory: %w", err)
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "winx", "playground"), nil
}

// ScratchRootOr is configured, else DefaultScratchRoot, else "" (for which
// ResolveWorkspace answers ErrNoScratchRoot when a playground is needed).
func ScratchRootOr(configured string) string {
	if configured != "" {
		return configured
	}
	root, err := DefaultScratchRoot()
	if err != nil {
		return ""
	}
	return root
}

// ScratchWorkspace is the scratch playground of principal under
// scratchRoot: one per principal, shared by every call without a workspace
// path (not one per call or thread), so those calls meet one session.
// scratchRoot is created (0700), the playground itself is not: a call
// refused after this still leaves nothing behind (MakeScratch creates it).
// Errors are *WorkspaceError wrapping ErrNoScratchRoot or the file
// system's error.
func ScratchWorkspace(scratchRoot, principal string) (string, error) {
	if scratchRoot == "" || !filepath.IsAbs(scratchRoot) {
		return "", &WorkspaceError{Path: scratchRoot, Err: ErrNoScratchRoot}
	}
	if err := atomicfile.MkdirPrivate(scratchRoot); err != nil {
		return "", &WorkspaceError{Path: scratchRoot, Err: err}
	}
	parent, err := CanonicalPath(scratchRoot)
	if err != nil {
		return "", &WorkspaceError{Path: scratchRoot, Err: err}
	}
	sum := sha256.Sum256([]byte("scratch\x00" + principal))
	return filepath.Join(parent, "ws-"+hex.EncodeToString(sum[:8])), nil
}

// MakeScratch creates a playground ScratchWorkspace named (0700); one that
// exists is used as it is, but never through a symbolic link.
func MakeScratch(root string) error {
	if err := atomicfile.MkdirPrivate(root); err != nil {
		return &WorkspaceError{Path: root, Err: err}
	}
	return nil
}

func newScratchWorkspace(scratchRoot string) (string, error) {
	if scratchRoot == "" || !filepath.IsAbs(scratchRoot) {
		return "", &WorkspaceError{Path: scratchRoot, Err: ErrNoScratchRoot}
	}
	if err := atomicfile.MkdirPrivate(scratchRoot); err != nil {
		return "", &WorkspaceError{Path: scratchRoot, Err: err}
	}
	dir, err := os.MkdirTemp(scratchRoot, "ws-") // MkdirTemp creates 0700
	if err != nil {
		return "", &WorkspaceError{Path: scratchRoot, Err: err}
	}
	root, err := CanonicalPath(dir)
	if err != nil {
		return "", &WorkspaceError{Path: dir, Err: err}
	}
	return root, nil
}

// CanonicalPath resolves every symlink of p and makes it absolute: the form
// workspace roots are compared and keyed in.
func CanonicalPath(p string) (string, error) {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	return filepath.Abs(r)
}
