package types

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

// ExprRef is a prefix of an expression's steps: the first k steps of
// expression x (1-based) of the entry it is read in; x 0: none, read the
// text.
type ExprRef struct {
	X int32
	K int
}

// ExprOf is the whole of expression x of f.
func ExprOf(f *snap.Entry, x int32) ExprRef {
	if x <= 0 || f == nil || len(f.ExprSteps(x)) == 0 {
		return ExprRef{} // not read: its text is
	}
	return ExprRef{x, len(f.ExprSteps(x))}
}

func (xr ExprRef) Steps(f *snap.Entry) []record.Step {
	if xr.X <= 0 || xr.K <= 0 {
		return nil
	}
	return f.ExprSteps(xr.X)[:xr.K]
}

// Prefix is the expression without its last step.
func (xr ExprRef) Prefix() ExprRef {
	if xr.K <= 1 {
		return ExprRef{}
	}
	return ExprRef{xr.X, xr.K - 1}
}

// TypeName is the qualifier and name of the type whose members a value of
// d has ("", "" for none).
func TypeName(d Decl) (qual, name string) {
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

// DeclIn is the type written text in f, read from its tree t in f's
// record (0: read the text).
func DeclIn(f *snap.Entry, text string, t int32) Decl {
	return Decl{Text: text, t: t, in: f}
}

// Named is d as the type Named name in f: a class's or a builtin's name,
// read as itself (a name that is no identifier, as text).
func Named(name string, f *snap.Entry, d Decl) Decl {
	d.Text, d.in = name, f
	if record.IsIdent(name) {
		d.named, d.name = true, name
	}
	return d
}

// qualifierType is the type a qualifier names (Outer in Outer.Inner, a::b
// in a::b::T): a name path, split at its last separator.
func qualifierType(q string, f *snap.Entry) Decl {
	d := Decl{Text: q, in: f, named: true}
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

// sub is the Decl of node t of d's tree (0: none).
func sub(d Decl, t int32) Decl {
	return Decl{Text: d.in.TypeText(t), t: t, in: d.in}
}

// elemOf is the type of an element of a collection of type d; ok is
// false when it has none.
func elemOf(d Decl) (Decl, bool) {
	return part(d, func(t int32) (int32, bool) { return d.in.ElemOf(d.in.Lang.Generics(), t) })
}

// keyOf is what a one-variable range over a value of type d gives when
// it has methods (a map's key, a channel's element).
func keyOf(d Decl) (Decl, bool) {
	return part(d, func(t int32) (int32, bool) { return d.in.KeyOf(t) })
}

// FieldsOf lists the fields of a struct or interface type written in
// place; ok is false for any other type.
func FieldsOf(d Decl) ([]record.TreeField, bool) {
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
func funcResultOf(d Decl) (Decl, bool) {
	return part(d, func(t int32) (int32, bool) { return d.in.FuncResultOf(t) })
}

// part is the node of d's tree that of finds from its root (an element, a
// key, a result); ok is false when d is a name or has no tree, or of finds
// nothing.
func part(d Decl, of func(t int32) (int32, bool)) (Decl, bool) {
	if d.named || d.t <= 0 {
		return Decl{}, false // a name is none of these
	}
	if p, ok := of(d.t); ok {
		return sub(d, p), p != 0
	}
	return Decl{}, false
}

// itemOf is result n of a result list d ((*X, error)); items counts
// them (0: d is no list).
func itemOf(d Decl, n int) (item Decl, items int, ok bool) {
	if d.named {
		return Decl{}, 0, false // a name is none of these
	}
	if d.t > 0 {
		if it, k, ok := d.in.ItemOf(d.t, n); ok {
			return sub(d, it), k, it != 0
		}
	}
	return Decl{}, 0, false
}

// Pointer says a value of type d is a Pointer (*T).
func Pointer(d Decl) bool {
	return d.t > 0 && !d.in.Opaque(d.t) && d.in.Type(d.t).Form == record.TPointer
}

// NamePath is the names of an expression made only of names and fields
// (a, a.b.C), or nil.
func NamePath(f *snap.Entry, xr ExprRef) []string {
	st := xr.Steps(f)
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
func namedType(f *snap.Entry, text string, xr ExprRef) Decl {
	d := Decl{Text: text, in: f}
	if xr.X > 0 && len(xr.Steps(f)) > 0 {
		d.named = true
		if p := NamePath(f, xr); p != nil {
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

// stepDecl is ExprDecl over the steps of xr: the declared type of the
// expression they make, read left to right as ExprDecl reads the text.
func (ty *Reader) stepDecl(f *snap.Entry, encl, at int32, xr ExprRef, depth int) (Decl, bool) {
	st := xr.Steps(f)
	if depth > MaxDepth || len(st) == 0 {
		return Decl{}, false
	}
	last := st[len(st)-1]
	expr := f.Strs[last.Text]
	if p, t := f.Lang.LiteralType(expr); t != "" {
		// "".join(xs), {}.get(k): a method of the language's own type.
		lit := expr
		if len(lit) > 24 {
			lit = p + "…"
		}
		return Named(t, f, Decl{Ev: lit + " is a " + t + " literal"}), true
	}
	if d, ok := stepLiteral(f, st); ok {
		return d, true
	}
	switch last.Op {
	case record.SCall:
		if ed := encl; ed >= 0 && f.Defs[ed].Container != "" && slices.Contains(f.Lang.Super, expr) {
			return Named(f.Defs[ed].Container, f, Decl{Ev: expr + " is a base of " + f.Defs[ed].Container, Bases: true}), true
		}
		// A call: what its callee returns.
		callee := xr.Prefix()
		if callee.X == 0 {
			return Decl{}, false
		}
		return ty.CalleeResult(f, encl, at, f.Strs[st[len(st)-2].Text], callee, depth+1)
	case record.SAssert:
		// A type assertion, x.(T): the value is a T.
		d := Decl{Text: f.TypeText(last.Type), t: last.Type, in: f}
		d.Ev = expr + " is " + d.Text + ": asserted"
		return d, true
	case record.SIndex:
		// An index: an element of the collection.
		inner, ok := ty.stepDecl(f, encl, at, xr.Prefix(), depth+1)
		if !ok {
			return Decl{}, false
		}
		el, ok := elemOf(inner)
		if !ok {
			return Decl{}, false
		}
		el.Ev = inner.Ev + "; " + expr + " is an element"
		return el, true
	case record.SField:
		obj := xr.Prefix()
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
			return Decl{}, false
		}
		return ty.fieldNamed(cur, name, depth)
	case record.SName:
		return ty.nameDecl(f, encl, at, expr, depth)
	case record.SSame, record.SDeref, record.SAddr:
		// (x), x!, x!!, *p, &x: x's type (a pointer's members are its
		// target's).
		return ty.stepDecl(f, encl, at, xr.Prefix(), depth+1)
	}
	return Decl{}, false
}

// stepLiteral is the type of a receiver written as a composite literal,
// maybe parenthesized: (&Reader{}).ReadByte(), T{}.M().
func stepLiteral(f *snap.Entry, st []record.Step) (Decl, bool) {
	k := len(st) - 1
	for k > 0 && st[k].Op == record.SSame {
		k--
	}
	if k > 0 && st[k].Op == record.SAddr {
		k--
	}
	if k != 0 || st[0].Op != record.SLiteral {
		return Decl{}, false
	}
	expr := f.Strs[st[len(st)-1].Text]
	d := Decl{Text: f.TypeText(st[0].Type), t: st[0].Type, in: f}
	if f.Opaque(d.t) {
		return Decl{}, false
	}
	switch f.Type(d.t).Form {
	case record.TSlice, record.TMap:
		// []Context{a, b}: a collection of a declared element type.
		if _, ok := elemOf(d); ok {
			d.Ev = "a " + d.Text + " literal"
			return d, true
		}
	case record.TName, record.TPath:
		if _, n := TypeName(d); n != "" {
			d.Ev = expr + " is " + d.Text + ": a literal"
			return d, true
		}
	}
	return Decl{}, false
}

// FirstSegment is the receiver's first name: console in console.log, std
// in std::mem.
func FirstSegment(recv string) string {
	if i := strings.IndexAny(recv, ".:([{"); i >= 0 {
		return recv[:i]
	}
	return recv
}
