package extract

import (
	"fmt"
	"slices"
	"strings"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/graph/record"
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

// The parts each form takes.
var formParts = [len(record.FormNames)][]uint8{
	record.TPath: {record.PSeg}, record.TPointer: {record.PElem}, record.TSame: {record.PElem}, record.TSlice: {record.PElem}, record.TMap: {record.PKey, record.PElem}, record.TChan: {record.PElem},
	record.TGeneric: {record.PBase, record.PArg}, record.TFunc: {record.PResult}, record.TTuple: {record.PItem, record.PLabel}, record.TStruct: {record.PField, record.PLabel}, record.TInterface: {record.PField}, record.TUnion: {record.PArm},
}

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

var opParts = [len(record.OpNames)][]uint8{
	record.SField: {xObject, xName}, record.SPath: {xObject, xName}, record.SCall: {xCallee, xObject, xName}, record.SIndex: {xObject}, record.SDeref: {xObject}, record.SAddr: {xObject},
	record.SSame: {xObject}, record.SAssert: {xObject, xType}, record.SLiteral: {xType}, record.SNew: {xType},
}

// maxTypeSteps bounds an expression's steps, and maxTypeNodes a type's
// nodes: past them a node is opaque.
const (
	maxTypeSteps = 12
	maxTypeNodes = 256
)

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

// newTypeQuery reads the captures of a language's compiled type files
// (files, as errors name them).
func newTypeQuery(q *astgrep.CaptureQuery, id string, files []string) (*typeQuery, error) {
	tq := &typeQuery{q: q, caps: make([]typeCap, len(q.Names))}
	for i, n := range q.Names {
		if strings.HasPrefix(n, "_") {
			continue
		}
		tc, ok := decodeTypeCap(n)
		if !ok {
			return nil, fmt.Errorf("language %s: %s: capture @%s is no @type.<form>[.<part>] or @expr.<op>[.<part>] (forms: %s; ops: %s)",
				id, strings.Join(files, ", "), n, strings.Join(record.FormNames[1:], " "), strings.Join(record.OpNames[1:], " "))
		}
		tq.caps[i] = tc
	}
	return tq, nil
}

func decodeTypeCap(n string) (typeCap, bool) {
	kind, rest, _ := strings.Cut(n, ".")
	form, part, _ := strings.Cut(rest, ".")
	switch kind {
	case "type":
		f := slices.Index(record.FormNames[:], form)
		if f <= 0 {
			return typeCap{}, false
		}
		if part == "" {
			return typeCap{form: uint8(f)}, true
		}
		p := slices.Index(record.PartNames[:], part)
		if p <= 0 || !slices.Contains(formParts[f], uint8(p)) {
			return typeCap{}, false
		}
		return typeCap{form: uint8(f), part: uint8(p)}, true
	case "expr":
		o := slices.Index(record.OpNames[:], form)
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
	types []record.TypeNode
	exprs []record.Expr
	steps []record.Step
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

func (b *treeBuilder) norm(ex *Extractor, s string, how uint8) string {
	switch how {
	case normRecv:
		return strings.Join(strings.Fields(s), "")
	case normClipped:
		return clipLiteral(ex, typeText(s))
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
func (b *treeBuilder) typeOf(ex *Extractor, n int32, shown string) int32 {
	k := b.keyOf(n, 0)
	if t, ok := b.memo[string(k)]; ok && b.Str(b.types[t-1].Text) == shown {
		return t
	}
	if b.memo == nil {
		b.memo = map[string]int32{}
	}
	b.memo[string(k)] = int32(len(b.types)) + 1
	root := int32(len(b.types))
	b.emitType(ex, n, record.PNone, 0, root, 0)
	b.types[root].Text = b.tab.raw(shown)
	return root + 1
}

func (b *treeBuilder) Str(i uint32) string { return b.tab.strs[i] }

// emitType appends node n and its subtree.
func (b *treeBuilder) emitType(ex *Extractor, n int32, p uint8, label uint32, root int32, depth int) {
	i := len(b.types)
	b.types = append(b.types, record.TypeNode{Part: p, Label: label, Text: b.id(n, normType)})
	defer func() { b.types[i].Last = int32(len(b.types)) }()
	if depth > record.MaxTypeDepth || len(b.types)-int(root) > maxTypeNodes {
		return
	}
	form, from := b.match(n, false)
	defer func() { b.parts = b.parts[:from] }()
	nparts := len(b.parts) - from
	switch form {
	case 0:
		return
	case record.TName:
		if !b.x.Leaf(n) && !word(b.x.Text(n)) {
			return
		}
		b.types[i].Name = b.id(n, normType)
	case record.TPath:
		if nparts < 2 {
			return
		}
		// a::b::T nests to the right (C++): its last segment's segments
		// are this path's.
		for {
			lp := b.parts[len(b.parts)-1]
			f, lfrom := b.match(lp.node, false)
			if f != record.TPath || len(b.parts)-lfrom < 2 {
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
		if pt.part == record.PLabel {
			labels = append(labels, b.id(pt.node, normType))
			continue
		}
		if (form == record.TTuple || form == record.TStruct) && len(labels) > 0 {
			for _, lb := range labels {
				b.emitType(ex, pt.node, pt.part, lb, root, depth+1)
			}
			labels = labels[:0]
			continue
		}
		b.emitType(ex, pt.node, pt.part, 0, root, depth+1)
	}
}

// exprOf is the expression at node n, shown as shown (1-based id; 0
// never: an expression not read has N 0).
func (b *treeBuilder) exprOf(ex *Extractor, n int32, shown string, how uint8) int32 {
	k := b.keyOf(n, 1+how)
	if x, ok := b.memo[string(k)]; ok && (b.exprs[x-1].N == 0 || b.Str(b.steps[b.exprs[x-1].First+int32(b.exprs[x-1].N)-1].Text) == shown) {
		return x
	}
	if b.memo == nil {
		b.memo = map[string]int32{}
	}
	b.memo[string(k)] = int32(len(b.exprs)) + 1
	first := len(b.steps)
	e := record.Expr{First: int32(first)}
	if b.emitSteps(ex, n, how, 0) && len(b.steps)-first <= maxTypeSteps {
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
func (b *treeBuilder) memberOf(ex *Extractor, n int32, name, shown string) int32 {
	obj := b.exprOf(ex, n, typeText(b.text(n)), normType)
	e := b.exprs[obj-1]
	if e.N == 0 || e.N >= maxTypeSteps {
		return 0
	}
	first := int32(len(b.steps))
	b.steps = append(b.steps, b.steps[e.First:e.First+int32(e.N)]...)
	b.steps = append(b.steps, record.Step{Op: record.SField, Name: b.tab.raw(name), Text: b.tab.raw(shown)})
	b.exprs = append(b.exprs, record.Expr{First: first, N: e.N + 1})
	return int32(len(b.exprs))
}

// emitSteps appends the steps of expression node n; false: not read.
func (b *treeBuilder) emitSteps(ex *Extractor, n int32, how uint8, depth int) bool {
	if depth > maxTypeSteps {
		return false
	}
	op, from := b.match(n, true)
	defer func() { b.parts = b.parts[:from] }()
	st := record.Step{Op: op}
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
			st.Type = b.typeOf(ex, pt.node, b.norm(ex, b.text(pt.node), how))
		}
	}
	switch op {
	case record.SNone:
		return false
	case record.SName:
		if !b.x.Leaf(n) && !word(b.x.Text(n)) {
			return false
		}
		st.Name = b.id(n, normType)
	case record.SField, record.SPath:
		if obj < 0 || st.Name == 0 {
			return false
		}
	case record.SLiteral:
	case record.SNew:
		if st.Type == 0 {
			return false
		}
	case record.SAssert:
		if obj < 0 || st.Type == 0 {
			return false
		}
	default:
		if obj < 0 {
			return false
		}
	}
	if obj >= 0 && !b.emitSteps(ex, obj, how, depth+1) {
		return false
	}
	if op == record.SCall && st.Name != 0 {
		// A call written with its object and name (Java's a.m(x)): the
		// field a.m, then its call.
		s0, _ := b.x.Span(n)
		_, e := b.x.Span(name)
		b.steps = append(b.steps, record.Step{Op: record.SField, Name: st.Name, Text: b.tab.raw(b.norm(ex, string(b.x.Text(n)[:e-s0]), how))})
		st.Name = 0
	}
	if how == normClipped {
		st.Text = b.tab.raw(b.norm(ex, b.text(n), how))
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
