package graph

import (
	"slices"

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

// aliasCalls are the calls of class t through a module-level variable set
// to it (Alias = Store; Alias()) in a language where calling a class
// constructs it: the name is a value there, which a value reference does
// not lead to a class, so the binding is found from t's name.
func (v View) aliasCalls(t snap.Target) []Site {
	d := t.D()
	if !lang.ClassLike(d.Kind) || t.File.Lang.Conversions {
		return nil
	}
	var out []Site
	for _, id := range v.refFiles(t.File.Lang, d.Name) {
		g := v.Snap.ByID(id)
		for _, ri := range g.RefsNamed(d.Name) {
			r := &g.Refs[ri]
			if r.Kind != lang.RefValue || r.Encl < 0 {
				continue
			}
			h := &g.Defs[r.Encl]
			if h.Kind != "variable" || h.Member() || h.Local || h.How != lang.TypeExpr || h.Line != r.Line {
				continue
			}
			text := g.RefName(r)
			if r.Recv != 0 {
				text = g.RefReceiver(r) + "." + text
			}
			if resolve.HeldText(h.Type) == text {
				out = append(out, v.variableCalls(t, snap.Target{File: g, Def: r.Encl})...)
			}
		}
	}
	return out
}
