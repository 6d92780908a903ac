package dap

import (
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/breakpoint"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

const goProgram = `package main

import "fmt"

func total(xs []int) int {
	sum := 0
	for _, x := range xs {
		sum += x
	}
	return sum
}

func main() {
	xs := []int{1, 2, 3}
	n := total(xs)
	fmt.Println("total", n)
	if n > 100 {
		fmt.Println("big")
	}
}
`

// A Go session with real delve: breakpoint, launch, stop with the source
// line and locals, evaluate, step over, continue to exit with the output
// and the never-hit report, nothing left running.
func TestDelveSession(t *testing.T) {
	testenv.LookPath(t, "dlv")
	root := testenv.Tree(t, map[string]string{"go.mod": "module example.com/p\n\ngo 1.22\n", "main.go": goProgram})
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	bps, err := s.SetBreakpoints(ctx, at(root, "main.go"), []breakpoint.LineSpec{{Line: 8}, {Line: 18}}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if !bps.Pending || len(bps.Breakpoints) != 2 {
		t.Fatalf("breakpoints before launch: %+v", bps)
	}
	res, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, root)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantStop(t, res, "breakpoint", 8, "sum += x")
	if res.BuildMS <= 0 {
		t.Errorf("build time not reported: %+v", res)
	}
	wantLocal(t, res.Locals, "sum", "0")
	if len(res.Stop.Breakpoints) != 1 || res.Stop.Breakpoints[0] != "b1" {
		t.Fatalf("breakpoints hit %v", res.Stop.Breakpoints)
	}
	ev, err := s.Evaluate(ctx, "x * 10", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Value == nil || ev.Value.Value != "10" {
		t.Fatalf("evaluate %+v", ev)
	}
	ev, err = s.Evaluate(ctx, "nosuchvar", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Error == "" {
		t.Fatalf("evaluating an unknown name: %+v", ev)
	}
	frame := res.Frame.ID
	step, err := s.Resume(ctx, "step_over", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if step.Outcome != "stopped" || step.Stop.Reason != "step" {
		t.Fatalf("step: %+v", step)
	}
	if _, err := s.Scopes(ctx, frame); err == nil || !strings.Contains(err.Error(), "is from stop 1; the program is now at stop 2") {
		t.Fatalf("a stale frame: %v", err)
	}
	continueToEnd(t, s, ctx, root, "main.go", 8, 18)
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	adapter, prog := sess.AdapterPID(), sess.PID()
	if _, err := s.Terminate(ctx, false); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "dlv", adapter)
	waitGone(t, "the program", prog)
}
