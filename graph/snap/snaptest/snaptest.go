// Package snaptest builds code-graph snapshots by hand, for tests of what
// reads them (the resolver, the queries): records are written as a list
// of definitions, with the locals, fields and references inside each, and
// the positions, lines, nesting and orders a file's extraction would give
// are filled in.
package snaptest

import (
	"path"
	"sort"
	"strings"

	"github.com/builtin-tools/builtin-tools/graph/imports"
	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// R builds one record. Each call is one line of the file, in order;
// Def opens a definition that the calls after it are inside until End.
type R struct {
	rec    *record.Record
	line   int32
	open   []int32 // definitions not ended, outermost first
	locals []record.Local
	strs   map[string]uint32
}

// Rec starts a record.
func Rec() *R { return &R{rec: record.Empty(), strs: map[string]uint32{"": 0}} }

func (r *R) str(s string) uint32 {
	if i, ok := r.strs[s]; ok {
		return i
	}
	r.rec.Strs = append(r.rec.Strs, s)
	r.strs[s] = uint32(len(r.rec.Strs) - 1)
	return r.strs[s]
}

// next is the next line and its byte offset (100 bytes a line).
func (r *R) next() (line, at int32) {
	r.line++
	return r.line, r.line * 100
}

// Package sets the package the file declares.
func (r *R) Package(p string) *R {
	r.rec.Package = p
	return r
}

// Import adds an import: of a module (name "") or of one name from it;
// local is the name it binds ("" for the default).
func (r *R) Import(module, name, local string) *R {
	line, _ := r.next()
	r.rec.Imports = append(r.rec.Imports, record.Import{Module: module, Name: name, Local: local, Line: line})
	return r
}

// DefOpt sets what a definition says beyond its name and kind.
type DefOpt func(*record.Def)

// In is a definition's container (a method's receiver type, a class).
func In(container string) DefOpt { return func(d *record.Def) { d.Container = container } }

// Returns is a function's declared result type, as written.
func Returns(typ string) DefOpt { return func(d *record.Def) { d.Type = typ } }

// Self is the name a method's receiver is bound to (Go).
func Self(name string) DefOpt { return func(d *record.Def) { d.Self = name } }

// Def opens a definition; what follows is inside it until End.
func (r *R) Def(name, kind string, opts ...DefOpt) *R {
	line, at := r.next()
	d := record.Def{Name: name, Kind: kind, Line: line, EndLine: line, Col: 1, Start: at, End: at + 1, NameAt: at + 1}
	for _, o := range opts {
		o(&d)
	}
	d.T = r.typ(d.Type)
	if n := len(r.open); n > 0 {
		p := &r.rec.Defs[r.open[n-1]]
		d.Local = !record.ClassLike(p.Kind) && !record.NamespaceLike(p.Kind)
		if d.Container == "" && record.ClassLike(p.Kind) {
			d.Container = p.Name
		}
	}
	if d.Kind == "function" && d.Container != "" {
		d.Kind = "method"
	}
	r.rec.Defs = append(r.rec.Defs, d)
	r.open = append(r.open, int32(len(r.rec.Defs)-1))
	return r
}

// End closes the innermost open definition.
func (r *R) End() *R {
	line, at := r.next()
	n := len(r.open) - 1
	d := &r.rec.Defs[r.open[n]]
	d.EndLine, d.End = line, at
	r.open = r.open[:n]
	return r
}

// encl is the definition the next line is in: the innermost function-like
// one open, else the innermost, else -1.
func (r *R) encl() int32 {
	for k := len(r.open) - 1; k >= 0; k-- {
		if record.FunctionLike(r.rec.Defs[r.open[k]].Kind) {
			return r.open[k]
		}
	}
	if n := len(r.open); n > 0 {
		return r.open[n-1]
	}
	return -1
}

// Local binds name in the open function, typed as how says (lang.Type*;
// TypeNone for untyped) by typ as written.
func (r *R) Local(name string, how uint8, typ string) *R {
	line, at := r.next()
	lc := record.Local{Name: r.str(name), Encl: r.encl(), At: at, End: -1, Type: r.str(typ), How: how, Line: line}
	lc.T, lc.X = r.typed(how, typ)
	r.locals = append(r.locals, lc)
	return r
}

// Ref references name (lang.RefCall, RefType, RefValue, RefRead) on a
// receiver written recv ("" for a bare name).
func (r *R) Ref(name string, kind uint8, recv string) *R {
	line, at := r.next()
	r.rec.Refs = append(r.rec.Refs, record.Ref{Name: r.str(name), Recv: r.str(recv), X: r.expr(recv), Kind: kind, Line: line, Col: 1, Encl: r.encl(), At: at})
	return r
}

// Field adds a field of container (name "" for an embedded type or a
// base), typed as how says by typ as written.
func (r *R) Field(container, name string, how uint8, typ string) *R {
	line, at := r.next()
	fd := record.Field{Container: container, Name: name, Type: typ, How: how, Line: line, At: at}
	fd.T, fd.X = r.typed(how, typ)
	r.rec.Fields = append(r.rec.Fields, fd)
	return r
}

// The types and expressions a record written by hand holds are written
// in a notation of this package, as extraction would have read them: a
// type is a name, a path a.b.T, or * before one (a pointer); an
// expression is names joined by dots (a name, then fields).

// typed is the tree (t) or the steps (x) of typ captured as how says.
func (r *R) typed(how uint8, typ string) (t, x int32) {
	switch how {
	case record.TypeNone:
		return 0, 0
	case record.TypeCall, record.TypeCall2, record.TypeCall3, record.TypeElem, record.TypeExpr, record.TypeKey:
		return 0, r.expr(typ)
	}
	return r.typ(typ), 0
}

// typ appends the tree of type s (1-based id; 0 for none).
func (r *R) typ(s string) int32 {
	if s == "" {
		return 0
	}
	root := int32(len(r.rec.Types))
	r.node(s, record.PNone)
	return root + 1
}

func (r *R) node(s string, part uint8) {
	i := len(r.rec.Types)
	r.rec.Types = append(r.rec.Types, record.TypeNode{Part: part, Text: r.str(s)})
	switch segs := strings.Split(s, "."); {
	case strings.HasPrefix(s, "*"):
		r.rec.Types[i].Form = record.TPointer
		r.node(s[1:], record.PElem)
	case len(segs) > 1:
		r.rec.Types[i].Form, r.rec.Types[i].Name = record.TPath, r.str(strings.Join(segs[:len(segs)-1], "."))
		for _, g := range segs {
			r.rec.Types = append(r.rec.Types, record.TypeNode{Form: record.TName, Part: record.PSeg, Name: r.str(g), Text: r.str(g), Last: int32(len(r.rec.Types) + 1)})
		}
	default:
		r.rec.Types[i].Form, r.rec.Types[i].Name = record.TName, r.str(s)
	}
	r.rec.Types[i].Last = int32(len(r.rec.Types))
}

// expr appends the steps of expression s (1-based id; 0 for none).
func (r *R) expr(s string) int32 {
	if s == "" {
		return 0
	}
	first := int32(len(r.rec.Steps))
	segs := strings.Split(s, ".")
	for k, g := range segs {
		op := record.SField
		if k == 0 {
			op = record.SName
		}
		r.rec.Steps = append(r.rec.Steps, record.Step{Op: op, Name: r.str(g), Text: r.str(strings.Join(segs[:k+1], "."))})
	}
	r.rec.Exprs = append(r.rec.Exprs, record.Expr{First: first, N: uint8(len(segs))})
	return int32(len(r.rec.Exprs))
}

// Done ends the open definitions and returns the record.
func (r *R) Done() *record.Record {
	for len(r.open) > 0 {
		r.End()
	}
	rec := r.rec
	sort.SliceStable(r.locals, func(i, j int) bool { return rec.Strs[r.locals[i].Name] < rec.Strs[r.locals[j].Name] })
	rec.Locals = r.locals
	rec.DefOrder = record.Order(len(rec.Defs), func(i int) string { return rec.Defs[i].Name })
	rec.RefOrder = record.Order(len(rec.Refs), func(i int) string { return rec.Strs[rec.Refs[i].Name] })
	return rec
}

// Build is a snapshot of the records by path, each in the language its
// file name says, with the modules manifests would declare.
func Build(langs *lang.Set, files map[string]*record.Record, mods ...imports.Module) *snap.Snapshot {
	b := snap.New(langs)
	Put(b, files)
	if len(mods) > 0 {
		b.SetModules(mods)
	}
	return b.Snapshot()
}

// Put puts the records by path into a builder, in path order.
func Put(b *snap.Builder, files map[string]*record.Record) {
	rels := make([]string, 0, len(files))
	for rel := range files {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		b.Put(&snap.Entry{Rel: rel, Dir: path.Dir(rel), Lang: b.Langs().ForFile(rel), Record: files[rel]})
	}
}
