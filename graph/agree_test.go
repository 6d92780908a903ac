package graph

import (
	"slices"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// TestCalleesCallersAgree asks callees of every function and method of
// every fixture and checks that each exact or import edge it gives (calls,
// getters read, functions and methods passed as values) is among the
// callers of the definition it leads to, as a call or a value use: a .tsx
// file's call of a .ts function, Python's cls() in a class method, a
// method value obj.m.
func TestCalleesCallersAgree(t *testing.T) {
	eachArchive(t, "testdata/fixtures/*.txtar", func(t *testing.T, _ string, ar *txtar.Archive) {
		v := buildFixture(t, ar).view(0)
		for f := range v.Snap.Files() {
			for i := range f.Defs {
				d := &f.Defs[i]
				if d.Kind != "function" && d.Kind != "method" {
					continue
				}
				// The other way: what callers lists, callees of the
				// calling definition gives.
				if c, err := Callers(v, Spec{File: f.Rel, Line: int(d.Line), Symbol: d.Name}); err == nil && len(c.Candidates) == 0 {
					for i, s := range slices.Concat(c.Sites, c.Values) {
						value := i >= len(c.Sites)
						if s.Class != Exact && s.Class != ViaImport || !s.hasEncl {
							continue
						}
						from := symbolOf(s.encl)
						b, err := Callees(v, Spec{File: from.File, Line: from.Line, Symbol: from.Name})
						if err != nil || len(b.Candidates) > 0 {
							continue
						}
						list, what := b.Sites, "call"
						if value {
							list, what = b.Values, "value use"
						}
						if !slices.ContainsFunc(list, func(o Site) bool { return o.File == s.File && o.Line == s.Line }) {
							t.Errorf("callers of %s: %s:%d %s is an %s %s in %s, but callees of %s do not list it among its %ss", d.Name, s.File, s.Line, s.Call, s.Class, what, from.Qualified, from.Qualified, what)
						}
					}
				}
				a, err := Callees(v, Spec{File: f.Rel, Line: int(d.Line), Symbol: d.Name})
				if err != nil || len(a.Candidates) > 0 {
					continue
				}
				for i, s := range slices.Concat(a.Sites, a.Values) {
					value := i >= len(a.Sites)
					if s.Class != Exact && s.Class != ViaImport {
						continue
					}
					to := s.Targets[0]
					c, err := Callers(v, Spec{File: to.File, Line: to.Line, Symbol: to.Name})
					if err != nil {
						t.Errorf("callers of %s (%s:%d), which %s:%d calls: %v", to.Qualified, to.File, to.Line, s.File, s.Line, err)
						continue
					}
					if len(c.Candidates) > 0 {
						continue // two definitions on the line (a one-line class and its method)
					}
					list, what := c.Sites, "call"
					if value {
						list, what = c.Values, "value use"
					}
					found := false
					for _, cs := range list {
						found = found || cs.File == s.File && cs.Line == s.Line
					}
					if !found {
						t.Errorf("callees of %s: %s:%d %s is an %s %s of %s (%s:%d), but callers of it do not list the site among its %ss", d.Name, s.File, s.Line, s.Call, s.Class, what, to.Qualified, to.File, to.Line, what)
					}
				}
			}
		}
	})
}
