// Package shellparse finds every simple command a bash command line would
// run: the parsed-command model that package auth/policy decides on (session
// modes, temporary-artifact writes). It reads bash syntax statically: it
// runs, expands and evaluates nothing, and it does not decide what is
// allowed (package policy does).
//
// The reading is conservative. Commands nested anywhere are reported: in
// pipelines and lists, $( ), backticks, ( ) subshells, { ; } groups, <( )
// and >( ), compound commands, function bodies, unquoted heredoc bodies
// (their expansions run), the strings of bash -c (and sh, zsh, dash, ksh,
// su -c, watch), the joined arguments of eval, the action of trap, the commands run by find
// -exec, and the commands run by wrappers (env, sudo, nice, nohup, time,
// timeout, xargs, command, builtin, exec, stdbuf, ionice, watch, setsid,
// doas, coproc), which are reported together with the wrapper. A word whose
// value is only known at run time is marked dynamic rather than guessed.
// Where a wrapper's options are known in full (xargs, nice, timeout,
// stdbuf) they are read as getopt_long reads them, abbreviations and
// optional values included, and an unknown or ambiguous option is a
// *ParseError: where the wrapped command starts depends on it. A for or
// select loop is reported when its word list holds an expansion or its
// variable is not a lowercase name (it could be one the shell reads, PS1).
//
// Anything this reader does not understand is a *ParseError, never a
// partial answer: Parse returns no commands with an error, so a policy built
// on it cannot allow a line it failed to read. Deliberate deviations from
// bash: an unterminated heredoc, a trailing backslash inside quotes and
// constructs bash accepts only with options (extglob patterns, "for x in a;
// { ...; }") are errors; single quotes inside ${ } within double quotes are
// read as quotes.
package shellparse

import (
	"fmt"
	"slices"
	"strings"
)

// Limits of Parse.
const (
	// MaxLineBytes bounds the command line Parse reads.
	MaxLineBytes = 64 << 10
	// MaxDepth bounds nesting: substitutions, compound commands, wrapped
	// commands and the strings of bash -c and eval, together.
	MaxDepth = 64
	// MaxCommands bounds the commands one line may report.
	MaxCommands = 1 << 14
)

// Redirect is one redirection of a command.
type Redirect struct {
	// Op is the operator with its file descriptor prefix as written: ">",
	// ">>", "<", "2>", "&>", "&>>", ">|", "<>", ">&", "2>&", "<&", "<<",
	// "<<-", "<<<", "{fd}>".
	Op string
	// Target is the word after the operator, quotes removed; for a heredoc
	// it is the delimiter.
	Target string
	// Dynamic reports that the target holds an expansion, a glob or a
	// tilde, so the file it names is only known at run time.
	Dynamic bool
	// Body is the body of a heredoc whose delimiter is unquoted, as
	// written: its expansions are evaluated (their commands are reported
	// on their own). It is "" for a quoted delimiter, whose body is data.
	Body string

	heredoc int // 1 + index of the body in output.bodies; 0 if no heredoc
}

// Command is one simple command.
type Command struct {
	// Args are the words with quotes removed; Args[0] is the command name,
	// after any leading NAME=value assignments. Expansions keep their source
	// text ("$(date)", "$HOME"). Args is empty for a line of only
	// assignments or redirections (those still write), and for the
	// redirections of a compound command ("{ ls; } > f").
	//
	// Two compound forms are reported as commands because they evaluate
	// arithmetic: "[[ ... ]]" (Args from "[[" to "]]") and "(( expr ))"
	// (Args "((", the expression, "))").
	Args []string
	// ArgDynamic[i] reports that Args[i] holds an expansion, a glob, a
	// brace pattern or a tilde; its run-time value can differ from the text.
	ArgDynamic []bool
	// Dynamic reports that the command name is not known statically (it
	// comes from an expansion, or it is the string of bash -c or eval that
	// holds an expansion); Args then hold what is known.
	Dynamic bool
	// Redirects are the command's redirections in order.
	Redirects []Redirect
	// Assignments are the leading NAME=value words (also those given to
	// env and sudo for the command they run).
	Assignments []string
}

// ArgIsDynamic reports whether Args[i] is only known at run time. The name
// also counts as dynamic when Dynamic is set, and so does a word without an
// ArgDynamic entry: Parse fills every entry, and a command built by hand
// that leaves one out is read the safe way for an allowlist.
func (c Command) ArgIsDynamic(i int) bool {
	return i >= len(c.ArgDynamic) || c.ArgDynamic[i] || (i == 0 && c.Dynamic)
}

// ParseError is a line Parse could not read. Offset is a byte offset into
// the line (for text inside a bash -c string or backticks, the offset of
// that string).
type ParseError struct {
	Offset int
	Msg    string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("shell: parse error at byte %d: %s", e.Offset, e.Msg)
}

// Parse returns every simple command of line in source order (a wrapper
// before the command it runs, a substitution before the command whose word
// holds it). On error it returns no commands and a *ParseError.
func Parse(line string) (cmds []Command, err error) {
	if len(line) > MaxLineBytes {
		return nil, &ParseError{Offset: MaxLineBytes, Msg: fmt.Sprintf("line longer than %d bytes", MaxLineBytes)}
	}
	out := &output{}
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(*ParseError)
			if !ok {
				panic(r)
			}
			// Offsets inside rebuilt strings (bash -c, eval) are
			// approximate; keep them inside the line.
			pe.Offset = max(0, min(pe.Offset, len(line)))
			cmds, err = nil, pe
		}
	}()
	parseString(line, 0, 0, out)
	for _, c := range out.cmds {
		for i := range c.Redirects {
			if r := &c.Redirects[i]; r.heredoc > 0 {
				r.Body = out.bodies[r.heredoc-1]
				r.heredoc = 0
			}
		}
	}
	return out.cmds, nil
}

// output collects the commands of one Parse call, across nested parsers.
type output struct {
	cmds []Command
	// bodies are the unquoted heredoc bodies, in the order of their
	// redirections; heredoc bodies are read after their command is added.
	bodies []string
}

// parseString parses src as a complete command line; base is its offset
// in the outermost line and depth the nesting it sits at.
func parseString(src string, base, depth int, out *output) {
	p := &parser{src: src, base: base, depth: depth, out: out}
	p.checkDepth(0)
	p.list(func() bool { return false })
	p.skipBlanks()
	if p.pos < len(p.src) {
		p.fail(p.pos, "unexpected "+p.describe())
	}
	if len(p.pending) > 0 {
		p.fail(p.pos, fmt.Sprintf("heredoc delimited by %q is not terminated", p.pending[0].delim))
	}
}

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

// list parses and-or lists separated by ";", "&" and newlines until stop
// reports that the lookahead ends the list, or the input ends. It returns
// how many and-or lists it read.
func (p *parser) list(stop func() bool) int {
	n := 0
	for {
		p.skipNewlines()
		if p.eof() || stop() {
			return n
		}
		p.andOr()
		n++
		p.skipBlanks()
		switch op := p.atOp(); op {
		case ";", "&":
			p.pos++
		case "\n":
		default:
			if p.eof() || stop() {
				return n
			}
			p.fail(p.pos, "unexpected "+p.describe())
		}
	}
}

// nonEmptyList is list for the places bash needs at least one command.
func (p *parser) nonEmptyList(what string, stop func() bool) {
	start := p.pos
	if p.list(stop) == 0 {
		p.fail(start, what+" has no command")
	}
}

func (p *parser) andOr() {
	p.pipeline()
	for {
		p.skipBlanks()
		op := p.atOp()
		if op != "&&" && op != "||" {
			return
		}
		p.pos += 2
		p.skipNewlines()
		p.needCommand(op)
		p.pipeline()
	}
}

// needCommand fails when no command follows an operator.
func (p *parser) needCommand(after string) {
	if p.eof() {
		p.fail(p.pos, fmt.Sprintf("%q at the end of the line", after))
	}
	if op := p.atOp(); op != "" && op != "(" {
		p.fail(p.pos, fmt.Sprintf("%q followed by %s", after, p.describe()))
	}
}

func (p *parser) pipeline() {
	p.skipBlanks()
	if p.atReserved() == "!" {
		p.pos++
		p.skipBlanks()
		p.needCommand("!")
	}
	p.timePrefix()
	p.command()
	for {
		p.skipBlanks()
		op := p.atOp()
		if op != "|" && op != "|&" {
			return
		}
		p.pos += len(op)
		p.skipNewlines()
		p.needCommand(op)
		p.command()
	}
}

// timePrefix consumes the "time [-p]" keyword in front of a compound
// command. In front of a simple command, time is read as a wrapper command
// instead, so it is reported.
func (p *parser) timePrefix() {
	if !strings.HasPrefix(p.src[p.pos:], "time") {
		return
	}
	save := p.pos
	p.pos += 4
	if !p.eof() && !isMeta(p.src[p.pos]) {
		p.pos = save
		return
	}
	p.skipBlanks()
	if strings.HasPrefix(p.src[p.pos:], "-p") && (p.pos+2 == len(p.src) || isMeta(p.src[p.pos+2])) {
		p.pos += 2
		p.skipBlanks()
	}
	switch p.atReserved() {
	case "{", "[[", "if", "while", "until", "for", "select", "case":
		return
	}
	if p.atOp() == "(" {
		return
	}
	p.pos = save
}

// command parses one simple or compound command.
func (p *parser) command() {
	p.skipBlanks()
	if p.atOp() == "(" {
		if strings.HasPrefix(p.src[p.pos:], "((") && arithAhead(p.src, p.pos+2) {
			p.arithCommand()
		} else {
			start := p.pos
			p.pos++
			p.nested(func() { p.nonEmptyList("subshell", p.stopAtParen) })
			if p.atOp() != ")" {
				p.fail(start, "unbalanced \"(\"")
			}
			p.pos++
		}
		p.compoundRedirects()
		return
	}
	switch r := p.atReserved(); r {
	case "{":
		p.pos++
		p.nested(func() { p.nonEmptyList("{ } group", p.stopAt("}")) })
		p.expectReserved("}")
	case "[[":
		p.condCommand()
	case "if":
		p.pos += 2
		p.nested(p.ifBody)
	case "while", "until":
		p.pos += len(r)
		p.nested(func() {
			p.nonEmptyList(r+" condition", p.stopAt("do"))
			p.doBody()
		})
	case "for", "select":
		p.pos += len(r)
		p.nested(func() { p.forBody(r) })
	case "case":
		p.pos += 4
		p.nested(p.caseBody)
	case "function":
		p.pos += len(r)
		p.skipBlanks()
		name := p.scanWord()
		if name.dyn || name.val == "" {
			p.fail(p.pos, "function name is not a plain word")
		}
		p.skipBlanks()
		if p.atOp() == "(" {
			p.pos++
			p.skipBlanks()
			if p.atOp() != ")" {
				p.fail(p.pos, "expected \")\" after \"(\" in a function definition")
			}
			p.pos++
		}
		p.functionBody()
		return
	case "":
		p.simple()
		return
	default:
		p.fail(p.pos, fmt.Sprintf("unexpected %q", r))
	}
	p.compoundRedirects()
}

func (p *parser) ifBody() {
	p.nonEmptyList("if condition", p.stopAt("then"))
	p.expectReserved("then")
	p.nonEmptyList("then branch", p.stopAt("elif", "else", "fi"))
	for {
		p.skipBlanks()
		switch p.atReserved() {
		case "elif":
			p.pos += 4
			p.nonEmptyList("elif condition", p.stopAt("then"))
			p.expectReserved("then")
			p.nonEmptyList("then branch", p.stopAt("elif", "else", "fi"))
		case "else":
			p.pos += 4
			p.nonEmptyList("else branch", p.stopAt("fi"))
			p.expectReserved("fi")
			return
		default:
			p.expectReserved("fi")
			return
		}
	}
}

// doBody parses "do list done".
func (p *parser) doBody() {
	p.skipNewlines()
	p.expectReserved("do")
	p.nonEmptyList("do body", p.stopAt("done"))
	p.expectReserved("done")
}

// forBody parses the rest of "for" or "select" (kind). The arithmetic of
// "for ((...))" is reported like "(( ))"; a word list that holds an
// expansion is reported as Args kind, name, "in", words, since expansions
// can evaluate arithmetic.
func (p *parser) forBody(kind string) {
	p.skipBlanks()
	if kind == "for" && strings.HasPrefix(p.src[p.pos:], "((") {
		start := p.pos
		p.pos += 2
		if !p.arith() {
			p.fail(start, "unterminated \"for ((\"")
		}
		p.add(Command{Args: []string{"((", p.src[start+2 : p.pos-2], "))"}, ArgDynamic: []bool{false, true, false}})
		p.skipBlanks()
		if p.atOp() == ";" {
			p.pos++
		}
		p.doBody()
		return
	}
	name := p.scanWord()
	if !isName(name.val) || name.quoted {
		p.fail(p.pos, fmt.Sprintf("%q is not a valid loop variable", name.val))
	}
	p.skipNewlines()
	if p.atReserved() == "in" {
		p.pos += 2
		words := []word{{val: kind}, name, {val: "in"}}
		for {
			p.skipBlanks()
			if p.eof() {
				p.fail(p.pos, "for loop without do")
			}
			if op := p.atOp(); op == ";" || op == "\n" {
				if op == ";" {
					p.pos++
				} else {
					p.newline()
				}
				break
			} else if op != "" {
				p.fail(p.pos, "unexpected "+p.describe()+" in a for list")
			}
			words = append(words, p.scanWord())
		}
		p.addSyntaxWords(words, !isLowerName(name.val))
	} else {
		// "for NAME; do" iterates over "$@".
		p.addSyntaxWords([]word{{val: kind}, name}, !isLowerName(name.val))
		if p.atOp() == ";" {
			p.pos++
		}
	}
	p.doBody()
}

func (p *parser) caseBody() {
	p.skipBlanks()
	if p.eof() || p.atOp() != "" {
		p.fail(p.pos, "case without a word")
	}
	words := []word{{val: "case"}, p.scanWord(), {val: "in"}}
	p.skipNewlines()
	p.expectReserved("in")
	for {
		p.skipNewlines()
		if p.atReserved() == "esac" {
			p.pos += 4
			p.addSyntaxWords(words, false)
			return
		}
		if p.eof() {
			p.fail(p.pos, "case without esac")
		}
		if p.atOp() == "(" {
			p.pos++
		}
		for {
			p.skipBlanks()
			if p.eof() || p.atOp() != "" {
				p.fail(p.pos, "case pattern expected, found "+p.describe())
			}
			words = append(words, p.scanWord())
			p.skipBlanks()
			if p.atOp() == "|" {
				p.pos++
				continue
			}
			if p.atOp() != ")" {
				p.fail(p.pos, "expected \")\" after a case pattern, found "+p.describe())
			}
			p.pos++
			break
		}
		p.list(func() bool {
			switch p.atOp() {
			case ";;", ";&", ";;&":
				return true
			}
			return p.atReserved() == "esac"
		})
		switch op := p.atOp(); op {
		case ";;", ";&", ";;&":
			p.pos += len(op)
		}
	}
}

// addSyntaxWords reports the words of a for, select or case when one holds
// an expansion, or always when always is set: a loop whose variable is not
// a lowercase name assigns it, and the shell or a program may read a
// variable of that name (PS1, BASH_ENV, ...).
func (p *parser) addSyntaxWords(words []word, always bool) {
	if !always && !slices.ContainsFunc(words, func(w word) bool { return w.dyn }) {
		return
	}
	c := Command{}
	for _, w := range words {
		c.Args = append(c.Args, w.val)
		c.ArgDynamic = append(c.ArgDynamic, w.dyn)
	}
	p.add(c)
}

// functionBody parses the compound command of a function definition.
func (p *parser) functionBody() {
	p.skipNewlines()
	switch p.atReserved() {
	case "{", "[[", "if", "while", "until", "for", "select", "case":
	default:
		if p.atOp() != "(" {
			p.fail(p.pos, "function body must be a compound command, found "+p.describe())
		}
	}
	p.nested(p.command)
}

// compoundRedirects reads the redirections after a compound command and
// reports them as a command without arguments.
func (p *parser) compoundRedirects() {
	var c Command
	for {
		p.skipBlanks()
		if _, _, ok := p.atRedir(); !ok {
			break
		}
		c.Redirects = append(c.Redirects, p.redirect())
	}
	if len(c.Redirects) > 0 {
		p.add(c)
	}
}

// arithCommand parses "(( expr ))" at pos.
func (p *parser) arithCommand() {
	start := p.pos
	p.pos += 2
	if !p.arith() {
		p.fail(start, "unterminated \"((\"")
	}
	expr := p.src[start+2 : p.pos-2]
	p.add(Command{Args: []string{"((", expr, "))"}, ArgDynamic: []bool{false, true, false}})
}

// condCommand parses "[[ ... ]]"; inside it <, >, (, ), &&, || and ! are
// operands of the test, not shell syntax.
func (p *parser) condCommand() {
	start := p.pos
	p.pos += 2
	c := Command{Args: []string{"[["}, ArgDynamic: []bool{false}}
	for {
		p.skipNewlines()
		if p.eof() {
			p.fail(start, "\"[[\" without \"]]\"")
		}
		if p.atReserved() == "]]" {
			p.pos += 2
			break
		}
		s := p.src[p.pos:]
		tok := ""
		for _, op := range []string{"&&", "||", "(", ")", "<", ">", "!", "|"} {
			if strings.HasPrefix(s, op) {
				tok = op
				break
			}
		}
		if tok != "" {
			p.pos += len(tok)
			c.Args = append(c.Args, tok)
			c.ArgDynamic = append(c.ArgDynamic, false)
			continue
		}
		if op := p.atOp(); op != "" {
			p.fail(p.pos, "unexpected "+p.describe()+" inside [[ ]]")
		}
		w := p.scanWord()
		c.Args = append(c.Args, w.val)
		c.ArgDynamic = append(c.ArgDynamic, w.dyn)
	}
	c.Args = append(c.Args, "]]")
	c.ArgDynamic = append(c.ArgDynamic, false)
	p.add(c)
	p.compoundRedirects()
}

// simple parses a simple command (or a function definition "name () body").
func (p *parser) simple() {
	var c Command
	var words []word
	for {
		p.skipBlanks()
		if p.eof() {
			break
		}
		if _, _, ok := p.atRedir(); ok {
			c.Redirects = append(c.Redirects, p.redirect())
			continue
		}
		if p.atOp() != "" {
			break
		}
		w := p.scanWord()
		if len(words) == 0 && w.assign {
			c.Assignments = append(c.Assignments, w.val)
			continue
		}
		words = append(words, w)
		if len(words) == 1 && len(c.Assignments) == 0 && len(c.Redirects) == 0 && p.funcParens() {
			if w.dyn || w.quoted {
				p.fail(p.pos, "function name is not a plain word")
			}
			p.functionBody()
			return
		}
	}
	if len(words) == 0 && len(c.Assignments) == 0 && len(c.Redirects) == 0 {
		p.fail(p.pos, "expected a command, found "+p.describe())
	}
	p.emit(c, words, p.depth)
}

// funcParens consumes "( )" after a function name, if present.
func (p *parser) funcParens() bool {
	save := p.pos
	p.skipBlanks()
	if p.atOp() != "(" {
		p.pos = save
		return false
	}
	p.pos++
	p.skipBlanks()
	if p.atOp() != ")" {
		p.pos = save
		return false
	}
	p.pos++
	return true
}

// add records one command.
func (p *parser) add(c Command) {
	if len(p.out.cmds) >= MaxCommands {
		p.fail(p.pos, fmt.Sprintf("more than %d commands", MaxCommands))
	}
	p.out.cmds = append(p.out.cmds, c)
}

// emit records a simple command and the commands it runs as a wrapper or
// a shell. depth is the nesting of the wrapper chain.
func (p *parser) emit(c Command, words []word, depth int) {
	if depth > MaxDepth {
		p.fail(p.pos, fmt.Sprintf("nesting deeper than %d", MaxDepth))
	}
	if len(words) > 0 && (words[0].quoted || depth > p.depth) && syntaxNames[words[0].val] {
		// A program named "[[" or "for" would read as the shell syntax
		// this package reports under that name.
		p.fail(p.pos, fmt.Sprintf("%q names a program, not shell syntax", words[0].val))
	}
	for _, w := range words {
		c.Args = append(c.Args, w.val)
		c.ArgDynamic = append(c.ArgDynamic, w.dyn)
	}
	if len(words) > 0 {
		c.Dynamic = words[0].dyn
	}
	p.add(c)
	if len(words) > 0 {
		p.unwrap(words, depth)
	}
}
