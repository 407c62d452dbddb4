package workspace

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"winx/auth"
)

// Bounded reads of files that are shown whole or cut to lines: Initialize's
// initial files (ReadContained), the guideline files of the overview and
// the files of a saved context (readBounded), and a saved context read back
// for resume (Load). They share one read, readLimited.

// Sentinel errors of reading a file on behalf of a workspace.
var (
	// ErrOutsideWorkspace: the path resolves outside the workspace root.
	ErrOutsideWorkspace = errors.New("workspace: path resolves outside the workspace")
	// ErrNotRegularFile: the path is a directory, device, socket or FIFO.
	ErrNotRegularFile = errors.New("workspace: not a regular file")
)

// readFlags open every bounded read: a FIFO or a terminal put in a file's
// place can neither stall the open nor become a controlling terminal.
const readFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY | syscall.O_CLOEXEC

// readLimited reads at most limit+1 bytes of path, so a caller can tell a
// longer file, opened with readFlags plus flags (O_NOFOLLOW, say) and
// judged by its descriptor rather than an earlier stat. Errors are the
// file system's, or ErrNotRegularFile.
func readLimited(path string, flags, limit int) ([]byte, fs.FileInfo, error) {
	f, err := os.OpenFile(path, readFlags|flags, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, ErrNotRegularFile
	}
	buf, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, nil, err
	}
	return buf, fi, nil
}

// File is a bounded read of a regular file inside a workspace.
type File struct {
	Path      string // canonical
	Rel       string // relative to the root, slash-separated
	Size      int64
	Content   []byte // at most the limit, cut back to a complete line when truncated
	Truncated bool
	Binary    bool // holds a NUL byte; Content is then empty
}

// ReadContained reads at most limit bytes of p (absolute, or relative to
// root, a canonical workspace root) after resolving its symlinks and
// checking that it stays inside root. Errors wrap fs.ErrNotExist,
// ErrOutsideWorkspace or ErrNotRegularFile, or are the file system's.
//
// The check and the open are two steps; a concurrent swap of a path
// component for a symlink between them is not defended against here.
func ReadContained(root, p string, limit int) (*File, error) {
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
	buf, fi, err := readLimited(cp, 0, limit)
	if err != nil {
		return nil, err
	}
	out := &File{Path: cp, Rel: filepath.ToSlash(rel), Size: fi.Size()}
	if len(buf) > limit {
		buf = CutToLine(buf[:limit])
		out.Truncated = true
	}
	if bytes.IndexByte(buf, 0) >= 0 {
		out.Binary = true
		buf = nil
	}
	out.Content = buf
	return out, nil
}

// canonicalPath resolves every symlink of p and makes it absolute, as
// session.CanonicalPath does for workspace roots.
func canonicalPath(p string) (string, error) {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	return filepath.Abs(r)
}

// readBounded reads at most limit+1 bytes of canon (from policy.Resolve)
// with readLimited; after the read the path must still resolve to itself
// inside the roots and name the file that was read: a directory swapped
// for a symlink after Resolve, to lead the read outside the workspace, is
// caught here. A non-empty reason says why nothing was read.
func readBounded(policy *auth.PathPolicy, canon string, limit int) (buf []byte, size int64, reason string) {
	buf, fi, err := readLimited(canon, 0, limit)
	switch {
	case errors.Is(err, ErrNotRegularFile):
		return nil, 0, reasonNotRegular
	case err != nil:
		return nil, 0, reasonUnreadable
	}
	if err := policy.Recheck(canon); err != nil {
		return nil, 0, pathReason(err)
	}
	if now, err := os.Lstat(canon); err != nil || !os.SameFile(fi, now) {
		return nil, 0, reasonChanged
	}
	return buf, fi.Size(), ""
}

// CutToLine shortens b to its last complete line or, when it holds no
// newline, drops a UTF-8 sequence cut in half at its end.
func CutToLine(b []byte) []byte {
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
