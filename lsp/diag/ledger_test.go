package diag

import "testing"

func TestLedger(t *testing.T) {
	l := NewLedger()
	e1 := Diagnostic{File: "f", Line: 3, Severity: SeverityError, Code: "X", Message: "boom"}
	w1 := Diagnostic{File: "f", Line: 4, Severity: SeverityWarning, Message: "careful"}
	h1 := Diagnostic{File: "f", Line: 5, Severity: SeverityHint, Message: "style"}
	if got := l.Fresh("f", []Diagnostic{e1, w1, h1}, false); len(got) != 2 {
		t.Fatalf("first: want error and warning, got %+v", got)
	}
	moved := e1
	moved.Line = 7
	if got := l.Fresh("f", []Diagnostic{moved, w1}, false); len(got) != 0 {
		t.Fatalf("moved: want nothing new, got %+v", got)
	}
	other := e1
	other.Message = "boom again"
	if got := l.Fresh("f", []Diagnostic{moved, other}, false); len(got) != 1 || got[0].Message != "boom again" {
		t.Fatalf("new message: %+v", got)
	}
	l.Fresh("f", nil, false) // all fixed
	if got := l.Fresh("f", []Diagnostic{e1}, false); len(got) != 1 {
		t.Fatalf("came back: want it again, got %+v", got)
	}
	if got := l.Fresh("g", []Diagnostic{e1}, false); len(got) != 1 {
		t.Fatalf("other file: %+v", got)
	}
	if got := l.Fresh("h", []Diagnostic{h1}, true); len(got) != 1 {
		t.Fatalf("hint on request: %+v", got)
	}
	// Issue 19 §3: what went away is said, as it was last seen, once.
	l.Fresh("f", []Diagnostic{e1, w1, h1}, false)
	fresh, gone := l.Record("f", []Diagnostic{moved}, false)
	if len(fresh) != 0 || len(gone) != 1 || gone[0] != w1 {
		t.Fatalf("warning fixed: fresh %+v, gone %+v", fresh, gone)
	}
	if _, gone := l.Record("f", []Diagnostic{moved}, false); len(gone) != 0 {
		t.Fatalf("fixed twice: %+v", gone)
	}
	if _, gone := l.Record("f", nil, false); len(gone) != 1 || gone[0].Line != 7 {
		t.Fatalf("the moved error is gone where it was last seen: %+v", gone)
	}
	l.Fresh("f", []Diagnostic{e1}, false)
	l.Forget("f")
	if fresh, gone := l.Record("f", []Diagnostic{e1}, false); len(fresh) != 1 || len(gone) != 0 {
		t.Fatalf("after Forget: fresh %+v, gone %+v", fresh, gone)
	}
}
