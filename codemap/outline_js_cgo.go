//go:build cgo

package codemap

import (
	sitter "github.com/smacker/go-tree-sitter"
)

// JavaScript, TypeScript and TSX: functions, classes with their methods and
// function-valued fields, functions and classes assigned to a variable,
// other top-level const (constant) and let/var (variable) bindings except
// require() imports, interfaces with their method signatures, type
// aliases, enums and namespaces.
var jsRules = &outlineRules{
	rules: map[string]rule{
		"function_declaration":           {kind: KindFunction},
		"generator_function_declaration": {kind: KindFunction},
		"function_signature":             {kind: KindFunction},
		"class_declaration":              {kind: KindClass, members: typeMembers},
		"abstract_class_declaration":     {kind: KindClass, members: typeMembers},
		"method_definition":              {kind: KindMethod},
		"method_signature":               {kind: KindMethod},
		"abstract_method_signature":      {kind: KindMethod},
		"interface_declaration":          {kind: KindInterface, members: typeMembers},
		"type_alias_declaration":         {kind: KindType},
		"enum_declaration":               {kind: KindEnum},
		"internal_module":                {kind: KindModule, members: moduleMembers},
		"module":                         {kind: KindModule, members: moduleMembers},
	},
	visit: visitJS,
	skip: set("import_statement", "arrow_function", "function_expression", "function", "generator_function",
		"call_expression", "new_expression", "string", "template_string", "regex", "jsx_element",
		"jsx_self_closing_element", "for_statement", "for_in_statement", "object", "array"),
}

// jsFunctionValue reports a node that, assigned to a name, makes it a function.
func jsFunctionValue(typ string) bool {
	switch typ {
	case "arrow_function", "function_expression", "function", "generator_function":
		return true
	}
	return false
}

func visitJS(o *outliner, n *sitter.Node, typ string, s scope, depth int) bool {
	switch typ {
	case "variable_declarator":
		name, value := n.ChildByFieldName("name"), n.ChildByFieldName("value")
		if name == nil || o.typ(name) != "identifier" || s.inType {
			return true
		}
		vt := ""
		if value != nil {
			vt = o.typ(value)
		}
		switch {
		case jsFunctionValue(vt):
			o.add(o.name(name), KindFunction, name, n, s)
		case vt == "class":
			o.add(o.name(name), KindClass, name, n, s)
			o.walk(value, s.enter(o.name(name), true), depth)
		case vt == "call_expression" && jsIsRequire(o, value):
			// An import, not a definition.
		default:
			o.add(o.name(name), jsBindingKind(o, n), name, n, s)
		}
	case "class":
		// A class expression; the one worth listing is `export default class {}`.
		var name string
		nameNode := n.ChildByFieldName("name")
		if nameNode != nil {
			name = o.name(nameNode)
		} else if p := n.Parent(); p != nil && o.typ(p) == "export_statement" {
			name, nameNode = "default", n
		} else {
			return true
		}
		o.add(name, KindClass, nameNode, n, s)
		o.walk(n, s.enter(name, true), depth)
	case "field_definition", "public_field_definition":
		value := n.ChildByFieldName("value")
		name := n.ChildByFieldName("name")
		if name == nil {
			name = n.ChildByFieldName("property")
		}
		if value != nil && name != nil && jsFunctionValue(o.typ(value)) {
			o.add(o.name(name), KindMethod, name, n, s)
		}
	default:
		return false
	}
	return true
}

// jsBindingKind is the kind of a plain binding: const is a constant, let
// and var are variables.
func jsBindingKind(o *outliner, declarator *sitter.Node) string {
	if p := declarator.Parent(); p != nil && o.typ(p) == "lexical_declaration" {
		if k := p.ChildByFieldName("kind"); k != nil && o.text(k) == "const" {
			return KindConstant
		}
	}
	return KindVariable
}

// jsIsRequire reports a require("x") call: an import, not a definition.
func jsIsRequire(o *outliner, call *sitter.Node) bool {
	f := call.ChildByFieldName("function")
	return f != nil && o.typ(f) == "identifier" && o.text(f) == "require"
}
