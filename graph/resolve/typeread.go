package resolve

import (
	"slices"
	"strings"

	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// Reading declared types and receivers. A record holds each captured type
// as a tree and each receiver as steps (graph/record/typetree.go, read by
// the language's typeforms.scm); these functions follow them. No type is
// read from its text: a type with an opaque node, and every type and
// receiver of a language without typeforms.scm, names nothing here (its
// receivers resolve by name, as any whose type is unknown).

// xref is a prefix of an expression's steps: the first k steps of
// expression x (1-based) of the entry it is read in; x 0: none, read the
// text.
type xref struct {
	x int32
	k int
}

// exprOf is the whole of expression x of f.
func exprOf(f *snap.Entry, x int32) xref {
	if x <= 0 || f == nil || len(f.ExprSteps(x)) == 0 {
		return xref{} // not read: its text is
	}
	return xref{x, len(f.ExprSteps(x))}
}

func (xr xref) steps(f *snap.Entry) []record.Step {
	if xr.x <= 0 || xr.k <= 0 {
		return nil
	}
	return f.ExprSteps(xr.x)[:xr.k]
}

// prefix is the expression without its last step.
func (xr xref) prefix() xref {
	if xr.k <= 1 {
		return xref{}
	}
	return xref{xr.x, xr.k - 1}
}

// typeName is the qualifier and name of the type whose members a value of
// d has ("", "" for none).
func typeName(d declType) (qual, name string) {
	if d.named {
		return d.qual, d.name
	}
	if d.t > 0 {
		if q, n, ok := d.in.TypeName(d.in.Lang.Generics(), d.t); ok {
			return q, n
		}
	}
	return "", ""
}

// named is d as the type named name in f: a class's or a builtin's name,
// read as itself (a name that is no identifier, as text).
func named(name string, f *snap.Entry, d declType) declType {
	d.text, d.in = name, f
	if record.IsIdent(name) {
		d.named, d.name = true, name
	}
	return d
}

// qualifierType is the type a qualifier names (Outer in Outer.Inner, a::b
// in a::b::T): a name path, split at its last separator.
func qualifierType(q string, f *snap.Entry) declType {
	d := declType{text: q, in: f, named: true}
	d.qual, d.name = SplitName(q)
	if !record.IsIdent(d.name) {
		d.qual, d.name = "", ""
	}
	return d
}

// SplitName splits a qualified name at its last separator ("::" or "."):
// a::b::T is a::b and T. It reads a symbol's name, not a type.
func SplitName(s string) (qual, name string) {
	if i := strings.LastIndex(s, "::"); i >= 0 {
		return s[:i], s[i+2:]
	}
	if i := strings.LastIndex(s, "."); i >= 0 {
		return s[:i], s[i+1:]
	}
	return "", s
}

// sub is the declType of node t of d's tree (0: none).
func sub(d declType, t int32) declType {
	return declType{text: d.in.TypeText(t), t: t, in: d.in}
}

// elemOf is the type of an element of a collection of type d; ok is
// false when it has none.
func elemOf(d declType) (declType, bool) {
	return part(d, func(t int32) (int32, bool) { return d.in.ElemOf(d.in.Lang.Generics(), t) })
}

// keyOf is what a one-variable range over a value of type d gives when
// it has methods (a map's key, a channel's element).
func keyOf(d declType) (declType, bool) {
	return part(d, func(t int32) (int32, bool) { return d.in.KeyOf(t) })
}

// fieldsOf lists the fields of a struct or interface type written in
// place; ok is false for any other type.
func fieldsOf(d declType) ([]record.TreeField, bool) {
	if d.named {
		return nil, false // a name is none of these
	}
	if d.t > 0 {
		if fs, isLit, ok := d.in.FieldsOf(d.t); ok {
			return fs, isLit
		}
	}
	return nil, false
}

// funcResultOf is what a call of a value of function type d returns.
func funcResultOf(d declType) (declType, bool) {
	return part(d, func(t int32) (int32, bool) { return d.in.FuncResultOf(t) })
}

// part is the node of d's tree that of finds from its root (an element, a
// key, a result); ok is false when d is a name or has no tree, or of finds
// nothing.
func part(d declType, of func(t int32) (int32, bool)) (declType, bool) {
	if d.named || d.t <= 0 {
		return declType{}, false // a name is none of these
	}
	if p, ok := of(d.t); ok {
		return sub(d, p), p != 0
	}
	return declType{}, false
}

// itemOf is result n of a result list d ((*X, error)); items counts
// them (0: d is no list).
func itemOf(d declType, n int) (item declType, items int, ok bool) {
	if d.named {
		return declType{}, 0, false // a name is none of these
	}
	if d.t > 0 {
		if it, k, ok := d.in.ItemOf(d.t, n); ok {
			return sub(d, it), k, it != 0
		}
	}
	return declType{}, 0, false
}

// pointer says a value of type d is a pointer (*T).
func pointer(d declType) bool {
	return d.t > 0 && !d.in.Opaque(d.t) && d.in.Type(d.t).Form == record.TPointer
}

// namePath is the names of an expression made only of names and fields
// (a, a.b.C), or nil.
func namePath(f *snap.Entry, xr xref) []string {
	st := xr.steps(f)
	if len(st) == 0 {
		return nil
	}
	out := make([]string, len(st))
	for i, s := range st {
		if s.Op != record.SName && (i == 0 || s.Op != record.SField) {
			return nil
		}
		out[i] = f.Strs[s.Name]
	}
	return out
}

// namedType is the type a receiver written as a name path names (T in
// T.Method, pkg.T): the path's last name, qualified by the others.
func namedType(f *snap.Entry, text string, xr xref) declType {
	d := declType{text: text, in: f}
	if xr.x > 0 && len(xr.steps(f)) > 0 {
		d.named = true
		if p := namePath(f, xr); p != nil {
			d.qual, d.name = joinDots(p[:len(p)-1]), p[len(p)-1]
		}
	}
	return d
}

func joinDots(p []string) string {
	n := ""
	for i, s := range p {
		if i > 0 {
			n += "."
		}
		n += s
	}
	return n
}

// stepDecl is exprDecl over the steps of xr: the declared type of the
// expression they make, read left to right as exprDecl reads the text.
func (ty *typeReader) stepDecl(f *snap.Entry, encl, at int32, xr xref, depth int) (declType, bool) {
	st := xr.steps(f)
	if depth > maxTypeDepth || len(st) == 0 {
		return declType{}, false
	}
	last := st[len(st)-1]
	expr := f.Strs[last.Text]
	if p, t := f.Lang.LiteralType(expr); t != "" {
		// "".join(xs), {}.get(k): a method of the language's own type.
		lit := expr
		if len(lit) > 24 {
			lit = p + "…"
		}
		return named(t, f, declType{ev: lit + " is a " + t + " literal"}), true
	}
	if d, ok := stepLiteral(f, st); ok {
		return d, true
	}
	switch last.Op {
	case record.SCall:
		if ed := encl; ed >= 0 && f.Defs[ed].Container != "" && slices.Contains(f.Lang.Super, expr) {
			return named(f.Defs[ed].Container, f, declType{ev: expr + " is a base of " + f.Defs[ed].Container, bases: true}), true
		}
		// A call: what its callee returns.
		callee := xr.prefix()
		if callee.x == 0 {
			return declType{}, false
		}
		return ty.calleeResult(f, encl, at, f.Strs[st[len(st)-2].Text], callee, depth+1)
	case record.SAssert:
		// A type assertion, x.(T): the value is a T.
		d := declType{text: f.TypeText(last.Type), t: last.Type, in: f}
		d.ev = expr + " is " + d.text + ": asserted"
		return d, true
	case record.SIndex:
		// An index: an element of the collection.
		inner, ok := ty.stepDecl(f, encl, at, xr.prefix(), depth+1)
		if !ok {
			return declType{}, false
		}
		el, ok := elemOf(inner)
		if !ok {
			return declType{}, false
		}
		el.ev = inner.ev + "; " + expr + " is an element"
		return el, true
	case record.SField:
		obj := xr.prefix()
		objText := f.Strs[st[len(st)-2].Text]
		name := f.Strs[last.Name]
		// pkg.Var: a package-level variable with a declared type.
		if files, _, bound := ty.sc.ModuleBinding(f, objText); bound && files != nil && !f.BoundAround(FirstSegment(expr), encl, at) {
			if d, ok := ty.varType(expr, ty.sc.ExportedBy(files, name, isTypedVar), depth); ok {
				return d, true
			}
			return ty.instanceDecl(expr, ty.sc.ExportedBy(files, name, isVar), depth)
		}
		cur, ok := ty.stepDecl(f, encl, at, obj, depth+1)
		if !ok {
			return declType{}, false
		}
		return ty.fieldNamed(cur, name, depth)
	case record.SName:
		return ty.nameDecl(f, encl, at, expr, depth)
	case record.SSame, record.SDeref, record.SAddr:
		// (x), x!, x!!, *p, &x: x's type (a pointer's members are its
		// target's).
		return ty.stepDecl(f, encl, at, xr.prefix(), depth+1)
	}
	return declType{}, false
}

// stepLiteral is the type of a receiver written as a composite literal,
// maybe parenthesized: (&Reader{}).ReadByte(), T{}.M().
func stepLiteral(f *snap.Entry, st []record.Step) (declType, bool) {
	k := len(st) - 1
	for k > 0 && st[k].Op == record.SSame {
		k--
	}
	if k > 0 && st[k].Op == record.SAddr {
		k--
	}
	if k != 0 || st[0].Op != record.SLiteral {
		return declType{}, false
	}
	expr := f.Strs[st[len(st)-1].Text]
	d := declType{text: f.TypeText(st[0].Type), t: st[0].Type, in: f}
	if f.Opaque(d.t) {
		return declType{}, false
	}
	switch f.Type(d.t).Form {
	case record.TSlice, record.TMap:
		// []Context{a, b}: a collection of a declared element type.
		if _, ok := elemOf(d); ok {
			d.ev = "a " + d.text + " literal"
			return d, true
		}
	case record.TName, record.TPath:
		if _, n := typeName(d); n != "" {
			d.ev = expr + " is " + d.text + ": a literal"
			return d, true
		}
	}
	return declType{}, false
}
