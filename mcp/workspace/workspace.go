// Package workspace owns the services that look at a workspace as a whole:
// the overview Initialize shows (a ranked tree, git status, guideline
// files), the collection of a task's context (git diffs, files matching
// globs, token caps, redaction) and the saved contexts that ContextSave
// writes and Initialize resumes. Its git queries never run a program the
// repository configures. It does not know sessions, tools or envelopes:
// mcp/tools resolves the session and the path policy, calls in here and
// builds the answer.
package workspace

import (
	"bytes"
	"io"
	"os"
	"strings"
	"syscall"
	"unicode/utf8"

	"winx/auth"
	"winx/evidence"
)

// bytesPerToken is the token estimate's divisor, the one ReadFiles uses.
const bytesPerToken = evidence.BytesPerToken

// Tokens estimates the tokens of n bytes (bytes/4, rounded up): close
// enough for code and English to size what a model will be shown.
func Tokens(n int) int { return (n + bytesPerToken - 1) / bytesPerToken }

// Fenced wraps text in a Markdown code fence longer than any backtick run
// inside it, so file contents cannot close the fence early.
func Fenced(text string) string {
	longest, run := 0, 0
	for i := 0; i < len(text); i++ {
		if text[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return fence + "\n" + text + fence + "\n"
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

func ensureNewline(b *bytes.Buffer) {
	if b.Len() > 0 && b.Bytes()[b.Len()-1] != '\n' {
		b.WriteByte('\n')
	}
}

// Reasons a file is left out, as the omitted-file lists show them.
const (
	reasonUnreadable = "could not be read"
	reasonNotRegular = "not a regular file"
	reasonChanged    = "changed while it was read"
	reasonBinary     = "binary"
)

// readBounded reads at most limit+1 bytes of canon (from policy.Resolve),
// so a caller can tell a longer file. The file is opened without blocking
// (a FIFO or a terminal put in its place cannot stall the read) and judged
// by its descriptor, and after the read the path must still resolve to
// itself inside the roots and name the file that was read: a directory
// swapped for a symlink after Resolve, to lead the read outside the
// workspace, is caught here. A non-empty reason says why nothing was read.
func readBounded(policy *auth.PathPolicy, canon string, limit int) (buf []byte, size int64, reason string) {
	f, err := os.OpenFile(canon, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, reasonUnreadable
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, reasonUnreadable
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, reasonNotRegular
	}
	buf, err = io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
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
