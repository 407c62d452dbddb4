//go:build cgo

package codemap

import (
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
)

// C and C++: function definitions (an out-of-class `T::f` definition is a
// method of T), structs, unions, classes and enums with a body, typedefs
// and using-aliases, namespaces, object-like macros with a value (not
// include guards) as constants and
// function-like macros as functions, top-level variables, method
// declarations inside classes, and function prototypes in headers only (in
// a source file they repeat the definitions).
var cRules = &outlineRules{
	rules: map[string]rule{
		"preproc_function_def": {kind: KindFunction},
		"alias_declaration":    {kind: KindType},
	},
	visit: visitC,
	skip: set("preproc_include", "compound_statement", "string_literal", "raw_string_literal",
		"access_specifier", "lambda_expression", "preproc_call", "friend_declaration", "using_declaration",
		"static_assert_declaration", "expression_statement"),
}

func visitC(o *outliner, n *sitter.Node, typ string, s scope, depth int) bool {
	switch typ {
	case "preproc_def":
		// A macro without a value is an include guard or a flag.
		if name := n.ChildByFieldName("name"); name != nil && n.ChildByFieldName("value") != nil {
			o.add(o.name(name), KindConstant, name, n, s)
		}
	case "function_definition":
		name, quals, _ := o.cDeclarator(n.ChildByFieldName("declarator"))
		if name == nil {
			return true
		}
		in := s
		if len(quals) > 0 {
			in = s.enter(strings.Join(quals, "."), true)
		}
		o.add(o.name(name), KindFunction, name, n, in)
	case "declaration", "field_declaration":
		o.cDeclaration(n, typ, s, depth)
	case "struct_specifier", "union_specifier", "class_specifier", "enum_specifier":
		o.cSpecifier(n, typ, nil, s, depth)
	case "type_definition":
		o.cTypedef(n, s, depth)
	case "namespace_definition":
		name := ""
		if nn := n.ChildByFieldName("name"); nn != nil {
			name = strings.ReplaceAll(o.name(nn), "::", ".")
			o.add(name, KindModule, nn, n, s)
		}
		if body := n.ChildByFieldName("body"); body != nil {
			o.walk(body, s.enter(name, false), depth)
		}
	default:
		return false
	}
	return true
}

// cSpecifierKind maps a specifier to its symbol kind and whether its body
// holds members.
func cSpecifierKind(typ string) (string, members) {
	switch typ {
	case "class_specifier":
		return KindClass, typeMembers
	case "enum_specifier":
		return KindEnum, noMembers
	}
	return KindStruct, typeMembers
}

// cSpecifier outlines a struct, union, class or enum that has a body; one
// without (a forward declaration or a use as a type) defines nothing.
// alias, if not nil, names an anonymous one, as `typedef struct {...}
// alias;` does. It returns whether it listed a symbol.
func (o *outliner) cSpecifier(n *sitter.Node, typ string, alias *sitter.Node, s scope, depth int) bool {
	body := n.ChildByFieldName("body")
	if body == nil {
		return false
	}
	kind, m := cSpecifierKind(typ)
	nameNode := n.ChildByFieldName("name")
	if nameNode == nil {
		nameNode = alias
	}
	if nameNode == nil {
		o.enter(body, "", m, s, depth)
		return false
	}
	name := o.name(nameNode)
	o.add(name, kind, nameNode, n, s)
	o.enter(body, name, m, s, depth)
	return true
}

// isCSpecifier reports a node type cSpecifier handles.
func isCSpecifier(typ string) bool {
	switch typ {
	case "struct_specifier", "union_specifier", "class_specifier", "enum_specifier":
		return true
	}
	return false
}

// cTypedef outlines `typedef T a, *b;`: each declared name is a type, and an
// anonymous struct or enum body takes the first name.
func (o *outliner) cTypedef(n *sitter.Node, s scope, depth int) {
	decls := o.fieldChildren(n, "declarator")
	t := n.ChildByFieldName("type")
	if t != nil && isCSpecifier(o.typ(t)) {
		var alias *sitter.Node
		if t.ChildByFieldName("name") == nil && len(decls) > 0 {
			alias, _, _ = o.cDeclarator(decls[0])
		}
		if o.cSpecifier(t, o.typ(t), alias, s, depth) && alias != nil {
			decls = decls[1:]
		}
	}
	for _, d := range decls {
		if name, _, _ := o.cDeclarator(d); name != nil {
			o.add(o.name(name), KindType, name, n, s)
		}
	}
}

// cDeclaration outlines a declaration or a class member declaration: a
// specifier with a body in its type, then its declarators. A function
// declarator is a method inside a type and a function in a header; other
// declarators are variables at file or namespace level.
func (o *outliner) cDeclaration(n *sitter.Node, typ string, s scope, depth int) {
	if t := n.ChildByFieldName("type"); t != nil && isCSpecifier(o.typ(t)) {
		o.cSpecifier(t, o.typ(t), nil, s, depth)
	}
	for _, d := range o.fieldChildren(n, "declarator") {
		name, quals, isFunc := o.cDeclarator(d)
		switch {
		case name == nil || len(quals) > 0:
		case isFunc && (s.inType || o.header):
			o.add(o.name(name), KindFunction, name, n, s)
		case !isFunc && !s.inType && typ == "declaration":
			o.add(o.name(name), KindVariable, name, n, s)
		}
	}
}

// cDeclarator follows a declarator to the name it declares. quals are the
// scopes of a qualified name (A::B::f gives A and B, template arguments
// removed); isFunc is true when it declares a function rather than, say, a
// pointer to one.
func (o *outliner) cDeclarator(d *sitter.Node) (name *sitter.Node, quals []string, isFunc bool) {
	for range maxOutlineDepth {
		if d == nil {
			return nil, nil, false
		}
		switch o.typ(d) {
		case "identifier", "field_identifier", "type_identifier", "destructor_name", "operator_name", "primitive_type":
			return d, quals, isFunc
		case "function_declarator":
			inner := d.ChildByFieldName("declarator")
			isFunc = inner != nil && o.typ(inner) != "parenthesized_declarator"
			d = inner
		case "qualified_identifier":
			if sc := d.ChildByFieldName("scope"); sc != nil {
				quals = append(quals, bareTypeName(o.text(sc)))
			}
			d = d.ChildByFieldName("name")
		case "template_function", "template_type":
			d = d.ChildByFieldName("name")
		case "parenthesized_declarator":
			d = d.NamedChild(0)
		default:
			// pointer, reference, array, init and attributed declarators.
			next := d.ChildByFieldName("declarator")
			if next == nil {
				next = o.childOfType(d, "identifier", "field_identifier", "type_identifier",
					"function_declarator", "pointer_declarator", "reference_declarator", "qualified_identifier")
			}
			d = next
		}
	}
	return nil, nil, false
}
