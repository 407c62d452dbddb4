package walk

import (
	"strings"
	"testing"
)

func TestIgnoreRules(t *testing.T) {
	tests := []struct {
		name  string
		base  string // directory of the ignore file
		lines string
		path  string
		dir   bool
		want  bool
	}{
		{"plain name any depth", "", "foo.go", "a/b/foo.go", false, true},
		{"plain name other", "", "foo.go", "a/b/bar.go", false, false},
		{"star extension", "", "*.pb.go", "x/y.pb.go", false, true},
		{"star not across slash", "", "a/*.go", "a/b/c.go", false, false},
		{"star in anchored", "", "a/*.go", "a/c.go", false, true},
		{"question mark", "", "?.go", "x/a.go", false, true},
		{"question mark two", "", "?.go", "x/ab.go", false, false},
		{"class", "", "[abc].go", "b.go", false, true},
		{"class miss", "", "[abc].go", "d.go", false, false},
		{"class range", "", "file[0-9].go", "file7.go", false, true},
		{"class negated bang", "", "[!a]x", "bx", false, true},
		{"class negated caret", "", "[^a]x", "ax", false, false},
		{"dir only matches dir", "", "build/", "build", true, true},
		{"dir only skips file", "", "build/", "build", false, false},
		{"dir only nested dir", "", "build/", "src/build", true, true},
		{"leading slash anchors", "", "/gen", "gen", true, true},
		{"leading slash not deeper", "", "/gen", "src/gen", true, false},
		{"middle slash anchors", "", "doc/frotz", "doc/frotz", true, true},
		{"middle slash not deeper", "", "doc/frotz", "a/doc/frotz", true, false},
		{"leading double star", "", "**/foo", "a/b/foo", false, true},
		{"leading double star top", "", "**/foo", "foo", false, true},
		{"leading double star path", "", "**/foo/bar", "x/foo/bar", false, true},
		{"trailing double star", "", "abc/**", "abc/x/y.go", false, true},
		{"trailing double star not dir itself", "", "abc/**", "abc", true, false},
		{"middle double star zero", "", "a/**/b", "a/b", false, true},
		{"middle double star many", "", "a/**/b", "a/x/y/b", false, true},
		{"middle double star miss", "", "a/**/b", "a/x/c", false, false},
		{"negation re-includes", "", "*.go\n!keep.go", "keep.go", false, false},
		{"negation order matters", "", "!keep.go\n*.go", "keep.go", false, true},
		{"comment", "", "# foo.go", "foo.go", false, false},
		{"escaped hash", "", `\#foo`, "#foo", false, true},
		{"escaped bang", "", `\!foo`, "!foo", false, true},
		{"trailing spaces trimmed", "", "foo.go   ", "foo.go", false, true},
		{"escaped trailing space kept", "", `foo\ `, "foo ", false, true},
		{"crlf", "", "foo.go\r", "foo.go", false, true},
		{"nested base", "sub", "*.go", "sub/a.go", false, true},
		{"nested base outside", "sub", "*.go", "other/a.go", false, false},
		{"nested anchored", "sub", "/x.go", "sub/x.go", false, true},
		{"nested anchored deeper", "sub", "/x.go", "sub/y/x.go", false, false},
		{"escaped star literal", "", `a\*b`, "a*b", false, true},
		{"escaped star no wildcard", "", `a\*b`, "axb", false, false},
		{"star matches empty", "", "foo*", "foo", false, true},
		{"two stars in segment", "", "a**b", "axyb", false, true},
		{"unterminated class literal", "", "[ab", "[ab", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := &ignoreMatcher{rules: parseIgnore(strings.NewReader(tc.lines), tc.base)}
			if got := m.ignored(tc.path, tc.dir); got != tc.want {
				t.Errorf("ignored(%q, dir=%v) with %q = %v, want %v", tc.path, tc.dir, tc.lines, got, tc.want)
			}
		})
	}
}

func TestIgnoreDeeperFileWins(t *testing.T) {
	root := &ignoreMatcher{rules: parseIgnore(strings.NewReader("*.log\n"), "")}
	sub := &ignoreMatcher{parent: root, rules: parseIgnore(strings.NewReader("!keep.log\n"), "a")}
	if sub.ignored("a/keep.log", false) {
		t.Errorf("a/keep.log ignored, want re-included by a/.gitignore")
	}
	if !sub.ignored("a/other.log", false) {
		t.Errorf("a/other.log not ignored, want ignored by the root file")
	}
}

// TestIgnoreManyDoubleStars matches patterns whose "**" segments once made
// matching exponential in the path depth (a hostile .gitignore could stall
// every walk): it must answer at once, and still answer right.
func TestIgnoreManyDoubleStars(t *testing.T) {
	deep := strings.Split(strings.Repeat("a/", 100)+"c", "/")
	r, ok := parseIgnoreLine(strings.Repeat("**/a/", 20)+"b", "")
	if !ok || matchSegments(r.segments, deep) {
		t.Errorf("%d-star pattern matched a path without b", 20)
	}
	r, _ = parseIgnoreLine(strings.Repeat("**/a/", 20)+"c", "")
	if !matchSegments(r.segments, deep) {
		t.Errorf("%d-star pattern did not match", 20)
	}
	r, _ = parseIgnoreLine("**/**/**/x/**/**", "")
	if got := strings.Join(r.segments, "/"); got != "**/x/**" {
		t.Errorf("segments = %q, want consecutive stars collapsed to **/x/**", got)
	}
	if _, ok := parseIgnoreLine(strings.Repeat("a/", 2*MaxDepth+4), ""); ok {
		t.Error("a pattern deeper than any walked path was kept")
	}
}
