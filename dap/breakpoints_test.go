package dap

import (
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/dap/breakpoint"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

func lineSpecs(from, to int) []breakpoint.LineSpec {
	var out []breakpoint.LineSpec
	for l := from; l <= to; l++ {
		out = append(out, breakpoint.LineSpec{Line: l})
	}
	return out
}

// L1: 80,000 lines in one breakpoints call took 16 s (each line searched
// the file's list) and were all kept, to be sent again at every launch.
// Lines per call and breakpoints per file are capped, with an error naming
// the cap, and a refused call changes nothing.
func TestBreakpointCaps(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"main.c": "int main(void) { return 0; }\n"})
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	if _, err := s.SetBreakpoints(ctx, at(root, "main.c"), lineSpecs(1, 80000), nil, false); err == nil || !strings.Contains(err.Error(), "at most 1000") {
		t.Fatalf("80,000 lines in one call: %v", err)
	}
	if n := len(s.bps.All()); n != 0 {
		t.Fatalf("a refused call kept %d breakpoints", n)
	}
	res, err := s.SetBreakpoints(ctx, at(root, "main.c"), lineSpecs(1, 1000), nil, false)
	if err != nil || len(res.Breakpoints) != 1000 || res.Breakpoints[999].ID != "b1000" {
		t.Fatalf("1,000 lines: %v", err)
	}
	if _, err := s.SetBreakpoints(ctx, at(root, "main.c"), []breakpoint.LineSpec{{Line: 1001}}, nil, false); err == nil || !strings.Contains(err.Error(), "1001 breakpoints; at most 1000 per file") {
		t.Fatalf("the 1,001st breakpoint of a file: %v", err)
	}
	// Updating lines already set, and removing to make room, work.
	if _, err := s.SetBreakpoints(ctx, at(root, "main.c"), []breakpoint.LineSpec{{Line: 7, Condition: "x > 1"}}, nil, false); err != nil {
		t.Fatal(err)
	}
	res, err = s.SetBreakpoints(ctx, at(root, "main.c"), lineSpecs(1001, 1500), lineIDs(1, 500), false)
	if err != nil || len(res.Breakpoints) != 1000 {
		t.Fatalf("remove 500 and add 500: %v", err)
	}
	if first := res.Breakpoints[0]; first.Line != 501 || first.ID != "b501" {
		t.Fatalf("the kept breakpoints lost their ids: %+v", first)
	}
	if last := res.Breakpoints[999]; last.Line != 1500 || last.ID != "b1500" {
		t.Fatalf("the new ones: %+v", last)
	}
	// The cap is per file.
	if _, err := s.SetBreakpoints(ctx, at(root, "other.c"), lineSpecs(1, 1000), nil, false); err != nil {
		t.Fatal(err)
	}
}

func lineIDs(from, to int) []int {
	var out []int
	for l := from; l <= to; l++ {
		out = append(out, l)
	}
	return out
}
