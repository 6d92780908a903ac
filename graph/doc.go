// Package graph is the code graph: one tree-sitter index per root of the
// definitions, references and imports of every file in a supported
// language, and the queries on it (outline, find, callers, callees,
// impact, status) behind the code_graph tool. It has no types — that is
// the language server's job — so every edge says how it was resolved:
//
//   - exact: one definition in scope (the same file, the same package or
//     class, a method on the receiver's own type, a qualified import), or
//     a method of the type the source declares for the receiver, with the
//     evidence as the edge's reason ("s is *store.Store: parameter,
//     api/api.go:5"); through an interface (or a class's method where
//     bases are declared), the implementations are listed beside it as
//     implementation edges, never chosen silently;
//   - import: a name bound by one of the file's imports;
//   - candidate: by name only, a ranked list with the reason for each
//     place (same file, same folder, a module the file imports, name
//     only; "the receiver looks like T");
//   - unresolved: builtin, an external module, or no definition.
//
// Every callers, callees and impact answer carries, once for each class
// (and language) of edges it holds, what was measured of that class:
// confidence.json keeps each benchmark's precision (and recall) per class
// and language — bench/graphacc beside the language servers,
// bench/graphoracle beside x/tools' call graphs for Go — with its
// command, corpus, date and tree; whoever re-measures updates it.
//
// An unknown or ambiguous symbol is answered with near names or ranked
// candidates, never with a substitute; references that resolve elsewhere
// or nowhere are counted in the answer, and functions passed as values are
// listed apart (callees lists the functions a definition passes, as
// callers of each lists the use): an impact walk takes the function
// passing one as a dependent and says its count is a lower bound. A
// function passed to a call whose callee is sure (exact or import) runs
// where that callee calls the parameter it is passed as (G(F); func G(f
// func()) { f() }): callers of F lists those calls as candidates saying
// who passes F (another caller of G may pass something else), and impact
// walks on from them to G's callers (funcvalues.go); a callee handing
// the parameter on to another is followed a few callees deep, and a
// constructor storing it in a field (self.fn = fn) leads to its class's
// calls of that field. A call
// of a local bound once to a function the index defines (f := pkg.F;
// f()) is an edge to it (resolve/funcvalue.go): exact where
// language.json's "assignments_bind" says every assignment is recorded
// (Python), else a candidate, since a later f = … is not; any other call
// through a value (a parameter, a literal, a call's result, a literal
// called in place, named by "function_literals", and f()(x), named "(")
// is unresolved saying what it holds.
//
// # Languages are data
//
// Each folder of languages/ is one language: language.json (the grammar,
// the scope rule, the import rule, self names, builtins), shapes.scm
// (below, for edit_symbol), typeforms.scm (declared types as structure,
// below) and tags.scm, a
// tree-sitter query run by astgrep over the same grammars, parsers and
// parse cache as ast_grep. A pattern's role is its capture on the node it
// describes — @definition.KIND, @reference.call, @reference.type,
// @reference.value, @reference.read (a property read: it leads only to a
// @definition.getter, which runs where it is read), @import, @package —
// with @name inside it and, as the
// language has them, @receiver (the text before a called name),
// @container (a definition's explicit container, as Go's receiver type),
// @self (a method's receiver name), @import.module, @import.name and
// @import.alias (the alias "*" or "." imports every name of the module);
// @arguments (in a @reference.value pattern on a call: the argument list
// holding @name, so the record keeps the value's place and its call, or
// with @argument.name the keyword it is passed by) and
// @parameters (in a @local pattern: the parameter list holding @name, its
// place; Python's self is skipped on a call through a receiver);
// @import.default is the local name of an import of the module's default
// export, which an @export.default's @name names (ES export default f).
// @local marks a parameter or variable: inside its function it hides a
// package, type or function of the same name. Containers also come from
// nesting (a namespace or module gives a scope instead), and each
// reference's enclosing definition from byte ranges. When two patterns
// capture the same name, the first listed wins. language.json may extend
// another language and list several query files (tsx is typescript's
// patterns plus the JSX ones javascript also reads), "variants": "go"
// keeps a call from x_linux.go to definitions built for Linux,
// "implicit_self": true lets a bare name in a method be a member of its
// class (Java, C++), and "reexports": true follows a name a module does not define through that
// module's own imports (a package's __init__.py, export * from, pub use);
// callers also read the names imports give a definition (import {f as g}).
// A definition inside a function, a block or a value (@local.scope) is not
// a name of its module: an import never resolves to it.
//
// "imports" names a registered import rule (lang/imports.go: go, dotted,
// relative, rust, include, none), which maps an import path to files;
// its data is in the same file: "module_separator", "init_file" (the
// file that is its folder's module: __init__, mod), "resolve" (suffixes
// tried in order), "replace_extensions" (./b.js may name b.ts),
// "path_root", "path_self", "path_parent", "root_files" and "source_dir"
// (crate::, self::, super::, lib.rs, src/), "manifest" (go.mod, whose
// module path prefixes its folder's import paths). A rule rejects the
// keys it does not read, and an unknown rule names the registered ones.
//
// # Declared types
//
// A receiver's type is read from what the source declares, no type
// checker: on a @local (or @local.param, a parameter), @type is its
// declared type as written, @type.new the type constructed (T{}, new
// T()), @type.call the callee whose declared result it holds (x :=
// NewX(), x = Foo(), which constructs Foo), @type.elem the expression whose
// element it is (range, for-of), @type.expr the expression assigned (x :=
// s.conn), @type.member the expression a destructured name is a member of
// (const {gen} = cxt is cxt.gen), @type.field the declared type whose
// field of its own name it is ({gen}: Cxt), @type.result what a call of a
// local bound to a function literal returns (setup := func() *DB {…}),
// @type.key the expression a one-variable range runs over (a map's key, a
// channel's element), and @scope the node the binding holds in (a type
// switch case, an isinstance or instanceof branch). What a binding holds
// is read before it: x := x names the earlier x. language.json's
// "declared_after" (Go) puts a local in scope only after the node that
// declares it (x, err := x() calls the function x); "conversions" (Go)
// makes a call of a type a use of it (MyInt(3)), not a call. An @export's @name is the module's whole value (CommonJS
// module.exports = X: a name require() binds calls X). A @doc.comment
// before a @doc parameter list gives types by language.json "doc_param"
// and "doc_return" (JSDoc @param {T} x, @returns {T}), read as trees by
// "doc_types" (a form per regular expression, its groups the parts); a
// @doc.comment that is its own @doc is read for "doc_import" (@typedef
// {import("./m.js").T} T: an import of T), and a @type.doc comment gives
// its @field the type "doc_type" reads (/** @type {T[]} */ this.xs = []).
// A @field is a field of the class
// around it (or @container) with a @type, or without @name an embedded
// type or base class. @type on a definition is its result type. The
// resolver (resolve/types.go) follows receivers through locals, fields (chained:
// a.b.c.M()), call results and elements, then looks the method up on the
// type and what it embeds or extends, nearest first. language.json adds
// "type_wrappers" (Optional[Foo] is a Foo), "element_types" (List[Foo]),
// "super" (receivers naming the bases), "constructor" (the method a call
// of the class runs), "module_self" (exports) and "implements":
// "method_set" (Go: a type with all the interface's methods) or
// "declared" (a class naming it as a base). A type the source does not
// declare leaves the call a ranked candidate; a declared type outside the
// index (an external module, a builtin) makes it unresolved, saying so,
// unless it may dispatch into the index (Go's w io.Writer, a method an
// interface takes from one outside, a TypeScript interface's
// function-valued property): then the methods of that name are
// candidates whose reason says why.
// Where nothing is declared, agreeing assignments stand in: a @local
// named by a return (or yield) keyword at each return statement types an
// unannotated function's result when all agree and it yields nothing;
// @field.module and @field.global (with the module-level @local
// bindings) type a module variable every binding of which agrees
// (_inst = Random()); @field.attr types self.x from every assignment of
// it in the class (None aside), and ranks the classes assigned first when
// they disagree. language.json's "literal_types" maps a literal's start
// to its builtin type ("".join is no user method), "class_self" names
// the class method's class (cls()), and "module_values" lets a variable
// hold a module (a receiver call no member matches lists module
// functions).
//
// A language's typeforms.scm ("type_forms" lists other files; a language
// that extends another and has none takes the base's) says how to read a
// type and a receiver as structure, so the resolver follows trees, not
// text (extract/typetree.go). It is run only at the nodes the main query
// captured as a type or an expression, then at their parts. A pattern
// describes one node kind: @type.FORM on the node and @type.FORM.PART on
// its immediate parts, the forms being name, path (seg…), pointer (elem),
// same (elem: parentheses, ~T), slice (elem), map (key, elem), chan (elem),
// generic (base, arg…), func (result), tuple (item…, name… counted per
// item), struct (field…, name…), interface (field…), union (arm…) and
// null, other; and for an expression @expr.OP with OP.PART: name, field (object,
// name), path (object, name), call (callee), index (object), deref, addr,
// same (object), assert (object, type), literal (type; none for a literal
// whose type literal_types give from its text) and new (type). No type
// is read from its text: a node no pattern reads is opaque and names
// nothing, as every type of a language without typeforms.scm does (all
// the bundled ones have one). "other" is a type that names nothing the
// resolver follows (A & B, typeof x).
// testdata/languages/kotlin is a language added as data, with its
// typeforms.scm (TestLanguageAsData).
// Options.QueryDirs adds or replaces languages without Go code;
// testdata/fixtures holds one project per language with its known call
// graph. language.json is read strictly: a key it does not know is an
// error, not a setting silently ignored.
//
// # Shapes, for edit_symbol
//
// A language's shapes.scm (lang/shapes.go; "shapes" lists other files, and a
// language that extends another and has none takes the base's) says what
// an editor of definitions needs beyond tags.scm: @def with @body (a
// definition and its body), @outer around @inner (a declaration wrapping
// one definition alone: Go's type around a type spec, Python's
// decorators, export, const f = () => …, a C++ template) and @doc (a
// body's docstring statement); @_name captures are for predicates, any
// other is an error. language.json says how the language is laid out:
// "indent" (one level where a file shows none; default four spaces),
// "comments" and "comment_ends" (how a comment's line starts, how a block
// comment's last line ends: the doc comment above a definition, and the
// comment a generated file's "Code generated … DO NOT EDIT." header is
// in), "attributes" (how a decorator, annotation or attribute line
// starts), "braced_bodies" (false: the @body node is the body itself, as
// Python's block, and braces in it are not its own) and "docstring" (a
// regular expression for how a docstring starts, so new body text with
// one replaces the old). Language.Shapes hands them to edit_symbol, which
// holds no language's rules; a language without shapes.scm is indexed but
// not edited.
//
// # Fresh
//
// index.Index.Refresh re-reads files now (the code_graph family calls it
// after every write tool). Before each answer Sync drains an inotify watch
// of the indexed folders (or, where there is none, checks every file's
// size, modification time and inode), so changes made by anything else
// are seen too. Both re-read only the files that changed; a one-file edit
// costs that file's parse. Options.StoreDir keeps the records on disk in
// the user's graph store, by content, with a manifest per root, so a new
// process, another worktree or a copy of the tree parses only the files
// whose bytes no record has. Runs in one process over the same root share
// one index (Acquire); it is bounded by Options.MaxBytes, past which files
// are named as not indexed.
//
// # Parts
//
// The graph is four parts, one direction: graph/record (the immutable
// per-file record and its codec), graph/imports (the import rules) and
// graph/extract (a file's query matches into its record), loaded and
// keyed by graph/lang (languages, the edge vocabulary, the variants
// rules); graph/snap (the immutable snapshot the index
// publishes after each change, tables copied on write) and graph/index
// (build, refresh, watching, the records on disk, a partial snapshot for
// an answer ahead of the build); graph/resolve (resolution against one
// snapshot, no lock, no I/O, its caches per snapshot); and this package,
// the queries, each on one View: a snapshot, a resolver of it, the index's
// state then, and where the lines it quotes are read from.
package graph
