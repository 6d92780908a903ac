package astgrep

import (
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"sync"

	// Each import links one grammar's parser into the binary; native.go
	// reaches it through its C symbol.
	_ "github.com/smacker/go-tree-sitter"
	_ "github.com/smacker/go-tree-sitter/bash"
	_ "github.com/smacker/go-tree-sitter/c"
	_ "github.com/smacker/go-tree-sitter/cpp"
	_ "github.com/smacker/go-tree-sitter/csharp"
	_ "github.com/smacker/go-tree-sitter/css"
	_ "github.com/smacker/go-tree-sitter/elixir"
	_ "github.com/smacker/go-tree-sitter/golang"
	_ "github.com/smacker/go-tree-sitter/hcl"
	_ "github.com/smacker/go-tree-sitter/html"
	_ "github.com/smacker/go-tree-sitter/java"
	_ "github.com/smacker/go-tree-sitter/javascript"
	_ "github.com/smacker/go-tree-sitter/kotlin"
	_ "github.com/smacker/go-tree-sitter/lua"
	_ "github.com/smacker/go-tree-sitter/php"
	_ "github.com/smacker/go-tree-sitter/python"
	_ "github.com/smacker/go-tree-sitter/ruby"
	_ "github.com/smacker/go-tree-sitter/rust"
	_ "github.com/smacker/go-tree-sitter/scala"
	_ "github.com/smacker/go-tree-sitter/swift"
	_ "github.com/smacker/go-tree-sitter/toml"
	_ "github.com/smacker/go-tree-sitter/typescript/tsx"
	_ "github.com/smacker/go-tree-sitter/typescript/typescript"
	_ "github.com/smacker/go-tree-sitter/yaml"
)

// scaffold is one context a pattern fragment may be read in: the fragment
// goes between prefix and suffix. When indent is set, every fragment line
// after the first is indented by it (for indentation-sensitive grammars).
type scaffold struct {
	name   string
	prefix string
	suffix string
	indent string
	// reject lists node kinds that mean this context misread the fragment
	// (Go's type_conversion_expression for `fmt.Println(x)`). A rejected
	// reading is kept only as a last resort, if no other context accepts
	// the fragment cleanly.
	reject []string
}

// placeholder styles: how a metavariable is spelled while the pattern is
// parsed. Grammars differ in what they accept as an identifier where
// (Ruby wants a constant after `class`, PHP a $variable before ->), so the
// compiler tries each style a language lists.
type placeholderStyle int

const (
	styleLower  placeholderStyle = iota // zmv0z
	styleUpper                          // ZMV0Z
	styleDollar                         // $zmv0z
	styleString                         // "zmv0z", for places that want a literal
)

func (s placeholderStyle) spell(i int) string {
	switch s {
	case styleUpper:
		return fmt.Sprintf("ZMV%dZ", i)
	case styleDollar:
		return fmt.Sprintf("$zmv%dz", i)
	case styleString:
		return fmt.Sprintf("\"zmv%dz\"", i)
	}
	return fmt.Sprintf("zmv%dz", i)
}

// langSpec is one row of the language table: everything language-specific
// is data here, not code.
type langSpec struct {
	id      string
	aliases []string
	exts    []string // with the dot, lower case
	names   []string // exact file names (Dockerfile, Rakefile)
	// bundled is the key in bundledLanguage; empty for grammars that are
	// loaded at run time from a shared library.
	bundled   string
	contexts  []scaffold
	styles    []placeholderStyle
	caseFolds bool // keywords are case-insensitive: unnamed tokens are not prefilter literals
}

var (
	bare      = scaffold{name: "bare fragment"}
	bareSemi  = scaffold{name: "fragment with ';'", suffix: ";"}
	defStyles = []placeholderStyle{styleLower, styleUpper, styleString}
)

// langTable lists the languages known by id. Grammars found at run time
// that are not listed here get a generic row (bare fragment, extension = id).
var langTable = []langSpec{
	{id: "go", aliases: []string{"golang"}, exts: []string{".go"}, bundled: "go", contexts: []scaffold{
		// A bare `fmt.Println(x)` at top level parses as a type conversion
		// (ast-grep #646), so statements are read inside a function body.
		{name: "statement in a function body", prefix: "package p\nfunc _() {\n", suffix: "\n}\n", reject: []string{"type_conversion_expression"}},
		{name: "top-level declaration", prefix: "package p\n", suffix: "\n", reject: []string{"type_conversion_expression"}},
		{name: "expression", prefix: "package p\nvar _ = ", suffix: "\n", reject: []string{"type_conversion_expression"}},
		{name: "type", prefix: "package p\nvar _ ", suffix: "\n"},
		{name: "struct field", prefix: "package p\ntype _ struct {\n", suffix: "\n}\n"},
		{name: "interface method", prefix: "package p\ntype _ interface {\n", suffix: "\n}\n"},
		{name: "switch case", prefix: "package p\nfunc _() {\nswitch {\n", suffix: "\n}\n}\n"},
		{name: "file", prefix: "", suffix: "\n", reject: []string{"type_conversion_expression"}},
	}},
	{id: "python", aliases: []string{"py"}, exts: []string{".py", ".pyi", ".pyw"}, bundled: "python", contexts: []scaffold{
		bare,
		{name: "class body", prefix: "class _:\n    ", indent: "    "},
		{name: "function body", prefix: "def _():\n    ", indent: "    "},
		{name: "expression", prefix: "_ = (", suffix: ")"},
		{name: "match case", prefix: "match _:\n    ", indent: "    ", suffix: "\n        pass"},
	}},
	{id: "javascript", aliases: []string{"js", "jsx"}, exts: []string{".js", ".jsx", ".mjs", ".cjs"}, bundled: "javascript", contexts: jsContexts},
	{id: "typescript", aliases: []string{"ts"}, exts: []string{".ts", ".mts", ".cts"}, bundled: "typescript", contexts: tsContexts},
	{id: "tsx", exts: []string{".tsx"}, bundled: "tsx", contexts: tsContexts},
	{id: "rust", aliases: []string{"rs"}, exts: []string{".rs"}, bundled: "rust", contexts: []scaffold{
		bare,
		{name: "statement in a function body", prefix: "fn _() {\n", suffix: "\n}\n"},
		{name: "statement with ';' in a function body", prefix: "fn _() {\n", suffix: ";\n}\n"},
		{name: "impl item", prefix: "impl _ {\n", suffix: "\n}\n"},
		{name: "struct field", prefix: "struct _ {\n", suffix: "\n}\n"},
		{name: "match arm", prefix: "fn _() { match _ {\n", suffix: "\n} }\n"},
		{name: "type", prefix: "type _ = ", suffix: ";\n"},
	}},
	{id: "c", exts: []string{".c", ".h"}, bundled: "c", contexts: cContexts},
	{id: "cpp", aliases: []string{"c++", "cc", "cxx"}, exts: []string{".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp", ".tpp"}, bundled: "cpp", contexts: append(append([]scaffold{}, cContexts...),
		scaffold{name: "class member", prefix: "class _ {\n", suffix: "\n};\n"},
	)},
	{id: "java", exts: []string{".java"}, bundled: "java", contexts: []scaffold{
		bare,
		{name: "statement in a method body", prefix: "class _ { void _() {\n", suffix: "\n} }\n"},
		{name: "statement with ';' in a method body", prefix: "class _ { void _() {\n", suffix: ";\n} }\n"},
		{name: "class member", prefix: "class _ {\n", suffix: "\n}\n"},
		{name: "expression", prefix: "class _ { Object _ = ", suffix: "; }\n"},
	}},
	{id: "ruby", aliases: []string{"rb"}, exts: []string{".rb", ".rake", ".gemspec"}, names: []string{"Rakefile", "Gemfile"}, bundled: "ruby", contexts: []scaffold{bare}},
	{id: "bash", aliases: []string{"sh", "shell", "zsh"}, exts: []string{".sh", ".bash", ".zsh"}, bundled: "bash", contexts: []scaffold{bare}},
	{id: "csharp", aliases: []string{"c#", "cs", "c_sharp"}, exts: []string{".cs"}, bundled: "csharp", contexts: []scaffold{
		{name: "statement in a method body", prefix: "class _ { void _() {\n", suffix: "\n} }\n"},
		{name: "statement with ';' in a method body", prefix: "class _ { void _() {\n", suffix: ";\n} }\n"},
		{name: "class member", prefix: "class _ {\n", suffix: "\n}\n"},
		bare,
		{name: "expression", prefix: "class _ { object _ = ", suffix: "; }\n"},
	}},
	{id: "kotlin", aliases: []string{"kt"}, exts: []string{".kt", ".kts"}, bundled: "kotlin", contexts: []scaffold{
		bare,
		{name: "statement in a function body", prefix: "fun _() {\n", suffix: "\n}\n"},
		{name: "class member", prefix: "class _ {\n", suffix: "\n}\n"},
	}},
	{id: "php", exts: []string{".php"}, bundled: "php", caseFolds: true, styles: []placeholderStyle{styleDollar, styleLower, styleUpper, styleString}, contexts: []scaffold{
		{name: "statement", prefix: "<?php\n", suffix: "\n"},
		{name: "statement with ';'", prefix: "<?php\n", suffix: ";\n"},
		{name: "class member", prefix: "<?php\nclass _ {\n", suffix: "\n}\n"},
	}},
	{id: "scala", exts: []string{".scala", ".sc"}, bundled: "scala", contexts: []scaffold{
		bare,
		{name: "statement in a method body", prefix: "object _ { def _() = {\n", suffix: "\n} }\n"},
		{name: "class member", prefix: "class _ {\n", suffix: "\n}\n"},
	}},
	{id: "swift", exts: []string{".swift"}, bundled: "swift", contexts: []scaffold{
		bare,
		{name: "statement in a function body", prefix: "func _() {\n", suffix: "\n}\n"},
		{name: "class member", prefix: "class _ {\n", suffix: "\n}\n"},
	}},
	{id: "lua", exts: []string{".lua"}, bundled: "lua", contexts: []scaffold{
		bare,
		{name: "expression", prefix: "local _ = ", suffix: "\n"},
	}},
	{id: "css", exts: []string{".css"}, bundled: "css", contexts: []scaffold{
		bare,
		{name: "declaration", prefix: "a {\n", suffix: "\n}\n"},
		{name: "declaration with ';'", prefix: "a {\n", suffix: ";\n}\n"},
	}},
	{id: "elixir", aliases: []string{"ex"}, exts: []string{".ex", ".exs"}, bundled: "elixir", contexts: []scaffold{bare}},
	{id: "hcl", aliases: []string{"terraform", "tf"}, exts: []string{".hcl", ".tf", ".tfvars"}, bundled: "hcl", contexts: []scaffold{bare}},
	{id: "html", exts: []string{".html", ".htm"}, bundled: "html", contexts: []scaffold{bare}},
	{id: "toml", exts: []string{".toml"}, bundled: "toml", contexts: []scaffold{bare}},
	{id: "yaml", aliases: []string{"yml"}, exts: []string{".yaml", ".yml"}, bundled: "yaml", contexts: []scaffold{bare}},
	// Loaded at run time from libtree-sitter-dart.so in a grammar folder.
	{id: "dart", exts: []string{".dart"}, contexts: []scaffold{
		// Bare `dispose(x)` at top level is a function signature, so
		// statements are read inside a function body first.
		{name: "statement in a function body", prefix: "void _f() {\n", suffix: "\n}\n"},
		{name: "statement with ';' in a function body", prefix: "void _f() {\n", suffix: ";\n}\n"},
		{name: "class member", prefix: "class _C {\n", suffix: "\n}\n"},
		{name: "top-level declaration", suffix: "\n"},
		{name: "expression", prefix: "var _v = ", suffix: ";\n"},
	}},
}

var cContexts = []scaffold{
	bare,
	{name: "statement in a function body", prefix: "void _() {\n", suffix: "\n}\n"},
	{name: "statement with ';' in a function body", prefix: "void _() {\n", suffix: ";\n}\n"},
	{name: "struct member", prefix: "struct _ {\n", suffix: "\n};\n"},
	{name: "expression", prefix: "int _ = ", suffix: ";\n"},
}

// JavaScript reads `a: 123` bare as a labelled statement and `{a: 1}` as a
// block; those readings are rejected in favour of an object member.
var jsContexts = []scaffold{
	{name: "bare fragment", reject: []string{"labeled_statement"}},
	{name: "expression", prefix: "(", suffix: ")"},
	{name: "object member", prefix: "({", suffix: "})"},
	{name: "class member", prefix: "class _ {", suffix: "}"},
}

var tsContexts = append(append([]scaffold{}, jsContexts...),
	scaffold{name: "interface member", prefix: "interface _ {", suffix: "}"},
	scaffold{name: "type", prefix: "type _ = ", suffix: ";"},
)

// language is a grammar ready to use (or the reason it is not).
type language struct {
	spec      langSpec
	id        string
	library   string // shared library path for run-time grammars
	once      sync.Once
	ts        tsLanguage
	g         *grammar
	err       error
	namesOnce sync.Once
	names     []string        // symbol names by id
	keywords  map[string]bool // word-like unnamed tokens: func, select, class
	printOnce sync.Once
	print     string // GrammarFingerprint
	printErr  error
}

func (l *language) load() error {
	l.once.Do(func() {
		if l.spec.bundled != "" {
			l.ts = bundledLanguage[l.spec.bundled]()
			l.g = newGrammar(l.ts)
			return
		}
		sym := "tree_sitter_" + strings.ReplaceAll(l.id, "-", "_")
		ts, err := loadSharedGrammar(l.library, sym)
		if err != nil {
			l.err = &GrammarLoadError{Language: l.id, Path: l.library, Err: err}
			return
		}
		l.ts = ts
		l.g = newGrammar(ts)
	})
	return l.err
}

func (l *language) symbolName(sym uint16) string {
	l.loadNames()
	if int(sym) < len(l.names) {
		return l.names[sym]
	}
	return symbolName(l.ts, sym)
}

func (l *language) loadNames() {
	l.namesOnce.Do(func() {
		n := symbolCount(l.ts)
		l.names = make([]string, n)
		l.keywords = map[string]bool{}
		for i := 0; i < n; i++ {
			l.names[i] = symbolName(l.ts, uint16(i))
			if symbolAnonymous(l.ts, uint16(i)) && isKeywordSpelling(l.names[i]) {
				l.keywords[l.names[i]] = true
			}
		}
	})
}

// isKeyword reports whether s is spelled like one of the grammar's keywords.
func (l *language) isKeyword(s string) bool {
	l.loadNames()
	return l.keywords[s]
}

func isKeywordSpelling(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func (l *language) styles() []placeholderStyle {
	if len(l.spec.styles) > 0 {
		return l.spec.styles
	}
	return defStyles
}

// languageSet is the table of languages one Engine knows: the bundled
// grammars plus the shared libraries found in its grammar folders.
type languageSet struct {
	byID   map[string]*language
	alias  map[string]*language
	byExt  map[string]*language
	byName map[string]*language
}

// bundledSet holds the bundled grammars, shared by every Engine: a
// language is immutable once loaded, so engines need not load, name or
// hold it each on their own.
var bundledSet = sync.OnceValue(func() *languageSet {
	s := &languageSet{
		byID:   map[string]*language{},
		alias:  map[string]*language{},
		byExt:  map[string]*language{},
		byName: map[string]*language{},
	}
	for _, sp := range langTable {
		if sp.bundled != "" {
			s.add(&language{spec: sp, id: sp.id})
		}
	}
	return s
})

// newLanguageSet returns the bundled grammars plus those in grammarDirs.
// Without grammar folders it is the shared bundled set, which nothing
// changes.
func newLanguageSet(grammarDirs []string) *languageSet {
	base := bundledSet()
	if len(grammarDirs) == 0 {
		return base
	}
	s := &languageSet{
		byID:   maps.Clone(base.byID),
		alias:  maps.Clone(base.alias),
		byExt:  maps.Clone(base.byExt),
		byName: maps.Clone(base.byName),
	}
	var specs map[string]langSpec
	// Shared libraries: the first folder that holds a grammar wins.
	for _, dir := range grammarDirs {
		entries, err := filepath.Glob(filepath.Join(dir, "libtree-sitter-*"+sharedLibExt))
		if err != nil {
			continue
		}
		for _, p := range entries {
			id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "libtree-sitter-"), sharedLibExt)
			if id == "" || s.byID[id] != nil {
				continue
			}
			if specs == nil {
				specs = map[string]langSpec{}
				for _, sp := range langTable {
					specs[sp.id] = sp
				}
			}
			sp, ok := specs[id]
			if !ok || sp.bundled != "" {
				sp = langSpec{id: id, exts: []string{"." + id}, contexts: []scaffold{bare, bareSemi}}
			}
			sp.bundled = ""
			s.add(&language{spec: sp, id: id, library: p})
		}
	}
	return s
}

const sharedLibExt = ".so"

func (s *languageSet) add(l *language) {
	s.byID[l.id] = l
	for _, a := range l.spec.aliases {
		s.alias[a] = l
	}
	for _, e := range l.spec.exts {
		if _, taken := s.byExt[e]; !taken {
			s.byExt[e] = l
		}
	}
	for _, n := range l.spec.names {
		s.byName[n] = l
	}
}

// lookup finds a language by id or alias, case-insensitively.
func (s *languageSet) lookup(name string) *language {
	n := strings.ToLower(strings.TrimSpace(name))
	if l := s.byID[n]; l != nil {
		return l
	}
	return s.alias[n]
}

// forFile picks a file's language by name, then by extension.
func (s *languageSet) forFile(path string) *language {
	base := filepath.Base(path)
	if l := s.byName[base]; l != nil {
		return l
	}
	return s.byExt[strings.ToLower(filepath.Ext(base))]
}
