package testenv

import "testing"

func TestLineDiff(t *testing.T) {
	got := LineDiff("a\nb\nc\n", "a\nc\nd\n")
	want := "line 2:\nwant: b\ngot:  c\n- b\n+ d\n"
	if got != want {
		t.Errorf("LineDiff = %q, want %q", got, want)
	}
}
