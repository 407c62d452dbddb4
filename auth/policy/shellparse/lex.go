package shellparse

import (
	"fmt"
	"strings"
)

// The parser's state and its lexical steps: blanks, continuations,
// operators and reserved words.

// parser reads one string. Errors panic with a *ParseError that Parse
// recovers; nothing else is recovered.
type parser struct {
	src   string
	pos   int
	base  int
	depth int
	out   *output
	// pending are heredocs whose bodies start after the next newline.
	pending []heredoc
}

type heredoc struct {
	id     int // Redirect.heredoc
	delim  string
	quoted bool // a quoted delimiter makes the body literal
	strip  bool // <<- strips leading tabs
}

// word is one shell word as read.
type word struct {
	val    string // quotes removed, expansions as source text
	dyn    bool   // holds an expansion, glob, brace pattern or tilde
	quoted bool   // some part was quoted or escaped
	assign bool   // NAME=value (or NAME+=, NAME[i]=) with an unquoted name
}

func (p *parser) fail(off int, msg string) {
	panic(&ParseError{Offset: p.base + off, Msg: msg})
}

// checkDepth fails when adding extra levels would pass MaxDepth.
func (p *parser) checkDepth(extra int) {
	if p.depth+extra > MaxDepth {
		p.fail(p.pos, fmt.Sprintf("nesting deeper than %d", MaxDepth))
	}
}

// nested runs f one level deeper.
func (p *parser) nested(f func()) {
	p.depth++
	p.checkDepth(0)
	f()
	p.depth--
}

func (p *parser) eof() bool { return p.pos >= len(p.src) }

func (p *parser) describe() string {
	if p.eof() {
		return "end of line"
	}
	if op := p.atOp(); op != "" {
		if op == "\n" {
			return "newline"
		}
		return fmt.Sprintf("%q", op)
	}
	end := p.pos
	for end < len(p.src) && end-p.pos < 16 && !isMeta(p.src[end]) {
		end++
	}
	if end == p.pos {
		end = p.pos + 1
	}
	return fmt.Sprintf("%q", p.src[p.pos:end])
}

// isMeta reports the bytes that end an unquoted word.
func isMeta(c byte) bool {
	switch c {
	case ' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>':
		return true
	}
	return false
}

// skipBlanks skips spaces, tabs, line continuations and a comment (up to,
// not including, its newline).
func (p *parser) skipBlanks() {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t':
			p.pos++
		case c == '\\' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '\n':
			p.continuation()
		case c == '#':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

// continuation consumes a backslash-newline at pos. Bash removes the pair
// before it reads tokens, so text on both sides joins ("$(\<newline>(x))"
// is "$((x))"); this parser reads it as a blank, which agrees with bash only
// when a blank, a newline or the end of the string is on one side. The
// other case is an error, never a different reading.
func (p *parser) continuation() {
	before := p.pos == 0 || isBlank(p.src[p.pos-1])
	after := p.pos+2 >= len(p.src) || isBlank(p.src[p.pos+2])
	if !before && !after {
		p.fail(p.pos, "a line continuation joins two tokens")
	}
	p.pos += 2
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' }

// skipNewlines skips blanks and newlines, reading pending heredoc bodies
// at each newline.
func (p *parser) skipNewlines() {
	for {
		p.skipBlanks()
		if p.eof() || p.src[p.pos] != '\n' {
			return
		}
		p.newline()
	}
}

// newline consumes one newline and the heredoc bodies that follow it.
func (p *parser) newline() {
	p.pos++
	pend := p.pending
	p.pending = nil
	for _, h := range pend {
		p.heredocBody(h)
	}
}

// atOp returns the control operator at pos ("" if none). "&>" and "&>>"
// are redirections, not operators.
func (p *parser) atOp() string {
	s := p.src[p.pos:]
	if s == "" {
		return ""
	}
	switch s[0] {
	case '\n':
		return "\n"
	case ';':
		for _, op := range []string{";;&", ";;", ";&"} {
			if strings.HasPrefix(s, op) {
				return op
			}
		}
		return ";"
	case '&':
		if strings.HasPrefix(s, "&>") {
			return ""
		}
		if strings.HasPrefix(s, "&&") {
			return "&&"
		}
		return "&"
	case '|':
		if strings.HasPrefix(s, "||") {
			return "||"
		}
		if strings.HasPrefix(s, "|&") {
			return "|&"
		}
		return "|"
	case '(', ')':
		return s[:1]
	}
	return ""
}

// reserved are bash's reserved words, recognized unquoted in command
// position.
var reserved = map[string]bool{
	"if": true, "then": true, "elif": true, "else": true, "fi": true,
	"do": true, "done": true, "case": true, "esac": true, "while": true,
	"until": true, "for": true, "select": true, "function": true, "in": true,
	"{": true, "}": true, "!": true, "[[": true, "]]": true,
}

// syntaxNames are the Args[0] of the commands that report shell syntax
// rather than a program.
var syntaxNames = map[string]bool{"[[": true, "((": true, "for": true, "select": true, "case": true}

// atReserved returns the reserved word at pos, if the text there is one
// followed by a delimiter.
func (p *parser) atReserved() string {
	end := p.pos
	for end < len(p.src) && end-p.pos < 9 {
		c := p.src[end]
		if isMeta(c) || c == '\'' || c == '"' || c == '\\' || c == '$' || c == '`' {
			break
		}
		end++
	}
	w := p.src[p.pos:end]
	if !reserved[w] {
		return ""
	}
	if end < len(p.src) && !isMeta(p.src[end]) {
		return ""
	}
	return w
}

// expectReserved consumes the reserved word w or fails.
func (p *parser) expectReserved(w string) {
	p.skipBlanks()
	if p.atReserved() != w {
		p.fail(p.pos, fmt.Sprintf("expected %q, found %s", w, p.describe()))
	}
	p.pos += len(w)
}

// stopAt returns a stop function for the given reserved words.
func (p *parser) stopAt(words ...string) func() bool {
	return func() bool {
		r := p.atReserved()
		for _, w := range words {
			if r == w {
				return true
			}
		}
		return false
	}
}

// stopAtParen stops a list at ")".
func (p *parser) stopAtParen() bool { return p.atOp() == ")" }
