package auth

// Path containment for the file tools. The policy is a set
// of canonical root directories: the workspace plus the entries of
// WINX_ALLOW_PATHS, read once at start. A client path is resolved the way the
// kernel would resolve it (components left to right, ".." applied to the
// already-resolved prefix, symlinks replaced by their targets) and the
// canonical result must lie inside a root. Recheck repeats the walk at commit
// time so a component swapped for a symlink after Resolve is caught.
//
// What this does not cover, by design: hard links and bind mounts (they have
// no path to canonicalize), case-insensitive file systems (names are compared
// byte for byte), and the window between Recheck and the write itself, which
// belongs to the writer (a same-directory temp file and rename keep it to the
// final component; os.Root can close it entirely).

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

const (
	// MaxPathBytes bounds a client path, an allow-list entry and a canonical
	// result. It is Linux's PATH_MAX.
	MaxPathBytes = 4096

	// MaxSymlinks bounds the symlinks followed while resolving one path
	// (Linux's own limit is 40; beyond it the kernel says ELOOP).
	MaxSymlinks = 40

	// MaxAllowPaths bounds the number of WINX_ALLOW_PATHS entries.
	MaxAllowPaths = 64
)

// Sentinel errors for path checks, always carried inside a *PathError.
var (
	// ErrPathDenied: the path is well formed but lies (or would land)
	// outside the allowed roots, or changed since it was resolved.
	ErrPathDenied = errors.New("auth: path denied")
	// ErrPathInvalid: the path is malformed (empty, NUL byte, too long,
	// relative where it must be absolute, a file used as a directory,
	// a symlink loop).
	ErrPathInvalid = errors.New("auth: invalid path")
)

// Reasons carried in PathError.Reason. They are fixed strings so an error
// message holds nothing but the path the caller passed in: in particular a
// symlink's target outside the roots is never shown.
const (
	reasonEmpty      = "empty path"
	reasonNUL        = "path contains a NUL byte"
	reasonTooLong    = "path longer than 4096 bytes"
	reasonRelative   = "path must be absolute"
	reasonDotDot     = "path must not contain \"..\""
	reasonEmptyEntry = "empty entry in the list"
	reasonTooMany    = "more than 64 entries"
	reasonNotExist   = "does not exist"
	reasonNotDir     = "not a directory"
	reasonParentFile = "a parent is not a directory"
	reasonLoop       = "too many levels of symbolic links"
	reasonOutside    = "outside the allowed roots"
	reasonUnreadable = "cannot be resolved"
	reasonDotDotNew  = "\"..\" after a component that does not exist"
	reasonNotCanon   = "not a canonical path"
	reasonChanged    = "changed since it was resolved"
	reasonNowSymlink = "is now a symbolic link"
	reasonEmptyLink  = "symbolic link with an empty target"
)

// PathError reports a path that failed a policy check. Path is the path as
// the caller gave it; Reason is a short fixed phrase; Err is ErrPathDenied or
// ErrPathInvalid.
type PathError struct {
	Path   string
	Reason string
	Err    error
}

// maxShownPath bounds how much of Path an error message repeats.
const maxShownPath = 512

func (e *PathError) Error() string {
	shown := e.Path
	if len(shown) > maxShownPath {
		shown = shown[:maxShownPath] + "..."
	}
	// Quoted: the path came from a client and may hold control bytes.
	return e.Err.Error() + ": " + strconv.Quote(shown) + ": " + e.Reason
}

func (e *PathError) Unwrap() error { return e.Err }

func denied(path, reason string) *PathError {
	return &PathError{Path: path, Reason: reason, Err: ErrPathDenied}
}

func invalid(path, reason string) *PathError {
	return &PathError{Path: path, Reason: reason, Err: ErrPathInvalid}
}

// checkSyntax applies the checks that need no file system.
func checkSyntax(path string) *PathError {
	switch {
	case path == "":
		return invalid(path, reasonEmpty)
	case strings.IndexByte(path, 0) >= 0:
		return invalid(path, reasonNUL)
	case len(path) > MaxPathBytes:
		return invalid(path, reasonTooLong)
	}
	return nil
}

// ParseAllowPaths parses WINX_ALLOW_PATHS: entries separated by the OS list
// separator (':'), each absolute, without "..", naming an existing directory.
// "/" means unconfined. The adapter calls it once at start-up; any bad entry
// is an error, so a typo never silently narrows or widens the policy. An
// empty value means no extra roots. The result holds canonical paths
// (symlinks resolved now, at start), duplicates removed, in input order.
func ParseAllowPaths(value string) ([]string, error) {
	if value == "" {
		return nil, nil
	}
	entries := filepath.SplitList(value)
	if len(entries) > MaxAllowPaths {
		return nil, invalid(value, reasonTooMany)
	}
	var roots []string
	for _, entry := range entries {
		if entry == "" {
			// PATH treats an empty entry as ".", which here would mean
			// whatever directory the adapter started in: refuse it.
			return nil, invalid(entry, reasonEmptyEntry)
		}
		root, err := canonicalRoot(entry)
		if err != nil {
			return nil, err
		}
		roots = appendUnique(roots, root)
	}
	return roots, nil
}

// canonicalRoot validates one root and resolves its symlinks.
func canonicalRoot(path string) (string, error) {
	if err := checkSyntax(path); err != nil {
		return "", err
	}
	if !filepath.IsAbs(path) {
		return "", invalid(path, reasonRelative)
	}
	for _, name := range strings.Split(path, string(filepath.Separator)) {
		if name == ".." {
			return "", invalid(path, reasonDotDot)
		}
	}
	canonical, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", invalid(path, reasonNotExist)
	}
	if err != nil {
		return "", invalid(path, reasonUnreadable)
	}
	info, err := os.Stat(canonical)
	if err != nil {
		return "", invalid(path, reasonUnreadable)
	}
	if !info.IsDir() {
		return "", invalid(path, reasonNotDir)
	}
	return canonical, nil
}

func appendUnique(list []string, s string) []string {
	for _, have := range list {
		if have == s {
			return list
		}
	}
	return append(list, s)
}

// PathPolicy confines file tools to a set of canonical root directories.
// It is immutable after NewPathPolicy and safe for concurrent use.
type PathPolicy struct {
	// roots are canonical absolute directories, the workspace first.
	// Invariant: non-empty, each Clean and free of symlinks when built.
	roots []string
	// unconfined is set when a root is the file system root.
	unconfined bool
	// protected is the server's deny list, nil for none (WithProtected).
	protected *Protected
}

// NewPathPolicy confines file tools to workspace plus the extra roots (as
// returned by ParseAllowPaths). Every root must be an absolute path to an
// existing directory; each is canonicalized with filepath.EvalSymlinks.
func NewPathPolicy(workspace string, extra []string) (*PathPolicy, error) {
	ws, err := canonicalRoot(workspace)
	if err != nil {
		return nil, err
	}
	p := &PathPolicy{roots: []string{ws}}
	for _, e := range extra {
		root, err := canonicalRoot(e)
		if err != nil {
			return nil, err
		}
		p.roots = appendUnique(p.roots, root)
	}
	for _, root := range p.roots {
		if root == string(filepath.Separator) {
			p.unconfined = true
		}
	}
	return p, nil
}

// Unconfined reports whether "/" is a root, so every path is allowed.
// Resolve still canonicalizes and still refuses malformed paths.
func (p *PathPolicy) Unconfined() bool { return p.unconfined }

// Roots returns a copy of the canonical roots, the workspace first.
func (p *PathPolicy) Roots() []string { return append([]string(nil), p.roots...) }

// inside reports whether the canonical path lies in a root.
func (p *PathPolicy) inside(path string) bool {
	for _, root := range p.roots {
		if within(root, path) {
			return true
		}
	}
	return false
}

// within reports whether path equals root or lies below it. Both must be
// Clean and absolute. It compares whole components: the part of path after
// root must be empty or begin at a separator, so /work/ab is not within
// /work/a.
func within(root, path string) bool {
	if root == string(filepath.Separator) {
		return filepath.IsAbs(path)
	}
	if !strings.HasPrefix(path, root) {
		return false
	}
	rest := path[len(root):]
	return rest == "" || rest[0] == filepath.Separator
}

// Resolve turns a client path (absolute, or relative to the workspace) into
// the canonical path the file tools may use. The last components may not
// exist yet (a file to create, possibly in new directories); they are
// appended to the deepest existing directory, may not contain "..", and
// that directory must itself lie inside a root. Errors are *PathError
// wrapping ErrPathDenied or ErrPathInvalid.
func (p *PathPolicy) Resolve(path string) (string, error) {
	if err := checkSyntax(path); err != nil {
		return "", err
	}
	abs := path
	if !filepath.IsAbs(path) {
		abs = p.roots[0] + string(filepath.Separator) + path
	}
	return p.check(path, abs)
}

// Recheck re-validates a path returned by Resolve just before a write: it
// must still resolve to itself (no component has been replaced by a
// symlink, the final one included) and still lie inside a root. Errors are
// *PathError wrapping ErrPathDenied or ErrPathInvalid.
func (p *PathPolicy) Recheck(canonical string) error {
	if err := checkSyntax(canonical); err != nil {
		return err
	}
	if !filepath.IsAbs(canonical) || filepath.Clean(canonical) != canonical {
		return invalid(canonical, reasonNotCanon)
	}
	if !p.inside(canonical) {
		return denied(canonical, reasonOutside)
	}
	if info, err := os.Lstat(canonical); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		return denied(canonical, reasonNowSymlink)
	}
	got, err := p.check(canonical, canonical)
	if err != nil {
		return err
	}
	if got != canonical {
		return denied(canonical, reasonChanged)
	}
	return nil
}

// check walks abs and applies the policy; client is the path to report.
func (p *PathPolicy) check(client, abs string) (string, error) {
	got, existing, werr := walk(abs)
	if werr != nil {
		// Outside the roots every failure looks the same, so errors do not
		// tell a client what exists out there.
		if !p.inside(werr.at) {
			return "", denied(client, reasonOutside)
		}
		return "", &PathError{Path: client, Reason: werr.reason, Err: werr.err}
	}
	if len(got) > MaxPathBytes {
		return "", invalid(client, reasonTooLong)
	}
	if !p.inside(got) || !p.inside(existing) {
		return "", denied(client, reasonOutside)
	}
	if p.protected.Contains(got) || p.protected.Contains(existing) {
		return "", &PathError{Path: client, Reason: reasonProtected, Err: ErrPathProtected}
	}
	// A root removed or swapped for a symlink since start needs no check of
	// its own: got is canonical, so being inside a root means the walk went
	// through that root as a real directory just now.
	return got, nil
}

// walkError is walk's failure: where it happened (a canonical prefix, used
// for the containment decision, never shown) and what to report.
type walkError struct {
	at     string
	reason string
	err    error
}

// walk resolves the absolute path abs the way the kernel would: components
// left to right, "." dropped, ".." applied to the prefix resolved so far,
// symlinks replaced by their targets (at most MaxSymlinks). When a component
// does not exist, the remaining components are appended unresolved (they
// must not contain ".."). It returns the canonical path and the deepest
// existing directory on the way to it (the path itself when it exists).
func walk(abs string) (canonical, existing string, werr *walkError) {
	const sep = string(filepath.Separator)
	dest := sep
	rest := abs
	links := 0
	for rest != "" {
		var name string
		name, rest, _ = strings.Cut(rest, sep)
		switch name {
		case "", ".":
			continue
		case "..":
			// dest is already resolved, so its lexical parent is its real
			// parent: this is the kernel's order of operations.
			dest = filepath.Dir(dest)
			continue
		}
		next := filepath.Join(dest, name)
		info, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			tail, ok := cleanTail(name, rest)
			if !ok {
				return "", "", &walkError{at: dest, reason: reasonDotDotNew, err: ErrPathDenied}
			}
			return filepath.Join(dest, tail), dest, nil
		case errors.Is(err, syscall.ENOTDIR):
			return "", "", &walkError{at: dest, reason: reasonParentFile, err: ErrPathInvalid}
		case errors.Is(err, syscall.ENAMETOOLONG):
			return "", "", &walkError{at: dest, reason: reasonTooLong, err: ErrPathInvalid}
		case err != nil:
			return "", "", &walkError{at: next, reason: reasonUnreadable, err: ErrPathDenied}
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			links++
			if links > MaxSymlinks {
				return "", "", &walkError{at: next, reason: reasonLoop, err: ErrPathInvalid}
			}
			target, err := os.Readlink(next)
			if err != nil {
				return "", "", &walkError{at: next, reason: reasonUnreadable, err: ErrPathDenied}
			}
			if target == "" {
				return "", "", &walkError{at: next, reason: reasonEmptyLink, err: ErrPathInvalid}
			}
			if filepath.IsAbs(target) {
				dest = sep
			}
			if rest != "" {
				target += sep + rest
			}
			if len(target) > MaxSymlinks*MaxPathBytes {
				// Unreachable with kernel-sized targets; keeps the loop bounded
				// whatever Readlink returns.
				return "", "", &walkError{at: next, reason: reasonTooLong, err: ErrPathInvalid}
			}
			rest = target
			continue
		}
		if !info.IsDir() && strings.Trim(rest, sep) != "" {
			return "", "", &walkError{at: next, reason: reasonParentFile, err: ErrPathInvalid}
		}
		dest = next
	}
	return dest, dest, nil
}

// cleanTail joins the components that do not exist yet, dropping "" and
// ".", and reports false if one of them is "..": without a real directory
// to stand on, ".." has no kernel meaning to reproduce.
func cleanTail(first, rest string) (string, bool) {
	parts := []string{first}
	for _, name := range strings.Split(rest, string(filepath.Separator)) {
		switch name {
		case "", ".":
		case "..":
			return "", false
		default:
			parts = append(parts, name)
		}
	}
	return filepath.Join(parts...), true
}

// ErrPathProtected is the ErrPathDenied of a path the server keeps for
// itself: a token file, the principal config, the state directory. It is
// refused to every principal whatever the roots allow, so that a workspace
// (or WINX_ALLOW_PATHS, or "/") that happens to hold them never hands one
// principal another's credential.
var ErrPathProtected = fmt.Errorf("%w: the server's own credential or state", ErrPathDenied)

// reasonProtected is the PathError reason of an ErrPathProtected.
const reasonProtected = "a credential or state path of the server"

// Protected is the server's deny list: canonical files and directories no
// file tool may read or write, and directories beneath them that stay
// usable (the scratch playgrounds under the state directory). It is built
// once at start-up from the configuration, immutable and safe for
// concurrent use. A nil *Protected protects nothing.
type Protected struct {
	deny   []string
	except []string
}

// NewProtected builds the deny list. Every entry must be absolute; each is
// canonicalized now (symlinks resolved as far as the path exists), so a
// later spelling through a symlink still lands on it. An entry that does
// not exist yet (a state directory created later) is kept cleaned, which is
// what its canonical path will be unless a symlink is put on its way, and
// the walk the policy does would then resolve that symlink to a path
// outside the entry: such a path is protected only by the roots. Empty
// entries are skipped.
func NewProtected(deny, except []string) (*Protected, error) {
	p := &Protected{}
	for _, list := range []struct {
		in  []string
		out *[]string
	}{{deny, &p.deny}, {except, &p.except}} {
		for _, entry := range list.in {
			if entry == "" {
				continue
			}
			if err := checkSyntax(entry); err != nil {
				return nil, err
			}
			if !filepath.IsAbs(entry) {
				return nil, invalid(entry, reasonRelative)
			}
			*list.out = appendUnique(*list.out, canonicalBestEffort(entry))
		}
	}
	return p, nil
}

// canonicalBestEffort resolves the existing prefix of the absolute path
// and appends the rest cleaned.
func canonicalBestEffort(path string) string {
	path = filepath.Clean(path)
	if got, err := filepath.EvalSymlinks(path); err == nil {
		return got
	}
	parent := filepath.Dir(path)
	if parent == path {
		return path
	}
	return filepath.Join(canonicalBestEffort(parent), filepath.Base(path))
}

// Contains reports whether the canonical path is protected: it is, or lies
// beneath, a deny entry, and not beneath an exception inside that entry.
func (p *Protected) Contains(canonical string) bool {
	if p == nil {
		return false
	}
	for _, d := range p.deny {
		if !within(d, canonical) {
			continue
		}
		excepted := false
		for _, e := range p.except {
			if e != d && within(d, e) && within(e, canonical) {
				excepted = true
				break
			}
		}
		if !excepted {
			return true
		}
	}
	return false
}

// Paths returns a copy of the deny entries (for diagnostics and tests).
func (p *Protected) Paths() []string {
	if p == nil {
		return nil
	}
	return append([]string(nil), p.deny...)
}

// WithProtected returns a copy of the policy that also refuses every path
// prot contains, with a *PathError wrapping ErrPathProtected. The check
// runs on the canonical result, in Resolve and in Recheck alike, so no
// spelling (relative, through a symlink, "..") reaches a protected path.
func (p *PathPolicy) WithProtected(prot *Protected) *PathPolicy {
	q := *p
	q.roots = append([]string(nil), p.roots...)
	q.protected = prot
	return &q
}
