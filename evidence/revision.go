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

// ShortRevisionHex is how many hex digits of a revision the model is shown
// and may pass back. A short revision only ever names a revision the session
// was issued for the same path (see Ledger.Resolve and the edit engine):
// the server resolves it to the full revision it issued and compares full
// revisions from there on, so a short form never vouches for bytes by
// itself. 12 hex digits are 48 bits: among the few dozen revisions one file
// goes through in a session, two sharing that prefix by chance has a
// probability below 1e-11; and a file crafted to share the prefix of a
// revision the model read gains nothing, because the short form resolves
// to the issued revision (whose full hash then differs from the crafted
// file's) or, when both were issued, is refused as ambiguous.
const ShortRevisionHex = 12

// Short returns the revision as the model is shown it: "sha256:" and the
// first ShortRevisionHex hex digits. A malformed revision is returned as it is.
func (r Revision) Short() string {
	if len(r) != revisionLen || string(r[:len(revisionPrefix)]) != revisionPrefix {
		return string(r)
	}
	return string(r[:len(revisionPrefix)+ShortRevisionHex])
}

// IsFull reports whether r is a full revision (64 hex digits), not a
// short form a caller passed back.
func (r Revision) IsFull() bool { return len(r) == revisionLen }

// Matches reports whether r, full or short, names the full revision full.
func (r Revision) Matches(full Revision) bool {
	return len(r) <= len(full) && string(full[:len(r)]) == string(r)
}

// ParseRevisionRef accepts what a caller may pass back for a revision: a
// full revision (as ParseRevision) or a short one, "sha256:" and
// ShortRevisionHex to 64 lowercase hex digits. A short one must be resolved
// against the revisions issued for the path (Ledger.Resolve) before it is
// compared with any bytes. The error wraps ErrBadRevision.
func ParseRevisionRef(s string) (Revision, error) {
	n := len(s) - len(revisionPrefix)
	if n < ShortRevisionHex || n > 2*sha256.Size || s[:len(revisionPrefix)] != revisionPrefix {
		return "", fmt.Errorf("%w: %q: want %q and %d to 64 lowercase hex digits", ErrBadRevision, truncateForError(s), revisionPrefix, ShortRevisionHex)
	}
	for i := len(revisionPrefix); i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", fmt.Errorf("%w: %q: byte %d is not a lowercase hex digit", ErrBadRevision, truncateForError(s), i)
		}
	}
	return Revision(s), nil
}
