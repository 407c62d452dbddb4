//go:build cgo

package codemap

import (
	"cmp"
	"slices"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
)

// maxOutlineDepth bounds how deep the outline walk descends. Definitions
// sit near the top of a tree (inside a few namespaces and classes); the
// bound keeps a pathologically nested file from exhausting the stack.
const maxOutlineDepth = 200

// Outline returns the definitions of src, a file at path, in source order.
// It does not descend into function bodies: local functions and closures
// are not part of a file's outline.
func Outline(path string, src []byte) ([]Symbol, error) {
	p, err := parse(path, src)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	o := newOutliner(p)
	o.walk(p.root, scope{}, 0)
	return o.sorted(), nil
}

// sorted returns the symbols by line. The walk finds them in source order
// except where a name follows its body (`typedef struct {...} name;`); the
// sort is stable, so a container stays before members on its line.
func (o *outliner) sorted() []Symbol {
	slices.SortStableFunc(o.syms, func(a, b Symbol) int { return cmp.Compare(a.Line, b.Line) })
	return o.syms
}

// scope is where the walk is: the dotted container name and whether it is
// a type, inside which functions are methods.
type scope struct {
	name   string
	inType bool
}

// enter returns the scope of a definition named name inside s.
func (s scope) enter(name string, isType bool) scope {
	if name == "" {
		return scope{name: s.name, inType: isType || s.inType}
	}
	if s.name != "" {
		name = s.name + "." + name
	}
	return scope{name: name, inType: isType}
}

// members says what a definition's body holds for the outline.
type members int

const (
	noMembers     members = iota // a leaf: the walk does not enter it
	typeMembers                  // a type: functions inside are methods
	moduleMembers                // a module: functions inside stay functions
)

// rule outlines one node type generically: its name is the child in field
// "name" (or nameField), its kind is kind, and members decides whether and
// how the walk enters it.
type rule struct {
	kind      string
	members   members
	nameField string
}

// outlineRules is how one language is outlined.
type outlineRules struct {
	rules map[string]rule
	// visit handles node types the table cannot express. It returns false
	// to let the walk treat n by the table.
	visit func(o *outliner, n *sitter.Node, typ string, s scope, depth int) bool
	// skip lists node types that never contain an outlined definition
	// (expressions, closures, imports); the walk does not enter them.
	skip map[string]bool
}

// outliner accumulates one file's outline.
type outliner struct {
	*parsed
	r      *outlineRules
	syms   []Symbol
	header bool // a C or C++ header: prototypes are listed
	// defs records the start byte of every outlined name node, for
	// Identifiers to flag definitions.
	defs map[uint32]string
	// next, when a visit sets it, is the scope of the siblings after the
	// node visited: a PHP `namespace X;` or a C# file-scoped namespace
	// holds everything that follows it.
	next *scope
}

func newOutliner(p *parsed) *outliner {
	r := outlineRulesOf(p.lang)
	if r == nil {
		panic("codemap: language " + p.lang + " has a grammar but no outline rules")
	}
	return &outliner{parsed: p, r: r, header: isHeader(p.path), defs: map[uint32]string{}}
}

// outlineRulesOf returns the rules of lang; the tables are immutable.
func outlineRulesOf(lang string) *outlineRules {
	switch lang {
	case langGo:
		return goRules
	case langPython:
		return pythonRules
	case langJavaScript, langTypeScript, langTSX:
		return jsRules
	case langRust:
		return rustRules
	case langC, langCPP:
		return cRules
	case langJava:
		return javaRules
	case langCSharp:
		return csharpRules
	case langKotlin:
		return kotlinRules
	case langSwift:
		return swiftRules
	case langScala:
		return scalaRules
	case langRuby:
		return rubyRules
	case langPHP:
		return phpRules
	case langLua:
		return luaRules
	case langElixir:
		return elixirRules
	case langBash:
		return bashRules
	}
	return nil
}

// walk outlines the named children of n in scope s.
func (o *outliner) walk(n *sitter.Node, s scope, depth int) {
	if depth > maxOutlineDepth {
		return
	}
	count := int(n.NamedChildCount())
	for i := 0; i < count; i++ {
		o.node(n.NamedChild(i), s, depth+1)
		if o.next != nil {
			s, o.next = *o.next, nil
		}
	}
}

// node outlines one node in scope s.
func (o *outliner) node(n *sitter.Node, s scope, depth int) {
	typ := o.typ(n)
	if o.r.visit != nil && o.r.visit(o, n, typ, s, depth) {
		return
	}
	if r, ok := o.r.rules[typ]; ok {
		o.define(n, r, s, depth)
		return
	}
	if o.r.skip[typ] || typ == "comment" {
		return
	}
	o.walk(n, s, depth)
}

// define outlines n by rule r.
func (o *outliner) define(n *sitter.Node, r rule, s scope, depth int) {
	field := r.nameField
	if field == "" {
		field = "name"
	}
	nameNode := n.ChildByFieldName(field)
	name := ""
	if nameNode != nil {
		name = o.name(nameNode)
	}
	o.add(name, r.kind, nameNode, n, s)
	o.enter(n, name, r.members, s, depth)
}

// enter walks the members of a definition named name (which may be "").
func (o *outliner) enter(n *sitter.Node, name string, m members, s scope, depth int) {
	switch m {
	case typeMembers:
		o.walk(n, s.enter(name, true), depth)
	case moduleMembers:
		o.walk(n, s.enter(name, false), depth)
	}
}

// add records a symbol. A function inside a type is a method.
func (o *outliner) add(name, kind string, nameNode, def *sitter.Node, s scope) {
	if name == "" {
		return // a name node that error recovery left empty
	}
	if kind == KindFunction && s.inType {
		kind = KindMethod
	}
	line, _, _ := o.pos(nameNode)
	o.markDefinition(nameNode)
	// A typedef names its struct after the body: the name line can follow
	// the specifier's last line.
	end := max(o.endLine(def), line)
	o.syms = append(o.syms, Symbol{Name: name, Kind: kind, Line: line, EndLine: end, Container: s.name})
}

// markDefinition records the token that names a definition: the name node
// itself, or for a qualified name (a C# namespace A.B) its last part.
func (o *outliner) markDefinition(n *sitter.Node) {
	for range maxOutlineDepth {
		count := int(n.NamedChildCount())
		if count == 0 {
			break
		}
		n = n.NamedChild(count - 1)
	}
	_, _, start := o.pos(n)
	o.defs[start] = strings.TrimSpace(string(o.src[start:n.EndByte()]))
}

// name returns the text of a name node, trimmed and without quotes (a
// TypeScript `declare module "x"` is named by a string).
func (o *outliner) name(n *sitter.Node) string {
	s := strings.TrimSpace(o.text(n))
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		s = s[1 : len(s)-1]
	}
	return s
}

// pos returns the 1-based line and byte column of n and its start byte,
// past any leading white space: some grammars (Lua's) start a node at the
// white space before its first token.
func (o *outliner) pos(n *sitter.Node) (line, col int, start uint32) {
	return position(o.src, n)
}

func position(src []byte, n *sitter.Node) (line, col int, start uint32) {
	pt := n.StartPoint()
	line, col, start = int(pt.Row)+1, int(pt.Column)+1, n.StartByte()
	end := n.EndByte()
	for start < end && start < uint32(len(src)) {
		switch src[start] {
		case '\n':
			line, col = line+1, 1
		case ' ', '\t', '\r', '\f', '\v':
			col++
		default:
			return line, col, start
		}
		start++
	}
	return line, col, start
}

// endLine is the 1-based last line of n. A node that ends at the start of
// a line (after its newline) ends on the line before.
func (o *outliner) endLine(n *sitter.Node) int {
	start, end := n.StartPoint(), n.EndPoint()
	if end.Column == 0 && end.Row > start.Row {
		return int(end.Row)
	}
	return int(end.Row) + 1
}

// childOfType returns the first named child of n with one of the types.
func (o *outliner) childOfType(n *sitter.Node, types ...string) *sitter.Node {
	count := int(n.NamedChildCount())
	for i := 0; i < count; i++ {
		c := n.NamedChild(i)
		t := o.typ(c)
		for _, want := range types {
			if t == want {
				return c
			}
		}
	}
	return nil
}

// hasToken reports whether n has a direct child (named or not) whose type
// is tok, such as the keyword "interface".
func (o *outliner) hasToken(n *sitter.Node, tok string) bool {
	count := int(n.ChildCount())
	for i := 0; i < count; i++ {
		if o.typ(n.Child(i)) == tok {
			return true
		}
	}
	return false
}

// fieldChildren returns the children of n in field.
func (o *outliner) fieldChildren(n *sitter.Node, field string) []*sitter.Node {
	var out []*sitter.Node
	count := int(n.ChildCount())
	for i := 0; i < count; i++ {
		if n.FieldNameForChild(i) == field {
			out = append(out, n.Child(i))
		}
	}
	return out
}

// constantOrVariable names the kind of a top-level binding by the common
// convention that an all-caps name is a constant.
func constantOrVariable(name string) string {
	if name != strings.ToUpper(name) || strings.ToLower(name) == name {
		return KindVariable
	}
	return KindConstant
}

func set(types ...string) map[string]bool {
	m := make(map[string]bool, len(types))
	for _, t := range types {
		m[t] = true
	}
	return m
}
