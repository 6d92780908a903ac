package resolve

import (
	"strings"

	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/graph/resolve/outcome"
	"github.com/builtin-tools/builtin-tools/graph/resolve/types"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// Calls on a receiver whose declared type the types package follows.

// viaType resolves recv.name when recv's type is declared. ok is false
// when the declaration leads nowhere the index can follow; hint is then
// the declared type's definitions, which rank first among candidates.
//
// A call the declared type dispatches where the index cannot see (an
// interface declared outside it, a method an interface takes from one, an
// interface's function-valued property) lists the methods of that name
// as candidates, saying so, never nothing.
func (rv *Resolver) viaType(f *snap.Entry, r *record.Ref, recv, name string, want func(*record.Def) bool, lazy bool) (res outcome.Resolution, hint []snap.Target, ok bool) {
	d, found := rv.ty.ExprDecl(f, r.Encl, r.At, types.ExprOf(f, r.X), 0)
	if !found {
		return outcome.Resolution{}, nil, false
	}
	tr := rv.ty.ResolveDecl(d)
	if len(tr.Types) == 0 {
		if fields, ok := types.FieldsOf(d); ok {
			// A struct written in place: the members of what it embeds.
			if tr.Types = rv.ty.EmbeddedTypes(d, fields); len(tr.Types) > 0 {
				d.Ev += "; it embeds " + tr.Types[0].Qualified()
			}
		}
	}
	switch {
	case len(tr.Types) > 0:
	case tr.Builtin != "":
		res := outcome.Resolution{Class: lang.Unresolved, Why: "builtin (" + d.Ev + ")"}
		if r.Kind == record.RefCall && f.Lang.Implements == "method_set" {
			// Go's builtin types with methods are interfaces (err.Error()):
			// too common to list as candidates, counted by callers.
			res.Dispatch, res.DispatchBuiltin = types.ShortType(d.Text), true
		}
		return res, nil, true
	case tr.External != "":
		res := outcome.Resolution{Class: lang.Unresolved, Why: "external: " + tr.External + " (" + d.Ev + ")"}
		if text := strings.TrimSpace(d.Text); r.Kind == record.RefCall && f.Lang.Implements == "method_set" && !types.Pointer(d) {
			// A value (not a pointer) of a type outside the index may be
			// an interface a type of the index satisfies: io.Writer.
			// types.Named like the method, as Go names its interfaces
			// (io.Writer and Write, io.ReadCloser and Close), its call is
			// listed with the methods it may run; else (net.Conn,
			// sync.Mutex: an interface or not) callers count it as
			// dispatch it may miss.
			if namedForMethod(types.EmbeddedName(d), name) {
				note := d.Ev + "; " + types.ShortType(text) + " is declared outside the index (" + tr.External + "): if an interface, a call through it may run this"
				return rv.dispatch(lazy, f, r, name, nil, note, res), nil, true
			}
			res.Dispatch = types.ShortType(text)
		}
		return res, nil, true
	case len(tr.Types) == 0:
		return outcome.Resolution{}, nil, false
	}
	ms, _, ext := rv.ty.MembersExt(tr.Types, name, func(e *record.Def) bool { return want(e) && e.Member() }, 0)
	if len(ms) == 0 {
		iface := rv.AnyInterface(tr.Types)
		switch {
		case r.Kind == record.RefCall && rv.ty.HasField(tr.Types, name):
			res := outcome.Resolution{Class: lang.Unresolved, Why: "a field holding a function value (" + d.Ev + ")"}
			if iface.Def >= 0 {
				// observer.error(err), error a function-valued property
				// of interface Observer: a class implementing it runs
				// its method.
				note := d.Ev + "; " + name + " is a function-valued property of interface " + iface.D().Name + ": an object conforming to it may run this"
				return rv.dispatch(lazy, f, r, name, rv.DeclaredImplementers(iface), note, res), nil, true
			}
			return res, nil, true
		case ext != "":
			res := outcome.Resolution{Class: lang.Unresolved, Why: "inherited from " + ext + ", outside the index (" + d.Ev + ")"}
			if r.Kind == record.RefCall && iface.Def >= 0 {
				note := d.Ev + "; " + name + " comes from " + ext + ", outside the index, through interface " + iface.D().Name + ": a call through it may run this"
				return rv.dispatch(lazy, f, r, name, nil, note, res), nil, true
			}
			return res, nil, true
		}
		if r.Kind == record.RefCall {
			// C's s->ops->write(): the functions stored in the field.
			if fns, why := rv.ty.StoredFuncs(tr.Types, name); len(fns) > 0 {
				reasons := make([]string, len(fns))
				for i := range fns {
					reasons[i] = d.Ev + "; " + why[i]
				}
				return outcome.Resolution{Class: lang.Candidate, Targets: fns, Reasons: reasons}, nil, true
			}
		}
		return outcome.Resolution{}, tr.Types, false
	}
	ms = outcome.InVariant(f, ms)
	reason := d.Ev
	if len(ms) != 1 {
		reasons := make([]string, len(ms))
		for i := range reasons {
			reasons[i] = reason + "; one of " + itoa(len(ms)) + " with this name"
		}
		return outcome.Resolution{Class: lang.Candidate, Targets: ms, Reasons: reasons}, nil, true
	}
	res = outcome.Resolution{Class: lang.Exact, Targets: ms, Reason: reason}
	if !d.Bases { // super.m() runs the base's m, not an override
		res.Impls = rv.Implementations(ms[0])
		if rv.InterfaceMethod(ms[0]) {
			res.Class = lang.Interface
		}
	}
	return res, nil, true
}

// superCall resolves super(...) inside a method of encl's class: the
// nearest base's constructor, else the base class itself.
func (rv *Resolver) superCall(f *snap.Entry, r *record.Ref, encl *record.Def) (outcome.Resolution, bool) {
	d := types.Named(encl.Container, f, types.Decl{Ev: "super is a base of " + encl.Container, Bases: true})
	tr := rv.ty.ResolveDecl(d)
	if len(tr.Types) == 0 {
		if tr.External != "" {
			return outcome.Resolution{Class: lang.Unresolved, Why: "external: " + tr.External + " (" + d.Ev + ")"}, true
		}
		return outcome.Resolution{}, false
	}
	isCtor := func(e *record.Def) bool { return e.Kind == "constructor" || e.Name == f.Lang.Constructor && e.Member() }
	for _, b := range tr.Types {
		ms, _ := rv.ty.MembersOf([]snap.Target{b}, f.Lang.Constructor, isCtor, 0)
		if len(ms) == 1 {
			return outcome.Resolution{Class: lang.Exact, Targets: ms, Reason: d.Ev}, true
		}
	}
	if len(tr.Types) == 1 {
		return outcome.Resolution{Class: lang.Exact, Targets: tr.Types, Reason: d.Ev}, true
	}
	return outcome.Resolution{}, false
}

// moduleTypeMembers finds members called name of the class recv names
// as mod.Type (import pkg.widgets as W; W.Widget.__init__(self)), nearest
// first through its bases.
func (rv *Resolver) moduleTypeMembers(f *snap.Entry, r *record.Ref, recv, name string, want func(*record.Def) bool) []snap.Target {
	xr := types.ExprOf(f, r.X)
	p := types.NamePath(f, xr)
	if len(p) < 2 {
		return nil
	}
	mod, tn := f.Strs[xr.Steps(f)[xr.K-2].Text], p[len(p)-1]
	if f.Bound(types.FirstSegment(recv), r.Encl, r.At) {
		return nil
	}
	files, _, bound := rv.ModuleBinding(f, mod)
	if !bound || files == nil {
		return nil
	}
	classes := outcome.InVariant(f, rv.ExportedBy(files, tn, func(d *record.Def) bool { return record.ClassLike(d.Kind) && !d.Member() }))
	if len(classes) != 1 {
		return nil
	}
	ms, _ := rv.ty.MembersOf(classes, name, func(e *record.Def) bool { return want(e) && e.Member() }, 0)
	return ms
}

// assignedHint lists the classes a field receiver (self.h) is assigned
// when its assignments do not agree on one type (self.h = Handler() in
// one method, self.h = h in another): a hint for ranking, never an edge.
func (rv *Resolver) assignedHint(f *snap.Entry, r *record.Ref, recv string) []snap.Target {
	xr := types.ExprOf(f, r.X)
	st := xr.Steps(f)
	if len(st) < 2 || st[len(st)-1].Op != record.SField {
		return nil
	}
	name := f.Strs[st[len(st)-1].Name]
	cur, ok := rv.ty.ExprDecl(f, r.Encl, r.At, xr.Prefix(), 0)
	if !ok {
		return nil
	}
	level := rv.ty.ResolveDecl(cur).Types
	seen := map[snap.Target]bool{}
	var out []snap.Target
	for d := 0; d <= types.MaxDepth && len(level) > 0 && len(out) == 0; d++ {
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
				var v types.Decl
				var ok bool
				if fd.How == record.TypeExpr {
					v, ok = rv.ty.ExprDecl(g, g.EnclosingAt(fd.At), fd.At, types.ExprOf(g, fd.X), 1)
				} else {
					v, ok = rv.ty.CalleeResult(g, g.EnclosingAt(fd.At), fd.At, fd.Type, types.ExprOf(g, fd.X), 1)
				}
				if ok {
					out = append(out, rv.ty.ResolveDecl(v).Types...)
				}
			}
			bs, _ := rv.ty.Bases(t)
			next = append(next, bs...)
		}
		level = next
	}
	return out
}

// namedForMethod says whether a type's name is how Go names an interface
// with that method: the method itself (net.Error's Error), or an agent
// noun made of it (io.Writer, io.ReadWriteCloser's Write, fmt.Stringer),
// not any name holding it (sync.WaitGroup's Wait).
func namedForMethod(typ, method string) bool {
	return typ == method || strings.Contains(typ, method) && strings.HasSuffix(typ, "er")
}
