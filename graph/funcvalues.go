package graph

import (
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
