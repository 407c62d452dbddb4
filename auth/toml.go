package auth

// A hand-written parser for the subset of TOML v1.0.0 (https://toml.io/en/v1.0.0)
// that the principal file needs, and nothing more: a config that grants
// shell access must not be read by a parser whose corners nobody tested.
//
// Accepted: comments, blank lines, array-of-tables headers [[name]] with a
// bare name, and bare-key assignments key = value where value is a basic
// string, a literal string, a boolean, a decimal integer or a single-line
// array of strings (a trailing comma is allowed).
//
// Deliberate deviations from TOML v1.0.0, each an error here:
//   - standard tables [name], dotted keys, quoted keys, inline tables;
//   - multi-line basic and literal strings, multi-line arrays, arrays of
//     anything but strings, nested arrays;
//   - escapes other than \" \\ \n \t \uXXXX (no \b \f \r \e \UXXXXXXXX);
//   - floats, inf, nan, dates and times, hexadecimal, octal and binary
//     integers;
//   - a key before the first table header;
//   - a byte order mark.
//
// Every input is bounded by the MaxTOML constants, and the parser makes one
// pass over the input, so its work is linear in the input size. Errors are
// *TOMLError with 1-based positions; columns count characters (runes), not
// bytes. Error messages name keys but never repeat a value.

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Hard limits of the TOML reader. Exceeding any is an error, not a
// truncation.
const (
	// MaxTOMLBytes bounds a whole document: 1 MiB.
	MaxTOMLBytes = 1 << 20
	// MaxTOMLLineBytes bounds one line, without its line ending: 64 KiB.
	MaxTOMLLineBytes = 64 << 10
	// MaxTOMLTables bounds the number of [[table]] headers.
	MaxTOMLTables = 1024
	// MaxTOMLKeys bounds the keys of one table.
	MaxTOMLKeys = 64
	// MaxTOMLStringBytes bounds one decoded string: 64 KiB.
	MaxTOMLStringBytes = 64 << 10
	// MaxTOMLArrayLen bounds the elements of one array.
	MaxTOMLArrayLen = 1024
)

// maxShownKey bounds how much of a key an error message repeats.
const maxShownKey = 64

// TOMLError reports malformed or unsupported TOML at a 1-based line and
// column (in characters).
type TOMLError struct {
	Line, Col int
	Msg       string
}

func (e *TOMLError) Error() string {
	return "toml: " + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Col) + ": " + e.Msg
}

// tomlKind is the type of a tomlValue.
type tomlKind int

const (
	tomlString tomlKind = iota + 1
	tomlBool
	tomlInt
	tomlArray
)

func (k tomlKind) String() string {
	switch k {
	case tomlString:
		return "a string"
	case tomlBool:
		return "a boolean"
	case tomlInt:
		return "an integer"
	case tomlArray:
		return "an array of strings"
	}
	panic("auth: tomlKind out of range")
}

// tomlValue is one assigned value; only the field for its kind is set.
type tomlValue struct {
	kind tomlKind
	str  string
	b    bool
	n    int64
	arr  []string // non-nil for tomlArray, even when empty
	// line and col locate the key the value was assigned to.
	line, col int
}

// tomlTable is one [[name]] table.
type tomlTable struct {
	name      string
	line, col int      // of the header
	keys      []string // in file order
	vals      map[string]tomlValue
}

// tomlDoc is a parsed document: its tables in file order.
type tomlDoc struct {
	tables []*tomlTable
}

// tomlParser holds the state of one parse. Invariant: pos <= len(line).
type tomlParser struct {
	doc    *tomlDoc
	lineNo int
	line   []byte
	pos    int
}

// parseTOML parses data, which must be at most MaxTOMLBytes long. Errors are
// always *TOMLError.
func parseTOML(data []byte) (*tomlDoc, error) {
	if len(data) > MaxTOMLBytes {
		return nil, &TOMLError{Line: 1, Col: 1, Msg: "document larger than 1 MiB"}
	}
	p := &tomlParser{doc: &tomlDoc{}}
	rest := data
	for more := true; more; {
		p.lineNo++
		p.line, rest, more = bytes.Cut(rest, []byte("\n"))
		p.pos = 0
		if len(p.line) > MaxTOMLLineBytes {
			// Not p.line[:n]: columns past the limit are not worth counting.
			return nil, &TOMLError{Line: p.lineNo, Col: 1, Msg: "line longer than 64 KiB"}
		}
		p.line = bytes.TrimSuffix(p.line, []byte("\r"))
		if err := p.parseLine(); err != nil {
			return nil, err
		}
	}
	return p.doc, nil
}

// errAt returns a *TOMLError at byte offset pos of the current line.
func (p *tomlParser) errAt(pos int, format string, args ...any) *TOMLError {
	return &TOMLError{
		Line: p.lineNo,
		Col:  utf8.RuneCount(p.line[:pos]) + 1,
		Msg:  fmt.Sprintf(format, args...),
	}
}

func (p *tomlParser) eol() bool { return p.pos >= len(p.line) }

func (p *tomlParser) peek() byte {
	if p.eol() {
		return 0
	}
	return p.line[p.pos]
}

func (p *tomlParser) has(s string) bool { return bytes.HasPrefix(p.line[p.pos:], []byte(s)) }

func (p *tomlParser) skipSpace() {
	for !p.eol() && (p.line[p.pos] == ' ' || p.line[p.pos] == '\t') {
		p.pos++
	}
}

// isControl reports the characters TOML forbids unescaped in strings and
// comments: C0 controls other than tab, and DEL.
func isControl(c byte) bool { return (c < 0x20 && c != '\t') || c == 0x7f }

func isBareKeyByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func shownKey(key string) string {
	if len(key) > maxShownKey {
		key = key[:maxShownKey] + "..."
	}
	return strconv.Quote(key)
}

func (p *tomlParser) parseLine() error {
	if !utf8.Valid(p.line) {
		for i := 0; i < len(p.line); {
			r, size := utf8.DecodeRune(p.line[i:])
			if r == utf8.RuneError && size <= 1 {
				return p.errAt(i, "invalid UTF-8")
			}
			i += size
		}
	}
	if p.lineNo == 1 && p.has("\uFEFF") {
		return p.errAt(0, "byte order mark is not allowed")
	}
	p.skipSpace()
	switch p.peek() {
	case 0:
		if p.eol() {
			return nil
		}
	case '#':
		return p.comment()
	case '[':
		return p.header()
	}
	return p.keyValue()
}

// comment checks a comment from p.pos (at '#') to the end of the line.
func (p *tomlParser) comment() error {
	for i := p.pos + 1; i < len(p.line); i++ {
		if isControl(p.line[i]) {
			return p.errAt(i, "control character in comment")
		}
	}
	p.pos = len(p.line)
	return nil
}

// end accepts the rest of a line after a header or a value: spaces and an
// optional comment.
func (p *tomlParser) end(after string) error {
	p.skipSpace()
	switch {
	case p.eol():
		return nil
	case p.peek() == '#':
		return p.comment()
	}
	r, _ := utf8.DecodeRune(p.line[p.pos:])
	return p.errAt(p.pos, "unexpected %q after %s", r, after)
}

// bareKey reads a bare key (what names it in errors).
func (p *tomlParser) bareKey(what string) (string, error) {
	start := p.pos
	for !p.eol() && isBareKeyByte(p.line[p.pos]) {
		p.pos++
	}
	if p.pos > start {
		return string(p.line[start:p.pos]), nil
	}
	switch c := p.peek(); {
	case p.eol():
		return "", p.errAt(p.pos, "missing %s", what)
	case c == '"' || c == '\'':
		return "", p.errAt(p.pos, "quoted keys are not supported")
	case c == '.':
		return "", p.errAt(p.pos, "dotted keys are not supported")
	}
	r, _ := utf8.DecodeRune(p.line[p.pos:])
	return "", p.errAt(p.pos, "invalid character %q in %s (bare keys are A-Z a-z 0-9 _ -)", r, what)
}

// header parses [[name]].
func (p *tomlParser) header() error {
	start := p.pos
	if !p.has("[[") {
		return p.errAt(start, "standard tables [name] are not supported; use [[name]]")
	}
	p.pos += 2
	p.skipSpace()
	name, err := p.bareKey("table name")
	if err != nil {
		return err
	}
	p.skipSpace()
	if p.peek() == '.' {
		return p.errAt(p.pos, "dotted keys are not supported")
	}
	if !p.has("]]") {
		return p.errAt(p.pos, `expected "]]" after table name`)
	}
	p.pos += 2
	if err := p.end("table header"); err != nil {
		return err
	}
	if len(p.doc.tables) >= MaxTOMLTables {
		return p.errAt(start, "more than %d tables", MaxTOMLTables)
	}
	p.doc.tables = append(p.doc.tables, &tomlTable{
		name: name,
		line: p.lineNo,
		col:  utf8.RuneCount(p.line[:start]) + 1,
		vals: make(map[string]tomlValue),
	})
	return nil
}

// keyValue parses key = value.
func (p *tomlParser) keyValue() error {
	start := p.pos
	key, err := p.bareKey("key")
	if err != nil {
		return err
	}
	p.skipSpace()
	switch {
	case p.peek() == '.':
		return p.errAt(p.pos, "dotted keys are not supported")
	case p.peek() != '=':
		return p.errAt(p.pos, `expected "=" after key %s`, shownKey(key))
	}
	p.pos++
	if len(p.doc.tables) == 0 {
		return p.errAt(start, "key %s outside any [[table]]", shownKey(key))
	}
	t := p.doc.tables[len(p.doc.tables)-1]
	if first, dup := t.vals[key]; dup {
		return p.errAt(start, "duplicate key %s (first set on line %d)", shownKey(key), first.line)
	}
	if len(t.keys) >= MaxTOMLKeys {
		return p.errAt(start, "more than %d keys in one table", MaxTOMLKeys)
	}
	p.skipSpace()
	v, err := p.value()
	if err != nil {
		return err
	}
	if err := p.end("value"); err != nil {
		return err
	}
	v.line, v.col = p.lineNo, utf8.RuneCount(p.line[:start])+1
	t.keys = append(t.keys, key)
	t.vals[key] = v
	return nil
}

func (p *tomlParser) value() (tomlValue, error) {
	switch c := p.peek(); {
	case p.eol() || c == '#':
		return tomlValue{}, p.errAt(p.pos, "missing value")
	case c == '"':
		s, err := p.basicString()
		return tomlValue{kind: tomlString, str: s}, err
	case c == '\'':
		s, err := p.literalString()
		return tomlValue{kind: tomlString, str: s}, err
	case c == '[':
		arr, err := p.array()
		return tomlValue{kind: tomlArray, arr: arr}, err
	case c == '{':
		return tomlValue{}, p.errAt(p.pos, "inline tables are not supported")
	}
	return p.scalar()
}

// scalar parses a bare value: a boolean or a decimal integer. It never
// repeats the value's text, which might be a misplaced secret.
func (p *tomlParser) scalar() (tomlValue, error) {
	start := p.pos
	for !p.eol() && !strings.ContainsRune(" \t#,]", rune(p.line[p.pos])) {
		p.pos++
	}
	word := string(p.line[start:p.pos])
	if word == "" {
		return tomlValue{}, p.errAt(start, "missing value")
	}
	switch word {
	case "true":
		return tomlValue{kind: tomlBool, b: true}, nil
	case "false":
		return tomlValue{kind: tomlBool, b: false}, nil
	}
	digits := word
	if word[0] == '+' || word[0] == '-' {
		digits = word[1:]
	}
	switch {
	case digits == "inf" || digits == "nan":
		return tomlValue{}, p.errAt(start, "floats are not supported")
	case digits == "" || digits[0] < '0' || digits[0] > '9':
		return tomlValue{}, p.errAt(start, "invalid value (strings must be quoted)")
	case strings.ContainsRune(digits, ':') || len(digits) >= 5 && digits[4] == '-':
		return tomlValue{}, p.errAt(start, "dates and times are not supported")
	case len(digits) > 1 && digits[0] == '0' && strings.ContainsAny(digits[1:2], "xob"):
		return tomlValue{}, p.errAt(start, "only decimal integers are supported")
	case strings.ContainsAny(digits, ".eE"):
		return tomlValue{}, p.errAt(start, "floats are not supported")
	case !validDecimal(digits):
		return tomlValue{}, p.errAt(start, "invalid integer")
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(word, "_", ""), 10, 64)
	if err != nil {
		return tomlValue{}, p.errAt(start, "integer out of range")
	}
	return tomlValue{kind: tomlInt, n: n}, nil
}

// validDecimal reports whether s is TOML's unsigned decimal integer: digits,
// each underscore between two digits, no leading zero unless s is "0".
func validDecimal(s string) bool {
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
		case c == '_' && i > 0 && i+1 < len(s) && s[i-1] != '_' && s[i+1] != '_':
		default:
			return false
		}
	}
	return true
}

// basicString parses "..." from p.pos (at the opening quote).
func (p *tomlParser) basicString() (string, error) {
	start := p.pos
	if p.has(`"""`) {
		return "", p.errAt(start, "multi-line strings are not supported")
	}
	p.pos++
	var b strings.Builder
	for {
		if p.eol() {
			return "", p.errAt(start, "unterminated string")
		}
		if b.Len() > MaxTOMLStringBytes {
			return "", p.errAt(start, "string longer than 64 KiB")
		}
		c := p.line[p.pos]
		switch {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c == '\\':
			if err := p.escape(&b); err != nil {
				return "", err
			}
			continue
		case isControl(c):
			return "", p.errAt(p.pos, "control character in string (use an escape)")
		}
		b.WriteByte(c)
		p.pos++
	}
}

// escape decodes one escape from p.pos (at the backslash) into b.
func (p *tomlParser) escape(b *strings.Builder) error {
	at := p.pos
	p.pos++
	if p.eol() {
		return p.errAt(at, "unterminated string (line continuations are not supported)")
	}
	c := p.line[p.pos]
	p.pos++
	switch c {
	case '"', '\\':
		b.WriteByte(c)
	case 'n':
		b.WriteByte('\n')
	case 't':
		b.WriteByte('\t')
	case 'u':
		if len(p.line)-p.pos < 4 {
			return p.errAt(at, `\u needs four hex digits`)
		}
		n, err := strconv.ParseUint(string(p.line[p.pos:p.pos+4]), 16, 32)
		if err != nil {
			return p.errAt(at, `\u needs four hex digits`)
		}
		r := rune(n)
		if !utf8.ValidRune(r) {
			return p.errAt(at, `\u%04X is not a Unicode scalar value`, n)
		}
		b.WriteRune(r)
		p.pos += 4
	default:
		r, _ := utf8.DecodeRune(p.line[at+1:])
		return p.errAt(at, "unsupported escape \\%c (supported: \\\" \\\\ \\n \\t \\uXXXX)", r)
	}
	return nil
}

// literalString parses '...' from p.pos (at the opening quote).
func (p *tomlParser) literalString() (string, error) {
	start := p.pos
	if p.has(`'''`) {
		return "", p.errAt(start, "multi-line strings are not supported")
	}
	p.pos++
	for i := p.pos; i < len(p.line); i++ {
		switch c := p.line[i]; {
		case c == '\'':
			if i-p.pos > MaxTOMLStringBytes {
				return "", p.errAt(start, "string longer than 64 KiB")
			}
			s := string(p.line[p.pos:i])
			p.pos = i + 1
			return s, nil
		case isControl(c):
			return "", p.errAt(i, "control character in string")
		}
	}
	return "", p.errAt(start, "unterminated string")
}

// array parses a single-line array of strings from p.pos (at '[').
func (p *tomlParser) array() ([]string, error) {
	start := p.pos
	p.pos++
	arr := []string{}
	for {
		p.skipSpace()
		if p.eol() {
			return nil, p.errAt(start, "unterminated array (arrays must fit on one line)")
		}
		switch p.peek() {
		case ']':
			p.pos++
			return arr, nil
		case '"', '\'':
		case '[':
			return nil, p.errAt(p.pos, "nested arrays are not supported")
		case '{':
			return nil, p.errAt(p.pos, "inline tables are not supported")
		case ',':
			return nil, p.errAt(p.pos, `unexpected "," in array`)
		case '#':
			return nil, p.errAt(p.pos, "comments inside arrays are not supported")
		default:
			return nil, p.errAt(p.pos, "arrays may hold only strings")
		}
		if len(arr) >= MaxTOMLArrayLen {
			return nil, p.errAt(p.pos, "array longer than %d elements", MaxTOMLArrayLen)
		}
		var s string
		var err error
		if p.peek() == '"' {
			s, err = p.basicString()
		} else {
			s, err = p.literalString()
		}
		if err != nil {
			return nil, err
		}
		arr = append(arr, s)
		p.skipSpace()
		switch {
		case p.eol():
			return nil, p.errAt(start, "unterminated array (arrays must fit on one line)")
		case p.peek() == ',':
			p.pos++
		case p.peek() == ']':
			p.pos++
			return arr, nil
		default:
			return nil, p.errAt(p.pos, `expected "," or "]" in array`)
		}
	}
}
