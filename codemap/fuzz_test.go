//go:build cgo

package codemap

import (
	"strings"
	"testing"
)

// FuzzOutline feeds arbitrary bytes to every entry point under a few
// language names. Properties: no panic, lines within the source, symbols in
// source order, a clean parse agrees with an empty error, identifiers in
// order and within their lines.
func FuzzOutline(f *testing.F) {
	for _, path := range fixtureFiles(f) {
		f.Add(strings.TrimPrefix(path, "testdata/outline/sample"), readFixture(f, path))
	}
	f.Add(".go", []byte("package p\nfunc (((\n"))
	f.Add(".py", []byte("class A:\n\tdef f(:\n"))
	f.Add(".js", []byte(strings.Repeat("{", 3000)))
	f.Add(".c", []byte("typedef struct { int a; } ;\nint (*f)(int) = 0;\n"))
	f.Add(".lua", []byte("function a.b.c:d() end\n"))
	f.Add(".ex", []byte("defmodule do def end end"))
	f.Fuzz(func(t *testing.T, ext string, src []byte) {
		path := "f" + ext
		if _, ok := LanguageOf(path); !ok || len(src) > 1<<16 {
			return
		}
		lines := strings.Count(string(src), "\n") + 1
		syms, err := Outline(path, src)
		if err != nil {
			t.Fatalf("Outline: %v", err)
		}
		for i, s := range syms {
			if s.Line < 1 || s.Line > lines || s.EndLine > lines || s.Name == "" || s.Kind == "" {
				t.Fatalf("symbol %+v out of a %d-line source", s, lines)
			}
			if i > 0 && s.Line < syms[i-1].Line {
				t.Fatalf("symbol %+v before %+v: not in source order", s, syms[i-1])
			}
		}
		ids, err := Identifiers(path, src)
		if err != nil {
			t.Fatalf("Identifiers: %v", err)
		}
		for i, id := range ids {
			if id.Line < 1 || id.Line > lines || id.Column < 1 || id.Name == "" {
				t.Fatalf("identifier %+v out of a %d-line source", id, lines)
			}
			if i > 0 && (id.Line < ids[i-1].Line || id.Line == ids[i-1].Line && id.Column <= ids[i-1].Column) {
				t.Fatalf("identifier %+v after %+v", id, ids[i-1])
			}
		}
		issue, err := FirstSyntaxError(path, src)
		if err != nil {
			t.Fatalf("FirstSyntaxError: %v", err)
		}
		if issue != nil && (issue.Line < 1 || issue.Line > lines || len(issue.Snippet) > maxSnippetBytes) {
			t.Fatalf("issue %+v out of a %d-line source", issue, lines)
		}
	})
}
