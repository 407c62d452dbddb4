package codemap

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
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

// writeTree writes files (slash paths relative to root) with contents.
func writeTree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for rel, body := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func walkRels(t *testing.T, root, dir string) []string {
	t.Helper()
	files, err := Walk(context.Background(), root, dir)
	if err != nil {
		t.Fatalf("Walk(%q): %v", dir, err)
	}
	var rels []string
	for _, f := range files {
		rels = append(rels, f.Rel)
	}
	return rels
}

func TestWalk(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		".gitignore":               "/build/\n*.gen.go\n!keep.gen.go\nlogs\n",
		".git/info/exclude":        "secret.go\n",
		".git/config.go":           "package git\n",
		"main.go":                  "package main\n",
		"secret.go":                "package main\n",
		"x.gen.go":                 "package main\n",
		"keep.gen.go":              "package main\n",
		"README.md":                "# not source\n",
		"build/out.go":             "package build\n",
		"src/build/ok.go":          "package build\n",
		"src/a.go":                 "package src\n",
		"src/.gitignore":           "local.go\n!x.gen.go\n",
		"src/local.go":             "package src\n",
		"src/x.gen.go":             "package src\n",
		"src/logs/l.go":            "package logs\n",
		"vendor/v/v.go":            "package v\n",
		"node_modules/m/index.js":  "module.exports = 1\n",
		"third_party/t/t.go":       "package t\n",
		"web/app.js":               "function a() {}\n",
		"web/app.min.js":           "function a(){}\n",
		".winx/tmp/s.go":           "package s\n",
		"deep/er/est/f.py":         "def f(): pass\n",
		"deep/er/.gitignore":       "est/\n",
		"deep/er/g.py":             "def g(): pass\n",
		"big/huge.go":              "package big\n" + strings.Repeat("// x\n", MaxSourceBytes/5+1),
		"sub/ignored/inside/in.go": "package in\n",
		"sub/.gitignore":           "ignored\n",
	})
	if err := os.Symlink(filepath.Join(root, "main.go"), filepath.Join(root, "link.go")); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"o.go": "package o\n"})
	if err := os.Symlink(outside, filepath.Join(root, "outdir")); err != nil {
		t.Fatal(err)
	}
	got := walkRels(t, root, "")
	want := []string{"deep/er/g.py", "keep.gen.go", "main.go", "src/a.go", "src/build/ok.go", "src/x.gen.go", "web/app.js"}
	if !slices.Equal(got, want) {
		t.Errorf("Walk = %q\nwant %q", got, want)
	}
	if got := walkRels(t, root, "src"); !slices.Equal(got, []string{"src/a.go", "src/build/ok.go", "src/x.gen.go"}) {
		t.Errorf("Walk(src) = %q", got)
	}
	for _, dir := range []string{"build", "vendor", "sub/ignored", "src/logs"} {
		if got := walkRels(t, root, dir); len(got) != 0 {
			t.Errorf("Walk(%q) = %q, want nothing (ignored or skipped)", dir, got)
		}
	}
	if got := walkRels(t, root, "main.go"); !slices.Equal(got, []string{"main.go"}) {
		t.Errorf("Walk(main.go) = %q, want the file itself", got)
	}
	if _, err := Walk(context.Background(), root, "main.go/x"); err == nil {
		t.Errorf("Walk(below a file) succeeded, want an error")
	}
	if _, err := Walk(context.Background(), root, "nope"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Walk(missing) = %v, want ErrNotExist", err)
	}
}

func TestWalkLimit(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.go": "", "b.go": "", "c/d.go": "", "e.txt": ""})
	w := &walker{ctx: context.Background(), root: root, limit: 3}
	_, err := w.run("")
	var le *WalkLimitError
	if !errors.As(err, &le) || !errors.Is(err, ErrTooManyFiles) || le.Limit != 3 {
		t.Fatalf("walk over the limit = %v, want *WalkLimitError wrapping ErrTooManyFiles", err)
	}
	w = &walker{ctx: context.Background(), root: root, limit: 4}
	if files, err := w.run(""); err != nil || len(files) != 3 {
		t.Errorf("walk at the limit = %d files, %v; want 3 source files", len(files), err)
	}
}

func TestWalkCancelled(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.go": ""})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Walk(ctx, root, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("Walk(cancelled) = %v, want context.Canceled", err)
	}
}

func TestIsGenerated(t *testing.T) {
	tests := []struct {
		src  string
		want bool
	}{
		{"// Code generated by protoc-gen-go. DO NOT EDIT.\npackage x\n", true},
		{"// Copyright\n\n// Code generated by stringer; DO NOT EDIT.\n\npackage x\n", true},
		{"# Code generated by tool. DO NOT EDIT.\ndef f(): pass\n", true},
		{"package x\n// this Code generated text has no marker\n", false},
		{"package x\n", false},
		{strings.Repeat("\n", generatedMarkerWindow) + "// Code generated by x. DO NOT EDIT.\n", false},
	}
	for _, tc := range tests {
		if got := isGenerated([]byte(tc.src)); got != tc.want {
			t.Errorf("isGenerated(%.40q) = %v, want %v", tc.src, got, tc.want)
		}
	}
}

func TestCursorRoundTrip(t *testing.T) {
	d := requestDigest("map", "/r", "", "q")
	c := encodeCursor(42, d)
	if off, err := decodeCursor(c, d); err != nil || off != 42 {
		t.Errorf("decodeCursor(encodeCursor(42)) = %d, %v", off, err)
	}
	other := requestDigest("map", "/r", "", "other")
	if _, err := decodeCursor(c, other); !errors.Is(err, ErrBadCursor) {
		t.Errorf("cursor of another request = %v, want ErrBadCursor", err)
	}
	for _, bad := range []string{"!!", "Zm9v", strings.Repeat("A", 200)} {
		var ce *CursorError
		if _, err := decodeCursor(bad, d); !errors.As(err, &ce) {
			t.Errorf("decodeCursor(%q) = %v, want *CursorError", bad, err)
		}
	}
}

func TestContainsWord(t *testing.T) {
	tests := []struct {
		src, name string
		want      bool
	}{
		{"x := NewReader(r)", "NewReader", true},
		{"x := bufio.NewReaderSize(r)", "NewReader", false},
		{"MyNewReader NewReader", "NewReader", true},
		{"NewReader", "NewReader", true},
		{"_NewReader", "NewReader", false},
		{"$foo = 1", "foo", true},
	}
	for _, tc := range tests {
		if got := containsWord([]byte(tc.src), tc.name); got != tc.want {
			t.Errorf("containsWord(%q, %q) = %v, want %v", tc.src, tc.name, got, tc.want)
		}
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
	if _, ok := parseIgnoreLine(strings.Repeat("a/", 2*MaxWalkDepth+4), ""); ok {
		t.Error("a pattern deeper than any walked path was kept")
	}
}
