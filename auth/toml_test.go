package auth

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// dumpTOML renders a parsed document in a fixed form for comparison.
func dumpTOML(doc *tomlDoc) string {
	var b strings.Builder
	for _, t := range doc.tables {
		fmt.Fprintf(&b, "[[%s]]@%d:%d\n", t.name, t.line, t.col)
		for _, k := range t.keys {
			v := t.vals[k]
			fmt.Fprintf(&b, "%s@%d:%d=", k, v.line, v.col)
			switch v.kind {
			case tomlString:
				fmt.Fprintf(&b, "%q", v.str)
			case tomlBool:
				fmt.Fprintf(&b, "%t", v.b)
			case tomlInt:
				fmt.Fprintf(&b, "%d", v.n)
			case tomlArray:
				fmt.Fprintf(&b, "%q", v.arr)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

var tomlValidTests = []struct {
	name string
	in   string
	want string
}{
	{"empty", "", ""},
	{"only comments", "# a\n\n   # b\t\n", ""},
	{"one table", "[[principals]]\nname = \"a\"\n", "[[principals]]@1:1\nname@2:1=\"a\"\n"},
	{"spaced header", "  [[ principals ]]  # c\n", "[[principals]]@1:3\n"},
	{"crlf", "[[t]]\r\nk = 'v'\r\n", "[[t]]@1:1\nk@2:1=\"v\"\n"},
	{"no final newline", "[[t]]\nk=1", "[[t]]@1:1\nk@2:1=1\n"},
	{"bare key chars", "[[t]]\nA-z_0 = true\n", "[[t]]@1:1\nA-z_0@2:1=true\n"},
	{"indented key", "[[t]]\n\t k = false # x\n", "[[t]]@1:1\nk@2:3=false\n"},
	{"escapes", `[[t]]` + "\n" + `k = "q\" b\\ n\n t\t u\u00e9\u4E2D"`, "[[t]]@1:1\nk@2:1=\"q\\\" b\\\\ n\\n t\\t u\u00e9\u4e2d\"\n"},
	{"raw utf-8 in string", "[[t]]\nk = \"héllo\t\"\n", "[[t]]@1:1\nk@2:1=\"héllo\\t\"\n"},
	{"literal keeps backslash", `[[t]]` + "\n" + `k = 'C:\a\"b'`, "[[t]]@1:1\nk@2:1=\"C:\\\\a\\\\\\\"b\"\n"},
	{"hash in string", "[[t]]\nk = \"a#b\" # c\n", "[[t]]@1:1\nk@2:1=\"a#b\"\n"},
	{"empty strings", "[[t]]\na = \"\"\nb = ''\n", "[[t]]@1:1\na@2:1=\"\"\nb@3:1=\"\"\n"},
	{"integers", "[[t]]\na = 0\nb = -17\nc = +1_000\nd = 9223372036854775807\ne = -9223372036854775808\n",
		"[[t]]@1:1\na@2:1=0\nb@3:1=-17\nc@4:1=1000\nd@5:1=9223372036854775807\ne@6:1=-9223372036854775808\n"},
	{"arrays", "[[t]]\na = []\nb = [\"x\"]\nc = [ 'x' , \"y\", ]\nd = [\"]\" ,\"#\"]# c\n",
		"[[t]]@1:1\na@2:1=[]\nb@3:1=[\"x\"]\nc@4:1=[\"x\" \"y\"]\nd@5:1=[\"]\" \"#\"]\n"},
	{"two tables same keys", "[[p]]\nk = 1\n[[p]]\nk = 2\n[[q]]\n", "[[p]]@1:1\nk@2:1=1\n[[p]]@3:1\nk@4:1=2\n[[q]]@5:1\n"},
	{"column counts runes", "[[t]]\nk = \"é\" # é\n", "[[t]]@1:1\nk@2:1=\"é\"\n"},
}

func TestParseTOMLValid(t *testing.T) {
	for _, tt := range tomlValidTests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := parseTOML([]byte(tt.in))
			if err != nil {
				t.Fatalf("parseTOML(%q) error: %v", tt.in, err)
			}
			if got := dumpTOML(doc); got != tt.want {
				t.Errorf("parseTOML(%q) =\n%s\nwant\n%s", tt.in, got, tt.want)
			}
		})
	}
}

var tomlErrorTests = []struct {
	name      string
	in        string
	line, col int
	msg       string // a substring of Msg
}{
	{"standard table", "[t]\n", 1, 1, "standard tables"},
	{"empty header", "[[]]\n", 1, 3, "invalid character"},
	{"header missing close", "[[t]\n", 1, 4, `expected "]]"`},
	{"dotted header", "[[a.b]]\n", 1, 4, "dotted keys"},
	{"quoted header", "[[\"a\"]]\n", 1, 3, "quoted keys"},
	{"junk after header", "[[t]] x\n", 1, 7, "after table header"},
	{"key outside table", "# c\nk = 1\n", 2, 1, "outside any [[table]]"},
	{"key outside table indented", "  k = 1\n[[t]]\n", 1, 3, "outside any"},
	{"dotted key", "[[t]]\na.b = 1\n", 2, 2, "dotted keys"},
	{"quoted key", "[[t]]\n\"a\" = 1\n", 2, 1, "quoted keys"},
	{"bad key char", "[[t]]\nké = 1\n", 2, 2, `expected "="`},
	{"bad first key char", "[[t]]\né = 1\n", 2, 1, "invalid character"},
	{"missing equals", "[[t]]\nk 1\n", 2, 3, `expected "="`},
	{"missing value", "[[t]]\nk =\n", 2, 4, "missing value"},
	{"missing value comment", "[[t]]\nk = # c\n", 2, 5, "missing value"},
	{"duplicate key", "[[t]]\nk = 1\n  k = 2\n", 3, 3, "duplicate key \"k\" (first set on line 2)"},
	{"inline table", "[[t]]\nk = {a = 1}\n", 2, 5, "inline tables"},
	{"multi-line basic", "[[t]]\nk = \"\"\"x\"\"\"\n", 2, 5, "multi-line strings"},
	{"multi-line literal", "[[t]]\nk = '''x'''\n", 2, 5, "multi-line strings"},
	{"unterminated basic", "[[t]]\nk = \"abc\n", 2, 5, "unterminated string"},
	{"unterminated literal", "[[t]]\nk = 'abc\n", 2, 5, "unterminated string"},
	{"line continuation", "[[t]]\nk = \"abc\\\n\"\n", 2, 9, "unterminated string"},
	{"bad escape", "[[t]]\nk = \"a\\rb\"\n", 2, 7, "unsupported escape \\r"},
	{"big U escape", "[[t]]\nk = \"\\U0001F600\"\n", 2, 6, "unsupported escape \\U"},
	{"short u escape", "[[t]]\nk = \"\\u12\"\n", 2, 6, "four hex digits"},
	{"bad u escape", "[[t]]\nk = \"\\u12G4\"\n", 2, 6, "four hex digits"},
	{"surrogate escape", "[[t]]\nk = \"\\uD800\"\n", 2, 6, "not a Unicode scalar value"},
	{"control in basic", "[[t]]\nk = \"a\x01\"\n", 2, 7, "control character in string"},
	{"del in literal", "[[t]]\nk = 'a\x7f'\n", 2, 7, "control character in string"},
	{"control in comment", "# a\x00b\n", 1, 4, "control character in comment"},
	{"bare cr in comment", "# a\rb\n", 1, 4, "control character in comment"},
	{"invalid utf-8", "[[t]]\nk = \"a\xffb\"\n", 2, 7, "invalid UTF-8"},
	{"bom", "\uFEFF[[t]]\n", 1, 1, "byte order mark"},
	{"unquoted string", "[[t]]\nk = hello\n", 2, 5, "strings must be quoted"},
	{"float", "[[t]]\nk = 1.5\n", 2, 5, "floats"},
	{"exponent", "[[t]]\nk = 1e5\n", 2, 5, "floats"},
	{"inf", "[[t]]\nk = -inf\n", 2, 5, "floats"},
	{"nan", "[[t]]\nk = nan\n", 2, 5, "floats"},
	{"date", "[[t]]\nk = 1979-05-27\n", 2, 5, "dates"},
	{"datetime", "[[t]]\nk = 1979-05-27T07:32:00Z\n", 2, 5, "dates"},
	{"time", "[[t]]\nk = 07:32:00\n", 2, 5, "dates"},
	{"hex", "[[t]]\nk = 0xff\n", 2, 5, "only decimal"},
	{"leading zero", "[[t]]\nk = 012\n", 2, 5, "invalid integer"},
	{"double underscore", "[[t]]\nk = 1__0\n", 2, 5, "invalid integer"},
	{"trailing underscore", "[[t]]\nk = 10_\n", 2, 5, "invalid integer"},
	{"double sign", "[[t]]\nk = +-1\n", 2, 5, "strings must be quoted"},
	{"overflow", "[[t]]\nk = 9223372036854775808\n", 2, 5, "out of range"},
	{"junk after value", "[[t]]\nk = \"a\" \"b\"\n", 2, 9, "after value"},
	{"junk after bool", "[[t]]\nk = true false\n", 2, 10, "after value"},
	{"unterminated array", "[[t]]\nk = [\"a\",\n", 2, 5, "unterminated array"},
	{"multi-line array", "[[t]]\nk = [\n\"a\"]\n", 2, 5, "unterminated array"},
	{"array of ints", "[[t]]\nk = [1]\n", 2, 6, "only strings"},
	{"nested array", "[[t]]\nk = [[\"a\"]]\n", 2, 6, "nested arrays"},
	{"inline table in array", "[[t]]\nk = [{}]\n", 2, 6, "inline tables"},
	{"leading comma", "[[t]]\nk = [,]\n", 2, 6, `unexpected ","`},
	{"double comma", "[[t]]\nk = [\"a\",,]\n", 2, 10, `unexpected ","`},
	{"missing comma", "[[t]]\nk = [\"a\" \"b\"]\n", 2, 10, `expected "," or "]"`},
	{"comment in array", "[[t]]\nk = [ # c\n]\n", 2, 7, "comments inside arrays"},
	{"error column counts runes", "[[t]]\nk = \"é\" x\n", 2, 9, "after value"},
	{"file too large", strings.Repeat("#", MaxTOMLBytes+1), 1, 1, "larger than 1 MiB"},
	{"line too long", "[[t]]\n#" + strings.Repeat("x", MaxTOMLLineBytes), 2, 1, "line longer than 64 KiB"},
	{"too many tables", strings.Repeat("[[t]]\n", MaxTOMLTables+1), MaxTOMLTables + 1, 1, "more than 1024 tables"},
	{"too many keys", "[[t]]\n" + manyKeys(MaxTOMLKeys+1), MaxTOMLKeys + 2, 1, "more than 64 keys"},
	{"array too long", "[[t]]\nk = [" + strings.Repeat("'',", MaxTOMLArrayLen) + "'']\n", 2, 6 + 3*MaxTOMLArrayLen, "array longer than 1024"},
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "k%d = %d\n", i, i)
	}
	return b.String()
}

func TestParseTOMLErrors(t *testing.T) {
	for _, tt := range tomlErrorTests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := parseTOML([]byte(tt.in))
			var te *TOMLError
			if !errors.As(err, &te) {
				t.Fatalf("parseTOML(%.40q) = %v, %v; want a *TOMLError", tt.in, doc, err)
			}
			if te.Line != tt.line || te.Col != tt.col || !strings.Contains(te.Msg, tt.msg) {
				t.Errorf("parseTOML(%.40q) error = %d:%d %q, want %d:%d containing %q", tt.in, te.Line, te.Col, te.Msg, tt.line, tt.col, tt.msg)
			}
			want := fmt.Sprintf("toml: %d:%d: ", tt.line, tt.col)
			if !strings.HasPrefix(te.Error(), want) {
				t.Errorf("Error() = %q, want prefix %q", te.Error(), want)
			}
		})
	}
}

// TestParseTOMLLimitsExact checks that each limit itself is accepted.
func TestParseTOMLLimitsExact(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"tables", strings.Repeat("[[t]]\n", MaxTOMLTables)},
		{"keys", "[[t]]\n" + manyKeys(MaxTOMLKeys)},
		{"array", "[[t]]\nk = [" + strings.Repeat("'',", MaxTOMLArrayLen-1) + "'']\n"},
		{"line", "[[t]]\nk = '" + strings.Repeat("x", MaxTOMLLineBytes-6) + "'"},
		{"file", "#" + strings.Repeat("\n", MaxTOMLBytes-1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := parseTOML([]byte(tt.in)); err != nil {
				t.Errorf("parseTOML(at the limit) error: %v", err)
			}
		})
	}
}

// TestParseTOMLErrorsHideValues checks that no error message repeats a
// value, which could be a misplaced secret.
func TestParseTOMLErrorsHideValues(t *testing.T) {
	const secret = "SuperSecretValue123"
	inputs := []string{
		"[[t]]\nk = " + secret + "\n",
		"[[t]]\nk = \"" + secret + "\n",
		"[[t]]\nk = '" + secret + "\n",
		"[[t]]\nk = \"" + secret + "\" x\n",
		"[[t]]\nk = [\"" + secret + "\" 1]\n",
		"[[t]]\nk = 1" + secret + "\n",
	}
	for _, in := range inputs {
		_, err := parseTOML([]byte(in))
		if err == nil {
			t.Errorf("parseTOML(%q) succeeded, want an error", in)
			continue
		}
		if strings.Contains(err.Error(), "Secret") {
			t.Errorf("parseTOML(%q) error %q repeats the value", in, err)
		}
	}
}

func FuzzParseTOML(f *testing.F) {
	for _, tt := range tomlValidTests {
		f.Add([]byte(tt.in))
	}
	for _, tt := range tomlErrorTests {
		if len(tt.in) < 4096 {
			f.Add([]byte(tt.in))
		}
	}
	f.Add([]byte("[[principals]]\nname = \"a\"\ntoken_env = 'X'\nallowed_tools = [\"Initialize\", \"BashCommand\",]\n"))
	f.Add([]byte("[[t]]\nk = \"\\u\"\n"))
	f.Add([]byte("[[t]]\nk = \"\\"))
	f.Add([]byte("[[t]]\nk = ["))
	f.Add([]byte("[[t]]\nk = -"))
	f.Add([]byte("[[t]]\nk = +"))
	f.Add([]byte("\xef\xbb"))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := parseTOML(data)
		if err != nil {
			te, ok := err.(*TOMLError)
			if !ok {
				t.Fatalf("error %T %v is not a *TOMLError", err, err)
			}
			lines := strings.Count(string(data), "\n") + 1
			if te.Line < 1 || te.Line > lines || te.Col < 1 || te.Msg == "" {
				t.Fatalf("error position %d:%d (of %d lines) or message %q out of range", te.Line, te.Col, lines, te.Msg)
			}
			return
		}
		if len(doc.tables) > MaxTOMLTables {
			t.Fatalf("%d tables, limit %d", len(doc.tables), MaxTOMLTables)
		}
		for _, tab := range doc.tables {
			if len(tab.keys) > MaxTOMLKeys || len(tab.keys) != len(tab.vals) {
				t.Fatalf("table %q: %d keys, %d values", tab.name, len(tab.keys), len(tab.vals))
			}
			for _, k := range tab.keys {
				v := tab.vals[k]
				if len(v.str) > MaxTOMLStringBytes || len(v.arr) > MaxTOMLArrayLen {
					t.Fatalf("key %q: value over the limits", k)
				}
				if v.kind == tomlArray && v.arr == nil {
					t.Fatalf("key %q: nil array", k)
				}
			}
		}
		// Deterministic: a second parse gives the same document.
		again, err := parseTOML(data)
		if err != nil || !reflect.DeepEqual(doc, again) {
			t.Fatalf("second parse differs: %v", err)
		}
	})
}
