//go:build cgo

package codemap

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
)

// identTypes lists, per language, the leaf node types that name something
// in code. Strings and comments are single leaves in every grammar, so no
// identifier is ever found inside one; only interpolations (`${x}`,
// f"{x}", "$x" in shell), which are code, contribute.
var identTypes = map[string][]string{
	langGo:         {"identifier", "type_identifier", "field_identifier", "package_identifier"},
	langPython:     {"identifier"},
	langJavaScript: {"identifier", "property_identifier", "shorthand_property_identifier", "shorthand_property_identifier_pattern", "private_property_identifier"},
	langTypeScript: {"identifier", "type_identifier", "property_identifier", "shorthand_property_identifier", "shorthand_property_identifier_pattern", "private_property_identifier"},
	langTSX:        {"identifier", "type_identifier", "property_identifier", "shorthand_property_identifier", "shorthand_property_identifier_pattern", "private_property_identifier"},
	langRust:       {"identifier", "type_identifier", "field_identifier", "shorthand_field_identifier"},
	langC:          {"identifier", "type_identifier", "field_identifier"},
	langCPP:        {"identifier", "type_identifier", "field_identifier", "namespace_identifier"},
	langJava:       {"identifier", "type_identifier"},
	langRuby:       {"identifier", "constant"},
	langCSharp:     {"identifier"},
	langPHP:        {"name"},
	langLua:        {"identifier", "property_identifier", "method"},
	langElixir:     {"identifier", "alias"},
	langKotlin:     {"simple_identifier", "type_identifier"},
	langSwift:      {"simple_identifier", "type_identifier"},
	langScala:      {"identifier", "type_identifier"},
	langBash:       {"variable_name"},
}

// identExtraPatterns are query patterns beyond the leaf types: a shell word
// is an identifier only as a command's or a function's name.
var identExtraPatterns = map[string]string{
	langBash: `(command_name (word) @id) (function_definition name: (word) @id)`,
}

// compileIdentQuery builds the identifier query of lang from the types its
// grammar has.
func compileIdentQuery(lang string, g *grammar) (*sitter.Query, error) {
	var b strings.Builder
	b.WriteString("[")
	for _, t := range identTypes[lang] {
		if g.hasNamedType(t) {
			fmt.Fprintf(&b, " (%s)", t)
		}
	}
	b.WriteString(" ] @id ")
	b.WriteString(identExtraPatterns[lang])
	return sitter.NewQuery([]byte(b.String()), g.lang)
}

// hasNamedType reports whether the grammar has a named node type t; a query
// naming an unknown type does not compile.
func (g *grammar) hasNamedType(t string) bool {
	for s, name := range g.names {
		if name == t && g.lang.SymbolType(sitter.Symbol(s)) == sitter.SymbolTypeRegular {
			return true
		}
	}
	return false
}

// Identifiers returns every identifier-like token of src (a file at path)
// that is code: identifiers, type, field and property identifiers, and the
// constants of languages that lex them apart (Ruby constants, Elixir
// aliases, split at dots). Never a word inside a string or a comment.
// Tokens are in source order; Definition marks the names Outline reports.
func Identifiers(path string, src []byte) ([]Ident, error) {
	p, err := parse(path, src)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	o := newOutliner(p)
	o.walk(p.root, scope{}, 0)

	qc := sitter.NewQueryCursor()
	defer qc.Close()
	qc.Exec(p.idents, p.root)
	var out []Ident
	for {
		m, ok := qc.NextMatch()
		if !ok {
			break
		}
		for _, c := range m.Captures {
			out = p.appendIdent(out, c.Node, o.defs)
		}
	}
	slices.SortStableFunc(out, func(a, b Ident) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return slices.CompactFunc(out, func(a, b Ident) bool { return a.Line == b.Line && a.Column == b.Column }), nil
}

// appendIdent appends the identifier n holds; an Elixir alias such as
// Foo.Bar gives one identifier per segment.
func (p *parsed) appendIdent(out []Ident, n *sitter.Node, defs map[uint32]string) []Ident {
	if n.NamedChildCount() > 0 {
		return out
	}
	line, col, start := position(p.src, n)
	text := strings.TrimRightFunc(string(p.src[start:n.EndByte()]), isSpace)
	if text == "" {
		return out
	}
	// A dotted definition (defmodule Foo.Bar) defines its last segment.
	def := defs[start] == text
	for {
		part, rest, dotted := strings.Cut(text, ".")
		if part != "" {
			out = append(out, Ident{Name: part, Line: line, Column: col, Definition: def && !dotted})
		}
		if !dotted {
			return out
		}
		col += len(part) + 1
		text = rest
	}
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }
