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
	"strings"

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
