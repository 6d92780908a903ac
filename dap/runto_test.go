package dap

import (
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/breakpoint"
)

const goRunTo = `package main

import "fmt"

func main() {
	for i := 0; i < 10; i++ {
		j := i * 2
		fmt.Println("i is", i, j)
	}
	if len(fmt.Sprint()) > 0 {
		fmt.Println("never")
	}
}
`

// run_to_line on delve: reached (the one-shot breakpoint gone, the
// session's own untouched); another stop first (the result says so, and
// the line no longer stops the program); the program's end first; bad
// input refused.
func TestRunToLine(t *testing.T) {
	root := goRoot(t, goRunTo, nil)
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	s.SetBreakpoints(ctx, at(root, "main.go"), []breakpoint.LineSpec{{Line: 7, Condition: "i == 3"}}, nil, false)
	if _, err := s.RunToLine(ctx, at(root, "main.go"), 8, 0); err == nil || !strings.Contains(err.Error(), "there is no debug session") {
		t.Fatalf("run_to_line without a session: %v", err)
	}
	stop, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, root)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantStop(t, stop, "breakpoint", 7, "j := i * 2")
	res, err := s.RunToLine(ctx, at(root, "main.go"), 8, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantStop(t, res, "breakpoint", 8, `fmt.Println("i is", i, j)`)
	if res.RunTo == nil || !res.RunTo.Reached || res.RunTo.Existing != "" || len(res.Stop.Breakpoints) != 0 {
		t.Fatalf("reached: %+v %+v", res.RunTo, res.Stop)
	}
	wantLocal(t, res.Locals, "j", "6")
	if all := s.bps.All(); len(all) != 1 || all[0].ID != "b1" || all[0].Condition != "i == 3" {
		t.Fatalf("the session's breakpoints after run_to_line: %+v", all)
	}
	// b1 stops first.
	s.SetBreakpoints(ctx, at(root, "main.go"), []breakpoint.LineSpec{{Line: 7}}, nil, false)
	res, err = s.RunToLine(ctx, at(root, "main.go"), 8, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantStop(t, res, "breakpoint", 7, "j := i * 2")
	if res.RunTo == nil || res.RunTo.Reached || strings.Join(res.Stop.Breakpoints, ",") != "b1" {
		t.Fatalf("another stop first: %+v %+v", res.RunTo, res.Stop)
	}
	// Its breakpoint is gone: the next stop is b1 again, not line 8.
	res, err = s.Resume(ctx, "continue", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantStop(t, res, "breakpoint", 7, "j := i * 2")
	if res.RunTo != nil {
		t.Fatalf("a settled run_to_line reported again: %+v", res.RunTo)
	}
	s.SetBreakpoints(ctx, at(root, "main.go"), nil, nil, true)
	if _, err := s.RunToLine(ctx, at(root, "main.go"), 0, 0); err == nil || !strings.Contains(err.Error(), "1-based") {
		t.Fatalf("line 0: %v", err)
	}
	res, err = s.RunToLine(ctx, at(root, "main.go"), 11, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != "exited" || res.RunTo == nil || res.RunTo.Reached {
		t.Fatalf("the program's end first: %+v %+v", res, res.RunTo)
	}
	if files := s.bps.Files(); len(files) != 0 {
		t.Fatalf("a one-shot breakpoint was left in %v", files)
	}
	if _, err := s.RunToLine(ctx, at(root, "main.go"), 8, 0); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("after the end: %v", err)
	}
}

// The same on debugpy and lldb-dap: reached, nothing left behind.
func TestRunToLineDebugpyLLDB(t *testing.T) {
	t.Run("debugpy", func(t *testing.T) {
		s, ctx, root := stoppedSample(t, "debugpy", "app.py", pyProgram, 9)
		res, err := s.RunToLine(ctx, at(root, "app.py"), 5, 0)
		if err != nil {
			t.Fatal(err)
		}
		wantStop(t, res, "breakpoint", 5, "return s")
		if res.RunTo == nil || !res.RunTo.Reached || len(s.bps.All()) != 1 {
			t.Fatalf("reached: %+v %+v", res.RunTo, s.bps.All())
		}
	})
	t.Run("lldb", func(t *testing.T) {
		s, ctx, root := stoppedSample(t, "lldb", "main.c", cProgram, 13)
		res, err := s.RunToLine(ctx, at(root, "main.c"), 8, 0)
		if err != nil {
			t.Fatal(err)
		}
		wantStop(t, res, "breakpoint", 8, "return sum")
		if res.RunTo == nil || !res.RunTo.Reached || len(res.Stop.Breakpoints) != 0 {
			t.Fatalf("reached: %+v %+v", res.RunTo, res.Stop)
		}
	})
}
