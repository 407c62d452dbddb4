package walk

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
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

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
	if len(r.segments) > 2*MaxDepth+3 {
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
