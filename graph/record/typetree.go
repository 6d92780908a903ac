package record

import (
	"slices"
	"strings"
)

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

var FormNames = [...]string{TOpaque: "opaque", TName: "name", TPath: "path", TPointer: "pointer", TSame: "same", TSlice: "slice", TMap: "map", TChan: "chan",
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
	PLabel // (a capture only) the name of the next item or field
	numParts
)

var PartNames = [...]string{PNone: "", PElem: "elem", PKey: "key", PBase: "base", PSeg: "seg", PArg: "arg", PResult: "result", PItem: "item", PField: "field", PArm: "arm", PLabel: "name"}

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

var OpNames = [...]string{SNone: "", SName: "name", SField: "field", SPath: "path", SCall: "call", SIndex: "index", SDeref: "deref", SAddr: "addr",
	SSame: "same", SAssert: "assert", SLiteral: "literal", SNew: "new"}

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

// maxTypeDepth bounds how deep a type's tree is read and built.
const MaxTypeDepth = 12

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
	b.WriteString(FormNames[n.Form])
	if n.Form == TPath {
		b.WriteString(" " + r.Strs[n.Name])
	}
	b.WriteString("(")
	for i, c := range r.Children(t) {
		if i > 0 {
			b.WriteString(", ")
		}
		if p := r.Types[c-1].Part; p != PNone {
			b.WriteString(PartNames[p] + " ")
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
		w := OpNames[s.Op]
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
func (r *typeTrees) TypeName(l *Generics, t int32) (qual, name string, ok bool) {
	for range MaxTypeDepth {
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
				case l.Wrappers[bn]:
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
			} else if l.Wrappers[bn] {
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
func (r *typeTrees) ElemOf(l *Generics, t int32) (int32, bool) {
	t = r.derefs(t)
	for n := r.Type(t); n != nil && n.Form == TSame; n = r.Type(t) {
		t = r.derefs(r.child(t, PElem)) // readonly T[], an annotation's type
	}
	if n := r.Type(t); n != nil && n.Form == TGeneric {
		_, bn, ok := r.TypeName(l, r.child(t, PBase))
		if !ok || !l.Elements[bn] {
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
// language.json's type_wrappers and element_types): the readings above
// look through a wrapper (Optional[T], std::unique_ptr<T>) to its
// argument and take an element type's (List<T>) first argument as its
// element.
type Generics struct {
	Wrappers, Elements map[string]bool
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
