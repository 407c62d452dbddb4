//go:build cgo

package codemap

import (
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
)

// Java: classes, records, interfaces, annotation types, enums, methods and
// constructors, and static final fields as constants.
var javaRules = &outlineRules{
	rules: map[string]rule{
		"class_declaration":               {kind: KindClass, members: typeMembers},
		"record_declaration":              {kind: KindClass, members: typeMembers},
		"interface_declaration":           {kind: KindInterface, members: typeMembers},
		"annotation_type_declaration":     {kind: KindInterface, members: typeMembers},
		"enum_declaration":                {kind: KindEnum, members: typeMembers},
		"method_declaration":              {kind: KindMethod},
		"constructor_declaration":         {kind: KindMethod},
		"compact_constructor_declaration": {kind: KindMethod},
	},
	visit: func(o *outliner, n *sitter.Node, typ string, s scope, depth int) bool {
		if typ != "field_declaration" && typ != "constant_declaration" {
			return false
		}
		mods := ""
		if m := o.childOfType(n, "modifiers"); m != nil {
			mods = " " + o.text(m) + " "
		}
		if typ == "constant_declaration" || strings.Contains(mods, " static ") && strings.Contains(mods, " final ") {
			o.declarators(n, "variable_declarator", KindConstant, s)
		}
		return true
	},
	skip: set("import_declaration", "package_declaration", "line_comment", "block_comment", "block",
		"lambda_expression", "object_creation_expression", "enum_constant", "modifiers", "formal_parameters"),
}

// declarators adds the name of every child of n of type declType (a
// variable declarator) as a symbol of kind.
func (o *outliner) declarators(n *sitter.Node, declType, kind string, s scope) {
	count := int(n.NamedChildCount())
	for i := 0; i < count; i++ {
		d := n.NamedChild(i)
		if o.typ(d) != declType {
			continue
		}
		name := d.ChildByFieldName("name")
		if name == nil {
			name = o.childOfType(d, "identifier")
		}
		if name != nil {
			o.add(o.name(name), kind, name, n, s)
		}
	}
}

// C#: namespaces (block or file-scoped), classes, records, structs,
// interfaces, enums, delegates as types, methods and constructors, and
// const fields.
var csharpRules = &outlineRules{
	rules: map[string]rule{
		"namespace_declaration":     {kind: KindModule, members: moduleMembers},
		"class_declaration":         {kind: KindClass, members: typeMembers},
		"record_declaration":        {kind: KindClass, members: typeMembers},
		"record_struct_declaration": {kind: KindStruct, members: typeMembers},
		"struct_declaration":        {kind: KindStruct, members: typeMembers},
		"interface_declaration":     {kind: KindInterface, members: typeMembers},
		"enum_declaration":          {kind: KindEnum},
		"delegate_declaration":      {kind: KindType},
		"method_declaration":        {kind: KindMethod},
		"constructor_declaration":   {kind: KindMethod},
		"local_function_statement":  {kind: KindFunction},
	},
	visit: func(o *outliner, n *sitter.Node, typ string, s scope, depth int) bool {
		switch typ {
		case "file_scoped_namespace_declaration":
			if name := n.ChildByFieldName("name"); name != nil {
				o.add(o.name(name), KindModule, name, n.Parent(), s)
				next := s.enter(o.name(name), false)
				o.next = &next
			}
		case "field_declaration":
			if !o.hasModifier(n, "modifier", "const") {
				return true
			}
			if v := o.childOfType(n, "variable_declaration"); v != nil {
				o.declarators(v, "variable_declarator", KindConstant, s)
			}
		default:
			return false
		}
		return true
	},
	skip: set("using_directive", "block", "lambda_expression", "anonymous_method_expression",
		"attribute_list", "property_declaration", "event_field_declaration", "indexer_declaration",
		"operator_declaration", "conversion_operator_declaration"),
}

// hasModifier reports a direct child of type modType whose text is word.
func (o *outliner) hasModifier(n *sitter.Node, modType, word string) bool {
	count := int(n.NamedChildCount())
	for i := 0; i < count; i++ {
		c := n.NamedChild(i)
		if o.typ(c) == modType && o.text(c) == word {
			return true
		}
	}
	return false
}

// Kotlin: classes, interfaces, enum classes, objects (as classes),
// functions and methods, type aliases, const properties as constants and
// other top-level properties as variables. A companion object's members
// belong to its class.
var kotlinRules = &outlineRules{
	visit: visitKotlin,
	skip: set("package_header", "import_list", "import_header", "lambda_literal", "anonymous_function",
		"string_literal", "primary_constructor", "delegation_specifier", "modifiers", "annotation",
		"line_comment", "multiline_comment", "type_parameters", "enum_entry"),
}

func visitKotlin(o *outliner, n *sitter.Node, typ string, s scope, depth int) bool {
	switch typ {
	case "class_declaration", "object_declaration":
		name := o.childOfType(n, "type_identifier")
		if name == nil {
			return true
		}
		kind := KindClass
		switch {
		case o.hasToken(n, "interface"):
			kind = KindInterface
		case o.hasToken(n, "enum"):
			kind = KindEnum
		}
		o.add(o.name(name), kind, name, n, s)
		o.walk(n, s.enter(o.name(name), true), depth)
	case "companion_object":
		o.walk(n, s.enter("", true), depth)
	case "function_declaration":
		if name := o.childOfType(n, "simple_identifier"); name != nil {
			o.add(o.name(name), KindFunction, name, n, s)
		}
	case "type_alias":
		if name := o.childOfType(n, "type_identifier"); name != nil {
			o.add(o.name(name), KindType, name, n, s)
		}
	case "property_declaration":
		v := o.childOfType(n, "variable_declaration")
		if v == nil {
			return true
		}
		name := o.childOfType(v, "simple_identifier")
		isConst := false
		if m := o.childOfType(n, "modifiers"); m != nil {
			isConst = strings.Contains(" "+o.text(m)+" ", " const ")
		}
		switch {
		case name == nil:
		case isConst:
			o.add(o.name(name), KindConstant, name, n, s)
		case s.name == "":
			o.add(o.name(name), KindVariable, name, n, s)
		}
	default:
		return false
	}
	return true
}

// Swift: classes, structs, enums, actors (as classes), protocols (as
// interfaces) with their requirements, extensions (members in the scope of
// the extended type), functions, initializers, type aliases, and top-level
// let (constant) and var (variable) bindings.
var swiftRules = &outlineRules{
	rules: map[string]rule{
		"protocol_declaration":          {kind: KindInterface, members: typeMembers},
		"protocol_function_declaration": {kind: KindMethod},
		"function_declaration":          {kind: KindFunction},
		"typealias_declaration":         {kind: KindType},
	},
	visit: visitSwift,
	skip: set("import_declaration", "lambda_literal", "comment", "multiline_comment", "line_string_literal",
		"multi_line_string_literal", "function_body", "enum_entry", "inheritance_specifier", "modifiers"),
}

func visitSwift(o *outliner, n *sitter.Node, typ string, s scope, depth int) bool {
	switch typ {
	case "class_declaration":
		name := n.ChildByFieldName("name")
		k := n.ChildByFieldName("declaration_kind")
		if name == nil || k == nil {
			return true
		}
		kind := KindClass
		switch o.text(k) {
		case "struct":
			kind = KindStruct
		case "enum":
			kind = KindEnum
		case "extension":
			o.walk(n, s.enter(bareTypeName(o.text(name)), true), depth)
			return true
		}
		o.add(o.name(name), kind, name, n, s)
		o.walk(n, s.enter(o.name(name), true), depth)
	case "init_declaration":
		count := int(n.ChildCount())
		for i := 0; i < count; i++ {
			if kw := n.Child(i); o.typ(kw) == "init" {
				o.add("init", KindFunction, kw, n, s)
				break
			}
		}
	case "property_declaration":
		if s.name != "" {
			return true
		}
		name := n.ChildByFieldName("name")
		if name != nil {
			if b := name.ChildByFieldName("bound_identifier"); b != nil {
				name = b
			}
		}
		if name == nil {
			return true
		}
		kind := KindVariable
		if b := o.childOfType(n, "value_binding_pattern"); b != nil && strings.HasPrefix(o.text(b), "let") {
			kind = KindConstant
		}
		o.add(o.name(name), kind, name, n, s)
	default:
		return false
	}
	return true
}

// Scala: classes, objects (as classes), traits, enums, functions and
// methods (definitions and abstract declarations), type definitions, and
// top-level val (constant) and var (variable) definitions.
var scalaRules = &outlineRules{
	rules: map[string]rule{
		"class_definition":     {kind: KindClass, members: typeMembers},
		"object_definition":    {kind: KindClass, members: typeMembers},
		"trait_definition":     {kind: KindTrait, members: typeMembers},
		"enum_definition":      {kind: KindEnum, members: typeMembers},
		"package_object":       {kind: KindModule, members: moduleMembers},
		"function_definition":  {kind: KindFunction},
		"function_declaration": {kind: KindFunction},
		"type_definition":      {kind: KindType},
	},
	visit: func(o *outliner, n *sitter.Node, typ string, s scope, depth int) bool {
		if typ != "val_definition" && typ != "var_definition" {
			return false
		}
		if p := n.ChildByFieldName("pattern"); p != nil && s.name == "" && o.typ(p) == "identifier" {
			kind := KindConstant
			if typ == "var_definition" {
				kind = KindVariable
			}
			o.add(o.name(p), kind, p, n, s)
		}
		return true
	},
	skip: set("import_declaration", "lambda_expression", "block", "comment", "block_comment", "string",
		"class_parameters", "extends_clause", "enum_case_definitions"),
}
