package dap

import (
	"strings"
	"testing"
	"time"

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
	if _, err := s.SetBreakpoints(ctx, at(root, "app.py"), []LineSpec{{Line: 4}, {Line: 13}}, nil, false); err != nil {
		t.Fatal(err)
	}
	res, err := s.Launch(ctx, LaunchSpec{Program: at(root, root+"/app.py")}, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantStop(t, res, "breakpoint", 4, "s += x")
	if v := localNamed(res.Locals, "s"); v == nil || v.Value != "0" {
		t.Fatalf("locals %+v", res.Locals)
	}
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
	s.SetBreakpoints(ctx, at(root, "app.py"), nil, []int{4}, false)
	done, err := s.Resume(ctx, "continue", 0, 30*time.Second)
	if err != nil || done.Outcome != "exited" || done.ExitCode == nil || *done.ExitCode != 0 {
		t.Fatalf("continue to the end: %+v %v", done, err)
	}
	if !strings.Contains(done.Output, "total 6") {
		t.Fatalf("output %q", done.Output)
	}
	if len(done.NeverHit) != 1 || done.NeverHit[0].Line != 13 {
		t.Fatalf("never hit %+v", done.NeverHit)
	}
}
