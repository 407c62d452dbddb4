package codemap

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// MaxSourceBytes bounds the source handed to a parser. Larger files are
// almost always generated or vendored; parsing them costs more than their
// outline is worth, and a pathological file must not stall the server.
const MaxSourceBytes = 2 << 20

// ErrUnavailable is returned by every parsing entry point in a build without
// cgo, where no tree-sitter grammar is linked.
var ErrUnavailable = errors.New("codemap: code navigation is unavailable in this build (built without cgo)")

// UnsupportedError is a file whose language codemap does not parse.
type UnsupportedError struct{ Path string }

func (e *UnsupportedError) Error() string {
	return "codemap: unsupported language: " + e.Path
}

// TooLargeError is a source longer than MaxSourceBytes; it is not parsed.
type TooLargeError struct {
	Path string
	Size int // bytes
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("codemap: %s is %d bytes, more than the %d a parse accepts", e.Path, e.Size, MaxSourceBytes)
}

// ParseError is a parse that did not finish: it ran past its time limit.
type ParseError struct {
	Path string
	Err  error
}

func (e *ParseError) Error() string { return "codemap: parsing " + e.Path + ": " + e.Err.Error() }
func (e *ParseError) Unwrap() error { return e.Err }

// Language ids, as LanguageOf returns them.
const (
	langGo         = "go"
	langPython     = "python"
	langJavaScript = "javascript"
	langTypeScript = "typescript"
	langTSX        = "tsx"
	langRust       = "rust"
	langC          = "c"
	langCPP        = "cpp"
	langJava       = "java"
	langRuby       = "ruby"
	langCSharp     = "csharp"
	langPHP        = "php"
	langLua        = "lua"
	langElixir     = "elixir"
	langKotlin     = "kotlin"
	langSwift      = "swift"
	langScala      = "scala"
	langBash       = "bash"
)

// byExtension maps a lower-case file extension to its language. A ".h"
// header is parsed as C++: its grammar accepts nearly all C, while the C
// grammar turns every class in a C++ header into a syntax error.
var byExtension = map[string]string{
	".go":      langGo,
	".py":      langPython,
	".pyi":     langPython,
	".pyw":     langPython,
	".js":      langJavaScript,
	".mjs":     langJavaScript,
	".cjs":     langJavaScript,
	".jsx":     langJavaScript,
	".ts":      langTypeScript,
	".mts":     langTypeScript,
	".cts":     langTypeScript,
	".tsx":     langTSX,
	".rs":      langRust,
	".c":       langC,
	".h":       langCPP,
	".cc":      langCPP,
	".cpp":     langCPP,
	".cxx":     langCPP,
	".c++":     langCPP,
	".hh":      langCPP,
	".hpp":     langCPP,
	".hxx":     langCPP,
	".h++":     langCPP,
	".ipp":     langCPP,
	".tpp":     langCPP,
	".inl":     langCPP,
	".java":    langJava,
	".rb":      langRuby,
	".rake":    langRuby,
	".gemspec": langRuby,
	".ru":      langRuby,
	".cs":      langCSharp,
	".php":     langPHP,
	".lua":     langLua,
	".ex":      langElixir,
	".exs":     langElixir,
	".kt":      langKotlin,
	".kts":     langKotlin,
	".swift":   langSwift,
	".scala":   langScala,
	".sc":      langScala,
	".sbt":     langScala,
	".sh":      langBash,
	".bash":    langBash,
}

// byName maps well-known file names without a telling extension.
var byName = map[string]string{
	"Rakefile":      langRuby,
	"Gemfile":       langRuby,
	"Guardfile":     langRuby,
	"Vagrantfile":   langRuby,
	"Podfile":       langRuby,
	"Brewfile":      langRuby,
	".bashrc":       langBash,
	".bash_profile": langBash,
	".bash_login":   langBash,
	".bash_logout":  langBash,
	".bash_aliases": langBash,
	".profile":      langBash,
	"PKGBUILD":      langBash,
}

// LanguageOf returns the language id of path, decided by its file name
// alone (the extension, or a well-known name such as Rakefile).
func LanguageOf(path string) (lang string, ok bool) {
	base := filepath.Base(path)
	if l, ok := byName[base]; ok {
		return l, true
	}
	l, ok := byExtension[strings.ToLower(filepath.Ext(base))]
	return l, ok
}

// Languages returns the supported language ids, sorted.
func Languages() []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range byExtension {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

// isHeader reports a C or C++ header, whose function prototypes are the
// interface worth outlining (in a source file they only repeat definitions).
func isHeader(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".h", ".hh", ".hpp", ".hxx", ".h++":
		return true
	}
	return false
}

// Symbol kinds. The same words serve every language: a Rust impl method
// and a Python method are both KindMethod; a Kotlin or Scala object is a
// KindClass; a C++ namespace, a Ruby or Elixir module and a Rust mod are
// KindModule; a Swift protocol is a KindInterface.
const (
	KindFunction  = "function"  // a free function (also a C macro with parameters)
	KindMethod    = "method"    // a function defined inside a type, or a Go method
	KindClass     = "class"     // a class, record or singleton object
	KindStruct    = "struct"    // a struct (Go, Rust, C, C++, C#, Swift)
	KindInterface = "interface" // an interface or protocol
	KindEnum      = "enum"      // an enumeration
	KindTrait     = "trait"     // a Rust, Scala or PHP trait
	KindType      = "type"      // a type alias or other named type
	KindModule    = "module"    // a module, namespace or package object
	KindConstant  = "constant"  // a named constant
	KindVariable  = "variable"  // a top-level variable
)

// Symbol is one definition of an outline.
type Symbol struct {
	Name string
	Kind string // one of the Kind constants
	// Line is the 1-based line of the name; EndLine the 1-based last line
	// of the whole definition.
	Line    int
	EndLine int
	// Container is the enclosing type, class or module, "" at top level.
	// Nested containers are joined with dots ("Outer.Inner"). A Go method's
	// container is its receiver type without pointer or type parameters; a
	// Rust impl method's is the implemented type.
	Container string
}

// Ident is one identifier-like token of code.
type Ident struct {
	Name   string
	Line   int // 1-based
	Column int // 1-based, in bytes
	// Definition: this token is the name of a Symbol that Outline reports.
	Definition bool
}

// SyntaxIssue is where a parse first went wrong.
type SyntaxIssue struct {
	Line    int // 1-based
	Column  int // 1-based, in bytes
	Snippet string
}

// maxSnippetBytes bounds SyntaxIssue.Snippet.
const maxSnippetBytes = 120

// snippetAt returns line (1-based) of src, trimmed and cut to
// maxSnippetBytes on a UTF-8 boundary.
func snippetAt(src []byte, line int) string {
	for i := 1; i < line; i++ {
		j := bytes.IndexByte(src, '\n')
		if j < 0 {
			return ""
		}
		src = src[j+1:]
	}
	if j := bytes.IndexByte(src, '\n'); j >= 0 {
		src = src[:j]
	}
	return truncateUTF8(strings.TrimSpace(string(src)), maxSnippetBytes)
}

// truncateUTF8 cuts s to at most n bytes, on a UTF-8 boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// checkSource applies the checks every parse shares.
func checkSource(path string, src []byte) (lang string, err error) {
	lang, ok := LanguageOf(path)
	if !ok {
		return "", &UnsupportedError{Path: path}
	}
	if len(src) > MaxSourceBytes {
		return "", &TooLargeError{Path: path, Size: len(src)}
	}
	return lang, nil
}
