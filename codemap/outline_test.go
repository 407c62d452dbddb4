//go:build cgo

package codemap

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/outline")

// renderOutline writes one line per symbol: "line-endLine kind container.name".
func renderOutline(syms []Symbol) string {
	var b strings.Builder
	for _, s := range syms {
		name := s.Name
		if s.Container != "" {
			name = s.Container + "." + name
		}
		fmt.Fprintf(&b, "%d-%d %s %s\n", s.Line, s.EndLine, s.Kind, name)
	}
	return b.String()
}

// TestOutlineGolden checks the outline of one fixture per language against
// its golden file; every supported language must have one.
func TestOutlineGolden(t *testing.T) {
	covered := map[string]bool{}
	for _, f := range fixtureFiles(t) {
		lang, ok := LanguageOf(f)
		if !ok {
			t.Errorf("fixture %s has no language", f)
			continue
		}
		covered[lang] = true
		t.Run(filepath.Base(f), func(t *testing.T) {
			src := readFixture(t, f)
			syms, err := Outline(f, src)
			if err != nil {
				t.Fatalf("Outline(%s): %v", f, err)
			}
			if issue, err := FirstSyntaxError(f, src); err != nil || issue != nil {
				t.Errorf("FirstSyntaxError(%s) = %+v, %v; the fixture must parse cleanly", f, issue, err)
			}
			got := renderOutline(syms)
			golden := f + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestOutlineGolden -update)", err)
			}
			if got != string(want) {
				t.Errorf("Outline(%s) =\n%s\nwant (%s)\n%s", f, got, golden, want)
			}
			for i := 1; i < len(syms); i++ {
				if syms[i].Line < syms[i-1].Line {
					t.Errorf("Outline(%s): %s at line %d follows line %d; want source order", f, syms[i].Name, syms[i].Line, syms[i-1].Line)
				}
			}
		})
	}
	for _, lang := range Languages() {
		if !covered[lang] {
			t.Errorf("language %s has no fixture in testdata/outline", lang)
		}
	}
}

// fixtureFiles returns the outline fixtures, without their golden files.
func fixtureFiles(t testing.TB) []string {
	t.Helper()
	all, err := filepath.Glob("testdata/outline/sample.*")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range all {
		if !strings.HasSuffix(f, ".golden") {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		t.Fatal("no fixtures in testdata/outline")
	}
	return out
}

func readFixture(t testing.TB, path string) []byte {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestOutlineErrors(t *testing.T) {
	_, err := Outline("notes.txt", []byte("hello"))
	var ue *UnsupportedError
	if !errors.As(err, &ue) || ue.Path != "notes.txt" {
		t.Errorf("Outline(notes.txt) error = %v, want *UnsupportedError", err)
	}
	big := make([]byte, MaxSourceBytes+1)
	_, err = Outline("big.go", big)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Size != MaxSourceBytes+1 {
		t.Errorf("Outline(big.go) error = %v, want *TooLargeError", err)
	}
	syms, err := Outline("empty.go", nil)
	if err != nil || len(syms) != 0 {
		t.Errorf("Outline(empty.go) = %v, %v; want no symbols", syms, err)
	}
}

func TestLanguageOf(t *testing.T) {
	tests := []struct {
		path, want string
		ok         bool
	}{
		{"main.go", "go", true},
		{"a/b/Script.PY", "python", true},
		{"x.d.ts", "typescript", true},
		{"App.tsx", "tsx", true},
		{"include/foo.h", "cpp", true},
		{"lib.c", "c", true},
		{"Rakefile", "ruby", true},
		{"/home/u/.bashrc", "bash", true},
		{"run.sh", "bash", true},
		{"mix.exs", "elixir", true},
		{"build.sbt", "scala", true},
		{"README.md", "", false},
		{"Makefile", "", false},
		{"noext", "", false},
	}
	for _, tt := range tests {
		got, ok := LanguageOf(tt.path)
		if got != tt.want || ok != tt.ok {
			t.Errorf("LanguageOf(%q) = %q, %v; want %q, %v", tt.path, got, ok, tt.want, tt.ok)
		}
	}
	langs := Languages()
	want := []string{"bash", "c", "cpp", "csharp", "elixir", "go", "java", "javascript", "kotlin", "lua", "php", "python", "ruby", "rust", "scala", "swift", "tsx", "typescript"}
	if !slices.Equal(langs, want) {
		t.Errorf("Languages() = %v, want %v", langs, want)
	}
	for _, l := range langs {
		if grammars[l] == nil || outlineRulesOf(l) == nil {
			t.Errorf("language %s has no grammar or no outline rules", l)
		}
	}
}
