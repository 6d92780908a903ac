// Package langtable is astgrep's table of languages as data: per
// language its id and aliases, the file extensions and names it claims,
// the bundled grammar it reads with (if any), the scaffold contexts a
// pattern fragment is read in, first to last, and how a metavariable's
// placeholder may be spelled. Everything language-specific in the
// pattern compiler is a row here, not code. It knows no grammar or tree.
package langtable

import "fmt"

// Spec is one row of the table.
type Spec struct {
	ID      string
	Aliases []string
	Exts    []string // with the dot, lower case
	Names   []string // exact file names (Dockerfile, Rakefile)
	// Bundled is the key of the grammar linked into the binary; empty for
	// grammars that are loaded at run time from a shared library.
	Bundled   string
	Contexts  []Scaffold
	Styles    []Style // empty: StyleLower, StyleUpper, StyleString
	CaseFolds bool    // keywords are case-insensitive: unnamed tokens are not prefilter literals
}

// Scaffold is one context a pattern fragment may be read in: the fragment
// goes between Prefix and Suffix. When Indent is set, every fragment line
// after the first is indented by it (for indentation-sensitive grammars).
type Scaffold struct {
	Name   string
	Prefix string
	Suffix string
	Indent string
	// Reject lists node kinds that mean this context misread the fragment
	// (Go's type_conversion_expression for `fmt.Println(x)`). A rejected
	// reading is kept only as a last resort, if no other context accepts
	// the fragment cleanly.
	Reject []string
}

// Style is how a metavariable is spelled while the pattern is parsed.
// Grammars differ in what they accept as an identifier where (Ruby wants
// a constant after `class`, PHP a $variable before ->), so the compiler
// tries each style a language lists.
type Style int

const (
	StyleLower  Style = iota // zmv0z
	StyleUpper               // ZMV0Z
	StyleDollar              // $zmv0z
	StyleString              // "zmv0z", for places that want a literal
)

// Spell is the placeholder of metavariable i in style s.
func (s Style) Spell(i int) string {
	switch s {
	case StyleUpper:
		return fmt.Sprintf("ZMV%dZ", i)
	case StyleDollar:
		return fmt.Sprintf("$zmv%dz", i)
	case StyleString:
		return fmt.Sprintf("\"zmv%dz\"", i)
	}
	return fmt.Sprintf("zmv%dz", i)
}

// PlaceholderStyles is the styles the compiler tries for s, in order.
func (s *Spec) PlaceholderStyles() []Style {
	if len(s.Styles) > 0 {
		return s.Styles
	}
	return defaultStyles
}

var (
	bare          = Scaffold{Name: "bare fragment"}
	bareSemi      = Scaffold{Name: "fragment with ';'", Suffix: ";"}
	defaultStyles = []Style{StyleLower, StyleUpper, StyleString}
)

// Generic is the row of a grammar found at run time that Table does not
// list: a bare fragment or one ended by ';', and the extension "." + id.
func Generic(id string) Spec {
	return Spec{ID: id, Exts: []string{"." + id}, Contexts: []Scaffold{bare, bareSemi}}
}

// Table lists the languages known by id. Grammars found at run time
// that are not listed here get a generic row (bare fragment, extension = id).
var Table = []Spec{
	{ID: "go", Aliases: []string{"golang"}, Exts: []string{".go"}, Bundled: "go", Contexts: []Scaffold{
		// A bare `fmt.Println(x)` at top level parses as a type conversion
		// (ast-grep #646), so statements are read inside a function body.
		{Name: "statement in a function body", Prefix: "package p\nfunc _() {\n", Suffix: "\n}\n", Reject: []string{"type_conversion_expression"}},
		{Name: "top-level declaration", Prefix: "package p\n", Suffix: "\n", Reject: []string{"type_conversion_expression"}},
		{Name: "expression", Prefix: "package p\nvar _ = ", Suffix: "\n", Reject: []string{"type_conversion_expression"}},
		{Name: "type", Prefix: "package p\nvar _ ", Suffix: "\n"},
		{Name: "struct field", Prefix: "package p\ntype _ struct {\n", Suffix: "\n}\n"},
		{Name: "interface method", Prefix: "package p\ntype _ interface {\n", Suffix: "\n}\n"},
		{Name: "switch case", Prefix: "package p\nfunc _() {\nswitch {\n", Suffix: "\n}\n}\n"},
		{Name: "file", Prefix: "", Suffix: "\n", Reject: []string{"type_conversion_expression"}},
	}},
	{ID: "python", Aliases: []string{"py"}, Exts: []string{".py", ".pyi", ".pyw"}, Bundled: "python", Contexts: []Scaffold{
		bare,
		{Name: "class body", Prefix: "class _:\n    ", Indent: "    "},
		{Name: "function body", Prefix: "def _():\n    ", Indent: "    "},
		{Name: "expression", Prefix: "_ = (", Suffix: ")"},
		{Name: "match case", Prefix: "match _:\n    ", Indent: "    ", Suffix: "\n        pass"},
	}},
	{ID: "javascript", Aliases: []string{"js", "jsx"}, Exts: []string{".js", ".jsx", ".mjs", ".cjs"}, Bundled: "javascript", Contexts: jsContexts},
	{ID: "typescript", Aliases: []string{"ts"}, Exts: []string{".ts", ".mts", ".cts"}, Bundled: "typescript", Contexts: tsContexts},
	{ID: "tsx", Exts: []string{".tsx"}, Bundled: "tsx", Contexts: tsContexts},
	{ID: "rust", Aliases: []string{"rs"}, Exts: []string{".rs"}, Bundled: "rust", Contexts: []Scaffold{
		bare,
		{Name: "statement in a function body", Prefix: "fn _() {\n", Suffix: "\n}\n"},
		{Name: "statement with ';' in a function body", Prefix: "fn _() {\n", Suffix: ";\n}\n"},
		{Name: "impl item", Prefix: "impl _ {\n", Suffix: "\n}\n"},
		{Name: "struct field", Prefix: "struct _ {\n", Suffix: "\n}\n"},
		{Name: "match arm", Prefix: "fn _() { match _ {\n", Suffix: "\n} }\n"},
		{Name: "type", Prefix: "type _ = ", Suffix: ";\n"},
	}},
	{ID: "c", Exts: []string{".c", ".h"}, Bundled: "c", Contexts: cContexts},
	{ID: "cpp", Aliases: []string{"c++", "cc", "cxx"}, Exts: []string{".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp", ".tpp"}, Bundled: "cpp", Contexts: append(append([]Scaffold{}, cContexts...),
		Scaffold{Name: "class member", Prefix: "class _ {\n", Suffix: "\n};\n"},
	)},
	{ID: "java", Exts: []string{".java"}, Bundled: "java", Contexts: []Scaffold{
		bare,
		{Name: "statement in a method body", Prefix: "class _ { void _() {\n", Suffix: "\n} }\n"},
		{Name: "statement with ';' in a method body", Prefix: "class _ { void _() {\n", Suffix: ";\n} }\n"},
		{Name: "class member", Prefix: "class _ {\n", Suffix: "\n}\n"},
		{Name: "expression", Prefix: "class _ { Object _ = ", Suffix: "; }\n"},
	}},
	{ID: "ruby", Aliases: []string{"rb"}, Exts: []string{".rb", ".rake", ".gemspec"}, Names: []string{"Rakefile", "Gemfile"}, Bundled: "ruby", Contexts: []Scaffold{bare}},
	{ID: "bash", Aliases: []string{"sh", "shell", "zsh"}, Exts: []string{".sh", ".bash", ".zsh"}, Bundled: "bash", Contexts: []Scaffold{bare}},
	{ID: "csharp", Aliases: []string{"c#", "cs", "c_sharp"}, Exts: []string{".cs"}, Bundled: "csharp", Contexts: []Scaffold{
		{Name: "statement in a method body", Prefix: "class _ { void _() {\n", Suffix: "\n} }\n"},
		{Name: "statement with ';' in a method body", Prefix: "class _ { void _() {\n", Suffix: ";\n} }\n"},
		{Name: "class member", Prefix: "class _ {\n", Suffix: "\n}\n"},
		bare,
		{Name: "expression", Prefix: "class _ { object _ = ", Suffix: "; }\n"},
	}},
	{ID: "kotlin", Aliases: []string{"kt"}, Exts: []string{".kt", ".kts"}, Bundled: "kotlin", Contexts: []Scaffold{
		bare,
		{Name: "statement in a function body", Prefix: "fun _() {\n", Suffix: "\n}\n"},
		{Name: "class member", Prefix: "class _ {\n", Suffix: "\n}\n"},
	}},
	{ID: "php", Exts: []string{".php"}, Bundled: "php", CaseFolds: true, Styles: []Style{StyleDollar, StyleLower, StyleUpper, StyleString}, Contexts: []Scaffold{
		{Name: "statement", Prefix: "<?php\n", Suffix: "\n"},
		{Name: "statement with ';'", Prefix: "<?php\n", Suffix: ";\n"},
		{Name: "class member", Prefix: "<?php\nclass _ {\n", Suffix: "\n}\n"},
	}},
	{ID: "scala", Exts: []string{".scala", ".sc"}, Bundled: "scala", Contexts: []Scaffold{
		bare,
		{Name: "statement in a method body", Prefix: "object _ { def _() = {\n", Suffix: "\n} }\n"},
		{Name: "class member", Prefix: "class _ {\n", Suffix: "\n}\n"},
	}},
	{ID: "swift", Exts: []string{".swift"}, Bundled: "swift", Contexts: []Scaffold{
		bare,
		{Name: "statement in a function body", Prefix: "func _() {\n", Suffix: "\n}\n"},
		{Name: "class member", Prefix: "class _ {\n", Suffix: "\n}\n"},
	}},
	{ID: "lua", Exts: []string{".lua"}, Bundled: "lua", Contexts: []Scaffold{
		bare,
		{Name: "expression", Prefix: "local _ = ", Suffix: "\n"},
	}},
	{ID: "css", Exts: []string{".css"}, Bundled: "css", Contexts: []Scaffold{
		bare,
		{Name: "declaration", Prefix: "a {\n", Suffix: "\n}\n"},
		{Name: "declaration with ';'", Prefix: "a {\n", Suffix: ";\n}\n"},
	}},
	{ID: "elixir", Aliases: []string{"ex"}, Exts: []string{".ex", ".exs"}, Bundled: "elixir", Contexts: []Scaffold{bare}},
	{ID: "hcl", Aliases: []string{"terraform", "tf"}, Exts: []string{".hcl", ".tf", ".tfvars"}, Bundled: "hcl", Contexts: []Scaffold{bare}},
	{ID: "html", Exts: []string{".html", ".htm"}, Bundled: "html", Contexts: []Scaffold{bare}},
	{ID: "toml", Exts: []string{".toml"}, Bundled: "toml", Contexts: []Scaffold{bare}},
	{ID: "yaml", Aliases: []string{"yml"}, Exts: []string{".yaml", ".yml"}, Bundled: "yaml", Contexts: []Scaffold{bare}},
	// Loaded at run time from libtree-sitter-dart.so in a grammar folder.
	{ID: "dart", Exts: []string{".dart"}, Contexts: []Scaffold{
		// Bare `dispose(x)` at top level is a function signature, so
		// statements are read inside a function body first.
		{Name: "statement in a function body", Prefix: "void _f() {\n", Suffix: "\n}\n"},
		{Name: "statement with ';' in a function body", Prefix: "void _f() {\n", Suffix: ";\n}\n"},
		{Name: "class member", Prefix: "class _C {\n", Suffix: "\n}\n"},
		{Name: "top-level declaration", Suffix: "\n"},
		{Name: "expression", Prefix: "var _v = ", Suffix: ";\n"},
	}},
}

var cContexts = []Scaffold{
	bare,
	{Name: "statement in a function body", Prefix: "void _() {\n", Suffix: "\n}\n"},
	{Name: "statement with ';' in a function body", Prefix: "void _() {\n", Suffix: ";\n}\n"},
	{Name: "struct member", Prefix: "struct _ {\n", Suffix: "\n};\n"},
	{Name: "expression", Prefix: "int _ = ", Suffix: ";\n"},
}

// JavaScript reads `a: 123` bare as a labelled statement and `{a: 1}` as a
// block; those readings are rejected in favour of an object member.
var jsContexts = []Scaffold{
	{Name: "bare fragment", Reject: []string{"labeled_statement"}},
	{Name: "expression", Prefix: "(", Suffix: ")"},
	{Name: "object member", Prefix: "({", Suffix: "})"},
	{Name: "class member", Prefix: "class _ {", Suffix: "}"},
}

var tsContexts = append(append([]Scaffold{}, jsContexts...),
	Scaffold{Name: "interface member", Prefix: "interface _ {", Suffix: "}"},
	Scaffold{Name: "type", Prefix: "type _ = ", Suffix: ";"},
)
