package tools

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"winx/mcp/session"
)

// Bounded reads of files inside a workspace, for the tools that show file
// contents (Initialize's initial files and guidelines, resumed contexts).

// Sentinel errors of reading a file on behalf of a workspace.
var (
	// ErrOutsideWorkspace: the path resolves outside the workspace root.
	ErrOutsideWorkspace = errors.New("tools: path resolves outside the workspace")
	// ErrNotRegularFile: the path is a directory, device, socket or FIFO.
	ErrNotRegularFile = errors.New("tools: not a regular file")
)

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
	cp, err := session.CanonicalPath(p)
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
