// Package evidence owns what the model has seen: stable snapshots of files,
// their "sha256:" revisions, the line model and line ranges, the rendering of
// a range under a token budget, and the per-session read ledger of
// (canonical path, revision, complete visible lines). It does not decide
// which paths may be read (path policy lives in auth), it does not write
// files (edit does), and it does not redact (evidence/redact does, at the
// tools layer, on every string that leaves the process).
package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// Revision names the exact bytes of a file: "sha256:" followed by the 64
// lowercase hex digits of the SHA-256 of the bytes. Two snapshots with the
// same Revision have the same bytes, so the same lines.
type Revision string

const (
	revisionPrefix = "sha256:"
	revisionLen    = len(revisionPrefix) + 2*sha256.Size
)

// ErrBadRevision is the sentinel wrapped by ParseRevision's errors.
var ErrBadRevision = errors.New("evidence: malformed revision")

// RevisionOf returns the revision of b.
func RevisionOf(b []byte) Revision {
	sum := sha256.Sum256(b)
	var buf [revisionLen]byte
	copy(buf[:], revisionPrefix)
	hex.Encode(buf[len(revisionPrefix):], sum[:])
	return Revision(buf[:])
}

// ParseRevision accepts exactly "sha256:" and 64 lowercase hex digits:
// no surrounding space, no uppercase, no other algorithm. The error wraps
// ErrBadRevision.
func ParseRevision(s string) (Revision, error) {
	if len(s) != revisionLen || s[:len(revisionPrefix)] != revisionPrefix {
		return "", fmt.Errorf("%w: %q: want %q and 64 lowercase hex digits", ErrBadRevision, truncateForError(s), revisionPrefix)
	}
	for i := len(revisionPrefix); i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", fmt.Errorf("%w: %q: byte %d is not a lowercase hex digit", ErrBadRevision, truncateForError(s), i)
		}
	}
	return Revision(s), nil
}

// truncateForError keeps error messages bounded when they quote input.
func truncateForError(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
