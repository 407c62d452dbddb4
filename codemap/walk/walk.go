// Package walk owns walking a workspace tree: which directories are never
// entered (one skip list, in classes), the .gitignore rules a walk may
// honour, and the bounds every walk keeps (depth, ignore file size). It
// never follows a symbolic link and never opens a file other than an
// ignore file. It does not decide what a caller keeps of what it is shown
// (languages, sizes, globs, counts): the caller's function does.
//
// It is pure Go, so packages that must build without cgo (the workspace
// services) share it with codemap.
package walk

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Walk bounds.
const (
	// MaxDepth bounds directory nesting below the root; deeper
	// directories are not read.
	MaxDepth = 128
	// MaxIgnoreFileBytes bounds one .gitignore or info/exclude file; the
	// rest of a longer file is not read.
	MaxIgnoreFileBytes = 1 << 20
)

// Skip is a set of classes of directory names that a walk never enters,
// whatever the ignore files say.
type Skip uint8

// Classes of skipped directory names.
const (
	// SkipState: version-control and Winx state (.git, .hg, .svn, .winx).
	SkipState Skip = 1 << iota
	// SkipDeps: someone else's code: vendored dependencies (vendor,
	// node_modules, bower_components, third_party, by convention a copy of
	// another project as in Go's and Chromium's trees) and Python
	// environments and caches (.venv, venv, __pycache__).
	SkipDeps
	// SkipBuild: build output and tool caches that a .gitignore would
	// usually hide, for walks that read no ignore files.
	SkipBuild
)

// skipClass maps each skipped directory name to its class.
func skipClass(name string) Skip {
	switch name {
	case ".git", ".hg", ".svn", ".winx":
		return SkipState
	case "vendor", "node_modules", "bower_components", "third_party", ".venv", "venv", "__pycache__":
		return SkipDeps
	case "target", "dist", "build", "out", ".next", ".cache", ".tox", ".mypy_cache", ".pytest_cache",
		".ruff_cache", ".gradle", ".idea", "coverage", ".terraform":
		return SkipBuild
	}
	return 0
}

// Skipped reports whether name is in one of the classes of s.
func (s Skip) Skipped(name string) bool { return s&skipClass(name) != 0 }

// SkippedPath reports whether any component of the slash path rel is in
// one of the classes of s: for listings that come from elsewhere (git).
func (s Skip) SkippedPath(rel string) bool {
	for part := range strings.SplitSeq(rel, "/") {
		if s.Skipped(part) {
			return true
		}
	}
	return false
}

// Options shape a walk. The zero value enters every directory and reads no
// ignore file.
type Options struct {
	Skip Skip // directory names never entered
	// Ignore honours root/.git/info/exclude and every .gitignore from the
	// root down: an ignored entry is not shown to the function.
	Ignore bool
}

// Entry is one directory entry a walk shows.
type Entry struct {
	Rel  string      // slash-separated, relative to the root
	Path string      // the root joined with Rel
	Type fs.FileMode // type bits only: directory, symbolic link, other; 0 for a regular file
	d    fs.DirEntry
}

// IsDir reports whether the entry is a directory (never a link to one).
func (e Entry) IsDir() bool { return e.Type.IsDir() }

// Info is the entry's lstat information.
func (e Entry) Info() (fs.FileInfo, error) { return e.d.Info() }

// CleanRel is the form of a relative directory that Walk uses: slash
// separated, cleaned, without a leading or trailing slash; "" is the root.
func CleanRel(dir string) string {
	return strings.Trim(path.Clean("/"+filepath.ToSlash(dir)), "/")
}

// Walk calls fn for every entry under dir (relative to root, "" for the
// root itself; root must be an absolute directory path) in lexical order,
// a directory before what it holds, applying the ignore files of root and
// of every directory on the way to dir. Symbolic links are shown, never
// followed. A dir that is skipped or ignored yields nothing; a dir that
// names a regular file yields that file alone, whatever the ignore files
// say (it was asked for).
//
// fn returning fs.SkipDir for a directory keeps the walk out of it;
// fs.SkipAll ends the walk with a nil error; any other error ends it with
// that error. ctx is checked before every entry. A subdirectory that cannot
// be read for permission or because it vanished is left out; any other
// error, and any error reading dir itself, ends the walk.
func Walk(ctx context.Context, root, dir string, opts Options, fn func(Entry) error) error {
	w := &walker{ctx: ctx, root: root, opts: opts, fn: fn, dir: CleanRel(dir)}
	err := w.run()
	if errors.Is(err, fs.SkipAll) {
		return nil
	}
	return err
}

type walker struct {
	ctx  context.Context
	root string
	opts Options
	fn   func(Entry) error
	dir  string // cleaned
}

func (w *walker) entry(rel string, d fs.DirEntry) Entry {
	return Entry{Rel: rel, Path: filepath.Join(w.root, filepath.FromSlash(rel)), Type: d.Type(), d: d}
}

func (w *walker) run() error {
	m := &ignoreMatcher{}
	if w.opts.Ignore {
		m.load(w.root, "", filepath.Join(w.root, ".git", "info", "exclude"))
		m.load(w.root, "", filepath.Join(w.root, ".gitignore"))
	}
	// Descend from the root to dir, applying each ancestor's rules.
	rel := ""
	if w.dir != "" {
		names := strings.Split(w.dir, "/")
		for i, name := range names {
			if w.opts.Skip.Skipped(name) || name == ".." {
				return nil
			}
			rel = path.Join(rel, name)
			info, err := os.Lstat(filepath.Join(w.root, filepath.FromSlash(rel)))
			if err != nil {
				return err
			}
			if i == len(names)-1 && info.Mode().IsRegular() {
				if err := w.ctx.Err(); err != nil {
					return err
				}
				return w.fn(w.entry(rel, fs.FileInfoToDirEntry(info)))
			}
			if !info.IsDir() {
				return &fs.PathError{Op: "walk", Path: rel, Err: fs.ErrInvalid}
			}
			if w.opts.Ignore {
				if m.ignored(rel, true) {
					return nil
				}
				m = m.child(w.root, rel)
			}
		}
	}
	return w.walkDir(rel, m, 0)
}

func (w *walker) walkDir(rel string, m *ignoreMatcher, depth int) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	if depth > MaxDepth {
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(w.root, filepath.FromSlash(rel)))
	if err != nil {
		if rel != w.dir && (errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist)) {
			return nil // an unreadable or vanished subdirectory is left out
		}
		return err
	}
	for _, d := range entries {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		child := path.Join(rel, d.Name())
		isDir := d.Type().IsDir()
		if isDir && w.opts.Skip.Skipped(d.Name()) {
			continue
		}
		if w.opts.Ignore && m.ignored(child, isDir) {
			continue
		}
		switch err := w.fn(w.entry(child, d)); {
		case errors.Is(err, fs.SkipDir):
			continue
		case err != nil:
			return err
		case !isDir:
			continue
		}
		sub := m
		if w.opts.Ignore {
			sub = m.child(w.root, child)
		}
		if err := w.walkDir(child, sub, depth+1); err != nil {
			return err
		}
	}
	return nil
}
