package auth

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fencedBlocks returns the bodies of the ```lang blocks of a Markdown
// document, with the line each starts on.
func fencedBlocks(doc, lang string) (bodies []string, lines []int) {
	var cur []string
	in, start := false, 0
	for i, line := range strings.Split(doc, "\n") {
		switch {
		case !in && strings.TrimSpace(line) == "```"+lang:
			in, start, cur = true, i+2, nil
		case in && strings.TrimSpace(line) == "```":
			in = false
			bodies, lines = append(bodies, strings.Join(cur, "\n")+"\n"), append(lines, start)
		case in:
			cur = append(cur, line)
		}
	}
	return bodies, lines
}

// stdTable is a standard table header, [a.b.c] with bare keys.
var stdTable = regexp.MustCompile(`^\[([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\][ \t]*(#.*)?$`)

// checkRecipeTOML parses a TOML recipe with this package's parser. The
// principal file's subset has no standard tables, which client
// configurations (Codex's [mcp_servers.winx]) use: each such header is
// checked here (bare dotted keys, defined once) and becomes an
// array-of-tables header, so that every key and value below it still goes
// through the project's parser.
func checkRecipeTOML(body string) error {
	lines := strings.Split(body, "\n")
	seen := map[string]bool{}
	for i, line := range lines {
		m := stdTable.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		if seen[m[1]] {
			return &TOMLError{Line: i + 1, Col: 1, Msg: "table " + m[1] + " defined twice"}
		}
		seen[m[1]] = true
		lines[i] = "[[" + strings.NewReplacer(".", "_", "-", "_").Replace(m[1]) + "]]"
	}
	_, err := parseTOML([]byte(strings.Join(lines, "\n")))
	return err
}

// TestRecipesParse: every JSON, TOML and YAML block of the README and of
// docs/ is valid, so a recipe copied into a client's configuration parses.
// YAML goes through the strict subset parser of recipes_yaml_test.go.
func TestRecipesParse(t *testing.T) {
	files, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"../README.md", "../SECURITY.md"}, files...)
	counts := map[string]int{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		blocks, lines := fencedBlocks(string(b), "json")
		for i, body := range blocks {
			counts["json"]++
			var v any
			if err := json.Unmarshal([]byte(body), &v); err != nil {
				t.Errorf("%s:%d: JSON block does not parse: %v\n%s", f, lines[i], err, body)
			}
		}
		blocks, lines = fencedBlocks(string(b), "toml")
		for i, body := range blocks {
			counts["toml"]++
			if err := checkRecipeTOML(body); err != nil {
				t.Errorf("%s:%d: TOML block does not parse: %v\n%s", f, lines[i], err, body)
			}
		}
		blocks, lines = fencedBlocks(string(b), "yaml")
		for i, body := range blocks {
			counts["yaml"]++
			if _, err := parseRecipeYAML(body); err != nil {
				t.Errorf("%s:%d: YAML block does not parse: %v\n%s", f, lines[i], err, body)
			}
		}
	}
	// The client recipes alone hold more than this: a file that moved
	// must not make the test pass by finding nothing.
	if counts["json"] < 20 || counts["toml"] < 3 || counts["yaml"] < 2 {
		t.Errorf("found %d JSON, %d TOML and %d YAML blocks, want at least 20, 3 and 2 (Continue, Goose)", counts["json"], counts["toml"], counts["yaml"])
	}
}

func TestCheckRecipeTOMLRejects(t *testing.T) {
	for _, body := range []string{
		"[a]\nx = 1\n[a]\ny = 2\n",
		"[a]\nx = \n",
		"[a.\"b\"]\nx = 1\n",
		"[a]\nx = \"unterminated\n",
	} {
		if err := checkRecipeTOML(body); err == nil {
			t.Errorf("checkRecipeTOML(%q) = nil, want an error", body)
		}
	}
}

// TestRecipeClientShapes: the recipes use each client's own documented
// keys where clients differ: Cline's auto-approval list is autoApprove and
// Roo Code's alwaysAllow, Zed's context_servers entries are flat (no
// "source" of the older shape), Goose's YAML is an extension under
// "extensions"; and every client a Winx setup names has a recipe.
func TestRecipeClientShapes(t *testing.T) {
	b, err := os.ReadFile("../docs/clients.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	var name string
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			name = strings.TrimSpace(h)
		}
		sections[name] += line
	}
	for _, want := range []string{"Claude Code", "Codex CLI", "Cursor", "VS Code", "Zed", "Windsurf", "Gemini CLI", "OpenCode", "Continue", "Cline", "Roo Code", "agy (Antigravity CLI)", "Kiro", "Warp", "Goose"} {
		if sections[want] == "" {
			t.Errorf("docs/clients.md has no section %q", want)
		}
	}
	// entries returns the server entries of a section's JSON blocks under
	// the given top-level key.
	entries := func(section, top string) []map[string]any {
		var out []map[string]any
		blocks, _ := fencedBlocks(sections[section], "json")
		for _, body := range blocks {
			var doc map[string]map[string]map[string]any
			if err := json.Unmarshal([]byte(body), &doc); err != nil {
				t.Errorf("%s: %v\n%s", section, err, body)
				continue
			}
			for _, e := range doc[top] {
				out = append(out, e)
			}
		}
		if len(out) == 0 {
			t.Errorf("%s: no %s entries", section, top)
		}
		return out
	}
	for _, tt := range []struct {
		section, top, want, refuse string
	}{
		{"Cline", "mcpServers", "autoApprove", "alwaysAllow"},
		{"Roo Code", "mcpServers", "", "autoApprove"},
		{"Zed", "context_servers", "", "source"},
		{"Kiro", "mcpServers", "", "alwaysAllow"},
	} {
		for _, e := range entries(tt.section, tt.top) {
			if _, ok := e[tt.want]; tt.want != "" && !ok {
				t.Errorf("%s: entry %v has no %q", tt.section, e, tt.want)
			}
			if _, ok := e[tt.refuse]; ok {
				t.Errorf("%s: entry %v has %q, which is not this client's key", tt.section, e, tt.refuse)
			}
		}
	}
	if roo := entries("Roo Code", "mcpServers"); len(roo) > 0 {
		if _, ok := roo[0]["alwaysAllow"]; !ok {
			t.Errorf("Roo Code: the stdio entry %v has no alwaysAllow", roo[0])
		}
	}
	blocks, _ := fencedBlocks(sections["Goose"], "yaml")
	if len(blocks) == 0 {
		t.Fatalf("Goose: no YAML block")
	}
	v, err := parseRecipeYAML(blocks[0])
	if err != nil {
		t.Fatalf("Goose: %v", err)
	}
	ext, _ := v.(map[string]any)["extensions"].(map[string]any)["winx"].(map[string]any)
	for _, k := range []string{"name", "type", "cmd", "args", "enabled", "timeout"} {
		if _, ok := ext[k]; !ok {
			t.Errorf("Goose: extensions.winx has no %q: %v", k, ext)
		}
	}
	if ext["type"] != "stdio" {
		t.Errorf("Goose: extensions.winx.type = %v, want stdio", ext["type"])
	}
}
