package main

// The docs guard: docs/tools.md names every tool, status and error code the
// code defines, and docs/design.md and the README's environment table name
// every variable the configuration reads. The lists come from the code's
// own sources of truth (the registry, the constants, config.Variables), not
// from a copy here, so a new tool, code or variable fails this test until
// the docs say it.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"winx/cmd/internal/config"
	"winx/guardian/runtime"
	"winx/mcp/session"
	"winx/mcp/tools"
)

// repoFile reads a file of the repository, relative to its root.
func repoFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// stringConsts returns the string constants declared in the non-test Go
// files of the package in dir (relative to the repository root) whose
// name satisfies keep(name, declared type), in source order.
func stringConsts(t *testing.T, dir string, keep func(name, typ string) bool) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join("..", "..", filepath.FromSlash(dir), "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				typ := ""
				if id, ok := vs.Type.(*ast.Ident); ok {
					typ = id.Name
				}
				for i, name := range vs.Names {
					if i >= len(vs.Values) || !keep(name.Name, typ) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Contains(out, v) {
						out = append(out, v)
					}
				}
			}
		}
	}
	return out
}

// namePrefix keeps constants whose name is prefix followed by an upper-case
// letter (codeReadRequired, ReasonBusy).
func namePrefix(prefix string) func(name, typ string) bool {
	return func(name, _ string) bool {
		return len(name) > len(prefix) && strings.HasPrefix(name, prefix) &&
			name[len(prefix)] >= 'A' && name[len(prefix)] <= 'Z'
	}
}

// snakeCase is the shape of an error code.
var snakeCase = regexp.MustCompile(`^[a-z]+(_[a-z0-9]+)*$`)

// mentions reports whether doc names word as a whole word.
func mentions(doc, word string) bool {
	return regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(word) + `($|[^A-Za-z0-9_])`).MatchString(doc)
}

func TestDocsNameTheCatalog(t *testing.T) {
	doc := repoFile(t, "docs/tools.md")
	reg := tools.NewRegistry(tools.Options{Sessions: session.NewSessions(runtime.Embedded(runtime.Options{}), time.Now)})
	names := reg.ToolNames()
	statuses := stringConsts(t, "mcp", func(_, typ string) bool { return typ == "Status" })
	// Error codes are the code… constants of mcp/tools whose value is a
	// snake_case code (codeMapDescription is prose), and edit's Reason…
	// constants, which EditFiles answers as codes.
	var codes []string
	for _, c := range append(stringConsts(t, "mcp/tools", namePrefix("code")), stringConsts(t, "edit", namePrefix("Reason"))...) {
		if snakeCase.MatchString(c) {
			codes = append(codes, c)
		}
	}
	// A source that yields nothing has moved: the test would pass vacuously.
	if len(names) < 7 || len(statuses) < 10 || len(codes) < 30 {
		t.Fatalf("found %d tools, %d statuses, %d error codes: a source of truth moved", len(names), len(statuses), len(codes))
	}
	for _, set := range []struct {
		kind  string
		words []string
	}{{"tool", names}, {"status", statuses}, {"error code", codes}} {
		for _, w := range set.words {
			if !mentions(doc, w) {
				t.Errorf("docs/tools.md does not name the %s %q", set.kind, w)
			}
		}
	}
}

func TestDocsNameTheVariables(t *testing.T) {
	design := repoFile(t, "docs/design.md")
	// The README's environment table: rows whose first cell names variables.
	var table []string
	for line := range strings.SplitSeq(repoFile(t, "README.md"), "\n") {
		if cells := strings.Split(line, "|"); len(cells) > 2 && strings.TrimSpace(cells[0]) == "" {
			table = append(table, cells[1])
		}
	}
	readme := strings.Join(table, "\n")
	vars := config.Variables()
	if len(vars) < 20 {
		t.Fatalf("config.Variables() lists %d variables: the source of truth moved", len(vars))
	}
	for _, v := range vars {
		if !mentions(design, v.Name) {
			t.Errorf("docs/design.md does not name the variable %s", v.Name)
		}
		if !strings.Contains(readme, "`"+v.Name+"`") {
			t.Errorf("the README's environment table has no row for %s", v.Name)
		}
	}
}
