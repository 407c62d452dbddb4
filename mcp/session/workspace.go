package tools

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Workspace resolution and identity. A workspace is a canonical directory:
// absolute, cleaned, every symlink resolved, so that two spellings of one
// project share one session.

// Sentinel errors of reading a file on behalf of a workspace.
var (
	// ErrOutsideWorkspace: the path resolves outside the workspace root.
	ErrOutsideWorkspace = errors.New("tools: path resolves outside the workspace")
	// ErrNotRegularFile: the path is a directory, device, socket or FIFO.
	ErrNotRegularFile = errors.New("tools: not a regular file")
)

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
	root, err = canonicalPath(p)
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
			return "", fmt.Errorf("tools: no state directory: %w", err)
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "winx", "playground"), nil
}

func newScratchWorkspace(scratchRoot string) (string, error) {
	if scratchRoot == "" || !filepath.IsAbs(scratchRoot) {
		return "", &WorkspaceError{Path: scratchRoot, Err: ErrNoScratchRoot}
	}
	if err := os.MkdirAll(scratchRoot, 0o700); err != nil {
		return "", &WorkspaceError{Path: scratchRoot, Err: err}
	}
	dir, err := os.MkdirTemp(scratchRoot, "ws-") // MkdirTemp creates 0700
	if err != nil {
		return "", &WorkspaceError{Path: scratchRoot, Err: err}
	}
	root, err := canonicalPath(dir)
	if err != nil {
		return "", &WorkspaceError{Path: dir, Err: err}
	}
	return root, nil
}

// canonicalPath resolves every symlink of p and makes it absolute.
func canonicalPath(p string) (string, error) {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	return filepath.Abs(r)
}

// sessionKey is the registry key of a session: the principal and the
// canonical root. A root is absolute and holds no NUL, so the last NUL
// splits the key unambiguously even if a principal contained one.
func sessionKey(principal, canonicalRoot string) string {
	return principal + "\x00" + canonicalRoot
}

// maxProjectNameLen bounds the project part of an external session id.
const maxProjectNameLen = 40

// ExternalSessionID is the id a client sees for a session:
// ws_<project>_<8 hex of sha256(principal NUL root)>, where project is the
// root's base name with every byte outside [A-Za-z0-9_] replaced by "_".
// It is already a normalized thread id, so it can serve as one.
func ExternalSessionID(principal, canonicalRoot string) string {
	base := filepath.Base(canonicalRoot)
	var name strings.Builder
	for i := 0; i < len(base) && name.Len() < maxProjectNameLen; i++ {
		if c := base[i]; isThreadIDByte(c) {
			name.WriteByte(c)
		} else {
			name.WriteByte('_')
		}
	}
	project := name.String()
	if strings.Trim(project, "_") == "" {
		project = "root"
	}
	sum := sha256.Sum256([]byte(sessionKey(principal, canonicalRoot)))
	return "ws_" + project + "_" + hex.EncodeToString(sum[:4])
}

// TempArtifactDir is a session's directory for temporary artifacts:
// <root>/.winx/tmp/session-<16 hex of sha256(sessionKey)>. It is only named
// here; whoever first writes there creates it.
func TempArtifactDir(root, sessionKey string) string {
	sum := sha256.Sum256([]byte(sessionKey))
	return filepath.Join(root, ".winx", "tmp", "session-"+hex.EncodeToString(sum[:8]))
}

// containedFile is a bounded read of a regular file inside a workspace.
type containedFile struct {
	Path      string // canonical
	Rel       string // relative to the root, slash-separated
	Size      int64
	Content   []byte // at most the limit, cut back to a complete line when truncated
	Truncated bool
	Binary    bool // holds a NUL byte; Content is then empty
}

// readContained reads at most limit bytes of p (absolute, or relative to
// root) after resolving its symlinks and checking that it stays inside root.
// Errors wrap fs.ErrNotExist, ErrOutsideWorkspace or ErrNotRegularFile.
//
// The check and the open are two steps; a concurrent swap of a path
// component for a symlink between them is not defended against here.
func readContained(root, p string, limit int) (*containedFile, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	cp, err := canonicalPath(p)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(root, cp)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, ErrOutsideWorkspace
	}
	fi, err := os.Stat(cp)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() { // also keeps FIFOs from blocking the open
		return nil, ErrNotRegularFile
	}
	f, err := os.Open(cp)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	out := &containedFile{Path: cp, Rel: filepath.ToSlash(rel), Size: fi.Size()}
	if len(buf) > limit {
		buf = cutToLine(buf[:limit])
		out.Truncated = true
	}
	if bytes.IndexByte(buf, 0) >= 0 {
		out.Binary = true
		buf = nil
	}
	out.Content = buf
	return out, nil
}

// cutToLine shortens b to its last complete line or, when it holds no
// newline, drops a UTF-8 sequence cut in half at its end.
func cutToLine(b []byte) []byte {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			return b[:i+1]
		}
	}
	i := len(b) - 1
	for i > 0 && len(b)-i < utf8.UTFMax && !utf8.RuneStart(b[i]) {
		i--
	}
	if i >= 0 && !utf8.FullRune(b[i:]) {
		return b[:i]
	}
	return b
}
