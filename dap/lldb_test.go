package dap

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/breakpoint"
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
	if _, err := s.SetBreakpoints(ctx, at(root, "main.c"), []breakpoint.LineSpec{{Line: 6}, {Line: 16}}, nil, false); err != nil {
		t.Fatal(err)
	}
	res, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, bin)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantStop(t, res, "breakpoint", 6, "sum += xs[i]")
	wantLocal(t, res.Locals, "sum", "0")
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

const cTerminal = `#include <stdio.h>
#include <unistd.h>

int main(void) {
	printf("stdout is a terminal: %d\n", isatty(1));
	fprintf(stderr, "to stderr\n");
	int stop = 1;
	printf("after the stop %d\n", stop);
	return 0;
}
`

// A launched C program prints to a terminal the session reads itself
// (lldb-dap's relay is quadratic in its backlog): it still sees a
// terminal, and a stop's result and the exit's hold what it printed
// before them, stderr with stdout; a restart prints there again.
func TestLLDBTerminal(t *testing.T) {
	needAdapter(t, "lldb")
	root := testenv.Tree(t, map[string]string{"main.c": cTerminal})
	bin := testenv.BuildC(t, root, "main.c", "prog")
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	if _, err := s.SetBreakpoints(ctx, at(root, "main.c"), []breakpoint.LineSpec{{Line: 8}}, nil, false); err != nil {
		t.Fatal(err)
	}
	res, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, bin)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantStop(t, res, "breakpoint", 8, "after the stop")
	if !strings.Contains(res.Output, "stdout is a terminal: 1") || !strings.Contains(res.Output, "to stderr") {
		t.Fatalf("the stop's output: %q", res.Output)
	}
	if strings.Contains(res.Output, "after the stop") {
		t.Fatalf("the stop shows output printed after it: %q", res.Output)
	}
	if runtime.GOOS == "linux" {
		s.sess.mu.Lock()
		pid := s.sess.pid
		s.sess.mu.Unlock()
		if fd1, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/1", pid)); err != nil || fd1 != s.sess.term.Path {
			t.Fatalf("the program's stdout is %q (%v), not the session's terminal %q", fd1, err, s.sess.term.Path)
		}
	}
	again, err := s.Restart(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantStop(t, again, "breakpoint", 8, "after the stop")
	if !strings.Contains(again.Output, "to stderr") {
		t.Fatalf("the restarted program's output: %q", again.Output)
	}
	done, err := s.Resume(ctx, "continue", 0, 30*time.Second)
	if err != nil || done.Outcome != "exited" {
		t.Fatalf("%+v %v", done, err)
	}
	if !strings.Contains(done.Output, "after the stop 1") {
		t.Fatalf("the exit's output: %q", done.Output)
	}
}
