package dap

import (
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/breakpoint"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

const pyProgram = `def total(xs):
    s = 0
    for x in xs:
        s += x
    return s


def main():
    xs = [1, 2, 3]
    n = total(xs)
    print("total", n)
    if n > 100:
        print("big")


main()
`

// A Python session with real debugpy, the same script as delve's.
func TestDebugpySession(t *testing.T) {
	testenv.LookPath(t, "python3")
	root := testenv.Tree(t, map[string]string{"requirements.txt": "", "app.py": pyProgram})
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	if _, err := s.SetBreakpoints(ctx, at(root, "app.py"), []breakpoint.LineSpec{{Line: 4}, {Line: 13}}, nil, false); err != nil {
		t.Fatal(err)
	}
	res, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, root+"/app.py")}, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantStop(t, res, "breakpoint", 4, "s += x")
	wantLocal(t, res.Locals, "s", "0")
	ev, err := s.Evaluate(ctx, "x * 10", "", 0)
	if err != nil || ev.Value == nil || ev.Value.Value != "10" {
		t.Fatalf("evaluate %+v %v", ev, err)
	}
	ev, err = s.Evaluate(ctx, "1/0", "", 0)
	if err != nil || ev.Error == "" || !strings.Contains(ev.Error, "ZeroDivisionError") {
		t.Fatalf("evaluate that raises: %+v %v", ev, err)
	}
	step, err := s.Resume(ctx, "step_over", 0, 0)
	if err != nil || step.Outcome != "stopped" || step.Stop.Reason != "step" {
		t.Fatalf("step: %+v %v", step, err)
	}
	continueToEnd(t, s, ctx, root, "app.py", 4, 13)
}
