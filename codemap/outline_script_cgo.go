//go:build cgo

package codemap

import (
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
)

// Ruby: modules, classes, methods (def inside a module or class, including
// `class << self` and `def self.x`; a def outside any is a function) and
// constants.
var rubyRules = &outlineRules{
	rules: map[string]rule{
		"module":           {kind: KindModule, members: typeMembers},
		"class":            {kind: KindClass, members: typeMembers},
		"method":           {kind: KindFunction},
		"singleton_method": {kind: KindMethod},
	},
	visit: func(o *outliner, n *sitter.Node, typ string, s scope, depth int) bool {
		switch typ {
		case "singleton_class":
			o.walk(n, s.enter("", true), depth)
		case "assignment":
			if left := n.ChildByFieldName("left"); left != nil && o.typ(left) == "constant" {
				o.add(o.name(left), KindConstant, left, n, s)
			}
		default:
			return false
		}
		return true
	},
	skip: set("comment", "string", "heredoc_body", "lambda", "superclass", "regex", "symbol"),
}

// PHP: namespaces (block or statement form), classes, interfaces, traits,
// enums, methods, functions and constants.
var phpRules = &outlineRules{
	rules: map[string]rule{
		"class_declaration":     {kind: KindClass, members: typeMembers},
		"interface_declaration": {kind: KindInterface, members: typeMembers},
		"trait_declaration":     {kind: KindTrait, members: typeMembers},
		"enum_declaration":      {kind: KindEnum, members: typeMembers},
		"method_declaration":    {kind: KindMethod},
		"function_definition":   {kind: KindFunction},
	},
	visit: func(o *outliner, n *sitter.Node, typ string, s scope, depth int) bool {
		switch typ {
		case "namespace_definition":
			nameNode := n.ChildByFieldName("name")
			name := ""
			if nameNode != nil {
				name = o.name(nameNode)
			}
			body := n.ChildByFieldName("body")
			if body == nil {
				// `namespace X;` holds the rest of the file.
				o.add(name, KindModule, nameNode, n.Parent(), s)
				next := s.enter(name, false)
				o.next = &next
				return true
			}
			o.add(name, KindModule, nameNode, n, s)
			o.walk(body, s.enter(name, false), depth)
		case "const_declaration":
			count := int(n.NamedChildCount())
			for i := 0; i < count; i++ {
				if el := n.NamedChild(i); o.typ(el) == "const_element" {
					if name := o.childOfType(el, "name"); name != nil {
						o.add(o.name(name), KindConstant, name, n, s)
					}
				}
			}
		default:
			return false
		}
		return true
	},
	skip: set("text", "php_tag", "comment", "anonymous_function_creation_expression", "anonymous_function",
		"arrow_function", "namespace_use_declaration", "use_declaration", "compound_statement", "string",
		"encapsed_string", "heredoc"),
}

// Lua: functions, including `local function f`, `function M.f` (Container
// M) and `function M:m` (a method of M), and functions assigned to a name.
var luaRules = &outlineRules{
	visit: func(o *outliner, n *sitter.Node, typ string, s scope, depth int) bool {
		switch typ {
		case "function_statement", "function_declaration", "local_function":
			if name := n.ChildByFieldName("name"); name != nil {
				o.luaFunction(name, n, s)
			}
		case "variable_declaration", "local_variable_declaration", "assignment_statement":
			value := n.ChildByFieldName("value")
			name := n.ChildByFieldName("name")
			if value != nil && name != nil && (o.typ(value) == "function" || o.typ(value) == "function_definition") {
				o.luaFunction(name, n, s)
			}
		default:
			return false
		}
		return true
	},
	skip: set("comment", "string", "function_call", "tableconstructor", "table_constructor"),
}

// luaFunction adds the function a name node names: an identifier, or a
// dotted (and for methods, colon) path whose last part is the name.
func (o *outliner) luaFunction(name, def *sitter.Node, s scope) {
	count := int(name.NamedChildCount())
	if count == 0 {
		o.add(o.name(name), KindFunction, name, def, s)
		return
	}
	var path []string
	var last *sitter.Node
	kind := KindFunction
	for i := 0; i < count; i++ {
		c := name.NamedChild(i)
		switch o.typ(c) {
		case "identifier", "property_identifier", "method", "name":
			if last != nil {
				path = append(path, o.name(last))
			}
			last = c
		case "table_colon":
			kind = KindMethod
		}
	}
	if last == nil {
		return
	}
	in := s
	if len(path) > 0 {
		in = s.enter(strings.Join(path, "."), kind == KindMethod)
	}
	o.add(o.name(last), kind, last, def, in)
}

// Elixir: modules (defmodule, defprotocol, defimpl named Protocol.Type),
// and functions (def, defp, defmacro, defmacrop, defguard, defguardp,
// defdelegate). Elixir has no methods: functions stay functions in their
// module.
var elixirRules = &outlineRules{
	visit: visitElixir,
	skip:  set("comment", "string", "sigil", "anonymous_function", "charlist"),
}

func visitElixir(o *outliner, n *sitter.Node, typ string, s scope, depth int) bool {
	if typ != "call" {
		return false
	}
	target := n.ChildByFieldName("target")
	if target == nil || o.typ(target) != "identifier" {
		return false
	}
	args := o.childOfType(n, "arguments")
	switch o.text(target) {
	case "defmodule", "defprotocol", "defimpl":
		if args == nil || args.NamedChildCount() == 0 {
			return true
		}
		nameNode := args.NamedChild(0)
		name := o.name(nameNode)
		if o.text(target) == "defimpl" {
			if impl := elixirKeyword(o, args, "for"); impl != "" {
				name += "." + impl
			}
		}
		o.add(name, KindModule, nameNode, n, s)
		if body := o.childOfType(n, "do_block"); body != nil {
			o.walk(body, s.enter(name, false), depth)
		}
	case "def", "defp", "defmacro", "defmacrop", "defguard", "defguardp", "defdelegate", "defn", "defnp":
		if args == nil || args.NamedChildCount() == 0 {
			return true
		}
		head := args.NamedChild(0)
		// `def f(x) when guard` wraps the head in the `when` operator.
		if o.typ(head) == "binary_operator" {
			if left := head.ChildByFieldName("left"); left != nil {
				head = left
			}
		}
		if o.typ(head) == "call" {
			if t := head.ChildByFieldName("target"); t != nil {
				head = t
			}
		}
		if o.typ(head) == "identifier" {
			o.add(o.name(head), KindFunction, head, n, s)
		}
	default:
		return false
	}
	return true
}

// elixirKeyword returns the text of the value of keyword key (as in
// `for: Map`) among a call's arguments.
func elixirKeyword(o *outliner, args *sitter.Node, key string) string {
	kw := o.childOfType(args, "keywords")
	if kw == nil {
		return ""
	}
	count := int(kw.NamedChildCount())
	for i := 0; i < count; i++ {
		pair := kw.NamedChild(i)
		k, v := pair.ChildByFieldName("key"), pair.ChildByFieldName("value")
		if k != nil && v != nil && strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(o.text(k)), ":")) == key {
			return o.name(v)
		}
	}
	return ""
}
