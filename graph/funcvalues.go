package graph

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/graph/resolve"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// heldCalls are the calls of t through a local bound to it at value use
// s (f := G; f(); h = self.save; h()): the resolver leads a call of such
// a local to t, and callers lists it as callees does. Its references are
// named by the local, not by t, so they are found from the binding.
func (v View) heldCalls(t snap.Target, s Site) []Site {
	g := s.fileRef
	if g == nil || !s.hasEncl {
		return nil
	}
	var out []Site
	if d := s.encl.D(); d.Kind == "variable" && !d.Member() && !d.Local && d.How == record.TypeExpr &&
		d.Line == int32(s.Line) && resolve.HeldText(d.Type) == s.Call {
		out = v.variableCalls(t, s.encl)
	}
	seen := map[string]bool{}
	for i := range g.Locals {
		lc := &g.Locals[i]
		if lc.Line != int32(s.Line) || lc.How != record.TypeExpr || resolve.HeldText(g.Strs[lc.Type]) != s.Call {
			continue
		}
		name := g.Strs[lc.Name]
		if seen[name] {
			continue
		}
		seen[name] = true
		e := &g.Defs[lc.Encl]
		for _, ri := range g.RefsNamed(name) {
			r := &g.Refs[ri]
			if r.Kind != record.RefCall || r.Recv != 0 || r.At < e.Start || r.At >= e.End {
				continue
			}
			res := v.R.Resolve(g, r)
			for _, u := range res.Targets {
				if u == t {
					c := v.site(g, ri)
					c.setClass(res, t)
					out = append(out, c)
					break
				}
			}
		}
	}
	return out
}

// variableCalls are the calls of t through the module-level variable
// holder set to it (var testHook = nop): every call named by the variable,
// in any file that may see it, that the resolver leads to t.
func (v View) variableCalls(t, holder snap.Target) []Site {
	var out []Site
	name := holder.D().Name
	for _, id := range v.refFiles(holder.File.Lang, name) {
		g := v.Snap.ByID(id)
		if g == nil {
			continue
		}
		for _, ri := range g.RefsNamed(name) {
			r := &g.Refs[ri]
			if r.Kind != record.RefCall {
				continue
			}
			res := v.R.Resolve(g, r)
			if slices.Contains(res.Targets, t) {
				c := v.site(g, ri)
				c.setClass(res, t)
				out = append(out, c)
			}
		}
	}
	return out
}

// aliasHolder is the module-level variable value use r (of a class's
// name) is the one value of (Alias = Store), or -1: in a language where
// calling a class constructs it, a call of the variable constructs the
// class, which a value reference does not lead to, so callersOf finds the
// binding from the class's references (and variableCalls the calls).
func aliasHolder(g *snap.Entry, r *record.Ref) int32 {
	if r.Kind != record.RefValue || r.Encl < 0 {
		return -1
	}
	h := &g.Defs[r.Encl]
	if h.Kind != "variable" || h.Member() || h.Local || h.How != record.TypeExpr || h.Line != r.Line {
		return -1
	}
	text := g.RefName(r)
	if r.Recv != 0 {
		text = g.RefReceiver(r) + "." + text
	}
	if resolve.HeldText(h.Type) != text {
		return -1
	}
	return r.Encl
}

// passDepth bounds how many times a function passed to a known callee is
// followed as the callee hands its parameter on (Outer(f) calls Middle(f),
// which calls Inner(f), which calls f): each hand-on is one more.
const passDepth = 4

// passedCalls are the calls of t through a parameter of the function it
// is passed to, at value use s (G(F), G calls its parameter f): F runs
// there whenever that caller calls G. The callee must be resolved for
// sure (exact or import) to one function; each call of the parameter in
// its body, not shadowed by a closure's own, is a candidate that impact
// walks on from (other callers of G may pass something else). Where the
// callee hands the parameter on to another known callee (G passes its f
// to H), the walk goes on there, up to passDepth callees deep; on are
// those hand-on places, value uses of t through a parameter. reached says
// whether the value at s was followed anywhere.
func (v View) passedCalls(t snap.Target, s Site) (calls, on []Site, reached bool) {
	g := s.fileRef
	if g == nil {
		return nil, nil, false
	}
	r := &g.Refs[s.ri]
	if r.Kind != record.RefValue {
		return nil, nil, false
	}
	seen := map[snap.Target]bool{}
	reached = v.passOn(g, r, s.In+" ("+s.File+":"+strconv.Itoa(s.Line)+") passes "+t.Qualified(), 0, seen, &calls, &on)
	return calls, on, reached
}

// passOn follows value r of file g (the definition, or a parameter
// holding it) into
// the callee it is passed to: the callee's calls of that parameter go to
// calls, and its places that pass the parameter on to on and further.
// how says who passed it there, for the sites' reasons.
func (v View) passOn(g *snap.Entry, r *record.Ref, how string, depth int, seen map[snap.Target]bool, calls, on *[]Site) bool {
	callee, p, ok := v.passedParam(g, r)
	if !ok || seen[callee] {
		return false
	}
	seen[callee] = true
	cf, cd := callee.File, callee.D()
	name := cf.Strs[p.Name]
	reached := false
	for _, ci := range cf.RefsNamed(name) {
		c := &cf.Refs[ci]
		if c.Recv != 0 || c.At < cd.Start || c.At >= cd.End || !v.holdsParam(cf, c, callee.Def, p) {
			continue
		}
		switch {
		case c.Kind == record.RefCall:
			site := v.site(cf, ci)
			site.Class, site.Rank, site.Of, site.passed = Candidate, 1, 1, true
			site.Reason = "a call of " + callee.Qualified() + "'s parameter " + name + ", to which " + how
			*calls = append(*calls, site)
			reached = true
		case c.Kind == record.RefValue && c.Arg != 0 && depth+1 < passDepth:
			// The callee hands its parameter on: followed into the next.
			next := callee.Qualified() + " hands its parameter " + name + " on, to which " + how
			if v.passOn(cf, c, next, depth+1, seen, calls, on) {
				site := v.site(cf, ci)
				site.Class, site.Rank, site.Of, site.passed, site.reached = Candidate, 1, 1, true, true
				site.Reason = next
				*on = append(*on, site)
				reached = true
			}
		}
	}
	// self.fn = fn in a constructor: its class's methods' calls of
	// self.fn.
	if isConstructor(cd, cf.Lang) && v.storedCalls(callee, p, how, calls) {
		reached = true
	}
	return reached
}

// passedParam is the callee value r is passed to, when resolved for sure
// (exact or import) to one function, and its parameter r is passed as.
// Python's self (a method's first parameter, named by "self") takes no
// argument of a call on an instance, but the first of a call on the class
// (Runner.apply(r, f)).
func (v View) passedParam(g *snap.Entry, r *record.Ref) (snap.Target, *record.Local, bool) {
	if r.Arg == 0 || r.Kind != record.RefValue {
		return snap.Target{}, nil, false
	}
	i := sort.Search(len(g.Refs), func(i int) bool { return g.Refs[i].At >= r.ArgOf() })
	if i == len(g.Refs) || g.Refs[i].At != r.ArgOf() || g.Refs[i].Kind != record.RefCall {
		return snap.Target{}, nil, false
	}
	call := &g.Refs[i]
	res := v.R.Resolve(g, call)
	if res.Class != lang.Exact && res.Class != lang.ViaImport || len(res.Targets) != 1 {
		return snap.Target{}, nil, false
	}
	callee := res.Targets[0]
	cf, cd := callee.File, callee.D()
	if record.ClassLike(cd.Kind) {
		// Job(f), new Job(f): its constructor's parameter.
		c, ok := constructorOf(callee)
		if !ok {
			return snap.Target{}, nil, false
		}
		callee, cd = c, c.D()
	}
	if !record.FunctionLike(cd.Kind) {
		return snap.Target{}, nil, false
	}
	place := int(r.Arg)
	if r.Arg == record.ArgByName {
		// g(fn=F): the parameter of that name.
		for _, j := range cf.LocalsNamed(g.ArgKey(r)) {
			if lc := &cf.Locals[j]; lc.Encl == callee.Def && lc.Param > 0 {
				return callee, lc, true
			}
		}
		return snap.Target{}, nil, false
	}
	if (call.Recv != 0 || isConstructor(cd, cf.Lang)) && cd.Member() && !unbound(g, call, cd) {
		for j := range cf.Locals {
			if lc := &cf.Locals[j]; lc.Encl == callee.Def && lc.Param == 1 && cf.Lang.IsSelf(cf.Strs[lc.Name]) {
				place++
				break
			}
		}
	}
	for j := range cf.Locals {
		if lc := &cf.Locals[j]; lc.Encl == callee.Def && int(lc.Param) == place {
			return callee, lc, true
		}
	}
	return snap.Target{}, nil, false
}

// isConstructor says whether d is a class's constructor (__init__,
// constructor).
func isConstructor(d *record.Def, l *lang.Language) bool {
	return d.Container != "" && d.Member() && (d.Kind == "constructor" || d.Name == l.Constructor)
}

// constructorOf is class c's own constructor, defined in its file.
func constructorOf(c snap.Target) (snap.Target, bool) {
	f, cd := c.File, c.D()
	for i := range f.Defs {
		if d := &f.Defs[i]; d.Container == cd.Name && d.Start >= cd.Start && d.End <= cd.End && isConstructor(d, f.Lang) {
			return snap.Target{File: f, Def: int32(i)}, true
		}
	}
	return snap.Target{}, false
}

// storedCalls adds the calls of the fields constructor ctor sets to its
// parameter p (self.fn = fn, this.fn = fn): a call
// of self.fn (this.fn) in a method of the same class may run what was
// passed (another instance may hold another function), a candidate.
func (v View) storedCalls(ctor snap.Target, p *record.Local, how string, calls *[]Site) bool {
	f, cd := ctor.File, ctor.D()
	name := f.Strs[p.Name]
	reached := false
	for i := range f.Fields {
		fd := &f.Fields[i]
		if fd.Container == cd.Container && fd.How == record.TypeExpr && fd.Type == name && fd.At >= cd.Start && fd.At < cd.End &&
			slices.Contains(f.InnermostLocals(name, ctor.Def, fd.At), p) && v.fieldCalls(ctor, fd.Name, name, how, calls) {
			reached = true
		}
	}
	return reached
}

// fieldCalls adds the calls of self.field in the methods of constructor
// ctor's class.
func (v View) fieldCalls(ctor snap.Target, field, name, how string, calls *[]Site) bool {
	f, cd := ctor.File, ctor.D()
	reached := false
	for _, ci := range f.RefsNamed(field) {
		r := &f.Refs[ci]
		if r.Kind != record.RefCall || r.Recv == 0 || r.Encl < 0 || !f.Lang.IsSelf(f.RefReceiver(r)) {
			continue
		}
		if m := &f.Defs[r.Encl]; m.Container != cd.Container || !m.Member() || !record.FunctionLike(m.Kind) {
			continue
		}
		site := v.site(f, ci)
		site.Class, site.Rank, site.Of, site.passed = Candidate, 1, 1, true
		site.Reason = "a call of " + cd.Container + "." + field + ", which " + ctor.Qualified() + " sets to its parameter " + name + ", to which " + how
		*calls = append(*calls, site)
		reached = true
	}
	return reached
}

// unbound says whether call (resolved to method d) is made on d's class
// by its name (Runner.apply(r, f)), not on an instance: a receiver that
// names the class and is no local of the caller.
func unbound(g *snap.Entry, call *record.Ref, d *record.Def) bool {
	recv := g.RefReceiver(call)
	if recv != d.Container && !strings.HasSuffix(d.Container, "."+recv) {
		return false
	}
	return !g.BoundAround(recv, call.Encl, call.At)
}

// holdsParam says whether the name c calls is parameter p of definition
// e there: not bound again by a closure on the way, nor in an inner block.
func (v View) holdsParam(f *snap.Entry, c *record.Ref, e int32, p *record.Local) bool {
	name := f.Strs[p.Name]
	for d, n := c.Encl, 0; d >= 0 && n < 16; d, n = f.Outer(d), n+1 {
		if d == e {
			return slices.Contains(f.InnermostLocals(name, e, c.At), p)
		}
		if f.Bound(name, d, c.At) {
			return false
		}
	}
	return false
}
