package breakpoint

import (
	"slices"
	"testing"

	godap "github.com/google/go-dap"
)

// A line keeps its id and hits when set again; the adapter's answer binds
// each in request order; a stop counts hits by the adapter's ids when it
// gives them, else by where it landed; a one-shot breakpoint is never
// listed and goes with DropTemps.
func TestTableLines(t *testing.T) {
	tb := NewTable()
	if err := tb.Set("main.go", []LineSpec{{Line: 7}, {Line: 3, Condition: "i > 1"}}, nil, false); err != nil {
		t.Fatal(err)
	}
	tb.Bound("main.go", []godap.Breakpoint{{Id: 11, Verified: true, Line: 3}, {Id: 12, Verified: true, Line: 8}}, Support{})
	all := tb.All()
	if len(all) != 2 || all[0].ID != "b2" || all[0].Line != 3 || all[1].ID != "b1" || all[1].BoundLine != 8 || all[0].Unsupported != "condition" {
		t.Fatalf("bound: %+v", all)
	}
	if ids := tb.Hit([]int{12}, "", 0); !slices.Equal(ids, []string{"b1"}) {
		t.Errorf("hit by the adapter's id: %v", ids)
	}
	if ids := tb.Hit(nil, "main.go", 8); !slices.Equal(ids, []string{"b1"}) {
		t.Errorf("hit by place (the bound line): %v", ids)
	}
	if err := tb.Set("main.go", []LineSpec{{Line: 7, LogMessage: "x"}}, nil, false); err != nil {
		t.Fatal(err)
	}
	if all := tb.All(); all[1].ID != "b1" || all[1].Hits != 2 || all[1].LogMessage != "x" {
		t.Errorf("set again: %+v", all[1])
	}
	id, existed := tb.AddTemp("main.go", 7)
	if id != "b1" || !existed {
		t.Errorf("a one-shot on a line with a breakpoint: %s %v", id, existed)
	}
	id, existed = tb.AddTemp("util.go", 2)
	if existed || len(tb.All()) != 2 || !slices.Equal(tb.Files(), []string{"main.go", "util.go"}) {
		t.Errorf("one-shot %s: listed %+v, files %v", id, tb.All(), tb.Files())
	}
	tb.DropTemps()
	if !slices.Equal(tb.Files(), []string{"main.go"}) {
		t.Errorf("after DropTemps: %v", tb.Files())
	}
	tb.Reset(true)
	if ids := tb.Hit([]int{12}, "", 0); len(ids) != 0 || tb.All()[1].Hits != 0 {
		t.Errorf("after Reset(true) the adapter's ids are gone: %v %+v", ids, tb.All())
	}
	if err := tb.Set("main.go", nil, nil, true); err != nil || len(tb.All()) != 0 {
		t.Errorf("clear: %v %+v", err, tb.All())
	}
}

// The answer to setFunctionBreakpoints is matched in the order sent, one
// not sent is unverified with its reason, and a stop without ids is
// counted by the frame's name, the name sent included.
func TestTableFunctions(t *testing.T) {
	tb := NewTable()
	if err := tb.SetFuncs([]string{"pkg.walk", "mod.run", "main"}, "", "2", nil, false); err != nil {
		t.Fatal(err)
	}
	place := func(g godap.Breakpoint) (string, int) { return "main.go", g.Line }
	tb.FuncsAnswered([]string{"pkg.walk", "run", ""}, []string{"", "", "kept once per name"},
		[]godap.Breakpoint{{Id: 5, Verified: true, Line: 12}, {Id: 6, Verified: false, Message: "no such function"}}, Support{HitCondition: true}, place)
	fs := tb.Funcs()
	if f := fs[0]; f.ID != "f1" || !f.Verified || f.File != "main.go" || f.Line != 12 || f.Unsupported != "" {
		t.Errorf("first: %+v", f)
	}
	if f := fs[1]; f.Verified || f.Message != "no such function" {
		t.Errorf("second: %+v", f)
	}
	if f := fs[2]; f.Verified || f.Message != "kept once per name" {
		t.Errorf("third, not sent: %+v", f)
	}
	if ids := tb.HitFunc(nil, "function breakpoint", "run"); !slices.Equal(ids, []string{"f2"}) {
		t.Errorf("hit by the name sent: %v", ids)
	}
	if ids := tb.HitFunc([]int{5}, "breakpoint", "x"); !slices.Equal(ids, []string{"f1"}) {
		t.Errorf("hit by id: %v", ids)
	}
	if err := tb.SetFuncs(nil, "", "", []string{"nope"}, false); err == nil {
		t.Error("removing a function with no breakpoint was not refused")
	}
}
