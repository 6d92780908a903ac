package graph

import (
	"slices"
	"sort"
	"strconv"

	"github.com/builtin-tools/builtin-tools/graph/lang"
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
	if d := s.encl.D(); d.Kind == "variable" && !d.Member() && !d.Local && d.How == lang.TypeExpr &&
		d.Line == int32(s.Line) && resolve.HeldText(d.Type) == s.Call {
		out = v.variableCalls(t, s.encl)
	}
	seen := map[string]bool{}
	for i := range g.Locals {
		lc := &g.Locals[i]
		if lc.Line != int32(s.Line) || lc.How != lang.TypeExpr || resolve.HeldText(g.Strs[lc.Type]) != s.Call {
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
			if r.Kind != lang.RefCall || r.Recv != 0 || r.At < e.Start || r.At >= e.End {
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
			if r.Kind != lang.RefCall {
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
func aliasHolder(g *snap.Entry, r *lang.Ref) int32 {
	if r.Kind != lang.RefValue || r.Encl < 0 {
		return -1
	}
	h := &g.Defs[r.Encl]
	if h.Kind != "variable" || h.Member() || h.Local || h.How != lang.TypeExpr || h.Line != r.Line {
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

// passedCalls are the calls of t through a parameter of the function it
// is passed to, at value use s (G(F), G calls its parameter f): F runs
// there whenever that caller calls G. The callee must be resolved for
// sure (exact or import) to one function; each call of the parameter in
// its body, not shadowed by a closure's own, is a candidate that impact
// walks on from (other callers of G may pass something else). Python's
// self (a method's first parameter, named by "self") takes no argument of
// a call on a receiver.
func (v View) passedCalls(t snap.Target, s Site) []Site {
	g := s.fileRef
	if g == nil {
		return nil
	}
	r := &g.Refs[s.ri]
	if r.Arg == 0 || r.Kind != lang.RefValue {
		return nil
	}
	i := sort.Search(len(g.Refs), func(i int) bool { return g.Refs[i].At >= r.ArgOf() })
	if i == len(g.Refs) || g.Refs[i].At != r.ArgOf() || g.Refs[i].Kind != lang.RefCall {
		return nil
	}
	call := &g.Refs[i]
	res := v.R.Resolve(g, call)
	if res.Class != lang.Exact && res.Class != lang.ViaImport || len(res.Targets) != 1 {
		return nil
	}
	callee := res.Targets[0]
	cf, cd := callee.File, callee.D()
	if !lang.FunctionLike(cd.Kind) {
		return nil
	}
	place := int(r.Arg)
	param := -1
	if r.Arg == lang.ArgByName {
		// g(fn=F): the parameter of that name.
		for _, j := range cf.LocalsNamed(g.Strs[r.Key]) {
			if lc := &cf.Locals[j]; lc.Encl == callee.Def && lc.Param > 0 {
				param = j
				break
			}
		}
	} else {
		for j := range cf.Locals {
			if lc := &cf.Locals[j]; lc.Encl == callee.Def && lc.Param == 1 && call.Recv != 0 && cd.Member() && cf.Lang.IsSelf(cf.Strs[lc.Name]) {
				place++
				break
			}
		}
		for j := range cf.Locals {
			if lc := &cf.Locals[j]; lc.Encl == callee.Def && int(lc.Param) == place {
				param = j
				break
			}
		}
	}
	if param < 0 {
		return nil
	}
	p := &cf.Locals[param]
	name := cf.Strs[p.Name]
	var out []Site
	for _, ci := range cf.RefsNamed(name) {
		c := &cf.Refs[ci]
		if c.Kind != lang.RefCall || c.Recv != 0 || c.At < cd.Start || c.At >= cd.End || !v.holdsParam(cf, c, callee.Def, p) {
			continue
		}
		site := v.site(cf, ci)
		site.Class, site.Rank, site.Of, site.passed = Candidate, 1, 1, true
		site.Reason = "a call of " + callee.Qualified() + "'s parameter " + name + ", to which " + s.In + " (" + s.File + ":" + strconv.Itoa(s.Line) + ") passes " + t.Qualified()
		out = append(out, site)
	}
	return out
}

// holdsParam says whether the name c calls is parameter p of definition
// e there: not bound again by a closure on the way, nor in an inner block.
func (v View) holdsParam(f *snap.Entry, c *lang.Ref, e int32, p *lang.Local) bool {
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
