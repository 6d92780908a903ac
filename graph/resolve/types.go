package resolve

import (
	"slices"
	"strings"

	"github.com/builtin-tools/builtin-tools/graph/lang"
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

// typeReader follows declared types to the definitions they name, in
// one snapshot, looking names up as the file they are written in sees
// them (sc). It keeps nothing: what it reads is the records'.
type typeReader struct {
	s  *snap.Snapshot
	sc *scope.Scopes
}

// declType is a type as the source writes it, and where.
type declType struct {
	text string      // as written: *store.Store, []*Conn, Optional[Foo]
	t    int32       // its tree in in's record (1-based); 0: read text
	in   *snap.Entry // the file whose names it is written in
	// named: a type named by a receiver's name path (T.M, pkg.T.M): qual
	// and name, read instead of text.
	named      bool
	qual, name string
	ev         string // the evidence, for the edge's reason
	// bases: the type's bases, not the type (super.m()).
	bases bool
	ctor  bool // a constructor call made it (Foo())
}

// typeRef is what a declared type names.
type typeRef struct {
	types    []snap.Target // the class-like definitions (several: variants, duplicates)
	external string        // a module outside the index it comes from
	builtin  string        // a type the language defines
}

// maxTypeDepth bounds chains (a.b.c), result types followed and base
// classes walked.
const maxTypeDepth = 12

// literalField is the type of field name of a value of a struct type
// written in place (cur), or of a type it embeds.
func (ty *typeReader) literalField(cur declType, fields []record.TreeField, name string, depth int) (declType, bool) {
	for _, fd := range fields {
		d := declType{text: fd.Type, t: fd.T, in: cur.in}
		if fd.Name == name || fd.Name == "" && embeddedName(d) == name {
			d.ev = cur.ev + "; " + name + " is " + shortType(fd.Type) + ": a field of its struct"
			return d, true
		}
	}
	if ts := ty.embeddedTypes(cur, fields); len(ts) > 0 {
		next, ok := ty.fieldOf(ts, name, depth)
		if ok {
			next.ev = cur.ev + "; " + next.ev
		}
		return next, ok
	}
	return declType{}, false
}

// embeddedTypes are the types a struct written in place embeds.
func (ty *typeReader) embeddedTypes(cur declType, fields []record.TreeField) []snap.Target {
	var out []snap.Target
	for _, fd := range fields {
		if fd.Name == "" {
			out = append(out, ty.resolveDecl(declType{text: fd.Type, t: fd.T, in: cur.in}).types...)
		}
	}
	return out
}

// embeddedName is the field name an embedded type d is known by (an
// embedded *pkg.T is field T).
func embeddedName(d declType) string {
	_, n := typeName(d)
	return n
}

func evidence(expr, text, how string, f *snap.Entry, line int32) string {
	return expr + " is " + shortType(text) + ": " + how + ", " + f.Rel + ":" + itoa(int(line))
}

// shortType is a type's text for a reason: a long one (a struct written
// in place) cut at a word, with an ellipsis.
func shortType(text string) string {
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

// exprDecl is the declared type of a receiver expression (x, self.x,
// s.conn.buf, s.Conn(), xs[i]) at byte offset at inside definition encl,
// read from its steps; an expression not read as steps has none.
func (ty *typeReader) exprDecl(f *snap.Entry, encl, at int32, xs xref, depth int) (declType, bool) {
	if xs.x <= 0 {
		return declType{}, false
	}
	return ty.stepDecl(f, encl, at, xs, depth)
}

// fieldNamed is the type of field name of a value of type cur.
func (ty *typeReader) fieldNamed(cur declType, name string, depth int) (declType, bool) {
	tr := ty.resolveDecl(cur)
	if len(tr.types) == 0 {
		fields, ok := fieldsOf(cur)
		if !ok {
			return declType{}, false
		}
		return ty.literalField(cur, fields, name, depth+1)
	}
	next, ok := ty.fieldOf(tr.types, name, depth+1)
	if !ok {
		return declType{}, false
	}
	next.ev = cur.ev + "; " + next.ev
	return next, true
}

// nameDecl is the declared type of a name (a receiver, self, a local, a
// variable of the module) at byte offset at inside definition encl.
func (ty *typeReader) nameDecl(f *snap.Entry, encl, at int32, expr string, depth int) (declType, bool) {
	var ed *record.Def
	if encl >= 0 {
		ed = &f.Defs[encl]
	}
	if ed != nil && ed.Container != "" && slices.Contains(f.Lang.Super, expr) {
		return named(ed.Container, f, declType{ev: expr + " is a base of " + ed.Container, bases: true}), true
	}
	if ed != nil && ed.Container != "" && (f.Lang.IsSelf(expr) || ed.Self == expr) && !f.Rebound(expr, encl, at) && !boundLocal(f, expr, encl, at, ed) {
		return named(ed.Container, f, declType{ev: expr + " is " + ed.Container + ": the method's receiver"}), true
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
				return named(od.Container, f, declType{ev: expr + " is " + od.Container + ": the receiver of " + od.Name + ", around this closure"}), true
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
			return declType{}, false
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
func (ty *typeReader) localType(f *snap.Entry, encl int32, lc *record.Local, name string, depth int) (declType, bool) {
	text := f.Strs[lc.Type]
	// What it is bound to is read before the binding: o := o, b :=
	// b.Next() name the earlier o and b.
	before := lc.At - 1
	switch lc.How {
	case record.TypeCall2, record.TypeCall3:
		return ty.laterResult(f, encl, before, text, exprOf(f, lc.X), int(lc.How-record.TypeCall2)+1, name, f.Rel, lc.Line, depth)
	case record.TypeCall:
		d, ok := ty.calleeResult(f, encl, before, text, exprOf(f, lc.X), depth+1)
		if !ok {
			return declType{}, false
		}
		if first, items, ok := itemOf(d, 0); ok && items > 1 {
			// x, err := f() with f() (path []dlist, ok bool): the first.
			d.text, d.t = first.text, first.t
		}
		if d.ctor && !strings.Contains(text, ".") {
			d.ev = evidence(name, d.text, "constructed", f, lc.Line)
		} else {
			d.ev = name + " is " + d.text + ": result of " + text + ", " + f.Rel + ":" + itoa(int(lc.Line)) + "; " + d.ev
		}
		d.ctor = false
		return d, true
	case record.TypeExpr:
		inner, ok := ty.exprDecl(f, encl, before, exprOf(f, lc.X), depth+1)
		if !ok {
			return declType{}, false
		}
		inner.ev = name + " = " + text + ", " + f.Rel + ":" + itoa(int(lc.Line)) + "; " + inner.ev
		return inner, true
	case record.TypeElem, record.TypeKey:
		inner, ok := ty.exprDecl(f, encl, before, exprOf(f, lc.X), depth+1)
		if !ok {
			return declType{}, false
		}
		of, how := elemOf, "element of "
		if lc.How == record.TypeKey {
			of, how = keyOf, "ranged over "
		}
		p, ok := of(inner)
		if !ok {
			return declType{}, false
		}
		p.ev = evidence(name, p.text, how+text, f, lc.Line) + "; " + inner.ev
		return p, true
	case record.TypeField:
		return ty.destructuredField(f, lc, name, text)
	case record.TypeResult:
		// A function value: what calling it returns is no type of its own.
		return declType{}, false
	}
	return declType{text: text, t: lc.T, in: f, ev: evidence(name, text, record.HowText[lc.How], f, lc.Line)}, true
}

// destructuredField is the type of a parameter destructured from a
// declared type ({gen}: Cxt): Cxt's field gen.
func (ty *typeReader) destructuredField(f *snap.Entry, lc *record.Local, name, text string) (declType, bool) {
	tr := ty.resolveDecl(declType{text: text, t: lc.T, in: f})
	if len(tr.types) == 0 {
		return declType{}, false
	}
	d, ok := ty.fieldOf(tr.types, name, 1)
	if !ok {
		return declType{}, false
	}
	d.ev = evidence(name, d.text, "destructured from "+text, f, lc.Line) + "; " + d.ev
	return d, true
}

// calleeResult is the type a call of callee (f, pkg.New, x.Make) yields:
// the class it constructs, or the function's declared result type.
//
// cx, when set, is the callee's steps, read instead of its text.
func (ty *typeReader) calleeResult(f *snap.Entry, encl, at int32, callee string, cx xref, depth int) (declType, bool) {
	if depth > maxTypeDepth {
		return declType{}, false
	}
	callee = strings.TrimSpace(callee)
	recv, name := "", callee
	var rx xref // recv's steps
	if st := cx.steps(f); len(st) > 0 {
		switch last := st[len(st)-1]; {
		case last.Op == record.SName && len(st) == 1:
			name = f.Strs[last.Name]
		case last.Op == record.SField:
			rx = cx.prefix()
			recv, name = f.Strs[st[len(st)-2].Text], f.Strs[last.Name]
		default:
			return declType{}, false
		}
	} else {
		return declType{}, false // not read as steps
	}
	if !record.IsIdent(name) {
		return declType{}, false
	}
	fnOrType := func(d *record.Def) bool { return record.FunctionLike(d.Kind) || record.ClassLike(d.Kind) }
	var ts []snap.Target
	via := "" // the receiver's evidence
	switch {
	case recv == "":
		if cs := ty.classSelf(f, encl, at, name); len(cs) > 0 {
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
				return ty.heldFuncResult(v.File, -1, v.D().Start, name, v.D().Type, exprOf(v.File, v.D().X), v.D().Line, depth)
			}
		}
	default:
		if files, _, bound := ty.sc.ModuleBinding(f, recv); bound && !f.Bound(FirstSegment(recv), encl, at) {
			ts = ty.sc.ExportedBy(files, name, fnOrType)
			break
		}
		d, ok := ty.exprDecl(f, encl, at, rx, depth+1)
		if !ok {
			if tr := ty.resolveDecl(namedType(f, recv, rx)); len(tr.types) > 0 && !f.Bound(FirstSegment(recv), encl, at) {
				ts, _ = ty.membersOf(tr.types, name, fnOrType, depth+1)
			}
			break
		}
		if tr := ty.resolveDecl(d); len(tr.types) > 0 {
			ts, _ = ty.membersOf(tr.types, name, fnOrType, depth+1)
			via = d.ev + "; "
		}
	}
	ts = outcome.InVariant(f, ts)
	if len(ts) == 0 && recv == "" && f.Lang.IsBuiltin(name) && !f.Bound(name, encl, at) {
		// str(x), open(p): a value of a type the language defines.
		return named(name, f, declType{ev: callee + "() is builtin"}), true
	}
	if len(ts) > 1 && sameResult(ts) {
		// NewFile in file_unix.go and file_windows.go: variants that say
		// the same.
		ts = ts[:1]
	}
	if len(ts) != 1 {
		return declType{}, false
	}
	t := ts[0]
	d := t.D()
	if record.ClassLike(d.Kind) {
		return named(d.Name, t.File, declType{ev: via + callee + " constructs " + d.Name, ctor: true}), true
	}
	if d.Type == "" {
		r, ok := ty.inferredResult(t, depth+1)
		if !ok {
			return declType{}, false
		}
		r.ev = via + t.Qualified() + " returns " + r.text + " (all its return statements), " + t.File.Rel + ":" + itoa(int(d.Line)) + "; " + r.ev
		r.ctor = false
		return r, true
	}
	if typeParamNamed(t.File, t.Def, declType{text: d.Type, t: d.T, in: t.File}) {
		// func Id[T I](x T) T: the result is the caller's T.
		return declType{}, false
	}
	return declType{text: d.Type, t: d.T, in: t.File, ev: via + t.Qualified() + " returns " + d.Type + ", " + t.File.Rel + ":" + itoa(int(d.Line))}, true
}

// localFuncResult is what a call of the local function value name
// returns: the result of the literal it is bound to, of its declared
// function type (a parameter f func() *T), or of the function it was
// set to (f := strings.ToUpper).
func (ty *typeReader) localFuncResult(f *snap.Entry, encl, at int32, name string, depth int) (declType, bool) {
	for e, n := encl, 0; e >= 0 && n < 16; e, n = f.Outer(e), n+1 {
		lc := f.LocalDecl(name, e, at)
		if lc == nil {
			if f.Bound(name, e, at) {
				return declType{}, false
			}
			continue
		}
		d := declType{text: f.Strs[lc.Type], t: lc.T, in: f}
		switch lc.How {
		case record.TypeResult:
		case record.TypeDeclared, record.TypeParam:
			r, ok := funcResultOf(d)
			if !ok {
				return declType{}, false
			}
			d = r
		case record.TypeExpr:
			// f := strings.ToUpper: a call of f is a call of what it holds.
			return ty.heldFuncResult(f, e, lc.At-1, name, d.text, exprOf(f, lc.X), lc.Line, depth)
		default:
			return declType{}, false
		}
		d.ev = name + " returns " + d.text + ": " + record.HowText[lc.How] + ", " + f.Rel + ":" + itoa(int(lc.Line))
		return d, true
	}
	return declType{}, false
}

// heldFuncResult is what a call of name returns when name was set to the
// expression held (in g, before at): a call of that.
func (ty *typeReader) heldFuncResult(g *snap.Entry, encl, at int32, name, held string, hx xref, line int32, depth int) (declType, bool) {
	d, ok := ty.calleeResult(g, encl, at, held, hx, depth+1)
	if !ok || d.bases {
		return declType{}, false
	}
	d.ev = name + " = " + held + ", " + g.Rel + ":" + itoa(int(line)) + "; " + d.ev
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
func (ty *typeReader) inferredResult(t snap.Target, depth int) (declType, bool) {
	g, d := t.File, t.D()
	if depth > maxTypeDepth || !record.FunctionLike(d.Kind) || g.Bound(yieldLocal, t.Def, d.End) {
		return declType{}, false
	}
	lc := g.LocalDecl(returnLocal, t.Def, d.End)
	if lc == nil {
		return declType{}, false
	}
	return ty.localType(g, t.Def, lc, "the value returned", depth)
}

// resolveDecl finds the class-like definitions a declared type names.
func (ty *typeReader) resolveDecl(d declType) typeRef {
	tr := ty.resolveDeclAll(d)
	if d.in != nil {
		// x_windows.go's T, not x_js.go's.
		tr.types = outcome.InVariant(d.in, tr.types)
	}
	return tr
}

func (ty *typeReader) resolveDeclAll(d declType) typeRef {
	if d.in == nil {
		return typeRef{}
	}
	if d.bases {
		d.bases = false
		var out []snap.Target
		ext := ""
		for _, t := range ty.resolveDecl(d).types {
			bs, e := ty.bases(t)
			out = append(out, bs...)
			if ext == "" {
				ext = e
			}
		}
		if len(out) == 0 && ext != "" {
			return typeRef{external: ext}
		}
		return typeRef{types: out}
	}
	l := d.in.Lang
	qual, name := typeName(d)
	if name == "" {
		return typeRef{}
	}
	isType := func(d *record.Def) bool { return record.ClassLike(d.Kind) }
	if qual == "" {
		if l.IsBuiltin(name) {
			return typeRef{builtin: name}
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
		return typeRef{types: ts, external: ext}
	}
	if files, module, bound := ty.sc.ModuleBinding(d.in, qual); bound {
		if files == nil {
			return typeRef{external: module}
		}
		return typeRef{types: ty.sc.TopLevelOf(files, name, isType)}
	}
	// Outer.Inner, ns::T: a type nested in a named one.
	if outer := ty.resolveDecl(qualifierType(qual, d.in)); len(outer.types) > 0 {
		var out []snap.Target
		for _, t := range outer.types {
			out = append(out, outcome.Pick(t.File, name, func(e *record.Def) bool { return isType(e) && e.Container == t.D().Name })...)
		}
		return typeRef{types: out}
	}
	if res, ok := ty.sc.NamespaceMember(d.in, qual, name, isType); ok {
		return typeRef{types: res.Targets}
	}
	return typeRef{}
}

// namedIn lists the files that may hold t's members (its own, or Go's
// package) and define name.
func (ty *typeReader) namedIn(t snap.Target, name string) []*snap.Entry {
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

// bases lists what a type embeds or extends, resolved; ext names one
// that is outside the index (a module's or the language's own). Fields
// and bases are declared with the type, in its file.
func (ty *typeReader) bases(t snap.Target) (out []snap.Target, ext string) {
	name := t.D().Name
	for _, g := range []*snap.Entry{t.File} {
		for i := range g.Fields {
			fd := &g.Fields[i]
			if fd.Name != "" || fd.Container != name {
				continue
			}
			tr := ty.resolveDecl(declType{text: fd.Type, t: fd.T, in: g})
			out = append(out, tr.types...)
			if len(tr.types) == 0 && ext == "" {
				ext = tr.external + tr.builtin
			}
		}
	}
	return out, ext
}

// membersOf finds members called name of the types, walking what they
// embed or extend nearest first; the second result is the type they were
// found on.
func (ty *typeReader) membersOf(types []snap.Target, name string, ok func(*record.Def) bool, depth int) ([]snap.Target, []snap.Target) {
	ms, on, _ := ty.membersExt(types, name, ok, depth)
	return ms, on
}

// membersExt is membersOf that also names a base outside the index met on
// the way (where a member not found may come from).
func (ty *typeReader) membersExt(types []snap.Target, name string, ok func(*record.Def) bool, depth int) ([]snap.Target, []snap.Target, string) {
	level := types
	seen := map[snap.Target]bool{}
	ext := ""
	for d := depth; d <= maxTypeDepth && len(level) > 0; d++ {
		var found, on, next []snap.Target
		for _, t := range level {
			if seen[t] {
				continue
			}
			seen[t] = true
			tn := t.D().Name
			for _, g := range ty.namedIn(t, name) {
				ms := outcome.Pick(g, name, func(e *record.Def) bool { return ok(e) && e.Container == tn && !record.ClassLike(e.Kind) })
				found = append(found, ms...)
				for range ms {
					on = append(on, t)
				}
			}
			bs, e := ty.bases(t)
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
func (ty *typeReader) fieldOf(types []snap.Target, name string, depth int) (declType, bool) {
	level := types
	seen := map[snap.Target]bool{}
	for d := depth; d <= maxTypeDepth && len(level) > 0; d++ {
		var next []snap.Target
		var found []declType
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
					ft, ok := ty.fieldTypeParam(g, tn, declType{text: fd.Type, t: fd.T, in: g, ev: evidence(name, fd.Type, "field of "+tn, g, fd.Line)})
					if !ok {
						return declType{}, false
					}
					found = append(found, ft)
				}
			}
			if len(found) == 0 && len(assigned) > 0 {
				// Set, not declared: what every assignment agrees on.
				return ty.assignedField(g, name, assigned, d)
			}
			bs, _ := ty.bases(t)
			next = append(next, bs...)
		}
		if len(found) > 0 {
			// Variants or duplicates of the type must agree.
			for _, o := range found[1:] {
				if o.text != found[0].text {
					return declType{}, false
				}
			}
			return found[0], true
		}
		level = next
	}
	return declType{}, false
}

// hasField says whether the types (or their bases) have a field name.
func (ty *typeReader) hasField(types []snap.Target, name string) bool {
	_, ok := ty.fieldOf(types, name, 0)
	return ok
}

// viaType resolves recv.name when recv's type is declared. ok is false
// when the declaration leads nowhere the index can follow; hint is then
// the declared type's definitions, which rank first among candidates.
//
// A call the declared type dispatches where the index cannot see (an
// interface declared outside it, a method an interface takes from one, an
// interface's function-valued property) lists the methods of that name
// as candidates, saying so, never nothing.
func (rv *Resolver) viaType(f *snap.Entry, r *record.Ref, recv, name string, want func(*record.Def) bool, lazy bool) (res outcome.Resolution, hint []snap.Target, ok bool) {
	d, found := rv.ty.exprDecl(f, r.Encl, r.At, exprOf(f, r.X), 0)
	if !found {
		return outcome.Resolution{}, nil, false
	}
	tr := rv.ty.resolveDecl(d)
	if len(tr.types) == 0 {
		if fields, ok := fieldsOf(d); ok {
			// A struct written in place: the members of what it embeds.
			if tr.types = rv.ty.embeddedTypes(d, fields); len(tr.types) > 0 {
				d.ev += "; it embeds " + tr.types[0].Qualified()
			}
		}
	}
	switch {
	case len(tr.types) > 0:
	case tr.builtin != "":
		res := outcome.Resolution{Class: lang.Unresolved, Why: "builtin (" + d.ev + ")"}
		if r.Kind == record.RefCall && f.Lang.Implements == "method_set" {
			// Go's builtin types with methods are interfaces (err.Error()):
			// too common to list as candidates, counted by callers.
			res.Dispatch, res.DispatchBuiltin = shortType(d.text), true
		}
		return res, nil, true
	case tr.external != "":
		res := outcome.Resolution{Class: lang.Unresolved, Why: "external: " + tr.external + " (" + d.ev + ")"}
		if text := strings.TrimSpace(d.text); r.Kind == record.RefCall && f.Lang.Implements == "method_set" && !pointer(d) {
			// A value (not a pointer) of a type outside the index may be
			// an interface a type of the index satisfies: io.Writer.
			// Named like the method, as Go names its interfaces
			// (io.Writer and Write, io.ReadCloser and Close), its call is
			// listed with the methods it may run; else (net.Conn,
			// sync.Mutex: an interface or not) callers count it as
			// dispatch it may miss.
			if namedForMethod(embeddedName(d), name) {
				note := d.ev + "; " + shortType(text) + " is declared outside the index (" + tr.external + "): if an interface, a call through it may run this"
				return rv.dispatch(lazy, f, r, name, nil, note, res), nil, true
			}
			res.Dispatch = shortType(text)
		}
		return res, nil, true
	case len(tr.types) == 0:
		return outcome.Resolution{}, nil, false
	}
	ms, _, ext := rv.ty.membersExt(tr.types, name, func(e *record.Def) bool { return want(e) && e.Member() }, 0)
	if len(ms) == 0 {
		iface := rv.anyInterface(tr.types)
		switch {
		case r.Kind == record.RefCall && rv.ty.hasField(tr.types, name):
			res := outcome.Resolution{Class: lang.Unresolved, Why: "a field holding a function value (" + d.ev + ")"}
			if iface.Def >= 0 {
				// observer.error(err), error a function-valued property
				// of interface Observer: a class implementing it runs
				// its method.
				note := d.ev + "; " + name + " is a function-valued property of interface " + iface.D().Name + ": an object conforming to it may run this"
				return rv.dispatch(lazy, f, r, name, rv.declaredImplementers(iface), note, res), nil, true
			}
			return res, nil, true
		case ext != "":
			res := outcome.Resolution{Class: lang.Unresolved, Why: "inherited from " + ext + ", outside the index (" + d.ev + ")"}
			if r.Kind == record.RefCall && iface.Def >= 0 {
				note := d.ev + "; " + name + " comes from " + ext + ", outside the index, through interface " + iface.D().Name + ": a call through it may run this"
				return rv.dispatch(lazy, f, r, name, nil, note, res), nil, true
			}
			return res, nil, true
		}
		if r.Kind == record.RefCall {
			// C's s->ops->write(): the functions stored in the field.
			if fns, why := rv.ty.storedFuncs(tr.types, name); len(fns) > 0 {
				reasons := make([]string, len(fns))
				for i := range fns {
					reasons[i] = d.ev + "; " + why[i]
				}
				return outcome.Resolution{Class: lang.Candidate, Targets: fns, Reasons: reasons}, nil, true
			}
		}
		return outcome.Resolution{}, tr.types, false
	}
	ms = outcome.InVariant(f, ms)
	reason := d.ev
	if len(ms) != 1 {
		reasons := make([]string, len(ms))
		for i := range reasons {
			reasons[i] = reason + "; one of " + itoa(len(ms)) + " with this name"
		}
		return outcome.Resolution{Class: lang.Candidate, Targets: ms, Reasons: reasons}, nil, true
	}
	res = outcome.Resolution{Class: lang.Exact, Targets: ms, Reason: reason}
	if !d.bases { // super.m() runs the base's m, not an override
		res.Impls = rv.Implementations(ms[0])
		if rv.InterfaceMethod(ms[0]) {
			res.Class = lang.Interface
		}
	}
	return res, nil, true
}

// storedFuncs lists the functions a struct's initializers store in its
// field name (.write = file_write, @field with @type.expr naming a
// function), with why each: a call through the field may run any of
// them, and others set where the index does not see.
func (ty *typeReader) storedFuncs(types []snap.Target, name string) (fns []snap.Target, why []string) {
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
func (ty *typeReader) storedIn(g *snap.Entry, tn, name string, seen map[snap.Target]bool, fns []snap.Target, why []string) ([]snap.Target, []string) {
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
				why = append(why, fn+" is stored in "+tn+"."+name+", "+g.Rel+":"+itoa(int(fd.Line)))
			}
		}
	}
	return fns, why
}

// superCall resolves super(...) inside a method of encl's class: the
// nearest base's constructor, else the base class itself.
func (rv *Resolver) superCall(f *snap.Entry, r *record.Ref, encl *record.Def) (outcome.Resolution, bool) {
	d := named(encl.Container, f, declType{ev: "super is a base of " + encl.Container, bases: true})
	tr := rv.ty.resolveDecl(d)
	if len(tr.types) == 0 {
		if tr.external != "" {
			return outcome.Resolution{Class: lang.Unresolved, Why: "external: " + tr.external + " (" + d.ev + ")"}, true
		}
		return outcome.Resolution{}, false
	}
	isCtor := func(e *record.Def) bool { return e.Kind == "constructor" || e.Name == f.Lang.Constructor && e.Member() }
	for _, b := range tr.types {
		ms, _ := rv.ty.membersOf([]snap.Target{b}, f.Lang.Constructor, isCtor, 0)
		if len(ms) == 1 {
			return outcome.Resolution{Class: lang.Exact, Targets: ms, Reason: d.ev}, true
		}
	}
	if len(tr.types) == 1 {
		return outcome.Resolution{Class: lang.Exact, Targets: tr.types, Reason: d.ev}, true
	}
	return outcome.Resolution{}, false
}

func isTypedVar(d *record.Def) bool {
	return (d.Kind == "variable" || d.Kind == "constant") && d.Type != "" && !d.Member()
}

// varDecl is the declared type of the one variable ts holds.
func varDecl(expr string, ts []snap.Target) (declType, bool) {
	if len(ts) != 1 {
		return declType{}, false
	}
	d := ts[0].D()
	return declType{text: d.Type, t: d.T, in: ts[0].File, ev: evidence(expr, d.Type, "variable", ts[0].File, d.Line)}, true
}

// moduleTypeMembers finds members called name of the class recv names
// as mod.Type (import pkg.widgets as W; W.Widget.__init__(self)), nearest
// first through its bases.
func (rv *Resolver) moduleTypeMembers(f *snap.Entry, r *record.Ref, recv, name string, want func(*record.Def) bool) []snap.Target {
	xr := exprOf(f, r.X)
	p := namePath(f, xr)
	if len(p) < 2 {
		return nil
	}
	mod, tn := f.Strs[xr.steps(f)[xr.k-2].Text], p[len(p)-1]
	if f.Bound(FirstSegment(recv), r.Encl, r.At) {
		return nil
	}
	files, _, bound := rv.ModuleBinding(f, mod)
	if !bound || files == nil {
		return nil
	}
	types := outcome.InVariant(f, rv.ExportedBy(files, tn, func(d *record.Def) bool { return record.ClassLike(d.Kind) && !d.Member() }))
	if len(types) != 1 {
		return nil
	}
	ms, _ := rv.ty.membersOf(types, name, func(e *record.Def) bool { return want(e) && e.Member() }, 0)
	return ms
}

func isVar(d *record.Def) bool {
	return (d.Kind == "variable" || d.Kind == "constant") && !d.Member()
}

// instanceDecl is the type of the module variable ts hold when none is
// declared: what every binding of it in its module (@field.module,
// @field.global) agrees it was set to, a construction or a call whose
// result is known (_inst = Random()). Any other binding, an import or a
// definition of the name makes it unknown.
func (ty *typeReader) instanceDecl(expr string, ts []snap.Target, depth int) (declType, bool) {
	if len(ts) == 0 || depth > maxTypeDepth {
		return declType{}, false
	}
	g, name := ts[0].File, ts[0].D().Name
	for _, t := range ts {
		if t.File != g || t.D().Type != "" {
			return declType{}, false
		}
	}
	if len(outcome.Pick(g, name, func(d *record.Def) bool { return !isVar(d) && !d.Local })) > 0 {
		return declType{}, false
	}
	for _, im := range g.Imports {
		if im.Local == name {
			return declType{}, false
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
			return declType{}, false
		}
		set = fd
		typedAt[fd.At] = true
	}
	if set == nil {
		return declType{}, false
	}
	for i := range g.Fields {
		fd := &g.Fields[i]
		if fd.Container == "" && fd.Name == name && fd.How == record.TypeNone && !typedAt[fd.At] {
			return declType{}, false
		}
	}
	r, ok := ty.calleeResult(g, -1, set.At, set.Type, exprOf(g, set.X), depth+1)
	if !ok {
		return declType{}, false
	}
	if r.ctor {
		r.ev = evidence(expr, r.text, "module variable set to "+set.Type+"()", g, set.Line)
	} else {
		r.ev = evidence(expr, r.text, "module variable set to "+set.Type+"()", g, set.Line) + "; " + r.ev
	}
	r.ctor = false
	return r, true
}

// varType is varDecl that also follows a variable initialized by a call
// (var Stdout = NewFile(...)) to the callee's declared result.
func (ty *typeReader) varType(expr string, ts []snap.Target, depth int) (declType, bool) {
	if len(ts) == 1 && ts[0].D().How == record.TypeExpr {
		// var std = defaultLogger: the type of what it is set to.
		t := ts[0]
		d, ok := ty.exprDecl(t.File, -1, t.D().Start, exprOf(t.File, t.D().X), depth+1)
		if ok {
			d.ev = evidence(expr, d.text, "variable set to "+t.D().Type, t.File, t.D().Line) + "; " + d.ev
		}
		return d, ok
	}
	if len(ts) != 1 || ts[0].D().How != record.TypeCall && ts[0].D().How != record.TypeCall2 && ts[0].D().How != record.TypeCall3 {
		return varDecl(expr, ts)
	}
	t := ts[0]
	d := t.D()
	if d.How != record.TypeCall {
		return ty.laterResult(t.File, -1, d.Start, d.Type, exprOf(t.File, d.X), int(d.How-record.TypeCall2)+1, expr, t.File.Rel, d.Line, depth)
	}
	r, ok := ty.calleeResult(t.File, -1, d.Start, d.Type, exprOf(t.File, d.X), depth+1)
	if !ok {
		return declType{}, false
	}
	r.ev = evidence(expr, r.text, "variable set to "+d.Type+"()", t.File, d.Line) + "; " + r.ev
	r.ctor = false
	return r, true
}

// classSelf is the class a name like cls (language.json class_self) holds
// in a method of it: bound once there (its parameter), in a class that is
// no metaclass (whose cls would be another class).
func (ty *typeReader) classSelf(f *snap.Entry, encl, at int32, name string) []snap.Target {
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
func (ty *typeReader) isMetaclass(t snap.Target) bool {
	level := []snap.Target{t}
	seen := map[snap.Target]bool{}
	for d := 0; d <= maxTypeDepth && len(level) > 0; d++ {
		var next []snap.Target
		for _, c := range level {
			if seen[c] {
				continue
			}
			seen[c] = true
			for i := range c.File.Fields {
				fd := &c.File.Fields[i]
				if fd.Name == "" && fd.Container == c.D().Name {
					if _, n := typeName(declType{text: fd.Type, t: fd.T, in: c.File}); n == "type" {
						return true
					}
				}
			}
			bs, _ := ty.bases(c)
			next = append(next, bs...)
		}
		level = next
	}
	return false
}

// assignedField is the type of a field no declaration types, from its
// assignments (self.conn = conn, self.buf = Buffer()): each place that
// binds it must be typed and all must name the one same type.
func (ty *typeReader) assignedField(g *snap.Entry, name string, binds []*record.Field, depth int) (declType, bool) {
	typedAt := map[int32]bool{}
	for _, fd := range binds {
		if fd.How != record.TypeNone {
			typedAt[fd.At] = true
		}
	}
	var out declType
	var outType snap.Target
	have := false
	for _, fd := range binds {
		if fd.How == record.TypeNone {
			if !typedAt[fd.At] {
				return declType{}, false
			}
			continue
		}
		var r declType
		var ok bool
		if fd.How == record.TypeExpr {
			// self.conn = conn: the type of what was assigned, where it was.
			r, ok = ty.exprDecl(g, g.EnclosingAt(fd.At), fd.At, exprOf(g, fd.X), depth+1)
			if ok {
				r.ev = evidence(name, r.text, "field set from "+fd.Type, g, fd.Line) + "; " + r.ev
			}
		} else {
			r, ok = ty.calleeResult(g, g.EnclosingAt(fd.At), fd.At, fd.Type, exprOf(g, fd.X), depth+1)
			if ok && r.ctor {
				r.ev = evidence(name, r.text, "field set to "+fd.Type+"()", g, fd.Line)
			} else if ok {
				r.ev = evidence(name, r.text, "field set to "+fd.Type+"()", g, fd.Line) + "; " + r.ev
			}
			r.ctor = false
		}
		if !ok {
			return declType{}, false
		}
		if len(binds) == 1 {
			return r, true
		}
		tr := ty.resolveDecl(r)
		var t snap.Target
		switch {
		case len(tr.types) == 1:
			t = tr.types[0]
		case len(tr.types) > 0 || tr.builtin == "":
			return declType{}, false
		}
		if have && (t != outType || tr.builtin != out.text && t.File == nil) {
			return declType{}, false
		}
		if !have {
			out, outType, have = r, t, true
			if t.File == nil {
				out.text = tr.builtin
			}
		}
	}
	return out, have
}

// assignedHint lists the classes a field receiver (self.h) is assigned
// when its assignments do not agree on one type (self.h = Handler() in
// one method, self.h = h in another): a hint for ranking, never an edge.
func (rv *Resolver) assignedHint(f *snap.Entry, r *record.Ref, recv string) []snap.Target {
	xr := exprOf(f, r.X)
	st := xr.steps(f)
	if len(st) < 2 || st[len(st)-1].Op != record.SField {
		return nil
	}
	name := f.Strs[st[len(st)-1].Name]
	cur, ok := rv.ty.exprDecl(f, r.Encl, r.At, xr.prefix(), 0)
	if !ok {
		return nil
	}
	level := rv.ty.resolveDecl(cur).types
	seen := map[snap.Target]bool{}
	var out []snap.Target
	for d := 0; d <= maxTypeDepth && len(level) > 0 && len(out) == 0; d++ {
		var next []snap.Target
		for _, t := range level {
			if seen[t] {
				continue
			}
			seen[t] = true
			g := t.File
			for j := range g.Fields {
				fd := &g.Fields[j]
				if fd.Container != t.D().Name || fd.Name != name || fd.How != record.TypeCall && fd.How != record.TypeExpr {
					continue
				}
				var v declType
				var ok bool
				if fd.How == record.TypeExpr {
					v, ok = rv.ty.exprDecl(g, g.EnclosingAt(fd.At), fd.At, exprOf(g, fd.X), 1)
				} else {
					v, ok = rv.ty.calleeResult(g, g.EnclosingAt(fd.At), fd.At, fd.Type, exprOf(g, fd.X), 1)
				}
				if ok {
					out = append(out, rv.ty.resolveDecl(v).types...)
				}
			}
			bs, _ := rv.ty.bases(t)
			next = append(next, bs...)
		}
		level = next
	}
	return out
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
	_, n := typeName(declType{text: fd.Type, t: fd.T, in: f})
	return n == name
}

// laterResult is the type of result n (0-based, n > 0) of calling callee:
// ctx, span := trace.StartSpan(...) makes span the second result.
func (ty *typeReader) laterResult(f *snap.Entry, encl, at int32, callee string, cx xref, n int, name, rel string, line int32, depth int) (declType, bool) {
	d, ok := ty.calleeResult(f, encl, at, callee, cx, depth+1)
	if !ok || d.ctor || d.bases {
		return declType{}, false
	}
	item, _, ok := itemOf(d, n)
	if !ok {
		return declType{}, false
	}
	d.text, d.t = item.text, item.t
	d.ev = name + " is " + d.text + ": result " + itoa(n+1) + " of " + callee + ", " + rel + ":" + itoa(int(line)) + "; " + d.ev
	return d, true
}

// agreedLocal is the type of a local bound several times in its
// innermost scope (ctx := req.Context(), then ctx, cancel :=
// context.WithCancel(ctx)) when every binding's type, followed, names the
// same definitions.
func (ty *typeReader) agreedLocal(f *snap.Entry, encl, at int32, name string, depth int) (declType, bool) {
	ls := f.InnermostLocals(name, encl, at)
	if len(ls) < 2 {
		return declType{}, false
	}
	var first declType
	var want []snap.Target
	for k, l := range ls {
		if l.How == record.TypeNone {
			return declType{}, false
		}
		d, ok := ty.localType(f, encl, l, name, depth+1)
		if !ok {
			return declType{}, false
		}
		ts := slices.Clone(ty.resolveDecl(d).types)
		if len(ts) == 0 {
			return declType{}, false
		}
		SortTargets(ts)
		if k == 0 {
			first, want = d, ts
			continue
		}
		if !slices.Equal(ts, want) {
			return declType{}, false
		}
	}
	first.ev += "; every binding of " + name + " in its scope says so"
	return first, true
}

// typeParamIn is d, or, when d names a type parameter of the function
// encl (or of one around it) in f, the interface constraining it; ok is
// false for a type parameter constrained otherwise (T ~int | ~string,
// or a method's T, whose constraint is the type's).
func (ty *typeReader) typeParamIn(f *snap.Entry, encl, at int32, d declType) (declType, bool) {
	if d.in != f {
		return d, true
	}
	q, n := typeName(d)
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
				return declType{}, false
			}
			return ty.constraint(f, d, n, f.Strs[l.Type], l.T)
		}
	}
	return d, true
}

// fieldTypeParam is fieldOf's d for a field of type tn, or the constraint
// of tn's type parameter it names (type Box[T I] struct{ v T }).
func (ty *typeReader) fieldTypeParam(g *snap.Entry, tn string, d declType) (declType, bool) {
	q, n := typeName(d)
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
func (ty *typeReader) constraint(f *snap.Entry, d declType, n, text string, t int32) (declType, bool) {
	c := declType{text: text, t: t, in: f, ev: d.ev + "; " + n + " is a type parameter constrained by " + text}
	ts := ty.resolveDecl(c).types
	if len(ts) == 0 {
		return declType{}, false
	}
	for _, t := range ts {
		if t.D().Kind != "interface" {
			return declType{}, false
		}
	}
	return c, true
}

// typeParamNamed says whether type text (as written) names a type
// parameter bound in definition e: its own, or one its receiver's type
// arguments bind.
func typeParamNamed(f *snap.Entry, e int32, d declType) bool {
	q, n := typeName(d)
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
