package lang

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/graph/extract"
	"github.com/builtin-tools/builtin-tools/graph/imports"
	"github.com/builtin-tools/builtin-tools/graph/languages"
	"github.com/builtin-tools/builtin-tools/graph/record"
)

// Language is one folder of languages/: its settings (language.json) and
// its compiled query (tags.scm).
type Language struct {
	// ID is the folder's name.
	ID string
	// Index is the language's place in its Set (by id), for tables kept
	// per language.
	Index int
	// Grammar is the astgrep language id the query is written for.
	Grammar string
	// Scope is where a bare name is looked up after the file itself:
	// "directory" (Go, Java, C: the files beside it) or "file" (Python,
	// JavaScript, Rust: only its own definitions and imports).
	Scope string
	// Imports names the registered import rule (imports.go) that maps
	// import paths to files: go, dotted, relative, rust, include or none.
	Imports string
	// Self lists receiver names that mean the enclosing class (self,
	// this); a captured @self adds the method's own receiver name.
	Self []string
	// Builtins are names the language defines itself: calls to them are
	// counted as builtin, not as unresolved.
	Builtins []string
	// Extensions, if set, replace the grammar's file extensions.
	Extensions []string
	// Variants names a rule for files built only for some systems: "go"
	// (x_linux.go, x_amd64.go).
	Variants string
	// Resolve lists the suffixes tried after an import path (".ts",
	// "/index.js", "/__init__.py"), for the rules that read it.
	Resolve []string
	// ImplicitSelf says a bare name inside a method may be a member of its
	// class (Java, C++); elsewhere members need self. or this.
	ImplicitSelf bool
	// Reexports says a module's imports are names of the module too, so a
	// name looked up in a module and not defined there is followed through
	// that module's own imports: Python's __init__.py, JavaScript's
	// export-from, Rust's pub use.
	Reexports bool
	// TypeWrappers are generic types whose argument is the type a value
	// is used as (Optional[Foo] is a Foo or None; Python's Type[Foo] is
	// the class Foo, whose members are Foo's).
	TypeWrappers []string
	// Constructor names the method a call of the class runs (__init__,
	// constructor), where constructors are not their own kind.
	Constructor string
	// ModuleSelf lists receivers that name the file's own module
	// (CommonJS exports, module.exports).
	ModuleSelf []string
	// Super lists receivers that mean the enclosing class's bases (super,
	// super()).
	Super []string
	// ElementTypes are generic collections whose (first) argument is
	// their element's type (List[Foo], Array<Foo>), for range / for-in.
	ElementTypes []string
	// Implements says what implements an interface: "method_set" (Go: a
	// type with all its methods), "declared" (a class naming it, or a
	// class, as a base: the default), "structural" (TypeScript: declared
	// bases, and, for an interface no class names, any method of that name
	// as a candidate, since any object with it conforms) or "none".
	Implements string
	// LiteralTypes maps how a literal starts to the builtin type it is a
	// value of ("\"": "str", "{": "dict"): a call on it is no user method.
	LiteralTypes map[string]string
	// ClassSelf lists receivers that name the method's class itself (a
	// Python classmethod's cls): cls() constructs it.
	ClassSelf []string
	// ModuleValues says a variable may hold a module (Python's m = mod):
	// a receiver call no member matches may be a module's function.
	ModuleValues bool
	// Conversions says a call of a type is a conversion (Go's MyInt(3),
	// pkg.T(x)): a use of the type, not a call of it.
	Conversions bool
	// DeclaredAfter says a local is in scope only after the statement
	// declaring it (Go: in x, err := x(), x is the function).
	DeclaredAfter bool
	// OneDefinition says a language has no overloads, so the functions of
	// one name defined in one file are one function written once per
	// preprocessor branch (C's #ifdef _WIN32 … #else …): a call of it
	// calls that function, whichever branch the build takes.
	OneDefinition bool
	// AssignmentsBind says every assignment of a local is one of its
	// bindings in the records (Python's x = …): a local bound once holds
	// that one value for sure. Elsewhere (Go's x = …, JavaScript's
	// x = …) a later assignment is not recorded.
	AssignmentsBind bool
	// FunctionLiterals are the names tags.scm gives a call of a function
	// literal written in place (Go's func(){…}(), JavaScript's (() =>
	// …)(), Python's (lambda: …)()): the keyword. Such a call is
	// unresolved, saying its calls are listed in the function around it.
	FunctionLiterals []string
	// EmbeddedNamed says an embedded type (a @field with no name) is also
	// a field named by its type (Go: l.Listener for an embedded
	// net.Listener).
	EmbeddedNamed bool

	rule   imports.Rule // Imports, made with its data from language.json
	shapes *Shapes      // shapes.scm and its keys, nil without one
	query  *astgrep.CaptureQuery
	source string             // language.json, tags.scm and typeforms.scm, for the snapshot key
	x      *extract.Extractor // what turns its query's matches into records
	// passesArguments: its query places arguments and parameters
	// (@arguments, @parameters).
	passesArguments bool
	generics        record.Generics
	builtins        map[string]bool
	self            map[string]bool
	fp              [32]byte  // fingerprint: what shapes its records besides the bytes; zero: not keyed
	keys            *keyState // its set's fingerprints, made on first use
}

type langConfig struct {
	// Extends names a language (in the same folder set) whose settings
	// are this one's defaults: tsx extends typescript.
	Extends string `json:"extends"`
	// Queries are the query files read, in order, as one query; paths are
	// relative to the language's folder and may name another language's
	// (../javascript/jsx.scm). Default: tags.scm.
	Queries       []string          `json:"queries"`
	Grammar       string            `json:"grammar"`
	Scope         string            `json:"scope"`
	Imports       string            `json:"imports"`
	Self          []string          `json:"self"`
	Builtins      []string          `json:"builtins"`
	Extensions    []string          `json:"extensions"`
	Resolve       []string          `json:"resolve"`
	Variants      string            `json:"variants"`
	Reexports     *bool             `json:"reexports"`
	ImplicitSelf  *bool             `json:"implicit_self"`
	TypeWrappers  []string          `json:"type_wrappers"`
	ElementTypes  []string          `json:"element_types"`
	Implements    string            `json:"implements"`
	Super         []string          `json:"super"`
	ModuleSelf    []string          `json:"module_self"`
	Constructor   string            `json:"constructor"`
	DocParam      string            `json:"doc_param"`
	DocReturn     string            `json:"doc_return"`
	DocImport     string            `json:"doc_import"`
	DocType       string            `json:"doc_type"`
	DocTypes      []extract.DocForm `json:"doc_types"`
	LiteralTypes  map[string]string `json:"literal_types"`
	ClassSelf     []string          `json:"class_self"`
	ModuleValues  *bool             `json:"module_values"`
	Conversions   *bool             `json:"conversions"`
	DeclaredAfter *bool             `json:"declared_after"`
	OneDefinition *bool             `json:"one_definition"`
	// (Every assignment of a local is a binding: see Language.)
	AssignmentsBind  *bool    `json:"assignments_bind"`
	FunctionLiterals []string `json:"function_literals"`
	// The import rule's data: see imports.Data.
	ModuleSeparator   string   `json:"module_separator"`
	InitFile          string   `json:"init_file"`
	ReplaceExtensions []string `json:"replace_extensions"`
	PathRoot          string   `json:"path_root"`
	PathSelf          string   `json:"path_self"`
	PathParent        string   `json:"path_parent"`
	RootFiles         []string `json:"root_files"`
	SourceDir         string   `json:"source_dir"`
	Manifest          string   `json:"manifest"`
	// EmbeddedNamed: see Language.
	EmbeddedNamed *bool `json:"embedded_named"`
	// The keys of Shapes (shapes.go).
	shapeConfig
	// The type query files (typeforms.go).
	typesConfig
}

func (c *langConfig) importData() imports.Data {
	return imports.Data{Separator: c.ModuleSeparator, InitFile: c.InitFile, Resolve: c.Resolve, Replace: c.ReplaceExtensions,
		Root: c.PathRoot, Self: c.PathSelf, Parent: c.PathParent, RootFiles: c.RootFiles, SourceDir: c.SourceDir, Manifest: c.Manifest}
}

var scopes = []string{"directory", "file"}

// Set is the languages the graph indexes, by id and by file name.
type Set struct {
	byID  map[string]*Language
	byExt map[string]*Language
	// manifests are the files import rules read module paths from (go.mod).
	manifests map[string]imports.Rule
	ids       []string
	list      []*Language // by id
	hash      string      // of every language's files: records made with other queries are not used
	keys      *keyState
}

// Load reads the bundled language folders (graph/languages) and then each
// of dirs (folders holding one folder per language), later ones replacing
// earlier ones with the same id, and compiles their queries with e.
func Load(e *astgrep.Engine, dirs ...string) (*Set, error) {
	s := &Set{byID: map[string]*Language{}, byExt: map[string]*Language{}, manifests: map[string]imports.Rule{}}
	s.keys = &keyState{e: e, set: s}
	fss := []fs.FS{languages.FS}
	for _, d := range dirs {
		fss = append(fss, os.DirFS(d))
	}
	for _, fsys := range fss {
		entries, err := fs.ReadDir(fsys, ".")
		if err != nil {
			return nil, err
		}
		for _, ent := range entries {
			if !ent.IsDir() {
				continue
			}
			l, err := loadLanguage(e, fsys, ent.Name())
			if err != nil {
				return nil, err
			}
			s.byID[l.ID] = l
		}
	}
	h := sha256.New()
	for id, l := range s.byID {
		s.ids = append(s.ids, id)
		exts := l.Extensions
		if len(exts) == 0 {
			exts = e.Extensions(l.Grammar)
		}
		for _, x := range exts {
			s.byExt[strings.ToLower(x)] = l
		}
		if m := l.rule.Manifest(); m != "" {
			s.manifests[m] = l.rule
		}
	}
	sort.Strings(s.ids)
	for i, id := range s.ids {
		l := s.byID[id]
		l.Index = i
		s.list = append(s.list, l)
		l.keys = s.keys
		fmt.Fprintf(h, "%s\x00%s\x00", id, l.source)
	}
	s.hash = hex.EncodeToString(h.Sum(nil))
	return s, nil
}

// readConfig reads a language's settings, filling what it leaves unset
// from the language it extends.
func readConfig(fsys fs.FS, id string, depth int) (langConfig, []byte, error) {
	var c langConfig
	raw, err := fs.ReadFile(fsys, path.Join(id, "language.json"))
	if err != nil {
		return c, nil, fmt.Errorf("language %s: %w", id, err)
	}
	// Strict: a misspelt key is an error, not a setting silently ignored.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, nil, fmt.Errorf("language %s: language.json: %w", id, err)
	}
	if dec.More() {
		return c, nil, fmt.Errorf("language %s: language.json: more than one JSON value", id)
	}
	defaultFile(&c.ShapeFiles, fsys, id, "shapes.scm")
	defaultFile(&c.TypeFiles, fsys, id, "typeforms.scm")
	if c.Extends == "" {
		return c, raw, nil
	}
	if depth > 4 {
		return c, nil, fmt.Errorf("language %s: extends goes more than 4 deep (a cycle?)", id)
	}
	base, baseRaw, err := readConfig(fsys, c.Extends, depth+1)
	if err != nil {
		return c, nil, fmt.Errorf("language %s extends %s: %w", id, c.Extends, err)
	}
	if len(c.Queries) == 0 {
		for _, q := range defaultQueries(base.Queries) {
			c.Queries = append(c.Queries, path.Join("..", c.Extends, q))
		}
	}
	inherit(&c.Grammar, base.Grammar)
	inherit(&c.Scope, base.Scope)
	inherit(&c.Imports, base.Imports)
	inheritList(&c.Self, base.Self)
	inheritList(&c.Builtins, base.Builtins)
	if c.Extensions == nil && c.Grammar == base.Grammar {
		c.Extensions = base.Extensions
	}
	inheritList(&c.Resolve, base.Resolve)
	inherit(&c.Variants, base.Variants)
	inherit(&c.Reexports, base.Reexports)
	inherit(&c.ImplicitSelf, base.ImplicitSelf)
	inherit(&c.EmbeddedNamed, base.EmbeddedNamed)
	inheritList(&c.TypeWrappers, base.TypeWrappers)
	inheritList(&c.ElementTypes, base.ElementTypes)
	inherit(&c.Implements, base.Implements)
	inheritList(&c.Super, base.Super)
	inheritList(&c.ModuleSelf, base.ModuleSelf)
	inherit(&c.Constructor, base.Constructor)
	if c.DocParam == "" {
		c.DocParam, c.DocReturn = base.DocParam, base.DocReturn
	}
	inherit(&c.DocImport, base.DocImport)
	inherit(&c.DocType, base.DocType)
	if c.DocTypes == nil {
		c.DocTypes = base.DocTypes
	}
	if c.LiteralTypes == nil {
		c.LiteralTypes = base.LiteralTypes
	}
	inheritList(&c.ClassSelf, base.ClassSelf)
	inherit(&c.ModuleValues, base.ModuleValues)
	inherit(&c.Conversions, base.Conversions)
	inherit(&c.DeclaredAfter, base.DeclaredAfter)
	inherit(&c.OneDefinition, base.OneDefinition)
	inherit(&c.AssignmentsBind, base.AssignmentsBind)
	inheritList(&c.FunctionLiterals, base.FunctionLiterals)
	inherit(&c.ModuleSeparator, base.ModuleSeparator)
	inherit(&c.InitFile, base.InitFile)
	inheritList(&c.ReplaceExtensions, base.ReplaceExtensions)
	inherit(&c.PathRoot, base.PathRoot)
	inherit(&c.PathSelf, base.PathSelf)
	inherit(&c.PathParent, base.PathParent)
	inheritList(&c.RootFiles, base.RootFiles)
	inherit(&c.SourceDir, base.SourceDir)
	inherit(&c.Manifest, base.Manifest)
	c.shapeConfig.inherit(base.shapeConfig, c.Extends)
	inheritFiles(&c.TypeFiles, base.TypeFiles, c.Extends)
	return c, append(append(raw, 0), baseRaw...), nil
}

// inherit takes the base's value for a key the language left empty or
// left out.
func inherit[T ~string | ~*bool](v *T, base T) {
	var zero T
	if *v == zero {
		*v = base
	}
}

// inheritList is inherit for lists: only a key left out (nil) is
// inherited; an empty list written in the file stays empty.
func inheritList[E any](v *[]E, base []E) {
	if *v == nil {
		*v = base
	}
}

// defaultFile makes a left-out list of query files [name] when the
// language's folder has that file.
func defaultFile(files *[]string, fsys fs.FS, id, name string) {
	if *files != nil {
		return
	}
	if _, err := fs.Stat(fsys, path.Join(id, name)); err == nil {
		*files = []string{name}
	}
}

// inheritFiles is inheritList for a list of query files: base's, named
// from this language's folder (../extends/f).
func inheritFiles(files *[]string, base []string, extends string) {
	if *files != nil {
		return
	}
	for _, f := range base {
		*files = append(*files, path.Join("..", extends, f))
	}
}

func defaultQueries(q []string) []string {
	if len(q) == 0 {
		return []string{"tags.scm"}
	}
	return q
}

func loadLanguage(e *astgrep.Engine, fsys fs.FS, id string) (*Language, error) {
	c, raw, err := readConfig(fsys, id, 0)
	if err != nil {
		return nil, err
	}
	if c.Grammar == "" {
		c.Grammar = id
	}
	if c.Scope == "" {
		c.Scope = "file"
	}
	if c.Imports == "" {
		c.Imports = "none"
	}
	if !slices.Contains(scopes, c.Scope) {
		return nil, fmt.Errorf("language %s: scope %q is not one of %s", id, c.Scope, strings.Join(scopes, ", "))
	}
	if c.Variants != "" && c.Variants != "go" {
		return nil, fmt.Errorf("language %s: variants %q is not one of: go", id, c.Variants)
	}
	if c.Implements == "" {
		c.Implements = "declared"
	}
	if !slices.Contains([]string{"method_set", "declared", "structural", "none"}, c.Implements) {
		return nil, fmt.Errorf("language %s: implements %q is not one of method_set, declared, structural, none", id, c.Implements)
	}
	rule, err := imports.New(c.Imports, c.importData())
	if err != nil {
		return nil, fmt.Errorf("language %s: %w", id, err)
	}
	var src []byte
	for _, name := range defaultQueries(c.Queries) {
		part, err := fs.ReadFile(fsys, path.Join(id, name))
		if err != nil {
			return nil, fmt.Errorf("language %s: %w", id, err)
		}
		// Each file compiles alone first, so an error names its file and line.
		if _, err := e.CompileCaptureQuery(c.Grammar, string(part)); err != nil {
			return nil, fmt.Errorf("language %s: %s: %w", id, name, err)
		}
		src = append(append(src, part...), '\n')
	}
	q, err := e.CompileCaptureQuery(c.Grammar, string(src))
	if err != nil {
		return nil, fmt.Errorf("language %s: %w", id, err)
	}
	l := &Language{ID: id, Grammar: c.Grammar, Scope: c.Scope, Imports: c.Imports, Self: c.Self, Builtins: c.Builtins,
		rule: rule, Extensions: c.Extensions, Resolve: c.Resolve, Variants: c.Variants, Reexports: c.Reexports != nil && *c.Reexports, ImplicitSelf: c.ImplicitSelf != nil && *c.ImplicitSelf, query: q, source: string(raw) + "\x00" + string(src),
		TypeWrappers: c.TypeWrappers, ElementTypes: c.ElementTypes, Implements: c.Implements, Super: c.Super, ModuleSelf: c.ModuleSelf, Constructor: c.Constructor, LiteralTypes: c.LiteralTypes, ClassSelf: c.ClassSelf, ModuleValues: c.ModuleValues != nil && *c.ModuleValues, Conversions: c.Conversions != nil && *c.Conversions, DeclaredAfter: c.DeclaredAfter != nil && *c.DeclaredAfter, OneDefinition: c.OneDefinition != nil && *c.OneDefinition, AssignmentsBind: c.AssignmentsBind != nil && *c.AssignmentsBind, FunctionLiterals: c.FunctionLiterals,
		builtins: map[string]bool{}, self: map[string]bool{}, generics: record.Generics{Wrappers: map[string]bool{}, Elements: map[string]bool{}}}
	if l.shapes, err = c.shapeConfig.load(e, fsys, id, c.Grammar); err != nil {
		return nil, err
	}
	types, typesSrc, err := c.typesConfig.load(e, fsys, id, c.Grammar)
	if err != nil {
		return nil, err
	}
	l.source += "\x00" + typesSrc
	l.EmbeddedNamed = c.EmbeddedNamed != nil && *c.EmbeddedNamed
	for _, w := range c.TypeWrappers {
		l.generics.Wrappers[w] = true
	}
	for _, w := range c.ElementTypes {
		l.generics.Elements[w] = true
	}
	for _, b := range c.Builtins {
		l.builtins[b] = true
	}
	for _, b := range c.Self {
		l.self[b] = true
	}
	if l.x, err = extract.New(q, types, l, extract.Config{ID: id, TypeFiles: c.TypeFiles, DocParam: c.DocParam, DocReturn: c.DocReturn,
		DocType: c.DocType, DocImport: c.DocImport, DocTypes: c.DocTypes, BuildLines: c.Variants == "go", DeclaredAfter: l.DeclaredAfter}); err != nil {
		return nil, err
	}
	l.passesArguments = q.Capture("arguments") >= 0 && q.Capture("parameters") >= 0
	return l, nil
}

// IDs lists the language ids, sorted.
func (s *Set) IDs() []string { return s.ids }

// All lists the languages by id; a language's place is its Index.
func (s *Set) All() []*Language { return s.list }

// ForFile returns the language of a file name, or nil.
func (s *Set) ForFile(name string) *Language {
	return s.byExt[strings.ToLower(filepath.Ext(name))]
}

// Lookup returns a language by id, or nil.
func (s *Set) Lookup(id string) *Language { return s.byID[id] }

// Manifest is the import rule that reads a manifest file of this name
// (go.mod), or nil.
func (s *Set) Manifest(name string) imports.Rule { return s.manifests[name] }

// Hash is a hash of every language's files: records made with other
// query files or settings are not used.
func (s *Set) Hash() string { return s.hash }

// Rule is the language's import rule, made with its data.
func (l *Language) Rule() imports.Rule { return l.rule }

// Extractor is what turns the language's query matches into a file's
// record.
func (l *Language) Extractor() *extract.Extractor { return l.x }

// Query is the language's compiled main query (tags.scm and the files
// "queries" lists).
func (l *Language) Query() *astgrep.CaptureQuery { return l.query }

// PassesArguments says whether the language's records place functions
// passed to calls and parameters (@arguments, @parameters): callers of a
// function passed lists the callee's calls of its parameter.
func (l *Language) PassesArguments() bool { return l.passesArguments }

// IsBuiltin says whether the language defines name itself.
func (l *Language) IsBuiltin(name string) bool { return l.builtins[name] }

// Generics are the generic types the language reads through
// (type_wrappers) and as collections (element_types).
func (l *Language) Generics() *record.Generics { return &l.generics }

// IsSelf says whether name means the enclosing class (self, this).
func (l *Language) IsSelf(name string) bool { return l.self[name] }

// LiteralType is the builtin type of a literal written as text ("" when
// text is no literal the language lists): the longest prefix wins.
func (l *Language) LiteralType(text string) (prefix, typ string) {
	for p, t := range l.LiteralTypes {
		if len(p) > len(prefix) && strings.HasPrefix(text, p) {
			prefix, typ = p, t
		}
	}
	return prefix, typ
}
