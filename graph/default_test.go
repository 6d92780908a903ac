package graph

import "testing"

// callers of an ES default export count the sites that call it under the
// name a default import gives it.
func TestCallersOfDefaultExport(t *testing.T) {
	x := fixture(t, "typescript_default")
	for _, c := range []struct {
		symbol, file string
		line         int
	}{{"makeThing", "b.ts", 8}, {"helper", "b.ts", 12}, {"Widget", "b.ts", 10}} {
		a, err := x.Callers(Spec{Symbol: c.symbol}, 0)
		if err != nil {
			t.Fatalf("callers %s: %v", c.symbol, err)
		}
		found := false
		for _, s := range a.Sites {
			if s.File == c.file && s.Line == c.line && s.Class == ViaImport {
				found = true
			}
		}
		if !found {
			t.Errorf("callers %s: no import site at %s:%d; sites %+v", c.symbol, c.file, c.line, a.Sites)
		}
	}
}

// Definitions lists every definition of the view, by file and line (what
// measurement programs pick targets from).
func TestDefinitions(t *testing.T) {
	x := fixture(t, "go_types")
	v := x.view(0)
	defs := Definitions(v)
	n := 0
	for f := range v.Snap.Files() {
		n += len(f.Defs)
	}
	if len(defs) != n || n == 0 {
		t.Fatalf("%d definitions listed, the snapshot holds %d", len(defs), n)
	}
	for i := 1; i < len(defs); i++ {
		if a, b := defs[i-1], defs[i]; a.File > b.File || a.File == b.File && a.Line > b.Line {
			t.Fatalf("not by file and line: %+v before %+v", a, b)
		}
	}
}
