package dap

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

const goMethods = `package main

import "fmt"

type Counter struct{ n int }

func (c *Counter) Add(d int) {
	c.n += d
}

func square(i int) int {
	return i * i
}

func main() {
	c := &Counter{}
	for i := 0; i < 10; i++ {
		c.Add(square(i))
	}
	fmt.Println("n", c.n)
}
`

// Function breakpoints on delve: pkg.Func with a condition and
// (*T).Method, set before the launch, kept across sessions, hit counted;
// one that names no function is unverified with delve's reason.
func TestDelveFunctionBreakpoints(t *testing.T) {
	root := goRoot(t, goMethods, nil)
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	res, err := s.SetFunctionBreakpoints(ctx, []string{"main.square"}, "i == 4", "", nil, false)
	if err != nil || !res.Pending || len(res.Functions) != 1 || res.Functions[0].ID != "f1" {
		t.Fatalf("before launch: %+v %v", res, err)
	}
	stop, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, root)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantStop(t, stop, "function breakpoint", 11, "func square(i int) int {")
	if v := localNamed(stop.Locals, "i"); v == nil || v.Value != "4" {
		t.Fatalf("locals %+v", stop.Locals)
	}
	if strings.Join(stop.Stop.Breakpoints, ",") != "f1" {
		t.Fatalf("breakpoints hit %v", stop.Stop.Breakpoints)
	}
	res, err = s.SetFunctionBreakpoints(ctx, []string{"(*Counter).Add", "main.nosuch"}, "", "", []string{"main.square"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Functions) != 2 || !res.Functions[0].Verified || res.Functions[0].File != "main.go" || res.Functions[0].Line != 7 {
		t.Fatalf("method breakpoint %+v", res.Functions)
	}
	if res.Functions[1].Verified || res.Functions[1].Message == "" {
		t.Fatalf("a function that does not exist: %+v", res.Functions[1])
	}
	stop, err = s.Resume(ctx, "continue", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantStop(t, stop, "function breakpoint", 7, "func (c *Counter) Add(d int) {")
	if v := localNamed(stop.Locals, "d"); v == nil || v.Value != "16" {
		t.Fatalf("locals %+v", stop.Locals)
	}
	s.Terminate(ctx, false)
	// Kept for the next session.
	stop, err = s.Launch(ctx, adapter.LaunchSpec{Program: at(root, root)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantStop(t, stop, "function breakpoint", 7, "func (c *Counter) Add(d int) {")
	if st := s.Status(); len(st.Functions) != 2 || st.Functions[0].Hits != 1 {
		t.Fatalf("status %+v", st.Functions)
	}
	if _, err := s.SetFunctionBreakpoints(ctx, []string{" "}, "", "", nil, false); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("an empty name: %v", err)
	}
	if _, err := s.SetFunctionBreakpoints(ctx, nil, "", "", []string{"main.other"}, false); err == nil || !strings.Contains(err.Error(), `no function breakpoint on "main.other"`) {
		t.Fatalf("removing one not set: %v", err)
	}
}

const pyFuncs = `def helper(n):
    return n * 2


def main():
    for i in range(5):
        helper(i)


main()
`

// debugpy by function name; lldb at main.
func TestFunctionBreakpointsDebugpyLLDB(t *testing.T) {
	t.Run("debugpy", func(t *testing.T) {
		needAdapter(t, "debugpy")
		root := testenv.Tree(t, map[string]string{"app.py": pyFuncs})
		s := newSupervisor(t, root, Config{})
		ctx := testCtx(t)
		s.SetFunctionBreakpoints(ctx, []string{"helper"}, "n == 3", "", nil, false)
		stop, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, "app.py")}, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if stop.Outcome != "stopped" || stop.Frame == nil || stop.Frame.Name != "helper" {
			t.Fatalf("debugpy function breakpoint: %+v %+v", stop, stop.Frame)
		}
		if v := localNamed(stop.Locals, "n"); v == nil || v.Value != "3" {
			t.Fatalf("locals %+v", stop.Locals)
		}
	})
	t.Run("lldb", func(t *testing.T) {
		needAdapter(t, "lldb")
		root := testenv.Tree(t, map[string]string{"main.c": cProgram})
		bin := buildC(t, root)
		s := newSupervisor(t, root, Config{})
		ctx := testCtx(t)
		s.SetFunctionBreakpoints(ctx, []string{"main"}, "", "", nil, false)
		stop, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, bin)}, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if stop.Outcome != "stopped" || stop.Frame == nil || stop.Frame.Name != "main" || filepath.Base(stop.Frame.File) != "main.c" {
			t.Fatalf("lldb function breakpoint: %+v %+v", stop, stop.Frame)
		}
		if strings.Join(stop.Stop.Breakpoints, ",") != "f1" {
			t.Fatalf("breakpoints hit %v (%+v)", stop.Stop.Breakpoints, stop.Stop)
		}
	})
}

// An adapter without supportsFunctionBreakpoints (the scripted one): a
// function breakpoint set in a session is refused, left unset, and says
// what to do; one kept from before fails the launch with the same words.
func TestFunctionBreakpointsUnsupported(t *testing.T) {
	s, _ := launchHere(t, "delve", Config{}, 20*time.Second)
	ctx := t.Context()
	_, err := s.SetFunctionBreakpoints(ctx, []string{"main"}, "", "", nil, false)
	if err == nil || !strings.Contains(err.Error(), "fake does not support function breakpoints") || !strings.Contains(err.Error(), "file and lines") {
		t.Fatalf("function breakpoint on an adapter without them: %v", err)
	}
	if st := s.Status(); len(st.Functions) != 0 {
		t.Fatalf("a refused function breakpoint was kept: %+v", st.Functions)
	}
	s.Terminate(ctx, false)
	s.bps.SetFuncs([]string{"main"}, "", "", nil, false)
	if _, err := s.Launch(ctx, s.last, 20*time.Second); err == nil || !strings.Contains(err.Error(), "does not support function breakpoints") {
		t.Fatalf("a launch with a kept function breakpoint: %v", err)
	}
}

const pyQualified = `import functools


def logged(f):
    @functools.wraps(f)
    def wrapper(*a):
        return f(*a)
    return wrapper


class Stock:
    def __init__(self, n):
        self.n = n

    @logged
    def value(self):
        return self.n * 2


def value(stocks):
    return sum(s.value() for s in stocks)


print(value([Stock(1), Stock(2), Stock(3)]))
`

// Issue 26: debugpy matches a function's bare name only, so the
// documented module.func form never stopped and said nothing. Now a
// method by module.Class.method stops in that method (decorated), not in
// the module's function of the same name, with the agent's condition;
// a name that is never called is reported when the program ends.
func TestDebugpyQualifiedFunctionBreakpoints(t *testing.T) {
	needAdapter(t, "debugpy")
	root := testenv.Tree(t, map[string]string{"app.py": pyQualified})
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	s.SetFunctionBreakpoints(ctx, []string{"app.Stock.value"}, "self.n > 1", "", nil, false)
	s.SetFunctionBreakpoints(ctx, []string{"app.Stock.missing"}, "", "", nil, false)
	stop, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, "app.py")}, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wantStop(t, stop, "function breakpoint", 15, "@logged") // a decorated function starts at its decorator
	if v := localNamed(stop.Locals, "self"); v == nil || !strings.Contains(stop.Frame.Name, "value") || strings.Join(stop.Stop.Breakpoints, ",") != "f1" {
		t.Fatalf("stop %+v locals %+v", stop.Stop, stop.Locals)
	}
	ev, err := s.Evaluate(ctx, "self.n", "", 0)
	if err != nil || ev.Value == nil || ev.Value.Value != "2" {
		t.Fatalf("the condition self.n > 1: %+v %v", ev, err)
	}
	stop, _ = s.Resume(ctx, "continue", 0, 30*time.Second)
	wantStop(t, stop, "function breakpoint", 15, "@logged")
	end, err := s.Resume(ctx, "continue", 0, 30*time.Second)
	if err != nil || end.Outcome != "exited" {
		t.Fatalf("the end: %+v %v", end, err)
	}
	if len(end.NeverHitFuncs) != 1 || end.NeverHitFuncs[0].Name != "app.Stock.missing" {
		t.Fatalf("never hit: %+v", end.NeverHitFuncs)
	}
}
