// Package astgrep finds code by shape: structural search over tree-sitter
// syntax trees, the engine behind the ast_grep tool (and, through
// SearchFiles, behind astedit's staged rewrites). It does not rewrite
// files or describe MCP tools, and it confines nothing itself: a Query's
// Path comes from the run's path guard (pathguard.Path), and every file is
// read through that guard. The package example is a search.
//
// One Engine serves one agent run: it holds the grammars it loaded from its
// grammar folders and its compiled patterns, and allocates nothing big
// until its first search. It is safe for concurrent use.
//
// What costs memory is shared by the whole process. The parse cache
// (package astgrep/parsecache) is one per process (budget
// DefaultCacheBytes, set with SetProcessCacheBytes; Options.CacheBytes < 0
// keeps an engine out of it): trees are keyed by
// absolute path, language and grammar and served only while the file's
// device, inode, size, modification time and change time are unchanged,
// so a second query, in the same run or another, reuses the first one's
// parses, and a search that meets a file another search is parsing waits
// for that parse. A search whose trees would take more than a quarter of
// the budget (an unselective pattern over a large tree) caches a tree
// only the second time a search parses its file, so one cold search peaks
// at the trees it parses at once rather than at every tree it parsed.
// Closing an Engine evicts the trees no other open engine used. Reading
// and parsing run in GOMAXPROCS work slots per process, so many runs
// searching at once hold as much parse memory as one, and files of 128
// KiB or more parse within a budget of 512 KiB of source at once (a
// larger file alone), held back while the other workers go on with
// smaller files: a parse holds tens of times its file's size.
//
// # Patterns
//
// A pattern is a code fragment in the file's language. `$NAME` (upper-case
// letters, digits, `_`) matches any one named node; `$$$NAME` matches a run
// of zero or more sibling nodes; `$_`, `$$$` and names starting with `_`
// match without binding. A named metavariable used twice must capture the
// same text both times: `if ($X != null) $X.dispose()` matches a guard that
// disposes what it checked and nothing else.
//
// Before parsing, each metavariable is replaced by a placeholder identifier
// the grammar accepts (zmv0z, ZMV0Z, $zmv0z or "zmv0z", whichever the
// context parses), and the outermost node whose text is exactly a
// placeholder becomes the metavariable. The fragment is read inside
// scaffold contexts listed per language in package astgrep/langtable (statement
// in a function body, top-level declaration, expression, class or struct
// member, ...), first to last; the first context whose parse has no ERROR
// or MISSING node wins, and the pattern is the deepest node covering the
// whole fragment. Some readings are known traps and rejected: in Go a bare
// `fmt.Println(x)` parses as a type conversion (ast-grep issue #646), so
// statements are read inside a function body; in Dart a bare `dispose(x)`
// is a function signature, so again a body comes first; in JavaScript
// `a: 123` is read as an object member, not a labelled statement. A
// fragment that only parses with a metavariable standing where the grammar
// wants something else (an item list, a parameter list) is accepted as a
// last resort. If no context accepts the fragment, Search returns an
// *UnparsablePatternError naming the contexts tried; it never searches a
// misread pattern to a silent empty result. A fragment that is a run of
// siblings inside a larger node (Dart's call: an identifier followed by an
// argument selector) becomes a sequence pattern that matches any run of
// siblings in any node.
//
// # Matching
//
// Candidates are compared node by node: kinds must agree, named leaves
// must have the same text, unnamed tokens the same kind. Comments and
// other extras are ignored on both sides, and so is whitespace, so wrapping
// and spacing do not matter; text inside strings and comments never
// matches code. Text a grammar hides from the tree (Go's string contents)
// is compared too. A node matches when its children begin with the
// pattern's children (trailing children are allowed, as with ast-grep's
// default strictness), and unnamed tokens the pattern does not mention may
// be stepped over.
//
// $$$ runs take the shortest extent that lets the rest match, and may be
// empty. A `,` or `;` next to a $$$ run is optional, so `f($$$A)` matches
// `f()`, `f(a)` and `f(a, b)`; `f($$$A, b)` matches `f(b)` and `f(a, b)`;
// and `f(a, $$$B)` matches `f(a)`. A run's capture spans from its first
// node to its last, separators included. Matches nested in other matches
// are all reported, outer first.
//
// # Rules
//
// Query.Rule, instead of Pattern, is an ast-grep rule (a rule.Spec of
// package astgrep/rule: the rule object, constraints and utils, as decoded
// JSON) with ast-grep 0.51.1's semantics: pattern, kind, regex; inside,
// has, precedes, follows with stopBy and field; all, any, not, matches.
// Package rule checks its shape first (a *rule.Error names the place, e.g.
// rule.all[1].inside, and what to do: unknown keys with the valid ones,
// cycles through matches, nesting past rule.MaxDepth); this package then
// compiles the parsed tree per language (unknown kinds and fields are
// *rule.Errors too, with near ones) and searches it like a pattern: the
// literals of the patterns every match needs prefilter files, and only
// nodes of the kinds the rule can match are tried. DumpTree lists a
// snippet's nodes, and MatchSnippet runs a pattern or rule on a snippet.
//
// # Walking
//
// A folder is walked by the module's one walk policy (package
// internal/walk): .gitignore files apply with git's semantics (nested ones
// too, and those of the folders between Root and Path; a deeper file or a
// later line wins, so a nested `!name` re-includes a file, but nothing in
// an ignored folder), hidden entries, symlinks and vendored folders
// (vendor, node_modules, bower_components, __pycache__, site-packages) are
// left out, and files larger than Options.MaxFileSize or binary (a NUL
// byte in the first 8000 bytes) are skipped and counted in
// Result.Skipped. A file is parsed only if it contains every literal leaf
// token of the pattern (keywords, identifiers, operators): leaves are
// compared by exact text, so this prefilter never drops a match. Files are
// searched in parallel, one parser per work slot; trees are flattened into
// plain Go arrays right after parsing, so cached trees are immutable and
// shared by concurrent queries (and engines) without touching
// go-tree-sitter's per-tree node cache.
//
// The package parses through go-tree-sitter's C runtime directly, by
// package tsnative: each work slot holds a tsnative.Parser, whose memory
// pool a parse allocates from and drops whole afterwards.
//
// # Languages
//
// Language is a grammar id or alias (go, python, javascript, typescript,
// tsx, rust, c, cpp, java, ruby, bash, csharp, kotlin, php, scala, swift,
// lua, css, elixir, hcl, html, toml, yaml, and dart or anything else found
// in a grammar folder). With a single file it is inferred from the name.
// With a folder and no language, the pattern is compiled for every
// language present; exactly one must accept it, else Search returns an
// *AmbiguousLanguageError. Grammars missing from go-tree-sitter are loaded
// at run time: a folder in Options.GrammarDirs holding
// libtree-sitter-<id>.so that exports tree_sitter_<id>() (tree-sitter ABI
// 13 or 14) adds language <id>; scripts/install-astgrep.sh builds the Dart
// one. A library that fails to load or has another ABI gives a
// *GrammarLoadError for that language only.
//
// # Errors
//
// ErrEmptyPattern, ErrOnlyMetavariable (a pattern that is only `$A` or
// `$$$A`), ErrOutsideRoot, *UnparsablePatternError, *UnknownLanguageError
// (lists the known ids and how to add a grammar), *GrammarLoadError and
// *AmbiguousLanguageError; test them with errors.Is and errors.As.
package astgrep
