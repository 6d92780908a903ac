// Package types follows the types the source declares, with no type
// checker: a receiver's declared type read from the records of one
// snapshot to the class-like definitions it names and the members found
// on it or on what it embeds or extends (Reader). What a call of a method
// may run instead is package dispatch's, which reads types through it.
package types

import (
	"slices"
	"strconv"
	"strings"

	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/graph/resolve/outcome"
	"github.com/builtin-tools/builtin-tools/graph/resolve/scope"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// Declared types. The index has no type checker, but the source often
// says what a receiver is: a parameter's or variable's declared type, a
// composite literal or constructor, the declared result of the function
// that made it, a field's declared type, an element of a declared slice,
// a type switch's case. The query files capture that text (@type,
// @type.new, @type.call, @type.elem on a @local, a @field or a
// definition); the functions here follow it to the class-like definition
// it names, and a method found on that type (or, nearest first, on what it
// embeds or extends) is an exact edge whose reason quotes the evidence.

// Reader follows declared types to the definitions they name, in
// one snapshot, looking names up as the file they are written in sees
// them (sc). It keeps nothing: what it reads is the records'.
type Reader struct {
	s  *snap.Snapshot
	sc *scope.Scopes
}

// Init makes ty the reader of s, looking names up through sc.
func (ty *Reader) Init(s *snap.Snapshot, sc *scope.Scopes) { ty.s, ty.sc = s, sc }

// Decl is a type as the source writes it, and where.
type Decl struct {
	Text string      // as written: *store.Store, []*Conn, Optional[Foo]
	t    int32       // its tree in in's record (1-based); 0: read text
	in   *snap.Entry // the file whose names it is written in
	// named: a type named by a receiver's name path (T.M, pkg.T.M): qual
	// and name, read instead of text.
	named      bool
	qual, name string
	Ev         string // the evidence, for the edge's reason
	// Bases: the type's Bases, not the type (super.m()).
	Bases bool
	ctor  bool // a constructor call made it (Foo())
}

// Resolved is what a declared type names.
type Resolved struct {
	Types    []snap.Target // the class-like definitions (several: variants, duplicates)
	External string        // a module outside the index it comes from
	Builtin  string        // a type the language defines
}

// MaxDepth bounds chains (a.b.c), result types followed and base
// classes walked.
const MaxDepth = 12

// literalField is the type of field name of a value of a struct type
// written in place (cur), or of a type it embeds.
func (ty *Reader) literalField(cur Decl, fields []record.TreeField, name string, depth int) (Decl, bool) {
	for _, fd := range fields {
		d := Decl{Text: fd.Type, t: fd.T, in: cur.in}
		if fd.Name == name || fd.Name == "" && EmbeddedName(d) == name {
			d.Ev = cur.Ev + "; " + name + " is " + ShortType(fd.Type) + ": a field of its struct"
			return d, true
		}
	}
	if ts := ty.EmbeddedTypes(cur, fields); len(ts) > 0 {
		next, ok := ty.fieldOf(ts, name, depth)
		if ok {
			next.Ev = cur.Ev + "; " + next.Ev
		}
		return next, ok
	}
	return Decl{}, false
}

// EmbeddedTypes are the types a struct written in place embeds.
func (ty *Reader) EmbeddedTypes(cur Decl, fields []record.TreeField) []snap.Target {
	var out []snap.Target
	for _, fd := range fields {
		if fd.Name == "" {
			out = append(out, ty.ResolveDecl(Decl{Text: fd.Type, t: fd.T, in: cur.in}).Types...)
		}
	}
	return out
}

// EmbeddedName is the field name an embedded type d is known by (an
// embedded *pkg.T is field T).
func EmbeddedName(d Decl) string {
	_, n := TypeName(d)
	return n
}

func evidence(expr, text, how string, f *snap.Entry, line int32) string {
	return expr + " is " + ShortType(text) + ": " + how + ", " + f.Rel + ":" + strconv.Itoa(int(line))
}

// ShortType is a type's text for a reason: a long one (a struct written
// in place) cut at a word, with an ellipsis.
func ShortType(text string) string {
	const max = 40
	if len(text) <= max {
		return text
	}
	cut := strings.LastIndexByte(text[:max], ' ')
	if cut <= 0 {
		cut = max
	}
	return strings.TrimRight(text[:cut], ";,") + " …"
}

// ExprDecl is the declared type of a receiver expression (x, self.x,
// s.conn.buf, s.Conn(), xs[i]) at byte offset at inside definition encl,
// read from its steps; an expression not read as steps has none.
func (ty *Reader) ExprDecl(f *snap.Entry, encl, at int32, xs ExprRef, depth int) (Decl, bool) {
	if xs.X <= 0 {
		return Decl{}, false
	}
	return ty.stepDecl(f, encl, at, xs, depth)
}

// fieldNamed is the type of field name of a value of type cur.
func (ty *Reader) fieldNamed(cur Decl, name string, depth int) (Decl, bool) {
	tr := ty.ResolveDecl(cur)
	if len(tr.Types) == 0 {
		fields, ok := FieldsOf(cur)
		if !ok {
			return Decl{}, false
		}
		return ty.literalField(cur, fields, name, depth+1)
	}
	next, ok := ty.fieldOf(tr.Types, name, depth+1)
	if !ok {
		return Decl{}, false
	}
	next.Ev = cur.Ev + "; " + next.Ev
	return next, true
}

// nameDecl is the declared type of a name (a receiver, self, a local, a
// variable of the module) at byte offset at inside definition encl.
func (ty *Reader) nameDecl(f *snap.Entry, encl, at int32, expr string, depth int) (Decl, bool) {
	var ed *record.Def
	if encl >= 0 {
		ed = &f.Defs[encl]
	}
	if ed != nil && ed.Container != "" && slices.Contains(f.Lang.Super, expr) {
		return Named(ed.Container, f, Decl{Ev: expr + " is a base of " + ed.Container, Bases: true}), true
	}
	if ed != nil && ed.Container != "" && (f.Lang.IsSelf(expr) || ed.Self == expr) && !f.Rebound(expr, encl, at) && !boundLocal(f, expr, encl, at, ed) {
		return Named(ed.Container, f, Decl{Ev: expr + " is " + ed.Container + ": the method's receiver"}), true
	}
	if ed != nil && ed.Container == "" && f.Lang.IsSelf(expr) {
		// A closure inside a method sees the method's self (unless it
		// binds the name itself).
		inner := encl
		for e, n := f.Outer(encl), 0; e >= 0 && n < 16 && !f.Bound(expr, inner, at); e, n = f.Outer(e), n+1 {
			if od := &f.Defs[e]; od.Container != "" && od.Kind == "method" {
				if f.Rebound(expr, e, at) {
					break
				}
				return Named(od.Container, f, Decl{Ev: expr + " is " + od.Container + ": the receiver of " + od.Name + ", around this closure"}), true
			}
			inner = e
		}
	}
	// The innermost function binding it: a closure sees its enclosing
	// function's locals.
	for e, n := encl, 0; e >= 0 && n < 16; e, n = f.Outer(e), n+1 {
		if lc := f.LocalDecl(expr, e, at); lc != nil {
			d, ok := ty.localType(f, e, lc, expr, depth)
			if ok {
				return ty.typeParamIn(f, e, at, d)
			}
			return d, ok
		}
		if d, ok := ty.agreedLocal(f, e, at, expr, depth); ok {
			return d, true
		}
		if f.Bound(expr, e, at) {
			return Decl{}, false
		}
	}
	// A variable of the module or package with a declared type, else one
	// its module constructs.
	ts, _ := ty.sc.BareTargets(f, expr, isTypedVar)
	if d, ok := ty.varType(expr, ts, depth); ok {
		return d, true
	}
	ts, _ = ty.sc.BareTargets(f, expr, isVar)
	return ty.instanceDecl(expr, ts, depth)
}

// boundLocal says whether a self name is a plain local here (a Go method
// whose receiver is unnamed, a parameter called like it) — never for the
// method's own receiver.
func boundLocal(f *snap.Entry, name string, encl, at int32, ed *record.Def) bool {
	return ed.Self != name && !f.Lang.IsSelf(name) && f.Bound(name, encl, at)
}

// localType is the declared type of a typed local.
func (ty *Reader) localType(f *snap.Entry, encl int32, lc *record.Local, name string, depth int) (Decl, bool) {
	text := f.Strs[lc.Type]
	// What it is bound to is read before the binding: o := o, b :=
	// b.Next() name the earlier o and b.
	before := lc.At - 1
	switch lc.How {
	case record.TypeCall2, record.TypeCall3:
		return ty.laterResult(f, encl, before, text, ExprOf(f, lc.X), int(lc.How-record.TypeCall2)+1, name, f.Rel, lc.Line, depth)
	case record.TypeCall:
		d, ok := ty.CalleeResult(f, encl, before, text, ExprOf(f, lc.X), depth+1)
		if !ok {
			return Decl{}, false
		}
		if first, items, ok := itemOf(d, 0); ok && items > 1 {
			// x, err := f() with f() (path []dlist, ok bool): the first.
			d.Text, d.t = first.Text, first.t
		}
		if d.ctor && !strings.Contains(text, ".") {
			d.Ev = evidence(name, d.Text, "constructed", f, lc.Line)
		} else {
			d.Ev = name + " is " + d.Text + ": result of " + text + ", " + f.Rel + ":" + strconv.Itoa(int(lc.Line)) + "; " + d.Ev
		}
		d.ctor = false
		return d, true
	case record.TypeExpr:
		inner, ok := ty.ExprDecl(f, encl, before, ExprOf(f, lc.X), depth+1)
		if !ok {
			return Decl{}, false
		}
		inner.Ev = name + " = " + text + ", " + f.Rel + ":" + strconv.Itoa(int(lc.Line)) + "; " + inner.Ev
		return inner, true
	case record.TypeElem, record.TypeKey:
		inner, ok := ty.ExprDecl(f, encl, before, ExprOf(f, lc.X), depth+1)
		if !ok {
			return Decl{}, false
		}
		of, how := elemOf, "element of "
		if lc.How == record.TypeKey {
			of, how = keyOf, "ranged over "
		}
		p, ok := of(inner)
		if !ok {
			return Decl{}, false
		}
		p.Ev = evidence(name, p.Text, how+text, f, lc.Line) + "; " + inner.Ev
		return p, true
	case record.TypeField:
		return ty.destructuredField(f, lc, name, text)
	case record.TypeResult:
		// A function value: what calling it returns is no type of its own.
		return Decl{}, false
	}
	return Decl{Text: text, t: lc.T, in: f, Ev: evidence(name, text, record.HowText[lc.How], f, lc.Line)}, true
}

// destructuredField is the type of a parameter destructured from a
// declared type ({gen}: Cxt): Cxt's field gen.
func (ty *Reader) destructuredField(f *snap.Entry, lc *record.Local, name, text string) (Decl, bool) {
	tr := ty.ResolveDecl(Decl{Text: text, t: lc.T, in: f})
	if len(tr.Types) == 0 {
		return Decl{}, false
	}
	d, ok := ty.fieldOf(tr.Types, name, 1)
	if !ok {
		return Decl{}, false
	}
	d.Ev = evidence(name, d.Text, "destructured from "+text, f, lc.Line) + "; " + d.Ev
	return d, true
}

// CalleeResult is the type a call of callee (f, pkg.New, x.Make) yields:
// the class it constructs, or the function's declared result type.
//
// cx, when set, is the callee's steps, read instead of its text.
func (ty *Reader) CalleeResult(f *snap.Entry, encl, at int32, callee string, cx ExprRef, depth int) (Decl, bool) {
	if depth > MaxDepth {
		return Decl{}, false
	}
	callee = strings.TrimSpace(callee)
	recv, name := "", callee
	var rx ExprRef // recv's steps
	if st := cx.Steps(f); len(st) > 0 {
		switch last := st[len(st)-1]; {
		case last.Op == record.SName && len(st) == 1:
			name = f.Strs[last.Name]
		case last.Op == record.SField:
			rx = cx.Prefix()
			recv, name = f.Strs[st[len(st)-2].Text], f.Strs[last.Name]
		default:
			return Decl{}, false
		}
	} else {
		return Decl{}, false // not read as steps
	}
	if !record.IsIdent(name) {
		return Decl{}, false
	}
	fnOrType := func(d *record.Def) bool { return record.FunctionLike(d.Kind) || record.ClassLike(d.Kind) }
	var ts []snap.Target
	via := "" // the receiver's evidence
	switch {
	case recv == "":
		if cs := ty.ClassSelf(f, encl, at, name); len(cs) > 0 {
			ts = cs
			break
		}
		if f.Bound(name, encl, at) {
			return ty.localFuncResult(f, encl, at, name, depth)
		}
		ts, _ = ty.sc.BareTargets(f, name, fnOrType)
		if len(ts) == 0 {
			// var testHook = context.WithTimeout: a call of it calls that.
			if vs, _ := ty.sc.BareTargets(f, name, isVar); len(vs) == 1 && vs[0].D().How == record.TypeExpr {
				v := vs[0]
				return ty.heldFuncResult(v.File, -1, v.D().Start, name, v.D().Type, ExprOf(v.File, v.D().X), v.D().Line, depth)
			}
		}
	default:
		if files, _, bound := ty.sc.ModuleBinding(f, recv); bound && !f.Bound(FirstSegment(recv), encl, at) {
			ts = ty.sc.ExportedBy(files, name, fnOrType)
			break
		}
		d, ok := ty.ExprDecl(f, encl, at, rx, depth+1)
		if !ok {
			if tr := ty.ResolveDecl(namedType(f, recv, rx)); len(tr.Types) > 0 && !f.Bound(FirstSegment(recv), encl, at) {
				ts, _ = ty.MembersOf(tr.Types, name, fnOrType, depth+1)
			}
			break
		}
		if tr := ty.ResolveDecl(d); len(tr.Types) > 0 {
			ts, _ = ty.MembersOf(tr.Types, name, fnOrType, depth+1)
			via = d.Ev + "; "
		}
	}
	ts = outcome.InVariant(f, ts)
	if len(ts) == 0 && recv == "" && f.Lang.IsBuiltin(name) && !f.Bound(name, encl, at) {
		// str(x), open(p): a value of a type the language defines.
		return Named(name, f, Decl{Ev: callee + "() is builtin"}), true
	}
	if len(ts) > 1 && sameResult(ts) {
		// NewFile in file_unix.go and file_windows.go: variants that say
		// the same.
		ts = ts[:1]
	}
	if len(ts) != 1 {
		return Decl{}, false
	}
	t := ts[0]
	d := t.D()
	if record.ClassLike(d.Kind) {
		return Named(d.Name, t.File, Decl{Ev: via + callee + " constructs " + d.Name, ctor: true}), true
	}
	if d.Type == "" {
		r, ok := ty.inferredResult(t, depth+1)
		if !ok {
			return Decl{}, false
		}
		r.Ev = via + t.Qualified() + " returns " + r.Text + " (all its return statements), " + t.File.Rel + ":" + strconv.Itoa(int(d.Line)) + "; " + r.Ev
		r.ctor = false
		return r, true
	}
	if typeParamNamed(t.File, t.Def, Decl{Text: d.Type, t: d.T, in: t.File}) {
		// func Id[T I](x T) T: the result is the caller's T.
		return Decl{}, false
	}
	return Decl{Text: d.Type, t: d.T, in: t.File, Ev: via + t.Qualified() + " returns " + d.Type + ", " + t.File.Rel + ":" + strconv.Itoa(int(d.Line))}, true
}

// localFuncResult is what a call of the local function value name
// returns: the result of the literal it is bound to, of its declared
// function type (a parameter f func() *T), or of the function it was
// set to (f := strings.ToUpper).
func (ty *Reader) localFuncResult(f *snap.Entry, encl, at int32, name string, depth int) (Decl, bool) {
	for e, n := encl, 0; e >= 0 && n < 16; e, n = f.Outer(e), n+1 {
		lc := f.LocalDecl(name, e, at)
		if lc == nil {
			if f.Bound(name, e, at) {
				return Decl{}, false
			}
			continue
		}
		d := Decl{Text: f.Strs[lc.Type], t: lc.T, in: f}
		switch lc.How {
		case record.TypeResult:
		case record.TypeDeclared, record.TypeParam:
			r, ok := funcResultOf(d)
			if !ok {
				return Decl{}, false
			}
			d = r
		case record.TypeExpr:
			// f := strings.ToUpper: a call of f is a call of what it holds.
			return ty.heldFuncResult(f, e, lc.At-1, name, d.Text, ExprOf(f, lc.X), lc.Line, depth)
		default:
			return Decl{}, false
		}
		d.Ev = name + " returns " + d.Text + ": " + record.HowText[lc.How] + ", " + f.Rel + ":" + strconv.Itoa(int(lc.Line))
		return d, true
	}
	return Decl{}, false
}

// heldFuncResult is what a call of name returns when name was set to the
// expression held (in g, before at): a call of that.
func (ty *Reader) heldFuncResult(g *snap.Entry, encl, at int32, name, held string, hx ExprRef, line int32, depth int) (Decl, bool) {
	d, ok := ty.CalleeResult(g, encl, at, held, hx, depth+1)
	if !ok || d.Bases {
		return Decl{}, false
	}
	d.Ev = name + " = " + held + ", " + g.Rel + ":" + strconv.Itoa(int(line)) + "; " + d.Ev
	return d, true
}

// The locals a language's query binds at each return statement and each
// yield of a function (the keyword is the name: no identifier clashes).
const (
	returnLocal = "return"
	yieldLocal  = "yield"
)

// inferredResult is the type a function without a declared result
// returns when each of its return statements says the same one (return
// Foo(), return a local constructed); a generator returns none of them.
func (ty *Reader) inferredResult(t snap.Target, depth int) (Decl, bool) {
	g, d := t.File, t.D()
	if depth > MaxDepth || !record.FunctionLike(d.Kind) || g.Bound(yieldLocal, t.Def, d.End) {
		return Decl{}, false
	}
	lc := g.LocalDecl(returnLocal, t.Def, d.End)
	if lc == nil {
		return Decl{}, false
	}
	return ty.localType(g, t.Def, lc, "the value returned", depth)
}

// ResolveDecl finds the class-like definitions a declared type names.
func (ty *Reader) ResolveDecl(d Decl) Resolved {
	tr := ty.resolveDeclAll(d)
	if d.in != nil {
		// x_windows.go's T, not x_js.go's.
		tr.Types = outcome.InVariant(d.in, tr.Types)
	}
	return tr
}

func (ty *Reader) resolveDeclAll(d Decl) Resolved {
	if d.in == nil {
		return Resolved{}
	}
	if d.Bases {
		d.Bases = false
		var out []snap.Target
		ext := ""
		for _, t := range ty.ResolveDecl(d).Types {
			bs, e := ty.Bases(t)
			out = append(out, bs...)
			if ext == "" {
				ext = e
			}
		}
		if len(out) == 0 && ext != "" {
			return Resolved{External: ext}
		}
		return Resolved{Types: out}
	}
	l := d.in.Lang
	qual, name := TypeName(d)
	if name == "" {
		return Resolved{}
	}
	isType := func(d *record.Def) bool { return record.ClassLike(d.Kind) }
	if qual == "" {
		if l.IsBuiltin(name) {
			return Resolved{Builtin: name}
		}
		ts, ext := ty.sc.BareTargets(d.in, name, isType)
		if len(ts) == 0 && ext == "" {
			// A class defined inside a function (self in its methods):
			// the file's one class of that name.
			ts = outcome.Pick(d.in, name, func(e *record.Def) bool { return isType(e) && e.Local })
			if len(ts) != 1 {
				ts = nil
			}
		}
		return Resolved{Types: ts, External: ext}
	}
	if files, module, bound := ty.sc.ModuleBinding(d.in, qual); bound {
		if files == nil {
			return Resolved{External: module}
		}
		return Resolved{Types: ty.sc.TopLevelOf(files, name, isType)}
	}
	// Outer.Inner, ns::T: a type nested in a named one.
	if outer := ty.ResolveDecl(qualifierType(qual, d.in)); len(outer.Types) > 0 {
		var out []snap.Target
		for _, t := range outer.Types {
			out = append(out, outcome.Pick(t.File, name, func(e *record.Def) bool { return isType(e) && e.Container == t.D().Name })...)
		}
		return Resolved{Types: out}
	}
	if res, ok := ty.sc.NamespaceMember(d.in, qual, name, isType); ok {
		return Resolved{Types: res.Targets}
	}
	return Resolved{}
}

// NamedIn lists the files that may hold t's members (its own, or Go's
// package) and define name.
func (ty *Reader) NamedIn(t snap.Target, name string) []*snap.Entry {
	if t.File.Lang.Scope != "directory" {
		return []*snap.Entry{t.File}
	}
	var out []*snap.Entry
	for _, id := range ty.s.Tables(t.File.Lang).Defs.Get(name) {
		g := ty.s.ByID(id)
		if g.Dir == t.File.Dir && g.Package == t.File.Package {
			out = append(out, g)
		}
	}
	return out
}

// Bases lists what a type embeds or extends, resolved; ext names one
// that is outside the index (a module's or the language's own). Fields
// and Bases are declared with the type, in its file.
func (ty *Reader) Bases(t snap.Target) (out []snap.Target, ext string) {
	name := t.D().Name
	for _, g := range []*snap.Entry{t.File} {
		for i := range g.Fields {
			fd := &g.Fields[i]
			if fd.Name != "" || fd.Container != name {
				continue
			}
			tr := ty.ResolveDecl(Decl{Text: fd.Type, t: fd.T, in: g})
			out = append(out, tr.Types...)
			if len(tr.Types) == 0 && ext == "" {
				ext = tr.External + tr.Builtin
			}
		}
	}
	return out, ext
}

// MembersOf finds members called name of the types, walking what they
// embed or extend nearest first; the second result is the type they were
// found on.
func (ty *Reader) MembersOf(types []snap.Target, name string, ok func(*record.Def) bool, depth int) ([]snap.Target, []snap.Target) {
	ms, on, _ := ty.MembersExt(types, name, ok, depth)
	return ms, on
}

// MembersExt is MembersOf that also names a base outside the index met on
// the way (where a member not found may come from).
func (ty *Reader) MembersExt(types []snap.Target, name string, ok func(*record.Def) bool, depth int) ([]snap.Target, []snap.Target, string) {
	level := types
	seen := map[snap.Target]bool{}
	ext := ""
	for d := depth; d <= MaxDepth && len(level) > 0; d++ {
		var found, on, next []snap.Target
		for _, t := range level {
			if seen[t] {
				continue
			}
			seen[t] = true
			tn := t.D().Name
			for _, g := range ty.NamedIn(t, name) {
				ms := outcome.Pick(g, name, func(e *record.Def) bool { return ok(e) && e.Container == tn && !record.ClassLike(e.Kind) })
				found = append(found, ms...)
				for range ms {
					on = append(on, t)
				}
			}
			bs, e := ty.Bases(t)
			next = append(next, bs...)
			if ext == "" {
				ext = e
			}
		}
		if len(found) > 0 {
			return found, on, ""
		}
		level = next
	}
	return nil, nil, ext
}

// fieldOf is the declared type of field name of the types (or of what
// they embed or extend, nearest first).
func (ty *Reader) fieldOf(types []snap.Target, name string, depth int) (Decl, bool) {
	level := types
	seen := map[snap.Target]bool{}
	for d := depth; d <= MaxDepth && len(level) > 0; d++ {
		var next []snap.Target
		var found []Decl
		for _, t := range level {
			if seen[t] {
				continue
			}
			seen[t] = true
			tn := t.D().Name
			g := t.File
			var assigned []*record.Field
			for i := range g.Fields {
				fd := &g.Fields[i]
				if fd.Container != tn || fd.Name != name && !embeddedAs(g, fd, name) {
					continue
				}
				switch fd.How {
				case record.TypeExpr, record.TypeCall, record.TypeNone:
					assigned = append(assigned, fd)
				case record.TypeTypeParam:
					// A field of a type parameter's type: its constraint says nothing here.
				default:
					ft, ok := ty.fieldTypeParam(g, tn, Decl{Text: fd.Type, t: fd.T, in: g, Ev: evidence(name, fd.Type, "field of "+tn, g, fd.Line)})
					if !ok {
						return Decl{}, false
					}
					found = append(found, ft)
				}
			}
			if len(found) == 0 && len(assigned) > 0 {
				// Set, not declared: what every assignment agrees on.
				return ty.assignedField(g, name, assigned, d)
			}
			bs, _ := ty.Bases(t)
			next = append(next, bs...)
		}
		if len(found) > 0 {
			// Variants or duplicates of the type must agree.
			for _, o := range found[1:] {
				if o.Text != found[0].Text {
					return Decl{}, false
				}
			}
			return found[0], true
		}
		level = next
	}
	return Decl{}, false
}

// HasField says whether the types (or their bases) have a field name.
func (ty *Reader) HasField(types []snap.Target, name string) bool {
	_, ok := ty.fieldOf(types, name, 0)
	return ok
}

// StoredFuncs lists the functions a struct's initializers store in its
// field name (.write = file_write, @field with @type.expr naming a
// function), with why each: a call through the field may run any of
// them, and others set where the index does not see.
func (ty *Reader) StoredFuncs(types []snap.Target, name string) (fns []snap.Target, why []string) {
	seen := map[snap.Target]bool{}
	for _, t := range types {
		tn := t.D().Name
		// An initializer names its struct's type: the files that do.
		for _, id := range ty.s.Tables(t.File.Lang).Refs.Get(tn) {
			fns, why = ty.storedIn(ty.s.ByID(id), tn, name, seen, fns, why)
		}
	}
	return fns, why
}

// storedIn adds the functions g's initializers store in field name of
// type tn.
func (ty *Reader) storedIn(g *snap.Entry, tn, name string, seen map[snap.Target]bool, fns []snap.Target, why []string) ([]snap.Target, []string) {
	for i := range g.Fields {
		fd := &g.Fields[i]
		if fd.Container != tn || fd.Name != name || fd.How != record.TypeExpr {
			continue
		}
		st := g.ExprSteps(fd.X)
		if len(st) == 0 || st[0].Op != record.SName || len(st) > 2 || len(st) == 2 && st[1].Op != record.SAddr {
			continue
		}
		fn := g.Strs[st[0].Name]
		ts, _ := ty.sc.BareTargets(g, fn, func(d *record.Def) bool { return record.FunctionLike(d.Kind) })
		for _, ft := range outcome.InVariant(g, ts) {
			if !seen[ft] {
				seen[ft] = true
				fns = append(fns, ft)
				why = append(why, fn+" is stored in "+tn+"."+name+", "+g.Rel+":"+strconv.Itoa(int(fd.Line)))
			}
		}
	}
	return fns, why
}

func isTypedVar(d *record.Def) bool {
	return (d.Kind == "variable" || d.Kind == "constant") && d.Type != "" && !d.Member()
}

// varDecl is the declared type of the one variable ts holds.
func varDecl(expr string, ts []snap.Target) (Decl, bool) {
	if len(ts) != 1 {
		return Decl{}, false
	}
	d := ts[0].D()
	return Decl{Text: d.Type, t: d.T, in: ts[0].File, Ev: evidence(expr, d.Type, "variable", ts[0].File, d.Line)}, true
}

func isVar(d *record.Def) bool {
	return (d.Kind == "variable" || d.Kind == "constant") && !d.Member()
}

// instanceDecl is the type of the module variable ts hold when none is
// declared: what every binding of it in its module (@field.module,
// @field.global) agrees it was set to, a construction or a call whose
// result is known (_inst = Random()). Any other binding, an import or a
// definition of the name makes it unknown.
func (ty *Reader) instanceDecl(expr string, ts []snap.Target, depth int) (Decl, bool) {
	if len(ts) == 0 || depth > MaxDepth {
		return Decl{}, false
	}
	g, name := ts[0].File, ts[0].D().Name
	for _, t := range ts {
		if t.File != g || t.D().Type != "" {
			return Decl{}, false
		}
	}
	if len(outcome.Pick(g, name, func(d *record.Def) bool { return !isVar(d) && !d.Local })) > 0 {
		return Decl{}, false
	}
	for _, im := range g.Imports {
		if im.Local == name {
			return Decl{}, false
		}
	}
	var set *record.Field
	typedAt := map[int32]bool{}
	for i := range g.Fields {
		fd := &g.Fields[i]
		if fd.Container != "" || fd.Name != name || fd.How == record.TypeNone {
			continue
		}
		if fd.How != record.TypeCall || set != nil && set.Type != fd.Type {
			return Decl{}, false
		}
		set = fd
		typedAt[fd.At] = true
	}
	if set == nil {
		return Decl{}, false
	}
	for i := range g.Fields {
		fd := &g.Fields[i]
		if fd.Container == "" && fd.Name == name && fd.How == record.TypeNone && !typedAt[fd.At] {
			return Decl{}, false
		}
	}
	r, ok := ty.CalleeResult(g, -1, set.At, set.Type, ExprOf(g, set.X), depth+1)
	if !ok {
		return Decl{}, false
	}
	if r.ctor {
		r.Ev = evidence(expr, r.Text, "module variable set to "+set.Type+"()", g, set.Line)
	} else {
		r.Ev = evidence(expr, r.Text, "module variable set to "+set.Type+"()", g, set.Line) + "; " + r.Ev
	}
	r.ctor = false
	return r, true
}

// varType is varDecl that also follows a variable initialized by a call
// (var Stdout = NewFile(...)) to the callee's declared result.
func (ty *Reader) varType(expr string, ts []snap.Target, depth int) (Decl, bool) {
	if len(ts) == 1 && ts[0].D().How == record.TypeExpr {
		// var std = defaultLogger: the type of what it is set to.
		t := ts[0]
		d, ok := ty.ExprDecl(t.File, -1, t.D().Start, ExprOf(t.File, t.D().X), depth+1)
		if ok {
			d.Ev = evidence(expr, d.Text, "variable set to "+t.D().Type, t.File, t.D().Line) + "; " + d.Ev
		}
		return d, ok
	}
	if len(ts) != 1 || ts[0].D().How != record.TypeCall && ts[0].D().How != record.TypeCall2 && ts[0].D().How != record.TypeCall3 {
		return varDecl(expr, ts)
	}
	t := ts[0]
	d := t.D()
	if d.How != record.TypeCall {
		return ty.laterResult(t.File, -1, d.Start, d.Type, ExprOf(t.File, d.X), int(d.How-record.TypeCall2)+1, expr, t.File.Rel, d.Line, depth)
	}
	r, ok := ty.CalleeResult(t.File, -1, d.Start, d.Type, ExprOf(t.File, d.X), depth+1)
	if !ok {
		return Decl{}, false
	}
	r.Ev = evidence(expr, r.Text, "variable set to "+d.Type+"()", t.File, d.Line) + "; " + r.Ev
	r.ctor = false
	return r, true
}

// ClassSelf is the class a name like cls (language.json class_self) holds
// in a method of it: bound once there (its parameter), in a class that is
// no metaclass (whose cls would be another class).
func (ty *Reader) ClassSelf(f *snap.Entry, encl, at int32, name string) []snap.Target {
	if encl < 0 || !slices.Contains(f.Lang.ClassSelf, name) {
		return nil
	}
	ed := &f.Defs[encl]
	if ed.Container == "" || ed.Kind != "method" {
		return nil
	}
	n := 0
	for _, i := range f.LocalsNamed(name) {
		if f.Locals[i].Encl == encl {
			n++
		}
	}
	if n != 1 {
		return nil
	}
	ts := outcome.InVariant(f, outcome.Pick(f, ed.Container, func(d *record.Def) bool {
		return record.ClassLike(d.Kind) && d.Start <= f.Defs[encl].Start && f.Defs[encl].End <= d.End
	}))
	if len(ts) != 1 || ty.isMetaclass(ts[0]) {
		return nil
	}
	return ts
}

// isMetaclass says whether t extends the language's type (Python's type),
// directly or through its bases.
func (ty *Reader) isMetaclass(t snap.Target) bool {
	level := []snap.Target{t}
	seen := map[snap.Target]bool{}
	for d := 0; d <= MaxDepth && len(level) > 0; d++ {
		var next []snap.Target
		for _, c := range level {
			if seen[c] {
				continue
			}
			seen[c] = true
			for i := range c.File.Fields {
				fd := &c.File.Fields[i]
				if fd.Name == "" && fd.Container == c.D().Name {
					if _, n := TypeName(Decl{Text: fd.Type, t: fd.T, in: c.File}); n == "type" {
						return true
					}
				}
			}
			bs, _ := ty.Bases(c)
			next = append(next, bs...)
		}
		level = next
	}
	return false
}

// assignedField is the type of a field no declaration types, from its
// assignments (self.conn = conn, self.buf = Buffer()): each place that
// binds it must be typed and all must name the one same type.
func (ty *Reader) assignedField(g *snap.Entry, name string, binds []*record.Field, depth int) (Decl, bool) {
	typedAt := map[int32]bool{}
	for _, fd := range binds {
		if fd.How != record.TypeNone {
			typedAt[fd.At] = true
		}
	}
	var out Decl
	var outType snap.Target
	have := false
	for _, fd := range binds {
		if fd.How == record.TypeNone {
			if !typedAt[fd.At] {
				return Decl{}, false
			}
			continue
		}
		var r Decl
		var ok bool
		if fd.How == record.TypeExpr {
			// self.conn = conn: the type of what was assigned, where it was.
			r, ok = ty.ExprDecl(g, g.EnclosingAt(fd.At), fd.At, ExprOf(g, fd.X), depth+1)
			if ok {
				r.Ev = evidence(name, r.Text, "field set from "+fd.Type, g, fd.Line) + "; " + r.Ev
			}
		} else {
			r, ok = ty.CalleeResult(g, g.EnclosingAt(fd.At), fd.At, fd.Type, ExprOf(g, fd.X), depth+1)
			if ok && r.ctor {
				r.Ev = evidence(name, r.Text, "field set to "+fd.Type+"()", g, fd.Line)
			} else if ok {
				r.Ev = evidence(name, r.Text, "field set to "+fd.Type+"()", g, fd.Line) + "; " + r.Ev
			}
			r.ctor = false
		}
		if !ok {
			return Decl{}, false
		}
		if len(binds) == 1 {
			return r, true
		}
		tr := ty.ResolveDecl(r)
		var t snap.Target
		switch {
		case len(tr.Types) == 1:
			t = tr.Types[0]
		case len(tr.Types) > 0 || tr.Builtin == "":
			return Decl{}, false
		}
		if have && (t != outType || tr.Builtin != out.Text && t.File == nil) {
			return Decl{}, false
		}
		if !have {
			out, outType, have = r, t, true
			if t.File == nil {
				out.Text = tr.Builtin
			}
		}
	}
	return out, have
}

// sameResult says the functions ts are variants of one (one package's
// files) declaring the same result type.
func sameResult(ts []snap.Target) bool {
	for _, t := range ts {
		d, d0 := t.D(), ts[0].D()
		if !record.FunctionLike(d.Kind) || d.Type == "" || d.Type != d0.Type || d.Container != d0.Container || t.File.Dir != ts[0].File.Dir || t.File.Package != ts[0].File.Package {
			return false
		}
	}
	return true
}

// embeddedAs says fd is a type embedded under the field name name (an
// embedded *pkg.T is field T).
func embeddedAs(f *snap.Entry, fd *record.Field, name string) bool {
	if fd.Name != "" || !f.Lang.EmbeddedNamed {
		return false
	}
	_, n := TypeName(Decl{Text: fd.Type, t: fd.T, in: f})
	return n == name
}

// laterResult is the type of result n (0-based, n > 0) of calling callee:
// ctx, span := trace.StartSpan(...) makes span the second result.
func (ty *Reader) laterResult(f *snap.Entry, encl, at int32, callee string, cx ExprRef, n int, name, rel string, line int32, depth int) (Decl, bool) {
	d, ok := ty.CalleeResult(f, encl, at, callee, cx, depth+1)
	if !ok || d.ctor || d.Bases {
		return Decl{}, false
	}
	item, _, ok := itemOf(d, n)
	if !ok {
		return Decl{}, false
	}
	d.Text, d.t = item.Text, item.t
	d.Ev = name + " is " + d.Text + ": result " + strconv.Itoa(n+1) + " of " + callee + ", " + rel + ":" + strconv.Itoa(int(line)) + "; " + d.Ev
	return d, true
}

// agreedLocal is the type of a local bound several times in its
// innermost scope (ctx := req.Context(), then ctx, cancel :=
// context.WithCancel(ctx)) when every binding's type, followed, names the
// same definitions.
func (ty *Reader) agreedLocal(f *snap.Entry, encl, at int32, name string, depth int) (Decl, bool) {
	ls := f.InnermostLocals(name, encl, at)
	if len(ls) < 2 {
		return Decl{}, false
	}
	var first Decl
	var want []snap.Target
	for k, l := range ls {
		if l.How == record.TypeNone {
			return Decl{}, false
		}
		d, ok := ty.localType(f, encl, l, name, depth+1)
		if !ok {
			return Decl{}, false
		}
		ts := slices.Clone(ty.ResolveDecl(d).Types)
		if len(ts) == 0 {
			return Decl{}, false
		}
		outcome.SortTargets(ts)
		if k == 0 {
			first, want = d, ts
			continue
		}
		if !slices.Equal(ts, want) {
			return Decl{}, false
		}
	}
	first.Ev += "; every binding of " + name + " in its scope says so"
	return first, true
}

// typeParamIn is d, or, when d names a type parameter of the function
// encl (or of one around it) in f, the interface constraining it; ok is
// false for a type parameter constrained otherwise (T ~int | ~string,
// or a method's T, whose constraint is the type's).
func (ty *Reader) typeParamIn(f *snap.Entry, encl, at int32, d Decl) (Decl, bool) {
	if d.in != f {
		return d, true
	}
	q, n := TypeName(d)
	if q != "" || n == "" {
		return d, true
	}
	for e, k := encl, 0; e >= 0 && k < 16; e, k = f.Outer(e), k+1 {
		for _, i := range f.LocalsNamed(n) {
			l := &f.Locals[i]
			if l.Encl != e || l.At > at {
				continue
			}
			if l.How != record.TypeTypeParam {
				return Decl{}, false
			}
			return ty.constraint(f, d, n, f.Strs[l.Type], l.T)
		}
	}
	return d, true
}

// fieldTypeParam is fieldOf's d for a field of type tn, or the constraint
// of tn's type parameter it names (type Box[T I] struct{ v T }).
func (ty *Reader) fieldTypeParam(g *snap.Entry, tn string, d Decl) (Decl, bool) {
	q, n := TypeName(d)
	if q != "" || n == "" {
		return d, true
	}
	for i := range g.Fields {
		if fd := &g.Fields[i]; fd.How == record.TypeTypeParam && fd.Container == tn && fd.Name == n {
			return ty.constraint(g, d, n, fd.Type, fd.T)
		}
	}
	return d, true
}

// constraint types a value of type parameter n by its constraint, when
// that names interfaces only: a call on it runs the interface's method.
func (ty *Reader) constraint(f *snap.Entry, d Decl, n, text string, t int32) (Decl, bool) {
	c := Decl{Text: text, t: t, in: f, Ev: d.Ev + "; " + n + " is a type parameter constrained by " + text}
	ts := ty.ResolveDecl(c).Types
	if len(ts) == 0 {
		return Decl{}, false
	}
	for _, t := range ts {
		if t.D().Kind != "interface" {
			return Decl{}, false
		}
	}
	return c, true
}

// typeParamNamed says whether type text (as written) names a type
// parameter bound in definition e: its own, or one its receiver's type
// arguments bind.
func typeParamNamed(f *snap.Entry, e int32, d Decl) bool {
	q, n := TypeName(d)
	if q != "" || n == "" {
		return false
	}
	for _, i := range f.LocalsNamed(n) {
		if f.Locals[i].Encl == e && f.Locals[i].How == record.TypeTypeParam {
			return true
		}
	}
	return false
}
