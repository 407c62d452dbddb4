package shellparse

import (
	"fmt"
	"slices"
	"strings"
)

// The grammar: lists, pipelines, compound and simple commands, and the
// commands they add to the output.

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
