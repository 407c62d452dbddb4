//go:build cgo

package codemap

import (
	"context"
	"fmt"
	"sync"
	"time"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/bash"
	"github.com/smacker/go-tree-sitter/c"
	"github.com/smacker/go-tree-sitter/cpp"
	"github.com/smacker/go-tree-sitter/csharp"
	"github.com/smacker/go-tree-sitter/elixir"
	"github.com/smacker/go-tree-sitter/golang"
	"github.com/smacker/go-tree-sitter/java"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/kotlin"
	"github.com/smacker/go-tree-sitter/lua"
	"github.com/smacker/go-tree-sitter/php"
	"github.com/smacker/go-tree-sitter/python"
	"github.com/smacker/go-tree-sitter/ruby"
	"github.com/smacker/go-tree-sitter/rust"
	"github.com/smacker/go-tree-sitter/scala"
	"github.com/smacker/go-tree-sitter/swift"
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"
)

// parseTimeout bounds one parse. Tree-sitter is linear on ordinary input;
// the limit is for grammars whose error recovery goes quadratic on
// adversarial bytes. It is the parser's own timeout, not a cancelable
// context: go-tree-sitter watches such a context from a goroutine that can
// set the parser's cancellation flag after the parse has finished, which
// would make the pooled parser's next parse fail.
const parseTimeout = 5 * time.Second

// Available reports whether this build can parse: true with cgo.
func Available() bool { return true }

// grammar is one language's parser factory. Tree-sitter parsers are not safe
// for concurrent use, so each parse borrows one from pool.
type grammar struct {
	lang *sitter.Language
	// names maps a node's Symbol to its type name, interned once so that
	// walking a tree never allocates a string per node.
	names []string
	// idents is the query that finds identifiers; compiled once, it is
	// immutable and shared by concurrent query cursors.
	idents *sitter.Query
	pool   sync.Pool // of *sitter.Parser for lang
	// serial is set for grammars whose external scanner keeps state in
	// static variables: their parses must not overlap, even on separate
	// parsers (see nonReentrant).
	serial bool
	mu     sync.Mutex // held across a parse when serial
}

// nonReentrant lists the grammars whose scanner is not safe to run in two
// parsers at once. Lua's shares its state between parsers: concurrent
// parses of Lua sources mis-tokenize strings (found by
// TestConcurrentParses, which parses every fixture from eight goroutines).
var nonReentrant = map[string]bool{langLua: true}

// grammarOf builds the grammar of lang lazily, on its first use.
func grammarOf(lang string, get func() *sitter.Language) func() *grammar {
	return sync.OnceValue(func() *grammar {
		g := &grammar{lang: get(), serial: nonReentrant[lang]}
		n := g.lang.SymbolCount()
		g.names = make([]string, n)
		for s := range n {
			g.names[s] = g.lang.SymbolName(sitter.Symbol(s))
		}
		q, err := compileIdentQuery(lang, g)
		if err != nil {
			panic(fmt.Sprintf("codemap: the identifier query of %s does not compile: %v", lang, err))
		}
		g.idents = q
		g.pool.New = func() any {
			p := sitter.NewParser()
			p.SetLanguage(g.lang)
			p.SetOperationLimit(int(parseTimeout / time.Microsecond))
			return p
		}
		return g
	})
}

// grammars is immutable after package initialization; each entry builds its
// grammar once.
var grammars = map[string]func() *grammar{
	langGo:         grammarOf(langGo, golang.GetLanguage),
	langPython:     grammarOf(langPython, python.GetLanguage),
	langJavaScript: grammarOf(langJavaScript, javascript.GetLanguage),
	langTypeScript: grammarOf(langTypeScript, typescript.GetLanguage),
	langTSX:        grammarOf(langTSX, tsx.GetLanguage),
	langRust:       grammarOf(langRust, rust.GetLanguage),
	langC:          grammarOf(langC, c.GetLanguage),
	langCPP:        grammarOf(langCPP, cpp.GetLanguage),
	langJava:       grammarOf(langJava, java.GetLanguage),
	langRuby:       grammarOf(langRuby, ruby.GetLanguage),
	langCSharp:     grammarOf(langCSharp, csharp.GetLanguage),
	langPHP:        grammarOf(langPHP, php.GetLanguage),
	langLua:        grammarOf(langLua, lua.GetLanguage),
	langElixir:     grammarOf(langElixir, elixir.GetLanguage),
	langKotlin:     grammarOf(langKotlin, kotlin.GetLanguage),
	langSwift:      grammarOf(langSwift, swift.GetLanguage),
	langScala:      grammarOf(langScala, scala.GetLanguage),
	langBash:       grammarOf(langBash, bash.GetLanguage),
}

// parsed is one syntax tree with what walking it needs. Close releases it.
type parsed struct {
	lang   string
	path   string
	src    []byte
	tree   *sitter.Tree
	root   *sitter.Node
	names  []string
	idents *sitter.Query
}

func (p *parsed) Close() { p.tree.Close() }

// typ returns n's node type without a cgo string conversion.
func (p *parsed) typ(n *sitter.Node) string {
	s := int(n.Symbol())
	if s < len(p.names) {
		return p.names[s]
	}
	return n.Type()
}

// text returns n's source text.
func (p *parsed) text(n *sitter.Node) string {
	return string(p.src[n.StartByte():n.EndByte()])
}

// parse checks path and src and parses src with the language of path.
func parse(path string, src []byte) (*parsed, error) {
	lang, err := checkSource(path, src)
	if err != nil {
		return nil, err
	}
	get, ok := grammars[lang]
	if !ok {
		panic("codemap: language " + lang + " has an extension but no grammar")
	}
	g := get()
	parser := g.pool.Get().(*sitter.Parser)
	if g.serial {
		g.mu.Lock()
	}
	tree, err := parser.ParseCtx(context.Background(), nil, src)
	if g.serial {
		g.mu.Unlock()
	}
	if err != nil {
		// A parser that timed out keeps state to resume from; a fresh one
		// is simpler to reason about than a Reset.
		parser.Close()
		return nil, &ParseError{Path: path, Err: err}
	}
	g.pool.Put(parser)
	return &parsed{lang: lang, path: path, src: src, tree: tree, root: tree.RootNode(), names: g.names, idents: g.idents}, nil
}
