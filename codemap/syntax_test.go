//go:build cgo

package codemap

import (
	"strings"
	"testing"
)

func TestFirstSyntaxError(t *testing.T) {
	tests := []struct {
		name, path, src string
		line            int // 0: parses cleanly
		snippet         string
	}{
		{name: "clean go", path: "ok.go", src: "package p\n\nfunc f() int {\n\treturn 1\n}\n"},
		{name: "clean python", path: "ok.py", src: "def f():\n    return 1\n"},
		{name: "empty", path: "e.go", src: ""},
		{
			name: "go unbalanced expression", path: "bad.go",
			src:  "package p\n\nfunc a() int {\n\treturn 1\n}\n\nfunc b() {\n\tx := 1 + )\n\t_ = x\n}\n",
			line: 8, snippet: "x := 1 + )",
		},
		{
			name: "go missing brace", path: "brace.go",
			src:  "package p\n\nfunc a() {\n\tif true {\n\t\treturn\n}\n",
			line: 7,
		},
		{
			name: "python unclosed parameters", path: "bad.py",
			src:  "def f():\n    return 1\n\nclass A:\n    def g(self:\n        pass\n",
			line: 5, snippet: "def g(self:",
		},
		{
			name: "javascript", path: "bad.js",
			src:  "function f() {\n  return 1;\n}\nconst x = ;\n",
			line: 4, snippet: "const x = ;",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			issue, err := FirstSyntaxError(tt.path, []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if tt.line == 0 {
				if issue != nil {
					t.Fatalf("FirstSyntaxError = %+v, want nil", issue)
				}
				return
			}
			if issue == nil {
				t.Fatalf("FirstSyntaxError = nil, want line %d", tt.line)
			}
			if issue.Line != tt.line || issue.Column < 1 {
				t.Errorf("FirstSyntaxError = %+v, want line %d", issue, tt.line)
			}
			if tt.snippet != "" && issue.Snippet != tt.snippet {
				t.Errorf("snippet = %q, want %q", issue.Snippet, tt.snippet)
			}
		})
	}
}

func TestSnippetAt(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes
	src := []byte("a\n\t  indented line  \n" + long + "\n")
	if got := snippetAt(src, 2); got != "indented line" {
		t.Errorf("snippetAt(2) = %q", got)
	}
	got := snippetAt(src, 3)
	if len(got) > maxSnippetBytes || !strings.HasPrefix(long, got) || len(got) < maxSnippetBytes-1 {
		t.Errorf("snippetAt(3) = %d bytes %q, want a prefix of at most %d bytes on a rune boundary", len(got), got, maxSnippetBytes)
	}
	if got := snippetAt(src, 9); got != "" {
		t.Errorf("snippetAt(9) = %q, want empty", got)
	}
}
