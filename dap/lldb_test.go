package dap

import (
	"github.com/builtin-tools/builtin-tools/dap/adapter"

	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

const cProgram = `#include <stdio.h>

int total(int *xs, int n) {
	int sum = 0;
	for (int i = 0; i < n; i++) {
		sum += xs[i];
	}
	return sum;
}

int main(void) {
	int xs[3] = {1, 2, 3};
	int n = total(xs, 3);
	printf("total %d\n", n);
	if (n > 100) {
		printf("big\n");
	}
	return 0;
}
`

// buildC compiles the C fixture with debug information.
func buildC(t *testing.T, root string) string {
	t.Helper()
	return testenv.BuildC(t, root, "main.c", "prog")
}

// A C session with real lldb-dap, the same script as delve's.
func TestLLDBSession(t *testing.T) {
	needAdapter(t, "lldb")
	root := testenv.Tree(t, map[string]string{"Makefile": "prog: main.c\n\tgcc -g -o prog main.c\n", "main.c": cProgram})
	bin := buildC(t, root)
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	if _, err := s.SetBreakpoints(ctx, at(root, "main.c"), []LineSpec{{Line: 6}, {Line: 16}}, nil, false); err != nil {
		t.Fatal(err)
	}
	res, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, bin)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantStop(t, res, "breakpoint", 6, "sum += xs[i]")
	if v := localNamed(res.Locals, "sum"); v == nil || v.Value != "0" {
		t.Fatalf("locals %+v", res.Locals)
	}
	ev, err := s.Evaluate(ctx, "xs[1] * 10", "", 0)
	if err != nil || ev.Value == nil || ev.Value.Value != "20" {
		t.Fatalf("evaluate %+v %v", ev, err)
	}
	step, err := s.Resume(ctx, "step_over", 0, 0)
	if err != nil || step.Outcome != "stopped" || step.Stop.Reason != "step" {
		t.Fatalf("step: %+v %v", step, err)
	}
	continueToEnd(t, s, ctx, root, "main.c", 6, 16)
}
