package graph

import (
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// A definition whose name is on a later line than where it starts
// (X.prototype.m =⏎ function m() {) is found by name on that line too, as
// on its first; a line of its body that does not name it still is not.
func TestLocateNameOnLaterLine(t *testing.T) {
	x := buildFixture(t, txtar.Parse([]byte(`-- a.js --
function X() {}

X.prototype.render =
  function render(a) {
    return a;
  };
`)))
	for _, c := range []struct {
		file, sym string
		line      int
		want      string
	}{
		{"a.js", "render", 3, "X.render"},
		{"a.js", "render", 4, "X.render"},
		{"a.js", "X.render", 4, "X.render"},
	} {
		a, err := x.Callers(Spec{File: c.file, Symbol: c.sym, Line: c.line}, 0)
		if err != nil {
			t.Errorf("%s:%d %s: %v", c.file, c.line, c.sym, err)
			continue
		}
		if a.Symbol == nil || a.Symbol.Qualified != c.want {
			t.Errorf("%s:%d %s: located %+v, want %s", c.file, c.line, c.sym, a.Symbol, c.want)
		}
	}
	if _, err := x.Callers(Spec{File: "a.js", Symbol: "render", Line: 5}, 0); err == nil {
		t.Errorf("a.js:5 render (the body, not naming it) was located")
	}
}
