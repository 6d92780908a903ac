package extract

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/graph/record"
)

// Extractor is a language's compiled queries as extraction reads them:
// which capture of its main query is which part of a match, how a type
// capture types its binding, its typeforms.scm read as type and expression
// forms, and the doc-comment expressions.
type Extractor struct {
	names Names
	types *typeQuery // typeforms.scm, nil without one: declared types are read as text
	// buildLines: the file's build constraint is kept (the "go" variants
	// rule).
	buildLines bool
	// declaredAfter: see lang.Language.DeclaredAfter.
	declaredAfter bool
	roles         []role // by capture index; capture -1 for captures that name no role
	capName       int
	capRecv       int
	capCont       int
	capSelf       int
	capMod        int
	capINm        int
	capIDef       int
	capAlias      int
	// typeHow is how a capture of typeCaptures types its binding, by
	// capture index; TypeNone for any other capture.
	typeHow []uint8
	// @type.member (a type capture): the expression a destructured name
	// is a member of (const {gen} = cxt is cxt.gen).
	capTypeMember int
	// @scope: the node a local is bound in instead of its own (a type
	// switch's case).
	capScope int
	// @arguments: in a @reference.value pattern whose node is a call, the
	// call's argument list holding @name (an argument's place); in a
	// @local pattern, @parameters: the parameter list holding @name.
	capArgs, capParams int
	capArgName         int // @argument.name: the keyword an argument is passed by
	// moduleFields: module-level @local bindings are module fields.
	moduleFields bool
	// @doc.comment: the doc comment of the @doc function; docParam and
	// docReturn (language.json doc_param, doc_return) read a parameter's
	// type (groups: type, name) and the result type (group: type) in it.
	capDocText int
	docParam   *regexp.Regexp
	docReturn  *regexp.Regexp
	// docImport (language.json doc_import) reads a type-only import in a
	// doc comment (groups: module, name, local).
	docImport *regexp.Regexp
	docForms  []docForm

	// @type.doc: a doc comment giving a field its type (language.json
	// doc_type: @type {T}).
	capTypeDoc int
	docType    *regexp.Regexp
}

// Names is what extraction asks of its language's settings by name: its
// generic types, its builtins and its literals' types.
type Names interface {
	Generics() *record.Generics
	IsBuiltin(name string) bool
	LiteralType(text string) (prefix, typ string)
}

// ExtractConfig is what language.json says of extraction.
type Config struct {
	ID        string   // the language, as errors name it
	TypeFiles []string // typeforms.scm's files, as errors name them
	// DocParam, DocReturn, DocType and DocImport are language.json's
	// doc_param, doc_return, doc_type and doc_import expressions.
	DocParam, DocReturn, DocType, DocImport string
	DocTypes                                []DocForm
	BuildLines, DeclaredAfter               bool
}

// New reads query q's captures, and the type query's (nil
// without typeforms.scm), for a language whose other settings names
// answers.
func New(q, types *astgrep.CaptureQuery, names Names, c Config) (*Extractor, error) {
	x := &Extractor{names: names, buildLines: c.BuildLines, declaredAfter: c.DeclaredAfter}
	var err error
	if types != nil {
		if x.types, err = newTypeQuery(types, c.ID, c.TypeFiles); err != nil {
			return nil, err
		}
	}
	x.capName = q.Capture("name")
	x.capRecv = q.Capture("receiver")
	x.capCont = q.Capture("container")
	x.capSelf = q.Capture("self")
	x.capMod = q.Capture("import.module")
	x.capINm = q.Capture("import.name")
	x.capIDef = q.Capture("import.default")
	x.capAlias = q.Capture("import.alias")
	x.typeHow = make([]uint8, len(q.Names))
	for _, tc := range typeCaptures {
		if i := q.Capture(tc.name); i >= 0 {
			x.typeHow[i] = tc.how
		}
	}
	x.capTypeMember = q.Capture("type.member")
	x.capTypeDoc = q.Capture("type.doc")
	x.capScope = q.Capture("scope")
	x.capArgs = q.Capture("arguments")
	x.capArgName = q.Capture("argument.name")
	x.capParams = q.Capture("parameters")
	x.capDocText = q.Capture("doc.comment")
	// Each doc-comment expression is optional: an empty key compiles to nil.
	for _, e := range []struct {
		key, src string
		dst      **regexp.Regexp
	}{{"doc_param", c.DocParam, &x.docParam}, {"doc_return", c.DocReturn, &x.docReturn}, {"doc_type", c.DocType, &x.docType}, {"doc_import", c.DocImport, &x.docImport}} {
		if e.src == "" {
			continue
		}
		if *e.dst, err = regexp.Compile(e.src); err != nil {
			return nil, fmt.Errorf("language %s: %s: %w", c.ID, e.key, err)
		}
	}
	if x.docImport != nil {
		if x.docImport.NumSubexp() != 3 {
			return nil, fmt.Errorf("language %s: doc_import needs three groups (module, name, local)", c.ID)
		}
	}
	if x.docForms, err = loadDocForms(c.DocTypes); err != nil {
		return nil, fmt.Errorf("language %s: doc_types: %w", c.ID, err)
	}
	// A query that marks module bindings (@field.module, @field.global)
	// has its other module-level @local bindings read as them too.
	x.moduleFields = q.Capture("field.module") >= 0 || q.Capture("field.global") >= 0
	// A match's role is the capture of the node its pattern describes.
	x.roles = make([]role, len(q.Names))
	for ci, n := range q.Names {
		x.roles[ci].capture = -1
		what, kind, _ := strings.Cut(n, ".")
		switch {
		case what == "definition" || what == "reference":
		case (what == "import" || what == "package" || what == "field" || what == "export" || what == "doc") && kind == "", what == "local" && (kind == "" || kind == "scope" || kind == "param"),
			what == "export" && kind == "default",
			what == "field" && (kind == "module" || kind == "global" || kind == "attr"):
		default:
			continue
		}
		x.roles[ci] = role{capture: ci, what: what, kind: kind}
	}
	return x, nil
}

// typeCaptures are the captures that give a binding its type, and how:
// @type (as written), @type.new (constructed: T{}, new T()), @type.call
// (the result of calling this), @type.elem (an element of this
// expression), @type.expr (assigned), @type.member (see capTypeMember),
// @type.field (the declared type a destructured parameter is a field of:
// {gen}: Cxt), @type.call.2 and @type.call.3 (the second or third result
// of calling this: x, y := f()), @type.param (a type parameter's
// constraint), @type.result (a local bound to a function literal) and @type.key
// (what a one-variable range over it gives).
var typeCaptures = []struct {
	name string
	how  uint8
}{
	{"type", record.TypeDeclared}, {"type.new", record.TypeNew}, {"type.call", record.TypeCall},
	{"type.elem", record.TypeElem}, {"type.expr", record.TypeExpr}, {"type.member", record.TypeExpr},
	{"type.field", record.TypeField}, {"type.call.2", record.TypeCall2}, {"type.call.3", record.TypeCall3},
	{"type.param", record.TypeTypeParam}, {"type.result", record.TypeResult}, {"type.key", record.TypeKey},
}

// role is what a pattern's match is: the capture that names it.
type role struct {
	capture int
	what    string // definition, reference, import, package
	kind    string // function, call, ...
}

// ReadsTypes says the language has typeforms.scm: its declared types and
// receivers are read as trees and steps, not left opaque.
func (ex *Extractor) ReadsTypes() bool { return ex.types != nil }
