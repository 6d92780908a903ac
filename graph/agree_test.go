package graph

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// TestCalleesCallersAgree asks callees of every function and method of
// every fixture and checks that each exact or import edge it gives is
// among the callers of the definition it leads to: a .tsx file's call of a
// .ts function, Python's cls() in a class method.
func TestCalleesCallersAgree(t *testing.T) {
	paths, err := filepath.Glob("testdata/fixtures/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(p)
			if err != nil {
				t.Fatal(err)
			}
			v := buildFixture(t, ar).view(0)
			for f := range v.Snap.Files() {
				for i := range f.Defs {
					d := &f.Defs[i]
					if d.Kind != "function" && d.Kind != "method" {
						continue
					}
					a, err := Callees(v, Spec{File: f.Rel, Line: int(d.Line), Symbol: d.Name})
					if err != nil || len(a.Candidates) > 0 {
						continue
					}
					for _, s := range a.Sites {
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
						found := false
						for _, cs := range c.Sites {
							found = found || cs.File == s.File && cs.Line == s.Line
						}
						if !found {
							t.Errorf("callees of %s: %s:%d %s is %s to %s (%s:%d), but callers of it do not list the site", d.Name, s.File, s.Line, s.Call, s.Class, to.Qualified, to.File, to.Line)
						}
					}
				}
			}
		})
	}
}
