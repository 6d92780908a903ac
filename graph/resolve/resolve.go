package resolve

import (
	"slices"
	"strconv"
	"strings"

	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/graph/resolve/outcome"
	"github.com/builtin-tools/builtin-tools/graph/resolve/types"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// Resolve decides one reference of f (r may be a copy of one of f.Refs
// with another Kind).
func (rv *Resolver) Resolve(f *snap.Entry, r *record.Ref) outcome.Resolution {
	return rv.throughVariable(f, r, conversion(f, r, rv.resolveAt(f, r, false)))
}

// ResolveLazy decides one reference, leaving a name-only resolution's
// candidates unranked (Resolution.Pending): callers ranks only the one it
// asks about.
func (rv *Resolver) ResolveLazy(f *snap.Entry, r *record.Ref) outcome.Resolution {
	return rv.throughVariable(f, r, conversion(f, r, rv.resolveAt(f, r, true)))
}

// conversion marks a call that leads only to types, in a language where
// calling a type converts to it.
func conversion(f *snap.Entry, r *record.Ref, res outcome.Resolution) outcome.Resolution {
	if r.Kind != record.RefCall || !f.Lang.Conversions || len(res.Targets) == 0 {
		return res
	}
	for _, t := range res.Targets {
		if !record.ClassLike(t.D().Kind) {
			return res
		}
	}
	res.Conversion = true
	return res
}

// resolveAt decides one reference; lazy leaves a name-only resolution's
// candidates unranked (Resolution.Pending).
func (rv *Resolver) resolveAt(f *snap.Entry, r *record.Ref, lazy bool) outcome.Resolution {
	name := f.RefName(r)
	l := f.Lang
	want := func(d *record.Def) bool {
		switch r.Kind {
		case record.RefType:
			return record.ClassLike(d.Kind)
		case record.RefValue:
			return record.FunctionLike(d.Kind)
		case record.RefRead:
			return d.Kind == "getter"
		}
		return true
	}
	var encl *record.Def
	if r.Encl >= 0 {
		encl = &f.Defs[r.Encl]
	}
	if res, ok := valueCall(l, r, name); ok {
		return res
	}
	if r.Recv == 0 {
		// cls(): the class method's own class, constructed.
		if ts := rv.ty.ClassSelf(f, r.Encl, r.At, name); len(ts) > 0 && r.Kind == record.RefCall {
			return outcome.Settle(f, lang.Exact, ts, "the method's class")
		}
		// A local of the enclosing function hides every other definition.
		if f.BoundAround(name, r.Encl, r.At) {
			return rv.localCall(f, r, name)
		}
		// An implicit this: a member of the enclosing class hides the
		// file's names (C++'s class scope comes before its namespace's).
		if encl != nil && encl.Container != "" && l.ImplicitSelf {
			// (new C() names the class, not its constructor.)
			if ts := rv.InScope(f, name, func(d *record.Def) bool { return want(d) && d.Container == encl.Container && d.Kind != "constructor" }); len(ts) > 0 {
				return outcome.Settle(f, lang.Exact, ts, "same class")
			}
		}
		// super(...): the constructor of the enclosing class's base.
		if slices.Contains(l.Super, name) && encl != nil && encl.Container != "" {
			if res, ok := rv.superCall(f, r, encl); ok {
				return res
			}
		}
		// The file's own top-level definitions.
		if ts := outcome.Pick(f, name, func(d *record.Def) bool { return want(d) && !d.Member() }); len(ts) > 0 {
			return outcome.Settle(f, lang.Exact, ts, "same file")
		}
		if res, ok := rv.ViaNameImport(f, name, want); ok {
			return res
		}
		if res, ok := rv.ViaModuleValue(f, name, want); ok {
			return res
		}
		if res, ok := rv.ViaStarImport(f, name, want); ok {
			return res
		}
		if l.Scope == "directory" {
			if ts := rv.InScope(f, name, func(d *record.Def) bool { return want(d) && !d.Member() }); len(ts) > 0 {
				return outcome.Settle(f, lang.Exact, ts, "same package")
			}
		}
		if res, ok := rv.ViaIncludes(f, name, want); ok {
			return res
		}
		if l.IsBuiltin(name) {
			return outcome.Resolution{Class: lang.Unresolved, Why: "builtin"}
		}
		return rv.byName(lazy, f, r, func(d *record.Def) bool { return want(d) && !d.Member() })
	}
	recv := f.RefReceiver(r)
	// self.m(), this.m(), or a Go method's own receiver; an arrow
	// function's this is the one of the method around it.
	self := encl
	if encl != nil && encl.Self == record.LexicalSelf && l.IsSelf(recv) && !f.Rebound(recv, r.Encl, r.At) {
		if o := f.Outer(r.Encl); o >= 0 && f.Defs[o].Container != "" && record.FunctionLike(f.Defs[o].Kind) {
			self = &f.Defs[o]
		}
	}
	if self != nil && self.Container != "" && (l.IsSelf(recv) || (self.Self != "" && recv == self.Self)) && !f.Rebound(recv, r.Encl, r.At) {
		if ts := rv.InScope(f, name, func(d *record.Def) bool { return want(d) && d.Container == self.Container }); len(ts) > 0 {
			return outcome.Settle(f, lang.Exact, ts, "same class")
		}
	}
	// this.m() in an object literal's own method: this is the literal.
	// Which literal is told by position only (the records hold no
	// literal's extent: two literals passed to two calls in a row look
	// like one), so the edge is a candidate ranked alone, never exact.
	if encl != nil && encl.Container == "" && encl.Kind == "method" && l.IsSelf(recv) && !f.Rebound(recv, r.Encl, r.At) {
		if ts := literalMethods(f, r.Encl, name, want); len(ts) == 1 {
			return outcome.Resolution{Class: lang.Candidate, Targets: ts, Reasons: []string{"this is the object literal the method is in, told by the method's position (same column, nothing declared between)"}}
		}
	}
	// A receiver whose type the source declares: a method of that type
	// (or of what it embeds or extends).
	res, hint, typed := rv.viaType(f, r, recv, name, want, lazy)
	if typed {
		return res
	}
	// A receiver that is a local variable or parameter names a value whose
	// type the index does not know, whatever package or type shares its
	// name.
	if hint != nil || f.BoundAround(types.FirstSegment(recv), r.Encl, r.At) {
		// self.h set to a Handler() in one method and to a parameter in
		// another: Handler's methods rank first, the call staying a
		// candidate.
		if hint == nil {
			if soft := rv.assignedHint(f, r, recv); len(soft) > 0 {
				return rv.byNameHow(lazy, f, r, rv.membersElseModules(l, name, want), soft, "the receiver is assigned a ")
			}
		}
		return rv.byNameHint(lazy, f, r, rv.membersElseModules(l, name, want), hint)
	}
	// exports.f() inside its own module.
	if slices.Contains(l.ModuleSelf, recv) && !f.Bound(types.FirstSegment(recv), r.Encl, r.At) {
		if ts := outcome.Pick(f, name, func(d *record.Def) bool { return want(d) && !d.Member() && !d.Local }); len(ts) > 0 {
			return outcome.Settle(f, lang.Exact, ts, "this module's own")
		}
	}
	// pkg.F() through an import of a module.
	if files, module, bound := rv.ModuleBinding(f, recv); bound {
		if files == nil {
			return outcome.Resolution{Class: lang.Unresolved, Why: "external: " + module}
		}
		if ts := rv.ExportedBy(files, name, want); len(ts) > 0 {
			return outcome.Settle(f, lang.Exact, ts, "qualified import")
		}
		return outcome.Resolution{Class: lang.Unresolved, Why: "no " + name + " in " + module}
	}
	// ns::f(), Geo.area(): a namespace or module named by the receiver.
	if res, ok := rv.NamespaceMember(f, recv, name, want); ok {
		return res
	}
	// Type.M(): a class named by the receiver.
	if ts := rv.TypeMembers(f, recv, name, want); len(ts) > 0 {
		return outcome.Settle(f, lang.Exact, ts, "member of "+recv)
	}
	// mod.Type.M(): a class of an imported module, and what it extends.
	if ts := rv.moduleTypeMembers(f, r, recv, name, want); len(ts) > 0 {
		return outcome.Settle(f, lang.Exact, ts, "member of "+recv)
	}
	// console.log(), Math.max(), Vec::new(): an object the language
	// defines, unless the file defines that name itself.
	// super().m() (Python's super is a builtin) is a parent class's m: by
	// name, below.
	if first := types.FirstSegment(recv); l.IsBuiltin(first) && !strings.HasPrefix(recv, "super(") && len(outcome.Pick(f, first, func(*record.Def) bool { return true })) == 0 {
		return outcome.Resolution{Class: lang.Unresolved, Why: "builtin"}
	}
	return rv.byName(lazy, f, r, rv.membersElseModules(l, name, want))
}

// membersElseModules is the filter of a receiver call's candidates: the
// members of that name, or, when the language has none, its module-level
// functions, where a variable may hold a module (m = mod; m.f()).
func (rv *Resolver) membersElseModules(l *lang.Language, name string, want func(*record.Def) bool) func(*record.Def) bool {
	member := func(d *record.Def) bool { return want(d) && d.Member() }
	if !l.ModuleValues {
		return member
	}
	for _, id := range rv.s.Tables(l).Defs.Get(name) {
		g := rv.s.ByID(id)
		if len(outcome.Pick(g, name, member)) > 0 {
			return member
		}
	}
	return func(d *record.Def) bool { return want(d) && record.FunctionLike(d.Kind) && !d.Member() && !d.Local }
}

// literalMethods lists the methods named name of the object literal
// whose method e is (const o = {m() {}, n() { this.m() }}): methods with
// no class around them whose innermost enclosing definition is e's, with
// nothing else of that definition declared between the two (const p =
// {run() {…}}; const q = {helper() {…}} in one function are two
// literals), written on lines of their own at e's column (a literal
// nested in a property, sub: {n() {…}}, is indented further; one written
// on one line is left to the ranking).
func literalMethods(f *snap.Entry, e int32, name string, want func(*record.Def) bool) []snap.Target {
	// Each definition's innermost enclosing one, in one pass (Defs are by
	// start, outer first): a stack of those around the last one.
	par := make([]int32, len(f.Defs))
	stack := make([]int32, 0, 8)
	for i := range f.Defs {
		d := &f.Defs[i]
		for len(stack) > 0 {
			if p := &f.Defs[stack[len(stack)-1]]; p.Start <= d.Start && d.End <= p.End {
				break
			}
			stack = stack[:len(stack)-1]
		}
		par[i] = -1
		if len(stack) > 0 {
			par[i] = stack[len(stack)-1]
		}
		stack = append(stack, int32(i))
	}
	parent := func(i int32) int32 { return par[i] }
	literal := func(d *record.Def) bool { return d.Kind == "method" && d.Container == "" }
	pe := parent(e)
	var out []snap.Target
	for _, i := range f.DefsNamed(name) {
		d := &f.Defs[i]
		if i == e || !literal(d) || !want(d) || parent(i) != pe || d.Col != f.Defs[e].Col || d.Line == f.Defs[e].Line {
			continue
		}
		lo, hi := min(d.End, f.Defs[e].End), max(d.Start, f.Defs[e].Start)
		apart := false
		for k := range f.Defs {
			if o := &f.Defs[k]; int32(k) != i && int32(k) != e && lo <= o.Start && o.Start < hi && !literal(o) && parent(int32(k)) == pe {
				apart = true
				break
			}
		}
		for k := range f.Locals {
			if lc := &f.Locals[k]; lc.Encl == pe && lo <= lc.At && lc.At < hi {
				apart = true
				break
			}
		}
		if !apart {
			out = append(out, snap.Target{File: f, Def: i})
		}
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
