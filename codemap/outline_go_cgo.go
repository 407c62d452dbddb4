//go:build cgo

package codemap

import (
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
)

// Go: functions; methods in the scope of their receiver type; type specs
// (struct, interface with its methods, other types, aliases); top-level
// constants and variables.
var goRules = &outlineRules{
	rules: map[string]rule{
		"function_declaration": {kind: KindFunction},
		"type_alias":           {kind: KindType},
	},
	visit: visitGo,
	skip:  set("import_declaration", "package_clause", "func_literal"),
}

func visitGo(o *outliner, n *sitter.Node, typ string, s scope, depth int) bool {
	switch typ {
	case "method_declaration":
		if name := n.ChildByFieldName("name"); name != nil {
			o.add(o.name(name), KindMethod, name, n, scope{name: goReceiverType(o, n), inType: true})
		}
	case "type_spec":
		name, t := n.ChildByFieldName("name"), n.ChildByFieldName("type")
		if name == nil || t == nil {
			return true
		}
		kind := KindType
		switch o.typ(t) {
		case "struct_type":
			kind = KindStruct
		case "interface_type":
			kind = KindInterface
		}
		o.add(o.name(name), kind, name, n, s)
		if kind == KindInterface {
			o.walk(t, s.enter(o.name(name), true), depth)
		}
	case "method_elem", "method_spec": // an interface's method
		if name := n.ChildByFieldName("name"); name != nil {
			o.add(o.name(name), KindMethod, name, n, s)
		}
	case "const_spec", "var_spec":
		kind := KindConstant
		if typ == "var_spec" {
			kind = KindVariable
		}
		for _, name := range o.fieldChildren(n, "name") {
			if o.text(name) != "_" {
				o.add(o.name(name), kind, name, n, s)
			}
		}
	default:
		return false
	}
	return true
}

// goReceiverType returns the receiver type of a method declaration without
// pointer, parentheses or type parameters: "(p *Pair[T])" gives "Pair".
func goReceiverType(o *outliner, n *sitter.Node) string {
	recv := n.ChildByFieldName("receiver")
	if recv == nil {
		return ""
	}
	param := o.childOfType(recv, "parameter_declaration")
	if param == nil {
		return ""
	}
	t := param.ChildByFieldName("type")
	if t == nil {
		return ""
	}
	return bareTypeName(o.text(t))
}

// bareTypeName strips pointers, references, parentheses, generic arguments
// and a package or path qualifier from a type's text.
func bareTypeName(t string) string {
	t = strings.TrimLeft(strings.TrimSpace(t), "(*&")
	t = strings.TrimPrefix(t, "mut ")
	t = strings.TrimPrefix(t, "dyn ")
	if i := strings.IndexAny(t, "[<()"); i >= 0 {
		t = t[:i]
	}
	if i := strings.LastIndex(t, "::"); i >= 0 {
		t = t[i+2:]
	}
	if i := strings.LastIndexByte(t, '.'); i >= 0 {
		t = t[i+1:]
	}
	return strings.TrimSpace(t)
}

// Python: classes, functions (methods inside classes, Container the class),
// module-level assignments as constants (ALL_CAPS) or variables.
var pythonRules = &outlineRules{
	rules: map[string]rule{
		"function_definition": {kind: KindFunction},
		"class_definition":    {kind: KindClass, members: typeMembers},
	},
	visit: func(o *outliner, n *sitter.Node, typ string, s scope, depth int) bool {
		if typ != "assignment" {
			return false
		}
		if left := n.ChildByFieldName("left"); left != nil && s.name == "" && o.typ(left) == "identifier" {
			name := o.name(left)
			o.add(name, constantOrVariable(name), left, n, s)
		}
		return true
	},
	skip: set("import_statement", "import_from_statement", "future_import_statement",
		"call", "lambda", "string", "concatenated_string"),
}

// Rust: functions, structs, unions, enums, traits with their methods, impl
// methods in the scope of the implemented type, type aliases, modules,
// consts, statics and macro_rules.
var rustRules = &outlineRules{
	rules: map[string]rule{
		"function_item":           {kind: KindFunction},
		"function_signature_item": {kind: KindFunction},
		"struct_item":             {kind: KindStruct},
		"union_item":              {kind: KindStruct},
		"enum_item":               {kind: KindEnum},
		"trait_item":              {kind: KindTrait, members: typeMembers},
		"type_item":               {kind: KindType},
		"mod_item":                {kind: KindModule, members: moduleMembers},
		"const_item":              {kind: KindConstant},
		"static_item":             {kind: KindVariable},
		"macro_definition":        {kind: KindFunction},
	},
	visit: func(o *outliner, n *sitter.Node, typ string, s scope, depth int) bool {
		if typ != "impl_item" {
			return false
		}
		name := ""
		if t := n.ChildByFieldName("type"); t != nil {
			name = bareTypeName(o.text(t))
		}
		if body := n.ChildByFieldName("body"); body != nil {
			o.walk(body, s.enter(name, true), depth)
		}
		return true
	},
	skip: set("use_declaration", "extern_crate_declaration", "attribute_item", "inner_attribute_item",
		"macro_invocation", "line_comment", "block_comment", "closure_expression"),
}

// Bash: functions.
var bashRules = &outlineRules{
	rules: map[string]rule{
		"function_definition": {kind: KindFunction},
	},
	skip: set("command", "string", "raw_string", "heredoc_body", "variable_assignment", "declaration_command"),
}
