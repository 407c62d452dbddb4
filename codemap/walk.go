package codemap

// Walking a repository for navigation. The walk answers "which files are the
// project's own source": it honours .gitignore files the way git does (the
// rules below), skips trees that are someone else's code or machine output,
// never follows a symbolic link, and is bounded in the number of files it
// will look at.
//
// Skipped always, whatever the ignore files say:
//   - version-control and Winx state: .git, .hg, .svn, .winx;
//   - vendored dependencies: vendor, node_modules, bower_components,
//     third_party (by convention a copy of another project, as in Go's and
//     Chromium's trees);
//   - minified bundles (*.min.js, *.min.mjs, *.min.cjs);
//   - files larger than MaxSourceBytes, and files whose language codemap does
//     not parse (LanguageOf);
//   - symbolic links, to files and directories alike: a link can only lead
//     out of the root or to something the walk reaches anyway.
//
// Generated files ("Code generated ... DO NOT EDIT." near the top) are
// recognised by the Index when it reads them, not here, so the walk never
// opens a source file.
//
// Ignore rules (gitignore(5)), implemented here without git: .git/info/exclude
// applies at the root with the lowest precedence, then each directory's
// .gitignore for the paths below it, a deeper file overriding a shallower
// one and a later line an earlier one. Supported: blank lines and "#"
// comments, "\" escapes ("\#", "\!", "\ "), trailing spaces trimmed, "!"
// negation, a trailing "/" matching directories only, a leading or middle
// "/" anchoring the pattern to its file's directory, "*", "?", "[...]"
// (with "!" or "^" negation and ranges), and "**" as a leading "**/", a
// trailing "/**" and a middle "/**/". As in git, a file inside an ignored
// directory cannot be re-included, because the walk never enters that
// directory. Not read: the user's global core.excludesFile and
// $GIT_DIR/info/sparse-checkout.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Walk limits.
const (
	// MaxWalkFiles bounds the regular files a walk looks at (ignored files
	// and skipped trees do not count). A tree beyond it is refused with a
	// *WalkLimitError rather than answered from an arbitrary part.
	MaxWalkFiles = 200_000
	// MaxIgnoreFileBytes bounds one .gitignore or info/exclude file; the
	// rest of a longer file is not read.
	MaxIgnoreFileBytes = 1 << 20
	// MaxWalkDepth bounds directory nesting below the root.
	MaxWalkDepth = 128
)

// ErrTooManyFiles is wrapped by *WalkLimitError.
var ErrTooManyFiles = errors.New("codemap: too many files to walk")

// WalkLimitError is a tree with more than Limit files under Dir.
type WalkLimitError struct {
	Dir   string // slash-separated, relative to the root; "" is the root
	Limit int
}

func (e *WalkLimitError) Error() string {
	dir := e.Dir
	if dir == "" {
		dir = "."
	}
	return fmt.Sprintf("%v: more than %d files under %s; narrow the path", ErrTooManyFiles, e.Limit, dir)
}

func (e *WalkLimitError) Unwrap() error { return ErrTooManyFiles }

// skippedDirs are directory names never entered (see the file comment).
var skippedDirs = map[string]bool{
	".git": true, ".hg": true, ".svn": true, ".winx": true,
	"vendor": true, "node_modules": true, "bower_components": true, "third_party": true,
}

// File is one source file a walk found.
type File struct {
	Rel     string // slash-separated path relative to the root
	Lang    string // LanguageOf
	Size    int64
	ModTime int64 // modification time, Unix nanoseconds
}

// Walk lists the source files under dir (slash-separated, relative to root;
// "" for the whole root) in lexical order of their paths, applying the
// ignore files of root and of every directory on the way to dir. root must
// be an absolute directory path. A dir that is itself ignored or skipped
// yields no files; a dir that names a source file yields that file.
func Walk(ctx context.Context, root, dir string) ([]File, error) {
	w := &walker{ctx: ctx, root: root, limit: MaxWalkFiles}
	return w.run(dir)
}

type walker struct {
	ctx   context.Context
	root  string
	limit int
	seen  int // regular files looked at
	dir   string
	out   []File
}

func (w *walker) run(dir string) ([]File, error) {
	dir = strings.Trim(path.Clean("/"+filepath.ToSlash(dir)), "/")
	w.dir = dir
	m := &ignoreMatcher{}
	m.load(w.root, "", filepath.Join(w.root, ".git", "info", "exclude"))
	m.load(w.root, "", filepath.Join(w.root, ".gitignore"))
	// Descend from the root to dir, applying each ancestor's rules.
	rel := ""
	if dir != "" {
		names := strings.Split(dir, "/")
		for i, name := range names {
			if skippedDirs[name] || name == ".." {
				return nil, nil
			}
			rel = path.Join(rel, name)
			info, err := os.Lstat(filepath.Join(w.root, filepath.FromSlash(rel)))
			if err != nil {
				return nil, err
			}
			if i == len(names)-1 && info.Mode().IsRegular() {
				return w.single(rel, info), nil
			}
			if !info.IsDir() {
				return nil, &fs.PathError{Op: "walk", Path: rel, Err: fs.ErrInvalid}
			}
			if m.ignored(rel, true) {
				return nil, nil
			}
			m = m.child(w.root, rel)
		}
	}
	if err := w.walkDir(rel, m, 0); err != nil {
		return nil, err
	}
	return w.out, nil
}

// single is the answer for a dir that names one file: the file itself
// when it is source, whatever the ignore files say (it was asked for).
func (w *walker) single(rel string, info fs.FileInfo) []File {
	lang, ok := LanguageOf(rel)
	if !ok || info.Size() > MaxSourceBytes {
		return nil
	}
	return []File{{Rel: rel, Lang: lang, Size: info.Size(), ModTime: info.ModTime().UnixNano()}}
}

func (w *walker) walkDir(rel string, m *ignoreMatcher, depth int) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	if depth > MaxWalkDepth {
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(w.root, filepath.FromSlash(rel)))
	if err != nil {
		if rel != w.dir && (errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist)) {
			return nil // an unreadable or vanished subdirectory is left out
		}
		return err
	}
	for _, e := range entries {
		name := e.Name()
		child := path.Join(rel, name)
		typ := e.Type()
		switch {
		case typ&fs.ModeSymlink != 0:
			continue
		case typ.IsDir():
			if skippedDirs[name] || m.ignored(child, true) {
				continue
			}
			if err := w.walkDir(child, m.child(w.root, child), depth+1); err != nil {
				return err
			}
		case typ.IsRegular():
			if m.ignored(child, false) {
				continue
			}
			w.seen++
			if w.seen > w.limit {
				return &WalkLimitError{Dir: w.dir, Limit: w.limit}
			}
			lang, ok := LanguageOf(name)
			if !ok || isMinified(name) {
				continue
			}
			info, err := e.Info()
			if err != nil || info.Size() > MaxSourceBytes {
				continue
			}
			w.out = append(w.out, File{Rel: child, Lang: lang, Size: info.Size(), ModTime: info.ModTime().UnixNano()})
		}
	}
	return nil
}

func isMinified(name string) bool {
	lower := strings.ToLower(name)
	for _, ext := range []string{".min.js", ".min.mjs", ".min.cjs"} {
		if strings.HasSuffix(lower, ext) {
			return true
		}
	}
	return false
}

// ignoreMatcher is the stack of ignore rules in force in one directory. It
// is immutable once built; child shares its parent's rules.
type ignoreMatcher struct {
	parent *ignoreMatcher
	rules  []ignoreRule // of one file (or two at the root), in file order
}

// child returns the matcher for directory rel (relative to root), adding
// its .gitignore if it has one.
func (m *ignoreMatcher) child(root, rel string) *ignoreMatcher {
	c := &ignoreMatcher{parent: m}
	c.load(root, rel, filepath.Join(root, filepath.FromSlash(rel), ".gitignore"))
	if len(c.rules) == 0 {
		return m
	}
	return c
}

// load appends the rules of one ignore file whose patterns are relative to
// base. A missing or unreadable file adds nothing; a symlinked one too.
func (m *ignoreMatcher) load(root, base, file string) {
	info, err := os.Lstat(file)
	if err != nil || !info.Mode().IsRegular() {
		return
	}
	f, err := os.Open(file)
	if err != nil {
		return
	}
	defer f.Close()
	m.rules = append(m.rules, parseIgnore(io.LimitReader(f, MaxIgnoreFileBytes), base)...)
}

// ignored reports whether rel (relative to the root, slash-separated) is
// ignored. Rules are tried from the most to the least precedent; the first
// that matches decides.
func (m *ignoreMatcher) ignored(rel string, isDir bool) bool {
	for cur := m; cur != nil; cur = cur.parent {
		for i := len(cur.rules) - 1; i >= 0; i-- {
			r := &cur.rules[i]
			if r.matches(rel, isDir) {
				return !r.negate
			}
		}
	}
	return false
}

// ignoreRule is one pattern line of an ignore file.
type ignoreRule struct {
	base     string   // directory of the ignore file, relative to the root
	segments []string // pattern split at "/", "**" kept as a segment
	negate   bool     // "!pattern"
	dirOnly  bool     // "pattern/"
	anchored bool     // had a leading or middle "/": matched from base
}

// parseIgnore parses gitignore lines whose patterns are relative to base.
func parseIgnore(r io.Reader, base string) []ignoreRule {
	var rules []ignoreRule
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxIgnoreFileBytes)
	for sc.Scan() {
		if r, ok := parseIgnoreLine(sc.Text(), base); ok {
			rules = append(rules, r)
		}
	}
	return rules
}

func parseIgnoreLine(line, base string) (ignoreRule, bool) {
	line = strings.TrimSuffix(line, "\r")
	line = trimUnescapedSpaces(line)
	if line == "" || line[0] == '#' {
		return ignoreRule{}, false
	}
	r := ignoreRule{base: base}
	if line[0] == '!' {
		r.negate = true
		line = line[1:]
	} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return ignoreRule{}, false
	}
	if strings.Contains(line, "/") {
		r.anchored = true
		line = strings.TrimLeft(line, "/")
		if line == "" {
			return ignoreRule{}, false
		}
	}
	for _, seg := range strings.Split(line, "/") {
		// "**/**" is "**"; collapsing bounds the stars by the other
		// segments.
		if seg == "**" && len(r.segments) > 0 && r.segments[len(r.segments)-1] == "**" {
			continue
		}
		r.segments = append(r.segments, seg)
	}
	if len(r.segments) > 2*MaxWalkDepth+3 {
		// More named segments than a walked path has: it never matches.
		return ignoreRule{}, false
	}
	// A leading "**/" matches in every directory: the same as unanchored
	// when nothing else follows.
	if r.anchored && len(r.segments) == 2 && r.segments[0] == "**" {
		r.segments, r.anchored = r.segments[1:], false
	}
	return r, true
}

// trimUnescapedSpaces drops trailing spaces unless the last is escaped
// with a backslash, which then stands for a literal space.
func trimUnescapedSpaces(s string) string {
	end := len(s)
	for end > 0 && s[end-1] == ' ' {
		if end >= 2 && s[end-2] == '\\' {
			break
		}
		end--
	}
	return s[:end]
}

// matches reports whether the rule matches rel (relative to the root).
func (r *ignoreRule) matches(rel string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	sub := rel
	if r.base != "" {
		if !strings.HasPrefix(rel, r.base+"/") {
			return false
		}
		sub = rel[len(r.base)+1:]
	}
	if !r.anchored {
		// No slash in the pattern: it matches the name at any depth.
		return globMatch(r.segments[0], path.Base(sub))
	}
	return matchSegments(r.segments, strings.Split(sub, "/"))
}

// matchSegments matches pattern segments against path segments, "**"
// standing for zero or more whole segments (one or more when it ends the
// pattern: "dir/**" matches what is inside dir, not dir). With more than
// one "**" the tries are memoized, so "**/a/**/a/**/b" stays linear in
// pattern times path length instead of exponential.
func matchSegments(pat, name []string) bool {
	stars := 0
	for _, p := range pat {
		if p == "**" {
			stars++
		}
	}
	var memo []uint8 // by i*(len(name)+1)+j: 0 unknown, 1 no, 2 yes
	if stars > 1 {
		memo = make([]uint8, (len(pat)+1)*(len(name)+1))
	}
	var match func(i, j int) bool
	match = func(i, j int) bool {
		k := i*(len(name)+1) + j
		if memo != nil && memo[k] != 0 {
			return memo[k] == 2
		}
		var ok bool
		switch {
		case i == len(pat):
			ok = j == len(name)
		case pat[i] == "**" && i == len(pat)-1:
			ok = j < len(name)
		case pat[i] == "**":
			for s := j; s <= len(name) && !ok; s++ {
				ok = match(i+1, s)
			}
		default:
			ok = j < len(name) && globMatch(pat[i], name[j]) && match(i+1, j+1)
		}
		if memo != nil {
			memo[k] = 1
			if ok {
				memo[k] = 2
			}
		}
		return ok
	}
	return match(0, 0)
}

// globMatch matches one path segment against a pattern of "*", "?",
// "[...]" and "\"-escapes. Runs of "*" inside a segment act as one.
func globMatch(pat, name string) bool {
	// Iterative with one backtrack point, as for "*" only one is needed.
	px, nx := 0, 0
	starPx, starNx := -1, 0
	for nx < len(name) || px < len(pat) {
		if px < len(pat) {
			switch c := pat[px]; c {
			case '*':
				for px < len(pat) && pat[px] == '*' {
					px++
				}
				starPx, starNx = px, nx
				continue
			case '?':
				if nx < len(name) {
					px, nx = px+1, nx+1
					continue
				}
			case '[':
				if nx < len(name) {
					if ok, width, valid := matchClass(pat[px:], name[nx]); valid {
						if ok {
							px, nx = px+width, nx+1
							continue
						}
						break
					}
				}
				// An unterminated class is a literal '['.
				if nx < len(name) && name[nx] == '[' {
					px, nx = px+1, nx+1
					continue
				}
			case '\\':
				if px+1 < len(pat) && nx < len(name) && name[nx] == pat[px+1] {
					px, nx = px+2, nx+1
					continue
				}
			default:
				if nx < len(name) && name[nx] == c {
					px, nx = px+1, nx+1
					continue
				}
			}
		}
		if starPx >= 0 && starNx < len(name) {
			starNx++
			px, nx = starPx, starNx
			continue
		}
		return false
	}
	return true
}

// matchClass matches c against the bracket expression at the start of pat.
// width is the expression's length; valid is false when it is unterminated.
// Bytes are compared, so a class of multi-byte characters matches bytes.
func matchClass(pat string, c byte) (ok bool, width int, valid bool) {
	i := 1
	negate := false
	if i < len(pat) && (pat[i] == '!' || pat[i] == '^') {
		negate = true
		i++
	}
	first := true
	for i < len(pat) {
		if pat[i] == ']' && !first {
			return ok != negate, i + 1, true
		}
		first = false
		lo := pat[i]
		if lo == '\\' && i+1 < len(pat) {
			i++
			lo = pat[i]
		}
		i++
		hi := lo
		if i+1 < len(pat) && pat[i] == '-' && pat[i+1] != ']' {
			hi = pat[i+1]
			if hi == '\\' && i+2 < len(pat) {
				i++
				hi = pat[i+1]
			}
			i += 2
		}
		if lo <= c && c <= hi {
			ok = true
		}
	}
	return false, 0, false
}

// generatedMarkerWindow is how much of a file's head is searched for the
// "Code generated ... DO NOT EDIT." line.
const generatedMarkerWindow = 4096

// isGenerated reports whether src's head holds a line saying it is
// generated: the Go convention ("// Code generated ... DO NOT EDIT."),
// accepted in any comment syntax.
func isGenerated(src []byte) bool {
	head := src[:min(len(src), generatedMarkerWindow)]
	for len(head) > 0 {
		line := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		if i := bytes.Index(line, []byte("Code generated ")); i >= 0 && bytes.Contains(line[i:], []byte("DO NOT EDIT")) {
			return true
		}
	}
	return false
}
