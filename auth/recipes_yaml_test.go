package auth

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// The recipes' YAML (Goose's config.yaml, Continue's mcpServers blocks) is
// checked by a strict parser of the subset they use, written here because
// the module takes no YAML dependency: block mappings and sequences
// (including "- key: value" items), plain, single- and double-quoted
// scalars, one-line flow sequences and mappings, and comments. Anything
// else a recipe might slip in (tabs, anchors and aliases, tags, block
// scalars, several documents, complex keys, a duplicate key, an indentation
// that is neither a child nor a sibling) is an error, so a block that
// passes here is read the same way by any YAML 1.2 parser. Scalars stay
// strings: the test checks structure, not types.

// recipeYAMLError is a rejected YAML block, with the 1-based line.
type recipeYAMLError struct {
	Line int
	Msg  string
}

func (e *recipeYAMLError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// yamlLine is one line that holds content: its indentation in spaces and
// the rest.
type yamlLine struct {
	no     int
	indent int
	text   string
}

// yamlParser reads the block structure of lines; pos is the next line.
type yamlParser struct {
	lines []yamlLine
	pos   int
}

// maxYAMLDepth bounds the nesting of blocks and flow collections, as
// encoding/json bounds its own.
const maxYAMLDepth = 32

func parseRecipeYAML(body string) (any, error) {
	p := &yamlParser{}
	for i, raw := range strings.Split(body, "\n") {
		no := i + 1
		trimmed := strings.TrimLeft(raw, " ")
		if strings.HasPrefix(trimmed, "\t") || strings.Contains(raw[:len(raw)-len(trimmed)], "\t") {
			return nil, &recipeYAMLError{no, "a tab in the indentation"}
		}
		if t := strings.TrimSpace(trimmed); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if trimmed == "---" || trimmed == "..." || strings.HasPrefix(trimmed, "%") {
			return nil, &recipeYAMLError{no, "document markers and directives are outside the subset"}
		}
		p.lines = append(p.lines, yamlLine{no: no, indent: len(raw) - len(trimmed), text: strings.TrimRight(trimmed, " ")})
	}
	if len(p.lines) == 0 {
		return nil, &recipeYAMLError{1, "empty document"}
	}
	if p.lines[0].indent != 0 {
		return nil, &recipeYAMLError{p.lines[0].no, "the document does not start in column 1"}
	}
	v, err := p.block(0, 0)
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.lines) {
		l := p.lines[p.pos]
		return nil, &recipeYAMLError{l.no, "indentation matches no enclosing block"}
	}
	return v, nil
}

// isSeqItem reports whether a line's text starts a sequence item.
func isSeqItem(text string) bool { return text == "-" || strings.HasPrefix(text, "- ") }

// block parses the mapping or sequence whose lines start at indent.
func (p *yamlParser) block(indent, depth int) (any, error) {
	if depth > maxYAMLDepth {
		return nil, &recipeYAMLError{p.lines[p.pos].no, "nested too deeply"}
	}
	if isSeqItem(p.lines[p.pos].text) {
		return p.sequence(indent, depth)
	}
	return p.mapping(indent, depth)
}

// mapping parses "key: value" lines at indent.
func (p *yamlParser) mapping(indent, depth int) (any, error) {
	m := map[string]any{}
	for p.pos < len(p.lines) && p.lines[p.pos].indent == indent && !isSeqItem(p.lines[p.pos].text) {
		l := p.lines[p.pos]
		key, rest, err := splitKey(l)
		if err != nil {
			return nil, err
		}
		if _, dup := m[key]; dup {
			return nil, &recipeYAMLError{l.no, fmt.Sprintf("key %q defined twice", key)}
		}
		p.pos++
		var v any
		switch {
		case rest != "":
			if v, err = inlineValue(rest, l.no); err != nil {
				return nil, err
			}
		case p.pos < len(p.lines) && p.lines[p.pos].indent > indent:
			if v, err = p.block(p.lines[p.pos].indent, depth+1); err != nil {
				return nil, err
			}
		case p.pos < len(p.lines) && p.lines[p.pos].indent == indent && isSeqItem(p.lines[p.pos].text):
			// A sequence may sit at its key's own indentation.
			if v, err = p.sequence(indent, depth+1); err != nil {
				return nil, err
			}
		}
		m[key] = v
	}
	if p.pos < len(p.lines) && p.lines[p.pos].indent > indent {
		return nil, &recipeYAMLError{p.lines[p.pos].no, "indented more than its mapping, after a value"}
	}
	return m, nil
}

// sequence parses "- item" lines at indent.
func (p *yamlParser) sequence(indent, depth int) (any, error) {
	s := []any{}
	for p.pos < len(p.lines) && p.lines[p.pos].indent == indent && isSeqItem(p.lines[p.pos].text) {
		l := p.lines[p.pos]
		rest := strings.TrimLeft(strings.TrimPrefix(l.text, "-"), " ")
		var v any
		var err error
		switch {
		case rest == "":
			p.pos++
			if p.pos < len(p.lines) && p.lines[p.pos].indent > indent {
				if v, err = p.block(p.lines[p.pos].indent, depth+1); err != nil {
					return nil, err
				}
			}
		case startsMapping(rest):
			// "- key: value": a mapping whose keys line up after "- ".
			col := indent + len(l.text) - len(rest)
			p.lines[p.pos] = yamlLine{no: l.no, indent: col, text: rest}
			if v, err = p.block(col, depth+1); err != nil {
				return nil, err
			}
		case isSeqItem(rest):
			return nil, &recipeYAMLError{l.no, "a sequence inside a sequence item's line is outside the subset"}
		default:
			p.pos++
			if v, err = inlineValue(rest, l.no); err != nil {
				return nil, err
			}
		}
		s = append(s, v)
	}
	if p.pos < len(p.lines) && p.lines[p.pos].indent > indent {
		return nil, &recipeYAMLError{p.lines[p.pos].no, "indented more than its sequence, after an item"}
	}
	return s, nil
}

// startsMapping reports whether text is "key:" or "key: value".
func startsMapping(text string) bool {
	if text[0] == '[' || text[0] == '{' {
		return false
	}
	_, _, err := splitKey(yamlLine{text: text})
	return err == nil
}

// splitKey splits "key: rest" (rest may be empty). The key is plain or
// quoted.
func splitKey(l yamlLine) (key, rest string, err error) {
	text := l.text
	if strings.HasPrefix(text, "? ") || text == "?" {
		return "", "", &recipeYAMLError{l.no, "complex keys are outside the subset"}
	}
	var after string
	if text[0] == '"' || text[0] == '\'' {
		key, after, err = quoted(text, l.no)
		if err != nil {
			return "", "", err
		}
	} else {
		i := strings.Index(text, ": ")
		if i < 0 && strings.HasSuffix(text, ":") {
			i = len(text) - 1
		}
		if i < 0 {
			return "", "", &recipeYAMLError{l.no, fmt.Sprintf("%q is not key: value", text)}
		}
		key, after = text[:i], text[i:]
		if err := checkPlain(key, l.no); err != nil {
			return "", "", err
		}
	}
	if after != ":" && !strings.HasPrefix(after, ": ") {
		return "", "", &recipeYAMLError{l.no, fmt.Sprintf("no ': ' after the key %q", key)}
	}
	rest = strings.TrimSpace(after[1:])
	if strings.HasPrefix(rest, "#") {
		rest = ""
	}
	return key, rest, nil
}

// checkPlain refuses a plain scalar YAML would read otherwise: an indicator
// at its start, or ": " or " #" inside.
func checkPlain(s string, no int) error {
	if s == "" {
		return &recipeYAMLError{no, "empty plain scalar"}
	}
	if strings.ContainsAny(s[:1], "[]{},#&*!|>%@`'\"") || (s[0] == '-' || s[0] == '?' || s[0] == ':') && (len(s) == 1 || s[1] == ' ') {
		return &recipeYAMLError{no, fmt.Sprintf("plain scalar %q starts with an indicator (anchors, aliases, tags, block scalars are outside the subset; quote it)", s)}
	}
	if strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":") {
		return &recipeYAMLError{no, fmt.Sprintf("plain scalar %q holds ': ' or ' #' (quote it)", s)}
	}
	return nil
}

// inlineValue is the value after "key: " or "- ": a flow collection, a
// quoted or a plain scalar, then at most a comment.
func inlineValue(s string, no int) (any, error) {
	switch s[0] {
	case '[', '{':
		f := &yamlFlow{s: s, no: no}
		v, err := f.value(0)
		if err != nil {
			return nil, err
		}
		if tail := strings.TrimSpace(f.s[f.i:]); tail != "" && !strings.HasPrefix(tail, "#") {
			return nil, &recipeYAMLError{no, fmt.Sprintf("text after a flow collection: %q", tail)}
		}
		return v, nil
	case '"', '\'':
		v, tail, err := quoted(s, no)
		if err != nil {
			return nil, err
		}
		if tail = strings.TrimSpace(tail); tail != "" && !strings.HasPrefix(tail, "#") {
			return nil, &recipeYAMLError{no, fmt.Sprintf("text after a quoted scalar: %q", tail)}
		}
		return v, nil
	}
	if i := strings.Index(s, " #"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if err := checkPlain(s, no); err != nil {
		return nil, err
	}
	return s, nil
}

// quoted reads a quoted scalar at the start of s and returns the rest.
// Double quotes take JSON-style escapes; single quotes escape themselves.
func quoted(s string, no int) (string, string, error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q && q == '\'' && i+1 < len(s) && s[i+1] == '\'':
			b.WriteByte('\'')
			i++
		case c == q:
			return b.String(), s[i+1:], nil
		case c == '\\' && q == '"':
			if i+1 == len(s) {
				return "", "", &recipeYAMLError{no, "unterminated escape"}
			}
			i++
			r, ok := map[byte]string{'"': `"`, '\\': `\`, '/': "/", 'n': "\n", 't': "\t", 'r': "\r", '0': "\x00"}[s[i]]
			if !ok {
				return "", "", &recipeYAMLError{no, fmt.Sprintf("escape \\%c is outside the subset", s[i])}
			}
			b.WriteString(r)
		default:
			b.WriteByte(c)
		}
	}
	return "", "", &recipeYAMLError{no, "unterminated quoted scalar"}
}

// yamlFlow reads a one-line flow collection; i is the next byte of s.
type yamlFlow struct {
	s  string
	i  int
	no int
}

func (f *yamlFlow) space() {
	for f.i < len(f.s) && f.s[f.i] == ' ' {
		f.i++
	}
}

func (f *yamlFlow) value(depth int) (any, error) {
	if depth > maxYAMLDepth {
		return nil, &recipeYAMLError{f.no, "nested too deeply"}
	}
	f.space()
	if f.i == len(f.s) {
		return nil, &recipeYAMLError{f.no, "unterminated flow collection"}
	}
	switch c := f.s[f.i]; c {
	case '[', '{':
		return f.collection(c, depth)
	case '"', '\'':
		v, rest, err := quoted(f.s[f.i:], f.no)
		if err != nil {
			return nil, err
		}
		f.i = len(f.s) - len(rest)
		return v, nil
	}
	start := f.i
	for f.i < len(f.s) && !strings.ContainsRune(",[]{}", rune(f.s[f.i])) && !strings.HasPrefix(f.s[f.i:], ": ") {
		f.i++
	}
	v := strings.TrimSpace(f.s[start:f.i])
	if err := checkPlain(v, f.no); err != nil {
		return nil, err
	}
	return v, nil
}

func (f *yamlFlow) collection(open byte, depth int) (any, error) {
	closing := map[byte]byte{'[': ']', '{': '}'}[open]
	f.i++
	var list []any
	m := map[string]any{}
	for first := true; ; first = false {
		f.space()
		if f.i < len(f.s) && f.s[f.i] == closing {
			f.i++
			break
		}
		if !first {
			if f.i == len(f.s) || f.s[f.i] != ',' {
				return nil, &recipeYAMLError{f.no, fmt.Sprintf("want ',' or '%c' in a flow collection", closing)}
			}
			f.i++
			f.space()
			if f.i < len(f.s) && f.s[f.i] == closing {
				return nil, &recipeYAMLError{f.no, "a trailing comma in a flow collection"}
			}
		}
		v, err := f.value(depth + 1)
		if err != nil {
			return nil, err
		}
		if open == '[' {
			list = append(list, v)
			continue
		}
		key, ok := v.(string)
		if !ok {
			return nil, &recipeYAMLError{f.no, "a flow mapping key must be a scalar"}
		}
		f.space()
		if !strings.HasPrefix(f.s[f.i:], ":") {
			return nil, &recipeYAMLError{f.no, fmt.Sprintf("no ':' after the key %q", key)}
		}
		f.i++
		if _, dup := m[key]; dup {
			return nil, &recipeYAMLError{f.no, fmt.Sprintf("key %q defined twice", key)}
		}
		if m[key], err = f.value(depth + 1); err != nil {
			return nil, err
		}
	}
	if open == '[' {
		if list == nil {
			list = []any{}
		}
		return list, nil
	}
	return m, nil
}

func TestParseRecipeYAML(t *testing.T) {
	tests := []struct {
		name, in string
		want     any
	}{
		{"mapping", "a: b\nc: 'd e'\n", map[string]any{"a": "b", "c": "d e"}},
		{"nested", "x:\n  y:\n    z: \"q\\\"\"\n", map[string]any{"x": map[string]any{"y": map[string]any{"z": `q"`}}}},
		{"sequence of mappings", "s:\n  - name: a\n    args: []\n  - name: b\n", map[string]any{"s": []any{map[string]any{"name": "a", "args": []any{}}, map[string]any{"name": "b"}}}},
		{"sequence at key indent", "s:\n- a\n- b # comment\n", map[string]any{"s": []any{"a", "b"}}},
		{"flow", `f: ["-y", x, {k: "v", e: {}}]` + "\n", map[string]any{"f": []any{"-y", "x", map[string]any{"k": "v", "e": map[string]any{}}}}},
		{"url and comments", "# top\nu: http://127.0.0.1:8000/mcp  # the endpoint\n", map[string]any{"u": "http://127.0.0.1:8000/mcp"}},
		{"empty value", "a:\nb: c\n", map[string]any{"a": nil, "b": "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseRecipeYAML(tt.in)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseRecipeYAML(%q) = %#v, %v, want %#v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseRecipeYAMLRejects(t *testing.T) {
	for _, in := range []string{
		"a: b\na: c\n",                   // duplicate key
		"a:\n\tb: c\n",                   // tab indentation
		"a: b\n  c: d\n",                 // child of a scalar
		"a:\n    b: c\n  d: e\n",         // sibling at no enclosing indentation
		"a: &x b\n",                      // anchor
		"a: *x\n",                        // alias
		"a: !tag b\n",                    // tag
		"a: |\n  text\n",                 // block scalar
		"---\na: b\n",                    // document marker
		"a: [b, c\n",                     // unclosed flow
		"a: [b, c,]\n",                   // trailing comma
		"a: {b: c, b: d}\n",              // duplicate flow key
		"a: \"unterminated\n",            // unterminated quote
		"a: b: c\n",                      // ': ' in a plain scalar
		"just a scalar\n",                // not key: value
		"? complex\n: value\n",           // complex key
		"s:\n  - a\n  - b: c\n   d: e\n", // misaligned mapping in an item
		"  a: b\n",                       // document indented
		"a: 'x' y\n",                     // text after a quoted scalar
	} {
		if v, err := parseRecipeYAML(in); err == nil {
			t.Errorf("parseRecipeYAML(%q) = %#v, want an error", in, v)
		}
	}
}
