package main_test

// The dependency guard: what is linked into the module's packages, who may
// import whom, and what go.mod may require. It asks the go command
// (go list -deps, go mod edit -json) rather than parsing source, so build
// constraints and cgo are resolved exactly as a build resolves them, once
// with CGO_ENABLED=0 and once with CGO_ENABLED=1.
//
// The rule is about what is linked: test-only imports are not part of
// `go list -deps ./...` and are not checked here.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// modulePath is the project's own module.
const modulePath = "winx"

// allowedModules returns the only modules outside the standard library that
// may be linked or required (docs/design.md, "What it is").
func allowedModules() []string {
	return []string{
		"golang.org/x/sys",
		"golang.org/x/term",
		"github.com/creack/pty",
		"github.com/smacker/go-tree-sitter",
	}
}

// importRule is one row of the package table in docs/design.md. The standard
// library is always allowed; a package may always import packages of its own
// group.
type importRule struct {
	imports   []string // other groups of this module it may import
	anyGroup  bool     // it may import any group of this module...
	except    []string // ...except these
	modules   []string // modules outside the standard library it may import directly
	anyModule bool     // it may import any allowed module directly
	cgo       bool     // it may use cgo
}

// importTable returns the rows keyed by group: a path relative to the module
// root. A package belongs to the group of the longest row that is its path or
// a parent of it, so mcp/internal/x counts as mcp while mcp/mcptest and
// mcp/tools have rows of their own. A package in no group is a violation: add
// its row here and in docs/design.md.
func importTable() map[string]importRule {
	return map[string]importRule{
		"jsonrpc":     {},
		"mcp":         {imports: []string{"jsonrpc"}},
		"mcp/mcptest": {imports: []string{"mcp", "jsonrpc"}},
		// The HTTP server assembly: admission (auth/admission) and callers
		// (auth) in front of the protocol; tool profiles come from its caller.
		"mcp/httpserve": {imports: []string{"mcp", "jsonrpc", "auth"}},
		// The session registry: below the tools, above the domain packages;
		// it takes its shells from a guardian/runtime factory, never codemap
		// (cgo) nor mcp/tools.
		"mcp/session": {imports: []string{"guardian", "guardian/runtime", "edit", "edit/atomicfile", "evidence", "evidence/redact", "auth"}},
		// Workspace services: overview, context collection, saved contexts.
		"mcp/workspace": {imports: []string{"evidence", "evidence/redact", "auth", "codemap/walk", "edit/atomicfile"}},
		// The model-facing catalog: tool adapters over the rooms below. It
		// never wires runtimes (guardian/runtime, daemon, remote, wire: cmd
		// does), never reaches cmd, and links no module directly.
		"mcp/tools": {imports: []string{
			"mcp", "jsonrpc", "mcp/session", "mcp/workspace",
			"auth", "evidence", "evidence/redact", "edit", "guardian", "guardian/artifacts", "codemap",
		}},
		"auth": {},
		// Evidence and its sub-packages may import each other, nothing else.
		"evidence":        {imports: []string{"evidence/redact"}},
		"evidence/redact": {imports: []string{"evidence"}},
		"edit":            {imports: []string{"evidence", "evidence/redact", "edit/atomicfile"}},
		// Directory descriptors walked with O_NOFOLLOW (openat, renameat,
		// linkat): the kernel, not a path check, keeps commits in place.
		"edit/atomicfile": {modules: []string{"golang.org/x/sys"}},
		"vt":              {},
		"pty": {modules: []string{
			"github.com/creack/pty",
			"golang.org/x/sys",
			"golang.org/x/term",
		}},
		// The shell session itself, and the rooms of the durable runtime
		// beside it, each with what it may reach.
		"guardian":           {imports: []string{"jsonrpc", "pty", "vt", "evidence/redact", "edit/atomicfile"}},
		"guardian/artifacts": {},
		"guardian/wire":      {imports: []string{"jsonrpc", "edit/atomicfile"}},
		// Private directories for test processes (tests only).
		"guardian/wire/hermetic": {},
		"guardian/remote":        {imports: []string{"guardian", "guardian/wire", "jsonrpc", "pty", "vt", "evidence/redact", "edit/atomicfile"}},
		// winxd watches its guardians through pidfds on one epoll
		// (x/sys) and is the subreaper of what a dead one leaves (pty).
		// x/term: attach --interactive puts the person's terminal in raw
		// mode (guardian/daemon/operator).
		"guardian/daemon": {imports: []string{"guardian", "guardian/remote", "guardian/wire", "jsonrpc", "edit/atomicfile", "evidence/redact", "pty"},
			modules: []string{"golang.org/x/sys", "golang.org/x/term"}},
		"guardian/runtime": {imports: []string{"guardian", "guardian/daemon", "guardian/remote", "guardian/wire", "evidence/redact"}},
		"codemap":          {imports: []string{"codemap/walk"}, modules: []string{"github.com/smacker/go-tree-sitter"}, cgo: true},
		// The pure-Go walker that codemap shares with the workspace services.
		"codemap/walk": {},
		"fuzz":         {anyGroup: true, anyModule: true},
		"cmd":          {anyGroup: true, anyModule: true},
		// Fail, not skip, a test whose kernel feature is missing under CI
		// (tests only).
		"pty/testenv": {},
	}
}

// listedPackage is the part of `go list -json` output the guard reads.
type listedPackage struct {
	ImportPath string
	Standard   bool
	Module     *struct{ Path string }
	Imports    []string
	CgoFiles   []string
}

func (p *listedPackage) modulePath() string {
	if p.Module == nil {
		return ""
	}
	return p.Module.Path
}

// requirement is one require line of go.mod, as `go mod edit -json` gives it.
type requirement struct {
	Path     string
	Version  string
	Indirect bool
}

// groupOf returns the table row that rel (a path relative to the module root,
// "" for the root package) belongs to, and false if none does.
func groupOf(table map[string]importRule, rel string) (string, bool) {
	for g := rel; g != "" && g != "."; g = parentDir(g) {
		if _, ok := table[g]; ok {
			return g, true
		}
	}
	return "", false
}

func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	return p[:i]
}

// relPath returns the module-relative path of a package in the project's
// module: "" for the root package itself.
func relPath(importPath string) string {
	if importPath == modulePath {
		return ""
	}
	return strings.TrimPrefix(importPath, modulePath+"/")
}

// checkDeps returns one line per violation in pkgs, the output of
// `go list -deps -json ./...`, sorted.
func checkDeps(table map[string]importRule, pkgs []listedPackage) []string {
	byPath := make(map[string]*listedPackage, len(pkgs))
	for i := range pkgs {
		byPath[pkgs[i].ImportPath] = &pkgs[i]
	}
	var bad []string
	report := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }

	for i := range pkgs {
		p := &pkgs[i]
		if p.Standard || p.ImportPath == "C" {
			continue
		}
		mod := p.modulePath()
		if mod != modulePath {
			// (a) Everything linked is stdlib, ours, or one of the four.
			if !slices.Contains(allowedModules(), mod) {
				report("%s is linked from module %q, which is not in the allowed list %v", p.ImportPath, mod, allowedModules())
			}
			continue
		}

		// (b) The import table, for the project's own packages.
		rel := relPath(p.ImportPath)
		group, ok := groupOf(table, rel)
		if !ok {
			report("%s is in no row of the import table (cmd/winx/imports_test.go, docs/design.md)", p.ImportPath)
			continue
		}
		rule := table[group]
		if len(p.CgoFiles) > 0 && !rule.cgo {
			report("%s (row %s) uses cgo in %v; only codemap may", p.ImportPath, group, p.CgoFiles)
		}
		for _, imp := range p.Imports {
			if imp == "C" {
				continue // cgo itself: checked above.
			}
			dep, ok := byPath[imp]
			if !ok {
				report("%s imports %s, which go list did not describe", p.ImportPath, imp)
				continue
			}
			if dep.Standard {
				continue
			}
			if depMod := dep.modulePath(); depMod != modulePath {
				if !rule.anyModule && !slices.Contains(rule.modules, depMod) {
					report("%s (row %s) imports %s from module %s; the row allows modules %v", p.ImportPath, group, imp, depMod, rule.modules)
				}
				continue
			}
			depGroup, ok := groupOf(table, relPath(imp))
			if !ok {
				continue // reported once as a package of its own.
			}
			switch {
			case depGroup == group:
			case rule.anyGroup && !slices.Contains(rule.except, depGroup):
			case !rule.anyGroup && slices.Contains(rule.imports, depGroup):
			default:
				report("%s (row %s) imports %s (row %s); %s", p.ImportPath, group, imp, depGroup, describe(rule))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

func describe(r importRule) string {
	switch {
	case r.anyGroup && len(r.except) > 0:
		return fmt.Sprintf("the row allows anything but %v", r.except)
	case r.anyGroup:
		return "the row allows anything"
	case len(r.imports) == 0:
		return "the row allows none of the project's packages"
	default:
		return fmt.Sprintf("the row allows only %v", r.imports)
	}
}

// checkRequires returns one line per go.mod requirement outside the allowed
// modules, direct or indirect.
func checkRequires(reqs []requirement) []string {
	var bad []string
	for _, r := range reqs {
		if !slices.Contains(allowedModules(), r.Path) {
			kind := "requires"
			if r.Indirect {
				kind = "requires (indirect)"
			}
			bad = append(bad, fmt.Sprintf("go.mod %s %s %s, which is not in the allowed list %v", kind, r.Path, r.Version, allowedModules()))
		}
	}
	sort.Strings(bad)
	return bad
}

// moduleRoot walks up from the working directory to the directory holding
// go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod above the test's working directory")
		}
		dir = parent
	}
}

// goCmd runs the go command in dir with extra environment and returns its
// standard output.
func goCmd(t *testing.T, dir string, env []string, args ...string) []byte {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the dependency guard needs the go command: %v", err)
	}
	cmd := exec.Command(goBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", strings.Join(env, " "), strings.Join(cmd.Args, " "), err, stderr.Bytes())
	}
	return out
}

func decodePackages(data []byte) ([]listedPackage, error) {
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs, nil
		} else if err != nil {
			return nil, err
		}
		pkgs = append(pkgs, p)
	}
}

func TestDependencies(t *testing.T) {
	root := moduleRoot(t)

	var mod struct {
		Module  struct{ Path string }
		Require []requirement
	}
	if err := json.Unmarshal(goCmd(t, root, nil, "mod", "edit", "-json"), &mod); err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	if mod.Module.Path != modulePath {
		t.Fatalf("go.mod at %s declares module %q, want %q", root, mod.Module.Path, modulePath)
	}
	for _, v := range checkRequires(mod.Require) {
		t.Error(v)
	}

	for _, cgo := range []string{"0", "1"} {
		t.Run("CGO_ENABLED="+cgo, func(t *testing.T) {
			out := goCmd(t, root, []string{"CGO_ENABLED=" + cgo},
				"list", "-deps", "-json=ImportPath,Standard,Module,Imports,CgoFiles", "./...")
			pkgs, err := decodePackages(out)
			if err != nil {
				t.Fatalf("decoding go list output: %v", err)
			}
			ours := 0
			for _, p := range pkgs {
				if p.modulePath() == modulePath {
					ours++
				}
			}
			if ours == 0 {
				t.Fatalf("go list -deps ./... described none of the module's packages")
			}
			for _, v := range checkDeps(importTable(), pkgs) {
				t.Error(v)
			}
		})
	}
}

// TestCheckDeps shows the guard failing on synthetic graphs, so a green
// TestDependencies means the rules held rather than that nothing was checked.
func TestCheckDeps(t *testing.T) {
	std := func(path string) listedPackage { return listedPackage{ImportPath: path, Standard: true} }
	in := func(module, path string, imports ...string) listedPackage {
		return listedPackage{ImportPath: path, Module: &struct{ Path string }{module}, Imports: imports}
	}
	our := func(path string, imports ...string) listedPackage { return in(modulePath, path, imports...) }
	// base is a graph that satisfies every rule; each case adds to it.
	base := []listedPackage{
		std("fmt"), std("os"), std("runtime/cgo"),
		in("golang.org/x/sys", "golang.org/x/sys/unix"),
		in("golang.org/x/term", "golang.org/x/term", "golang.org/x/sys/unix"),
		in("github.com/creack/pty", "github.com/creack/pty", "golang.org/x/sys/unix"),
		in("github.com/smacker/go-tree-sitter", "github.com/smacker/go-tree-sitter"),
		in("github.com/smacker/go-tree-sitter", "github.com/smacker/go-tree-sitter/golang", "github.com/smacker/go-tree-sitter"),
		our("winx/jsonrpc", "fmt"),
		our("winx/mcp", "fmt", "winx/jsonrpc", "winx/mcp/internal/schema"),
		our("winx/mcp/internal/schema", "winx/jsonrpc"),
		our("winx/mcp/mcptest", "winx/mcp", "winx/jsonrpc"),
		our("winx/auth", "os"),
		our("winx/evidence", "winx/evidence/redact"),
		our("winx/evidence/redact"),
		our("winx/edit", "winx/evidence"),
		our("winx/vt"),
		our("winx/pty", "github.com/creack/pty", "golang.org/x/sys/unix", "golang.org/x/term"),
		our("winx/guardian", "winx/jsonrpc", "winx/pty", "winx/vt", "winx/evidence/redact"),
		func() listedPackage {
			p := our("winx/codemap", "C", "runtime/cgo", "github.com/smacker/go-tree-sitter", "github.com/smacker/go-tree-sitter/golang")
			p.CgoFiles = []string{"parse.go"}
			return p
		}(),
		our("winx/mcp/tools", "winx/mcp", "winx/guardian", "winx/codemap", "winx/auth", "winx/edit"),
		our("winx/fuzz", "winx/mcp/tools", "winx/cmd/internal/buildid"),
		our("winx/cmd/internal/buildid", "fmt"),
		our("winx/cmd/winx", "winx/mcp/tools", "winx/cmd/internal/buildid", "golang.org/x/term"),
	}

	tests := []struct {
		name  string
		add   []listedPackage
		wants []string // substrings, one per expected violation, in sorted order
	}{
		{name: "clean graph"},
		{
			name:  "foreign module linked",
			add:   []listedPackage{in("github.com/stretchr/testify", "github.com/stretchr/testify/assert")},
			wants: []string{`github.com/stretchr/testify/assert is linked from module "github.com/stretchr/testify"`},
		},
		{
			name:  "jsonrpc imports mcp",
			add:   []listedPackage{our("winx/jsonrpc/internal/x", "winx/mcp")},
			wants: []string{"winx/jsonrpc/internal/x (row jsonrpc) imports winx/mcp (row mcp)"},
		},
		{
			name:  "mcp imports mcptest",
			add:   []listedPackage{our("winx/mcp/internal/y", "winx/mcp/mcptest")},
			wants: []string{"winx/mcp/internal/y (row mcp) imports winx/mcp/mcptest (row mcp/mcptest)"},
		},
		{
			name:  "mcptest imports tools",
			add:   []listedPackage{our("winx/mcp/mcptest/z", "winx/mcp/tools")},
			wants: []string{"(row mcp/mcptest) imports winx/mcp/tools (row mcp/tools)"},
		},
		{
			name:  "auth imports evidence",
			add:   []listedPackage{our("winx/auth/token", "winx/evidence")},
			wants: []string{"winx/auth/token (row auth) imports winx/evidence (row evidence); the row allows none"},
		},
		{
			name:  "evidence imports vt",
			add:   []listedPackage{our("winx/evidence/ledger", "winx/vt")},
			wants: []string{"winx/evidence/ledger (row evidence) imports winx/vt"},
		},
		{
			name:  "edit imports guardian",
			add:   []listedPackage{our("winx/edit/plan", "winx/evidence", "winx/guardian")},
			wants: []string{"winx/edit/plan (row edit) imports winx/guardian"},
		},
		{
			name:  "guardian imports evidence root",
			add:   []listedPackage{our("winx/guardian/journal", "winx/evidence/redact", "winx/evidence")},
			wants: []string{"winx/guardian/journal (row guardian) imports winx/evidence (row evidence)"},
		},
		{
			name:  "guardian imports x/sys directly",
			add:   []listedPackage{our("winx/guardian/sock", "golang.org/x/sys/unix")},
			wants: []string{"winx/guardian/sock (row guardian) imports golang.org/x/sys/unix from module golang.org/x/sys"},
		},
		{
			name:  "pty imports jsonrpc",
			add:   []listedPackage{our("winx/pty/group", "winx/jsonrpc")},
			wants: []string{"winx/pty/group (row pty) imports winx/jsonrpc"},
		},
		{
			name:  "codemap imports x/sys",
			add:   []listedPackage{our("winx/codemap/rank", "golang.org/x/sys/unix")},
			wants: []string{"winx/codemap/rank (row codemap) imports golang.org/x/sys/unix"},
		},
		{
			name:  "tools imports cmd",
			add:   []listedPackage{our("winx/mcp/tools/shell", "winx/cmd/internal/buildid")},
			wants: []string{"winx/mcp/tools/shell (row mcp/tools) imports winx/cmd/internal/buildid (row cmd); the row allows only"},
		},
		{
			name:  "tools wires a runtime",
			add:   []listedPackage{our("winx/guardian/daemon"), our("winx/mcp/tools/run", "winx/guardian/daemon")},
			wants: []string{"winx/mcp/tools/run (row mcp/tools) imports winx/guardian/daemon (row guardian/daemon)"},
		},
		{
			name:  "tools imports fuzz",
			add:   []listedPackage{our("winx/mcp/tools/x", "winx/fuzz")},
			wants: []string{"winx/mcp/tools/x (row mcp/tools) imports winx/fuzz (row fuzz)"},
		},
		{
			name:  "tools links a module directly",
			add:   []listedPackage{our("winx/mcp/tools/term", "golang.org/x/sys/unix")},
			wants: []string{"winx/mcp/tools/term (row mcp/tools) imports golang.org/x/sys/unix from module golang.org/x/sys"},
		},
		{
			name: "tools links a foreign module",
			add:  []listedPackage{in("github.com/stretchr/testify", "github.com/stretchr/testify/assert"), our("winx/mcp/tools/check", "github.com/stretchr/testify/assert")},
			wants: []string{
				`github.com/stretchr/testify/assert is linked from module "github.com/stretchr/testify"`,
				"winx/mcp/tools/check (row mcp/tools) imports github.com/stretchr/testify/assert from module github.com/stretchr/testify",
			},
		},
		{
			name:  "session imports tools",
			add:   []listedPackage{our("winx/mcp/session/x", "winx/mcp/tools")},
			wants: []string{"winx/mcp/session/x (row mcp/session) imports winx/mcp/tools (row mcp/tools)"},
		},
		{
			name:  "workspace imports codemap",
			add:   []listedPackage{our("winx/mcp/workspace", "winx/codemap")},
			wants: []string{"winx/mcp/workspace (row mcp/workspace) imports winx/codemap (row codemap)"},
		},
		{
			name:  "policy imports mcp",
			add:   []listedPackage{our("winx/auth/policy", "winx/mcp")},
			wants: []string{"winx/auth/policy (row auth) imports winx/mcp (row mcp)"},
		},
		{
			name: "cgo outside codemap",
			add: []listedPackage{func() listedPackage {
				p := our("winx/vt/fast", "C")
				p.CgoFiles = []string{"fast.go"}
				return p
			}()},
			wants: []string{"winx/vt/fast (row vt) uses cgo in [fast.go]"},
		},
		{
			name:  "package in no row",
			add:   []listedPackage{our("winx/util", "fmt"), our("winx", "fmt")},
			wants: []string{"winx is in no row", "winx/util is in no row"},
		},
		{
			name:  "import not described",
			add:   []listedPackage{our("winx/vt/x", "winx/vt/missing")},
			wants: []string{"winx/vt/x imports winx/vt/missing, which go list did not describe"},
		},
		{
			name: "fuzz and cmd may import anything",
			add: []listedPackage{
				our("winx/fuzz/http", "winx/mcp/mcptest", "winx/cmd/internal/buildid", "golang.org/x/sys/unix"),
				our("winx/cmd/winxd", "winx/guardian", "winx/fuzz", "github.com/creack/pty"),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pkgs := append(slices.Clone(base), tt.add...)
			got := checkDeps(importTable(), pkgs)
			if len(got) != len(tt.wants) {
				t.Fatalf("checkDeps() = %d violations %q, want %d matching %q", len(got), got, len(tt.wants), tt.wants)
			}
			for i, want := range tt.wants {
				if !strings.Contains(got[i], want) {
					t.Errorf("checkDeps()[%d] = %q, want it to contain %q", i, got[i], want)
				}
			}
		})
	}
}

func TestCheckRequires(t *testing.T) {
	tests := []struct {
		name  string
		reqs  []requirement
		wants []string
	}{
		{name: "none"},
		{
			name: "the four",
			reqs: []requirement{
				{Path: "github.com/creack/pty", Version: "v1.1.24"},
				{Path: "github.com/smacker/go-tree-sitter", Version: "v0.0.0-20240827094217-dd81d9e9be82"},
				{Path: "golang.org/x/term", Version: "v0.48.0"},
				{Path: "golang.org/x/sys", Version: "v0.50.0", Indirect: true},
			},
		},
		{
			name: "foreign direct and indirect",
			reqs: []requirement{
				{Path: "golang.org/x/sys", Version: "v0.50.0"},
				{Path: "github.com/stretchr/testify", Version: "v1.9.0", Indirect: true},
				{Path: "golang.org/x/mod", Version: "v0.20.0"},
			},
			wants: []string{
				"go.mod requires (indirect) github.com/stretchr/testify v1.9.0",
				"go.mod requires golang.org/x/mod v0.20.0",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkRequires(tt.reqs)
			if len(got) != len(tt.wants) {
				t.Fatalf("checkRequires() = %q, want %d matching %q", got, len(tt.wants), tt.wants)
			}
			for i, want := range tt.wants {
				if !strings.Contains(got[i], want) {
					t.Errorf("checkRequires()[%d] = %q, want it to contain %q", i, got[i], want)
				}
			}
		})
	}
}
