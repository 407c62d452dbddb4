package shellparse

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Words, quoting, expansions, redirections and heredocs.

// redirOps are the redirection operators, longest first.
var redirOps = []string{"&>>", "&>", "<<<", "<<-", "<<", "<>", "<&", "<", ">>", ">|", ">&", ">"}

// atRedir reports a redirection at pos: its file descriptor prefix ("2",
// "{fd}" or "") and operator. "<(" and ">(" without a prefix are process
// substitutions, not redirections.
func (p *parser) atRedir() (prefix, op string, ok bool) {
	s := p.src[p.pos:]
	i := 0
	if strings.HasPrefix(s, "{") {
		if j := strings.IndexByte(s, '}'); j > 1 && isName(s[1:j]) && j+1 < len(s) && (s[j+1] == '<' || s[j+1] == '>') {
			i = j + 1
		}
	} else {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i > 0 && (i == len(s) || (s[i] != '<' && s[i] != '>')) {
			return "", "", false
		}
	}
	rest := s[i:]
	for _, o := range redirOps {
		if strings.HasPrefix(rest, o) {
			op = o
			break
		}
	}
	if op == "" {
		return "", "", false
	}
	if i == 0 && (op == "<" || op == ">") && len(rest) > 1 && rest[1] == '(' {
		return "", "", false
	}
	return s[:i], op, true
}

// redirect reads one redirection at pos (atRedir reported it).
func (p *parser) redirect() Redirect {
	prefix, op, _ := p.atRedir()
	start := p.pos
	p.pos += len(prefix) + len(op)
	p.skipBlanks()
	if p.eof() || (isMeta(p.src[p.pos]) && !p.atProcSubst()) {
		p.fail(start, fmt.Sprintf("redirection %q without a target", prefix+op))
	}
	w := p.scanWord()
	r := Redirect{Op: prefix + op, Target: w.val, Dynamic: w.dyn}
	if op == "<<" || op == "<<-" {
		// The delimiter is taken literally after quote removal. The body
		// is read at the next newline; Parse copies it into the Redirect.
		p.out.bodies = append(p.out.bodies, "")
		r.heredoc = len(p.out.bodies)
		p.pending = append(p.pending, heredoc{delim: w.val, quoted: w.quoted, strip: op == "<<-", id: r.heredoc})
		r.Dynamic = false
	}
	return r
}

func (p *parser) atProcSubst() bool {
	s := p.src[p.pos:]
	return strings.HasPrefix(s, "<(") || strings.HasPrefix(s, ">(")
}

// heredocBody reads a heredoc body at pos up to and including its
// delimiter line. An unquoted delimiter leaves expansions live in the body,
// so their commands are read; the lines themselves are data.
func (p *parser) heredocBody(h heredoc) {
	start := p.pos
	for {
		if p.eof() {
			p.fail(start, fmt.Sprintf("heredoc delimited by %q is not terminated", h.delim))
		}
		line, next := p.src[p.pos:], len(p.src)
		if i := strings.IndexByte(line, '\n'); i >= 0 {
			line, next = line[:i], p.pos+i+1
		}
		if !h.quoted && oddTrailingBackslashes(line) {
			// Bash joins this line with the next one, in the body and in
			// the delimiter line: the heredoc could end elsewhere than this
			// reader would think.
			p.fail(p.pos, "a line continuation in a heredoc body")
		}
		check := line
		if h.strip {
			check = strings.TrimLeft(line, "\t")
		}
		if check == h.delim {
			if !h.quoted {
				p.heredocExpansions(p.src[start:p.pos], start)
				p.out.bodies[h.id-1] = p.src[start:p.pos]
			}
			p.pos = next
			return
		}
		p.pos = next
	}
}

// oddTrailingBackslashes reports a line ending in an unescaped backslash.
func oddTrailingBackslashes(line string) bool {
	n := len(line) - len(strings.TrimRight(line, "\\"))
	return n%2 == 1
}

// heredocExpansions reads the expansions of an unquoted heredoc body.
func (p *parser) heredocExpansions(body string, off int) {
	q := &parser{src: body, base: p.base + off, depth: p.depth + 1, out: p.out}
	q.checkDepth(0)
	var b strings.Builder
	var w word
	for !q.eof() {
		switch q.src[q.pos] {
		case '\\':
			q.pos = min(q.pos+2, len(q.src))
		case '$':
			q.dollar(&b, &w, true)
		case '`':
			q.backtick(&b, &w, true)
		default:
			q.pos++
		}
	}
}

// scanWord reads one word at pos. The caller has checked that pos is not
// at a control operator or a redirection.
func (p *parser) scanWord() word {
	start := p.pos
	var b strings.Builder
	var w word
	if n, sub := assignPrefix(p.src, p.pos); n > 0 {
		w.assign = true
		nameEnd := p.pos
		for nameEnd < len(p.src) && isNameByte(p.src[nameEnd]) {
			nameEnd++
		}
		if sub {
			// NAME[subscript]=: the subscript is arithmetic and may hold
			// substitutions.
			p.pos = nameEnd + 1
			p.nested(func() { p.bracketed('[', ']', "array subscript") })
			switch rest := p.src[p.pos:]; {
			case strings.HasPrefix(rest, "+="):
				n = 2
			case strings.HasPrefix(rest, "="):
				n = 1
			default:
				p.fail(p.pos, "malformed array subscript")
			}
			b.WriteString(p.src[start:p.pos])
			start = p.pos
		}
		b.WriteString(p.src[start : p.pos+n])
		p.pos += n
		if !p.eof() && p.src[p.pos] == '(' {
			p.arrayValue(&b, &w)
		}
	}
	for !p.eof() {
		c := p.src[p.pos]
		if isMeta(c) {
			if p.pos == start && p.atProcSubst() {
				ps := p.pos
				p.pos += 2
				p.nested(func() { p.list(p.stopAtParen) })
				if p.eof() || p.atOp() != ")" {
					p.fail(ps, "unbalanced process substitution")
				}
				p.pos++
				w.dyn = true
				b.WriteString(p.src[ps:p.pos])
				continue
			}
			break
		}
		switch c {
		case '\\':
			w.quoted = true
			if p.pos+1 >= len(p.src) {
				b.WriteByte('\\')
				p.pos++
				continue
			}
			if n := p.src[p.pos+1]; n != '\n' {
				b.WriteByte(n)
			}
			p.pos += 2
		case '\'':
			w.quoted = true
			end := strings.IndexByte(p.src[p.pos+1:], '\'')
			if end < 0 {
				p.fail(p.pos, "unterminated single quote")
			}
			b.WriteString(p.src[p.pos+1 : p.pos+1+end])
			p.pos += end + 2
		case '"':
			p.dquote(&b, &w)
		case '$':
			p.dollar(&b, &w, false)
		case '`':
			p.backtick(&b, &w, false)
		case '*', '?':
			w.dyn = true
			b.WriteByte(c)
			p.pos++
		case '[':
			if strings.IndexByte(p.wordRest(), ']') > 0 {
				w.dyn = true
			}
			b.WriteByte(c)
			p.pos++
		case '{':
			if rest := p.wordRest(); strings.IndexByte(rest, '}') > 0 {
				inner := rest[:strings.IndexByte(rest, '}')]
				if strings.Contains(inner, ",") || strings.Contains(inner, "..") {
					w.dyn = true
				}
			}
			b.WriteByte(c)
			p.pos++
		case '~':
			if p.pos == start || (w.assign && (p.src[p.pos-1] == '=' || p.src[p.pos-1] == ':')) {
				w.dyn = true
			}
			b.WriteByte(c)
			p.pos++
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
	if p.pos == start {
		p.fail(p.pos, "expected a word, found "+p.describe())
	}
	w.val = b.String()
	return w
}

// wordRest is the source from pos to the next unquoted-looking word end; it
// is only used to decide whether "[" or "{" starts a pattern.
func (p *parser) wordRest() string {
	end := p.pos
	for end < len(p.src) && !isMeta(p.src[end]) {
		end++
	}
	return p.src[p.pos:end]
}

// arrayValue reads "(a b c)" after NAME=.
func (p *parser) arrayValue(b *strings.Builder, w *word) {
	start := p.pos
	p.pos++
	p.nested(func() {
		for {
			p.skipNewlines()
			if p.eof() {
				p.fail(start, "unterminated array assignment")
			}
			if op := p.atOp(); op == ")" {
				p.pos++
				return
			} else if op != "" {
				p.fail(p.pos, "unexpected "+p.describe()+" in an array assignment")
			}
			e := p.scanWord()
			w.dyn = w.dyn || e.dyn
		}
	})
	b.WriteString(p.src[start:p.pos])
}

// dquote reads a double-quoted string at pos.
func (p *parser) dquote(b *strings.Builder, w *word) {
	start := p.pos
	p.pos++
	w.quoted = true
	for {
		if p.eof() {
			p.fail(start, "unterminated double quote")
		}
		c := p.src[p.pos]
		switch c {
		case '"':
			p.pos++
			return
		case '\\':
			if p.pos+1 < len(p.src) {
				switch n := p.src[p.pos+1]; n {
				case '$', '`', '"', '\\':
					b.WriteByte(n)
					p.pos += 2
					continue
				case '\n':
					p.pos += 2
					continue
				}
			}
			b.WriteByte('\\')
			p.pos++
		case '$':
			p.dollar(b, w, true)
		case '`':
			p.backtick(b, w, true)
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
}

// dollar reads what starts with "$" at pos.
func (p *parser) dollar(b *strings.Builder, w *word, inDQ bool) {
	start := p.pos
	s := p.src[p.pos:]
	if len(s) < 2 {
		b.WriteByte('$')
		p.pos++
		return
	}
	if strings.HasPrefix(s, "$\\\n") {
		// Bash joins "$" with what follows the continuation ("$(", "${",
		// "$'", "$name"); reading "$" alone would miss that expansion.
		p.fail(p.pos, "a line continuation after \"$\"")
	}
	switch n := s[1]; {
	case n == '\'' && !inDQ:
		p.pos += 2
		w.quoted = true
		p.ansiC(b)
		return
	case n == '"' && !inDQ:
		p.pos++
		p.dquote(b, w)
		return
	case n == '(':
		if strings.HasPrefix(s, "$((") && arithAhead(p.src, p.pos+3) {
			p.pos += 3
			p.nested(func() {
				if !p.arith() {
					p.fail(start, "unterminated \"$((\"")
				}
			})
		} else {
			p.pos += 2
			p.nested(func() { p.list(p.stopAtParen) })
			if p.eof() || p.atOp() != ")" {
				p.fail(start, "unbalanced \"$(\"")
			}
			p.pos++
		}
	case n == '{':
		p.pos += 2
		p.nested(func() { p.bracketed('{', '}', "\"${\"") })
	case n == '[':
		p.pos += 2
		p.nested(func() { p.bracketed('[', ']', "\"$[\"") })
	case isNameByte(n) && !(n >= '0' && n <= '9'):
		p.pos++
		for !p.eof() && isNameByte(p.src[p.pos]) {
			p.pos++
		}
	case n >= '0' && n <= '9' || strings.IndexByte("@*#?-$!", n) >= 0:
		p.pos += 2
	default:
		b.WriteByte('$')
		p.pos++
		return
	}
	w.dyn = true
	b.WriteString(p.src[start:p.pos])
}

// bracketed reads up to and including the close byte that balances an
// already consumed open byte, reading quotes and expansions inside.
func (p *parser) bracketed(open, close byte, what string) {
	start := p.pos
	depth := 0
	for {
		if p.eof() {
			p.fail(start, "unterminated "+what)
		}
		switch c := p.src[p.pos]; c {
		case close:
			p.pos++
			if depth == 0 {
				return
			}
			depth--
		case open:
			p.pos++
			depth++
		default:
			p.exprUnit()
		}
	}
}

// arith reads an arithmetic expression after "((" up to and including the
// "))" that closes it. It reports false at the end of input.
func (p *parser) arith() bool {
	depth := 0
	for !p.eof() {
		switch p.src[p.pos] {
		case '(':
			depth++
			p.pos++
		case ')':
			if depth == 0 {
				if strings.HasPrefix(p.src[p.pos:], "))") {
					p.pos += 2
					return true
				}
				p.fail(p.pos, "unbalanced \")\" in an arithmetic expression")
			}
			depth--
			p.pos++
		default:
			p.exprUnit()
		}
	}
	return false
}

// exprUnit consumes one unit of expression text: a quoted string or an
// expansion (whose commands are read), or one byte.
func (p *parser) exprUnit() {
	var b strings.Builder
	var w word
	switch p.src[p.pos] {
	case '\\':
		p.pos = min(p.pos+2, len(p.src))
	case '\'':
		end := strings.IndexByte(p.src[p.pos+1:], '\'')
		if end < 0 {
			p.fail(p.pos, "unterminated single quote")
		}
		p.pos += end + 2
	case '"':
		p.dquote(&b, &w)
	case '$':
		p.dollar(&b, &w, false)
	case '`':
		p.backtick(&b, &w, false)
	default:
		p.pos++
	}
}

// arithAhead reports whether the text after "((" at i is closed by "))"
// at parenthesis depth zero, which makes it arithmetic rather than nested
// subshells. It is a lookahead only; quotes are skipped roughly.
func arithAhead(src string, i int) bool {
	depth := 0
	for i < len(src) {
		switch c := src[i]; c {
		case '\\':
			i++
		case '\'', '"':
			end := strings.IndexByte(src[i+1:], c)
			if end < 0 {
				return false
			}
			i += end + 1
		case '(':
			depth++
		case ')':
			if depth == 0 {
				return i+1 < len(src) && src[i+1] == ')'
			}
			depth--
		}
		i++
	}
	return false
}

// backtick reads a `command substitution` at pos and parses its inside.
func (p *parser) backtick(b *strings.Builder, w *word, inDQ bool) {
	start := p.pos
	p.pos++
	var inner strings.Builder
	for {
		if p.eof() {
			p.fail(start, "unterminated backtick")
		}
		c := p.src[p.pos]
		if c == '`' {
			p.pos++
			break
		}
		if c == '\\' && p.pos+1 < len(p.src) {
			if n := p.src[p.pos+1]; n == '`' || n == '\\' || n == '$' || (inDQ && n == '"') {
				inner.WriteByte(n)
				p.pos += 2
				continue
			}
		}
		inner.WriteByte(c)
		p.pos++
	}
	p.checkDepth(1)
	parseString(inner.String(), p.base+start+1, p.depth+1, p.out)
	w.dyn = true
	b.WriteString(p.src[start:p.pos])
}

// ansiC decodes the body of $'...' after the opening quote, as bash does.
// A NUL ends the string's value, as it ends bash's C string.
func (p *parser) ansiC(b *strings.Builder) {
	start := p.pos - 2
	cut := false
	put := func(c byte) {
		if c == 0 {
			cut = true
		}
		if !cut {
			b.WriteByte(c)
		}
	}
	for {
		if p.eof() {
			p.fail(start, "unterminated $'")
		}
		c := p.src[p.pos]
		if c == '\'' {
			p.pos++
			return
		}
		if c != '\\' || p.pos+1 >= len(p.src) {
			put(c)
			p.pos++
			continue
		}
		n := p.src[p.pos+1]
		p.pos += 2
		switch n {
		case 'a':
			put(7)
		case 'b':
			put(8)
		case 'e', 'E':
			put(27)
		case 'f':
			put(12)
		case 'n':
			put('\n')
		case 'r':
			put('\r')
		case 't':
			put('\t')
		case 'v':
			put(11)
		case '\\', '\'', '"', '?':
			put(n)
		case 'c':
			if p.eof() {
				put('\\')
				put('c')
				continue
			}
			put(p.src[p.pos] & 0x1f)
			p.pos++
		case 'x', 'u', 'U':
			maxDigits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[n]
			v, k := 0, 0
			for k < maxDigits && p.pos < len(p.src) && hexVal(p.src[p.pos]) >= 0 {
				v = v*16 + hexVal(p.src[p.pos])
				p.pos++
				k++
			}
			switch {
			case k == 0:
				put('\\')
				put(n)
			case n == 'x':
				put(byte(v))
			default:
				if v == 0 {
					cut = true
				}
				if !cut {
					var buf [utf8.UTFMax]byte
					for _, c := range buf[:utf8.EncodeRune(buf[:], rune(v))] {
						put(c)
					}
				}
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v, k := int(n-'0'), 1
			for k < 3 && p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '7' {
				v = v*8 + int(p.src[p.pos]-'0')
				p.pos++
				k++
			}
			put(byte(v))
		default:
			put('\\')
			put(n)
		}
	}
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isName reports a shell variable name.
func isName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return false
		}
	}
	return true
}

// isLowerName reports a variable name of lowercase letters, digits and
// "_" with at least one letter: none of the variables bash or common
// programs read to find what to run is spelled so.
func isLowerName(s string) bool {
	if !isName(s) || strings.Trim(s, "_0123456789") == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			return false
		}
	}
	return true
}

// assignPrefix reports an assignment word at i: the length of "NAME=",
// "NAME+=" or "NAME[...]=" (sub true) up to and including "=". The
// subscript is found by bracket counting only; the caller reads it.
func assignPrefix(src string, i int) (n int, sub bool) {
	j := i
	for j < len(src) && isNameByte(src[j]) {
		j++
	}
	if j == i || (src[i] >= '0' && src[i] <= '9') || j >= len(src) {
		return 0, false
	}
	if src[j] == '[' {
		depth := 0
		k := j
		for ; k < len(src); k++ {
			if src[k] == '[' {
				depth++
			} else if src[k] == ']' {
				depth--
				if depth == 0 {
					break
				}
			} else if src[k] == '\n' {
				return 0, false
			}
		}
		if k >= len(src) {
			return 0, false
		}
		j, sub = k+1, true
	}
	if strings.HasPrefix(src[j:], "+=") {
		return j + 2 - i, sub
	}
	if strings.HasPrefix(src[j:], "=") {
		return j + 1 - i, sub
	}
	return 0, false
}
