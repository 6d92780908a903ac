package lang

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/builtin-tools/builtin-tools/astgrep"
)

// Declared types as structure (issue 28 §2). A language's typeforms.scm says
// how to read a type node and an expression node: each pattern describes
// one node kind, captures the whole node @type.<form> or @expr.<op> and its
// immediate parts @type.<form>.<part> / @expr.<op>.<part>. Extraction runs
// it anchored at the nodes the main query captured as declared types and
// receivers, then at their parts, and stores the trees in the record
// (Record.Types, Record.Exprs, Record.Steps). A node no pattern reads is
// opaque: it names nothing (no type is read from its text), as every type
// of a language without typeforms.scm.

// Type forms (TypeNode.Form). TOpaque is a node the language's typeforms.scm
// does not read.
const (
	TOpaque    uint8 = iota
	TName            // a name: Name
	TPath            // qualified: Name is the qualifier as written, the last child the name
	TPointer         // *T: elem
	TSame            // members of elem: a parenthesized type, ~T, a reference
	TSlice           // []E, [N]E: elem
	TMap             // map[K]V: key, elem
	TChan            // chan E: elem
	TGeneric         // base, then arg...
	TFunc            // func(...) R: result, if any
	TTuple           // (a, b T): item... (one per name)
	TStruct          // struct { ... } written in place: field... (Label: the field's name, "" embedded)
	TInterface       // interface { ... } written in place: field... (embedded interfaces)
	TUnion           // A | B: arm...
	TNull            // None, null, undefined
	TOther           // a type that names no members the resolver follows (A & B, typeof x)
	numForms
)

var formNames = [...]string{TOpaque: "opaque", TName: "name", TPath: "path", TPointer: "pointer", TSame: "same", TSlice: "slice", TMap: "map", TChan: "chan",
	TGeneric: "generic", TFunc: "func", TTuple: "tuple", TStruct: "struct", TInterface: "interface", TUnion: "union", TNull: "null", TOther: "other"}

// Parts: a node's place under its parent (TypeNode.Part).
const (
	PNone uint8 = iota
	PElem
	PKey
	PBase
	PSeg
	PArg
	PResult
	PItem
	PField
	PArm
	pLabel // (a capture only) the name of the next item or field
	numParts
)

var partNames = [...]string{PNone: "", PElem: "elem", PKey: "key", PBase: "base", PSeg: "seg", PArg: "arg", PResult: "result", PItem: "item", PField: "field", PArm: "arm", pLabel: "name"}

// The parts each form takes.
var formParts = [numForms][]uint8{
	TPath: {PSeg}, TPointer: {PElem}, TSame: {PElem}, TSlice: {PElem}, TMap: {PKey, PElem}, TChan: {PElem},
	TGeneric: {PBase, PArg}, TFunc: {PResult}, TTuple: {PItem, pLabel}, TStruct: {PField, pLabel}, TInterface: {PField}, TUnion: {PArm},
}

// Expression steps (Step.Op).
const (
	SNone    uint8 = iota
	SName          // an identifier: Name
	SField         // .Name of what is before
	SPath          // ::Name of what is before
	SCall          // a call of what is before
	SIndex         // an element of what is before
	SDeref         // *x
	SAddr          // &x
	SSame          // (x)
	SAssert        // x.(T): Type
	SLiteral       // T{...}: Type; "s", {}, [x] (Type 0): the language's literal_types say
	SNew           // new T(): Type
	numOps
)

var opNames = [...]string{SNone: "", SName: "name", SField: "field", SPath: "path", SCall: "call", SIndex: "index", SDeref: "deref", SAddr: "addr",
	SSame: "same", SAssert: "assert", SLiteral: "literal", SNew: "new"}

// Expression parts.
const (
	xNone uint8 = iota
	xObject
	xName
	xCallee
	xType
	numXParts
)

var xPartNames = [...]string{xNone: "", xObject: "object", xName: "name", xCallee: "callee", xType: "type"}

var opParts = [numOps][]uint8{
	SField: {xObject, xName}, SPath: {xObject, xName}, SCall: {xCallee, xObject, xName}, SIndex: {xObject}, SDeref: {xObject}, SAddr: {xObject},
	SSame: {xObject}, SAssert: {xObject, xType}, SLiteral: {xType}, SNew: {xType},
}

// TypeNode is one node of a declared type's tree; a tree is stored in
// preorder, its root first. Its strings index the record's Strs.
type TypeNode struct {
	Form  uint8
	Part  uint8  // its place under its parent
	Name  uint32 `codec:"index=Strs"` // TName: the name; TPath: the qualifier as written
	Label uint32 `codec:"index=Strs"` // an item's or field's own name ("" embedded or unnamed)
	Text  uint32 `codec:"index=Strs"` // as written, on one line: what a reason quotes
	Last  int32  // index in Types one past its subtree
}

// Expr is an expression (a receiver, a callee, a value assigned) as a
// short list of steps, left to right: s.conn.buf[i] is name s, field conn,
// field buf, index.
type Expr struct {
	First int32 // Steps[First : First+N]
	N     uint8 // 0: not read (a form the language's typeforms.scm does not describe)
}

// Step is one step of an Expr.
type Step struct {
	Op   uint8
	Name uint32 `codec:"index=Strs"`  // SName, SField, SPath: the name
	Text uint32 `codec:"index=Strs"`  // the expression up to and with this step, as written
	Type int32  `codec:"bound=Types"` // SAssert, SLiteral, SNew: the type (1-based; 0 none)
}

// maxTypeSteps bounds an expression's steps, and maxTypeNodes a type's
// nodes: past them a node is opaque.
const (
	maxTypeSteps = 12
	maxTypeNodes = 256
)

// maxTypeDepth bounds how deep a type's tree is read and built.
const maxTypeDepth = 12

// typeTrees is a record's string table and its declared types and
// expressions as trees, with the readings of them the resolver makes.
// The table is here because every node and step names its strings by an
// index into it; the rest of the record (Refs, Locals) indexes it too.
// Embedded in Record, whose encoding has these fields in its place.
type typeTrees struct {
	// Strs are the strings of Refs, Locals, Types and Steps; 0 is "".
	Strs []string
	// Types are the declared types' trees, each in preorder (a T field
	// is 1-based into it, 0 none); Exprs are expressions (an X field,
	// 1-based) as Steps.
	Types []TypeNode
	Exprs []Expr
	Steps []Step
}

// Str returns a string of the record's table.
func (r *typeTrees) Str(i uint32) string { return r.Strs[i] }

// Type returns the node of type id t (1-based), or nil for 0.
func (r *typeTrees) Type(t int32) *TypeNode {
	if t <= 0 || int(t) > len(r.Types) {
		return nil
	}
	return &r.Types[t-1]
}

// Children calls fn with the ids of t's children, in order.
func (r *typeTrees) Children(t int32) []int32 {
	n := r.Type(t)
	if n == nil {
		return nil
	}
	var out []int32
	for j := t; j < n.Last; j = r.Types[j].Last {
		out = append(out, j+1)
	}
	return out
}

// TypeText is type t's text as written, on one line.
func (r *typeTrees) TypeText(t int32) string {
	if n := r.Type(t); n != nil {
		return r.Strs[n.Text]
	}
	return ""
}

// Opaque says whether type t (or a node under it) is one the language's
// typeforms.scm does not read, or t is none: its text is all there is.
func (r *typeTrees) Opaque(t int32) bool {
	n := r.Type(t)
	if n == nil {
		return true
	}
	for _, m := range r.Types[t-1 : n.Last] {
		if m.Form == TOpaque {
			return true
		}
	}
	return false
}

// ExprSteps returns expression x's steps (1-based; nil for 0 or an
// expression not read).
func (r *typeTrees) ExprSteps(x int32) []Step {
	if x <= 0 || int(x) > len(r.Exprs) {
		return nil
	}
	e := r.Exprs[x-1]
	return r.Steps[e.First : e.First+int32(e.N)]
}

// typesConfig: the language.json key naming the type query files.
type typesConfig struct {
	// TypeFiles are the files of the type and expression shapes, read in
	// order as one query (paths as in "queries"). Default: typeforms.scm if
	// the folder has one, else the extended language's.
	TypeFiles []string `json:"type_forms"`
}

// typeCap is what a capture of typeforms.scm says: the whole node of a form
// or op (part 0), or one of its parts.
type typeCap struct {
	expr bool
	form uint8 // a T* form or an S* op
	part uint8 // 0: the whole node
}

// typeQuery is a language's compiled typeforms.scm.
type typeQuery struct {
	q    *astgrep.CaptureQuery
	caps []typeCap // by capture index; form 0: none
}

// loadTypes compiles the language's type files; nil when it lists none.
func (c *typesConfig) load(e *astgrep.Engine, fsys fs.FS, id, grammar string) (*typeQuery, string, error) {
	if len(c.TypeFiles) == 0 {
		return nil, "", nil
	}
	var src []byte
	for _, name := range c.TypeFiles {
		part, err := fs.ReadFile(fsys, path.Join(id, name))
		if err != nil {
			return nil, "", fmt.Errorf("language %s: %w", id, err)
		}
		if _, err := e.CompileCaptureQuery(grammar, string(part)); err != nil {
			return nil, "", fmt.Errorf("language %s: %s: %w", id, name, err)
		}
		src = append(append(src, part...), '\n')
	}
	q, err := e.CompileCaptureQuery(grammar, string(src))
	if err != nil {
		return nil, "", fmt.Errorf("language %s: %w", id, err)
	}
	tq := &typeQuery{q: q, caps: make([]typeCap, len(q.Names))}
	for i, n := range q.Names {
		if strings.HasPrefix(n, "_") {
			continue
		}
		tc, ok := decodeTypeCap(n)
		if !ok {
			return nil, "", fmt.Errorf("language %s: %s: capture @%s is no @type.<form>[.<part>] or @expr.<op>[.<part>] (forms: %s; ops: %s)",
				id, strings.Join(c.TypeFiles, ", "), n, strings.Join(formNames[1:], " "), strings.Join(opNames[1:], " "))
		}
		tq.caps[i] = tc
	}
	return tq, string(src), nil
}

func decodeTypeCap(n string) (typeCap, bool) {
	kind, rest, _ := strings.Cut(n, ".")
	form, part, _ := strings.Cut(rest, ".")
	switch kind {
	case "type":
		f := slices.Index(formNames[:], form)
		if f <= 0 {
			return typeCap{}, false
		}
		if part == "" {
			return typeCap{form: uint8(f)}, true
		}
		p := slices.Index(partNames[:], part)
		if p <= 0 || !slices.Contains(formParts[f], uint8(p)) {
			return typeCap{}, false
		}
		return typeCap{form: uint8(f), part: uint8(p)}, true
	case "expr":
		o := slices.Index(opNames[:], form)
		if o <= 0 {
			return typeCap{}, false
		}
		if part == "" {
			return typeCap{expr: true, form: uint8(o)}, true
		}
		p := slices.Index(xPartNames[:], part)
		if p <= 0 || !slices.Contains(opParts[o], uint8(p)) {
			return typeCap{}, false
		}
		return typeCap{expr: true, form: uint8(o), part: uint8(p)}, true
	}
	return typeCap{}, false
}

// treeBuilder builds one file's types and expressions from its tree.
type treeBuilder struct {
	tq    *typeQuery
	x     *astgrep.Tree
	src   []byte
	tab   *table
	types []TypeNode
	exprs []Expr
	steps []Step
	// memo: a tree or expression by kind, normalization and text (see
	// key), so equal texts share one.
	memo map[string]int32
	key  []byte
	// match's state: the node, the kind read, the form found, the parts
	// (a stack: see match).
	visit func(*astgrep.QueryMatch) bool
	at    int32
	expr  bool
	form  uint8
	parts []part
}

// keyOf fills b.key with what memoizes node n read as tree (0) or with
// normalization how (1+how).
func (b *treeBuilder) keyOf(n int32, what uint8) []byte {
	b.key = append(append(append(b.key[:0], what), b.x.Kind(n)...), 0)
	b.key = append(b.key, b.x.Text(n)...)
	return b.key
}

// id is the table's id of node n's text kept as typeText keeps it,
// without copying a text that is already one line.
func (b *treeBuilder) id(n int32, norm uint8) uint32 {
	t := b.x.Text(n)
	plain := len(t) > 0 && t[0] != ':' && t[0] != ' ' && t[len(t)-1] != ' '
	for _, c := range t {
		if c == '\n' || c == '\t' || c == '\r' || norm == normRecv && c == ' ' {
			plain = false
			break
		}
	}
	if plain {
		if i, ok := b.tab.ids[string(t)]; ok {
			return i
		}
		return b.tab.raw(string(t))
	}
	if norm == normRecv {
		return b.tab.raw(strings.Join(strings.Fields(string(t)), ""))
	}
	return b.tab.raw(typeText(string(t)))
}

// Text normalizations: how a captured node's text is kept (as the
// resolver has always read it).
const (
	normType    uint8 = iota // typeText: one line
	normClipped              // typeText, a long literal clipped
	normRecv                 // no spaces at all (a receiver)
)

func (b *treeBuilder) norm(l *Language, s string, how uint8) string {
	switch how {
	case normRecv:
		return strings.Join(strings.Fields(s), "")
	case normClipped:
		return clipLiteral(l, typeText(s))
	}
	return typeText(s)
}

// part is one part of a node, found by a typeforms.scm pattern.
type part struct {
	node  int32
	part  uint8
	start int
}

// match reads node n by the patterns of one kind (types or expressions):
// the form of the first pattern whose whole capture is n, and the parts
// every match of that form at n captured, by position, each once.
//
// The parts are b.parts[from:]: the caller truncates b.parts to from when
// done with them (a part's own reading appends after them).
func (b *treeBuilder) match(n int32, expr bool) (form uint8, from int) {
	if b.visit == nil {
		b.visit = b.matched
	}
	from = len(b.parts)
	b.at, b.expr, b.form = n, expr, 0
	b.x.MatchAt(n, b.tq.q, b.visit)
	ps := b.parts[from:]
	slices.SortStableFunc(ps, func(a, c part) int { return a.start - c.start })
	ps = slices.CompactFunc(ps, func(a, c part) bool { return a.node == c.node && a.part == c.part })
	b.parts = b.parts[:from+len(ps)]
	return b.form, from
}

// matched takes one match at b.at into b.form and b.parts.
func (b *treeBuilder) matched(m *astgrep.QueryMatch) bool {
	whole := uint8(0)
	for _, c := range m.Captures {
		if tc := b.tq.caps[c.Index]; tc.form != 0 && tc.expr == b.expr && tc.part == 0 && c.Node == b.at {
			whole = tc.form
		}
	}
	if whole == 0 || b.form != 0 && whole != b.form {
		return true
	}
	b.form = whole
	for _, c := range m.Captures {
		if tc := b.tq.caps[c.Index]; tc.form == whole && tc.expr == b.expr && tc.part != 0 && c.Node != b.at && !b.x.Extra(c.Node) {
			b.parts = append(b.parts, part{c.Node, tc.part, c.Start})
		}
	}
	return true
}

func (b *treeBuilder) text(n int32) string { return string(b.x.Text(n)) }

// typeOf is the tree of type node n, its root's text kept as shown
// (1-based id; memoized by kind and text).
func (b *treeBuilder) typeOf(l *Language, n int32, shown string) int32 {
	k := b.keyOf(n, 0)
	if t, ok := b.memo[string(k)]; ok && b.Str(b.types[t-1].Text) == shown {
		return t
	}
	if b.memo == nil {
		b.memo = map[string]int32{}
	}
	b.memo[string(k)] = int32(len(b.types)) + 1
	root := int32(len(b.types))
	b.emitType(l, n, PNone, 0, root, 0)
	b.types[root].Text = b.tab.raw(shown)
	return root + 1
}

func (b *treeBuilder) Str(i uint32) string { return b.tab.strs[i] }

// emitType appends node n and its subtree.
func (b *treeBuilder) emitType(l *Language, n int32, p uint8, label uint32, root int32, depth int) {
	i := len(b.types)
	b.types = append(b.types, TypeNode{Part: p, Label: label, Text: b.id(n, normType)})
	defer func() { b.types[i].Last = int32(len(b.types)) }()
	if depth > maxTypeDepth || len(b.types)-int(root) > maxTypeNodes {
		return
	}
	form, from := b.match(n, false)
	defer func() { b.parts = b.parts[:from] }()
	nparts := len(b.parts) - from
	switch form {
	case 0:
		return
	case TName:
		if !b.x.Leaf(n) && !word(b.x.Text(n)) {
			return
		}
		b.types[i].Name = b.id(n, normType)
	case TPath:
		if nparts < 2 {
			return
		}
		// a::b::T nests to the right (C++): its last segment's segments
		// are this path's.
		for {
			lp := b.parts[len(b.parts)-1]
			f, lfrom := b.match(lp.node, false)
			if f != TPath || len(b.parts)-lfrom < 2 {
				b.parts = b.parts[:lfrom]
				break
			}
			inner := slices.Clone(b.parts[lfrom:])
			b.parts = append(b.parts[:lfrom-1], inner...)
		}
		nparts = len(b.parts) - from
		start, _ := b.x.Span(n)
		last, _ := b.x.Span(b.parts[from+nparts-1].node)
		b.types[i].Name = b.tab.raw(strings.TrimRight(typeText(string(b.src[start:last])), ".: "))
	}
	b.types[i].Form = form
	// Labels name the item or field that follows them; an item or field
	// counts once per label, at least once.
	var labels []uint32
	for k := range nparts {
		pt := b.parts[from+k]
		if pt.part == pLabel {
			labels = append(labels, b.id(pt.node, normType))
			continue
		}
		if (form == TTuple || form == TStruct) && len(labels) > 0 {
			for _, lb := range labels {
				b.emitType(l, pt.node, pt.part, lb, root, depth+1)
			}
			labels = labels[:0]
			continue
		}
		b.emitType(l, pt.node, pt.part, 0, root, depth+1)
	}
}

// exprOf is the expression at node n, shown as shown (1-based id; 0
// never: an expression not read has N 0).
func (b *treeBuilder) exprOf(l *Language, n int32, shown string, how uint8) int32 {
	k := b.keyOf(n, 1+how)
	if x, ok := b.memo[string(k)]; ok && (b.exprs[x-1].N == 0 || b.Str(b.steps[b.exprs[x-1].First+int32(b.exprs[x-1].N)-1].Text) == shown) {
		return x
	}
	if b.memo == nil {
		b.memo = map[string]int32{}
	}
	b.memo[string(k)] = int32(len(b.exprs)) + 1
	first := len(b.steps)
	e := Expr{First: int32(first)}
	if b.emitSteps(l, n, how, 0) && len(b.steps)-first <= maxTypeSteps {
		e.N = uint8(len(b.steps) - first)
		b.steps[len(b.steps)-1].Text = b.tab.raw(shown)
	} else {
		b.steps = b.steps[:first]
		e.First = 0
	}
	b.exprs = append(b.exprs, e)
	return int32(len(b.exprs))
}

// memberOf is the expression n.name (a name destructured from n: const
// {gen} = cxt is cxt.gen), shown as shown; 0 when n is not read.
func (b *treeBuilder) memberOf(l *Language, n int32, name, shown string) int32 {
	obj := b.exprOf(l, n, typeText(b.text(n)), normType)
	e := b.exprs[obj-1]
	if e.N == 0 || e.N >= maxTypeSteps {
		return 0
	}
	first := int32(len(b.steps))
	b.steps = append(b.steps, b.steps[e.First:e.First+int32(e.N)]...)
	b.steps = append(b.steps, Step{Op: SField, Name: b.tab.raw(name), Text: b.tab.raw(shown)})
	b.exprs = append(b.exprs, Expr{First: first, N: e.N + 1})
	return int32(len(b.exprs))
}

// emitSteps appends the steps of expression node n; false: not read.
func (b *treeBuilder) emitSteps(l *Language, n int32, how uint8, depth int) bool {
	if depth > maxTypeSteps {
		return false
	}
	op, from := b.match(n, true)
	defer func() { b.parts = b.parts[:from] }()
	st := Step{Op: op}
	var obj, name int32 = -1, -1
	for k := range len(b.parts) - from {
		pt := b.parts[from+k]
		switch pt.part {
		case xObject, xCallee:
			obj = pt.node
		case xName:
			st.Name = b.id(pt.node, normType)
			name = pt.node
		case xType:
			// Shown as the expression around it is (a receiver has no spaces).
			st.Type = b.typeOf(l, pt.node, b.norm(l, b.text(pt.node), how))
		}
	}
	switch op {
	case SNone:
		return false
	case SName:
		if !b.x.Leaf(n) && !word(b.x.Text(n)) {
			return false
		}
		st.Name = b.id(n, normType)
	case SField, SPath:
		if obj < 0 || st.Name == 0 {
			return false
		}
	case SLiteral:
	case SNew:
		if st.Type == 0 {
			return false
		}
	case SAssert:
		if obj < 0 || st.Type == 0 {
			return false
		}
	default:
		if obj < 0 {
			return false
		}
	}
	if obj >= 0 && !b.emitSteps(l, obj, how, depth+1) {
		return false
	}
	if op == SCall && st.Name != 0 {
		// A call written with its object and name (Java's a.m(x)): the
		// field a.m, then its call.
		s0, _ := b.x.Span(n)
		_, e := b.x.Span(name)
		b.steps = append(b.steps, Step{Op: SField, Name: st.Name, Text: b.tab.raw(b.norm(l, string(b.x.Text(n)[:e-s0]), how))})
		st.Name = 0
	}
	if how == normClipped {
		st.Text = b.tab.raw(b.norm(l, b.text(n), how))
	} else {
		st.Text = b.id(n, how)
	}
	b.steps = append(b.steps, st)
	return true
}

// word says a node's text is one word (a keyword type such as string
// has a child token, and is still a name).
func word(t []byte) bool {
	for _, c := range t {
		if !(c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80) {
			return false
		}
	}
	return len(t) > 0
}

// DumpType writes type t's tree on one line: form(children), a name as
// itself ("map(name string, slice(pointer(path x.T)))").
func (r *typeTrees) DumpType(t int32) string {
	n := r.Type(t)
	if n == nil {
		return "-"
	}
	var b strings.Builder
	if n.Label != 0 {
		b.WriteString(r.Strs[n.Label] + ":")
	}
	switch n.Form {
	case TName:
		b.WriteString(r.Strs[n.Name])
		return b.String()
	case TOpaque:
		b.WriteString("opaque " + r.Strs[n.Text])
		return b.String()
	}
	b.WriteString(formNames[n.Form])
	if n.Form == TPath {
		b.WriteString(" " + r.Strs[n.Name])
	}
	b.WriteString("(")
	for i, c := range r.Children(t) {
		if i > 0 {
			b.WriteString(", ")
		}
		if p := r.Types[c-1].Part; p != PNone {
			b.WriteString(partNames[p] + " ")
		}
		b.WriteString(r.DumpType(c))
	}
	b.WriteString(")")
	return b.String()
}

// DumpExpr writes expression x's steps ("name s, field conn, index").
func (r *typeTrees) DumpExpr(x int32) string {
	st := r.ExprSteps(x)
	if len(st) == 0 {
		return "-"
	}
	var out []string
	for _, s := range st {
		w := opNames[s.Op]
		if s.Name != 0 {
			w += " " + r.Strs[s.Name]
		}
		if s.Type != 0 {
			w += " " + r.DumpType(s.Type)
		}
		out = append(out, w)
	}
	return strings.Join(out, ", ")
}

// The resolver's readings of a type tree. Each returns ok false when it
// meets an opaque node: the type names nothing the resolver follows.

// child is t's first child of part p (0 for none).
func (r *typeTrees) child(t int32, p uint8) int32 {
	for _, c := range r.Children(t) {
		if r.Types[c-1].Part == p {
			return c
		}
	}
	return 0
}

// TypeName is the qualifier and name
// of the type whose members a value of type t has (through pointers,
// parentheses, a result list's first item, a wrapper's argument, a
// union's one arm that is not null); ("", "") when it names none (a slice,
// a map, a function type, a type written in place).
func (r *typeTrees) TypeName(l Generics, t int32) (qual, name string, ok bool) {
	for range maxTypeDepth {
		n := r.Type(t)
		if n == nil {
			return "", "", true
		}
		switch n.Form {
		case TOpaque:
			return "", "", false
		case TName:
			if s := r.Strs[n.Name]; IsIdent(s) {
				return "", s, true
			}
			return "", "", true
		case TPath:
			cs := r.Children(t)
			for _, c := range cs[:len(cs)-1] {
				if f := r.Types[c-1].Form; f != TName && f != TPath {
					// std::vector<T>::iterator names no type read here.
					return "", "", f != TOpaque
				}
			}
			lt := cs[len(cs)-1]
			last := r.Type(lt)
			if last.Form == TGeneric {
				// std::unique_ptr<T>: the generic, qualified by the path.
				base := r.child(lt, PBase)
				_, bn, ok := r.TypeName(l, base)
				switch {
				case !ok:
					return "", "", false
				case l.Wrapper(bn):
					t = r.child(lt, PArg)
					continue
				case bn == "":
					return "", "", true
				}
				return r.Strs[n.Name], bn, true
			}
			if last.Form != TName || !IsIdent(r.Strs[last.Name]) {
				return "", "", last.Form != TOpaque
			}
			return r.Strs[n.Name], r.Strs[last.Name], true
		case TPointer, TSame:
			t = r.child(t, PElem)
		case TTuple:
			t = r.child(t, PItem)
		case TGeneric:
			base := r.child(t, PBase)
			if _, bn, ok := r.TypeName(l, base); !ok {
				return "", "", false
			} else if l.Wrapper(bn) {
				t = r.child(t, PArg)
			} else {
				t = base
			}
		case TUnion:
			one := int32(0)
			for _, c := range r.Children(t) {
				switch r.Types[c-1].Form {
				case TNull:
				case TOpaque:
					return "", "", false
				default:
					if one != 0 {
						return "", "", true
					}
					one = c
				}
			}
			t = one
		default:
			return "", "", true
		}
	}
	return "", "", true
}

// ElemOf is the element of a collection type t
// (through pointers): a slice's, an array's, a map's value, a channel's,
// a generic listed in element_types' first argument; 0 for none.
func (r *typeTrees) ElemOf(l Generics, t int32) (int32, bool) {
	t = r.derefs(t)
	for n := r.Type(t); n != nil && n.Form == TSame; n = r.Type(t) {
		t = r.derefs(r.child(t, PElem)) // readonly T[], an annotation's type
	}
	if n := r.Type(t); n != nil && n.Form == TGeneric {
		_, bn, ok := r.TypeName(l, r.child(t, PBase))
		if !ok || !l.ElementType(bn) {
			return 0, ok
		}
		return r.child(t, PArg), true
	}
	return r.partIf(t, PElem, TSlice, TMap, TChan)
}

// KeyOf is what a one-variable range over a value of
// type t gives when that has methods: a map's key, a channel's element.
func (r *typeTrees) KeyOf(t int32) (int32, bool) {
	t = r.derefs(t)
	if n := r.Type(t); n != nil && n.Form == TChan {
		return r.child(t, PElem), true
	}
	return r.partIf(t, PKey, TMap)
}

// partIf is t's part p when t is of one of forms, else 0; false only when
// t is opaque, so that nothing can be said.
func (r *typeTrees) partIf(t int32, p uint8, forms ...uint8) (int32, bool) {
	n := r.Type(t)
	switch {
	case n == nil:
		return 0, true
	case n.Form == TOpaque:
		return 0, false
	case slices.Contains(forms, n.Form):
		return r.child(t, p), true
	}
	return 0, true
}

func (r *typeTrees) derefs(t int32) int32 {
	for n := r.Type(t); n != nil && n.Form == TPointer; n = r.Type(t) {
		t = r.child(t, PElem)
	}
	return t
}

// Generics is what a language says of generic types by name (its
// language.json's type_wrappers and element_types): the readings below
// look through a wrapper (Optional[T], std::unique_ptr<T>) to its
// argument and take an element type's (List<T>) first argument as its
// element.
type Generics interface {
	Wrapper(name string) bool
	ElementType(name string) bool
}

// TreeField is a field of a type written in place: its name ("" for an
// embedded type), its type's text and tree.
type TreeField struct {
	Name, Type string
	T          int32
}

// FieldsOf is the fields of a struct or
// interface type written in place (through pointers); isLit false for any
// other type.
func (r *typeTrees) FieldsOf(t int32) (fields []TreeField, isLit, ok bool) {
	t = r.derefs(t)
	n := r.Type(t)
	switch {
	case n == nil:
		return nil, false, true
	case n.Form == TOpaque:
		return nil, false, false
	case n.Form != TStruct && n.Form != TInterface:
		return nil, false, true
	}
	for _, c := range r.Children(t) {
		cn := r.Types[c-1]
		fields = append(fields, TreeField{Name: r.Strs[cn.Label], Type: r.Strs[cn.Text], T: c})
	}
	return fields, true, true
}

// FuncResultOf is a function type's result
// (0 for none or no function type).
func (r *typeTrees) FuncResultOf(t int32) (int32, bool) { return r.partIf(t, PResult, TFunc) }

// ItemOf is result i of a result list (0 for none);
// items is how many it has (0: t is no list).
func (r *typeTrees) ItemOf(t int32, i int) (item int32, items int, ok bool) {
	n := r.Type(t)
	switch {
	case n == nil:
		return 0, 0, true
	case n.Form == TOpaque:
		return 0, 0, false
	case n.Form != TTuple:
		return 0, 0, true
	}
	cs := r.Children(t)
	if i < len(cs) {
		item = cs[i]
	}
	return item, len(cs), true
}
