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

// TestRecipesParse: every JSON and TOML block of the README and of docs/
// is valid, so a recipe copied into a client's configuration parses.
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
	}
	// The client recipes alone hold more than this: a file that moved
	// must not make the test pass by finding nothing.
	if counts["json"] < 20 || counts["toml"] < 3 {
		t.Errorf("found %d JSON and %d TOML blocks, want at least 20 and 3", counts["json"], counts["toml"])
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
