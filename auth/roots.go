package auth

// Allowed roots: the directories a principal may Initialize or reach with
// the file tools, from allowed_roots in the principal file. A principal
// without the key is unrestricted (nil roots), as a single-token server is.
// The roots confine where sessions start and what file tools resolve; they
// do not confine what a session's shell can reach (that is the sandbox's
// job).

import (
	"errors"
	"fmt"
	"path/filepath"
)

// MaxAllowedRoots bounds a principal's allowed_roots list.
const MaxAllowedRoots = 64

// Sentinel errors of allowed_roots, carried inside a *PrincipalError.
var (
	ErrEmptyAllowedRoots = errors.New("auth: allowed_roots is empty (leave it out for no restriction)")
	ErrAllowedRoot       = errors.New("auth: allowed_roots entry must be an absolute path of an existing directory")
)

// canonicalAllowedRoots checks and canonicalizes an allowed_roots list:
// every entry is an absolute path (no "..") of an existing directory,
// resolved through its symlinks. Any bad entry refuses the whole list.
func canonicalAllowedRoots(list []string) ([]string, error) {
	if len(list) == 0 {
		return nil, ErrEmptyAllowedRoots
	}
	if len(list) > MaxAllowedRoots {
		return nil, fmt.Errorf("%w: more than %d entries", ErrAllowedRoot, MaxAllowedRoots)
	}
	roots := make([]string, 0, len(list))
	for _, entry := range list {
		root, err := canonicalRoot(entry)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrAllowedRoot, err)
		}
		roots = appendUnique(roots, root)
	}
	return roots, nil
}

// WithinRoots reports whether the canonical absolute path lies in one of
// roots (equal to it or below it, by whole components). Nil roots mean no
// restriction; a non-nil empty list allows nothing.
func WithinRoots(roots []string, path string) bool {
	if roots == nil {
		return true
	}
	for _, root := range roots {
		if within(root, path) {
			return true
		}
	}
	return false
}

// ConfineRoots narrows the extra file-tool roots (WINX_ALLOW_PATHS) to what
// also lies within roots: an extra root inside an allowed root is kept, an
// allowed root inside an extra root replaces it, anything else is dropped.
// Nil roots return extra unchanged. An extra entry that cannot be
// canonicalized is kept as given, so NewPathPolicy still reports it.
func ConfineRoots(extra, roots []string) []string {
	if roots == nil {
		return extra
	}
	var out []string
	for _, e := range extra {
		c, err := canonicalRoot(e)
		if err != nil {
			out = appendUnique(out, e)
			continue
		}
		for _, r := range roots {
			switch {
			case within(r, c):
				out = appendUnique(out, c)
			case within(c, r):
				out = appendUnique(out, r)
			}
		}
	}
	return out
}

// CanonicalPlanned is the canonical form of an absolute path that need not
// exist yet: its existing prefix resolved the way the kernel would (the
// walk of the path policy), the rest appended. A check against roots can
// then run before anything is made at the path, so that a refusal leaves
// nothing behind. A path with ".." among its missing components, or one
// that runs through a file, is refused.
func CanonicalPlanned(path string) (string, error) {
	if err := checkSyntax(path); err != nil {
		return "", err
	}
	if !filepath.IsAbs(path) {
		return "", invalid(path, reasonRelative)
	}
	canonical, _, werr := walk(path)
	if werr != nil {
		return "", &PathError{Path: path, Reason: werr.reason, Err: werr.err}
	}
	return canonical, nil
}
