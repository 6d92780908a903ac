package dap

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/breakpoint"
	"github.com/builtin-tools/builtin-tools/dap/result"
	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

const cCrash = `#include <stdio.h>

int depth(int n) {
	int *p = 0;
	if (n == 0) {
		*p = 42;
	}
	return depth(n - 1) + 1;
}

int main(void) {
	int limit = 3;
	return depth(limit);
}
`

const goCrash = `package main

import "fmt"

type node struct {
	next *node
	val  int
}

func walk(n *node, k int) int {
	if k == 0 {
		return n.next.val
	}
	return walk(n, k-1) + 1
}

func main() {
	limit := 3
	fmt.Println(walk(&node{val: 1}, limit))
}
`

// makeCore runs bin in dir with its soft core limit raised and returns the
// core it wrote; when the machine's core pattern sends cores elsewhere, or
// none appears, the test says why.
func makeCore(t *testing.T, dir, bin string, env ...string) string {
	t.Helper()
	pattern, err := os.ReadFile("/proc/sys/kernel/core_pattern")
	if err != nil {
		testenv.Unavailable(t, "a core file", fmt.Errorf("cannot read /proc/sys/kernel/core_pattern: %v", err))
	}
	if p := strings.TrimSpace(string(pattern)); strings.HasPrefix(p, "|") {
		testenv.Unavailable(t, "a core file", fmt.Errorf("the machine's core_pattern pipes cores to a program (%s), so no core file is written in the program's folder", p))
	} else if strings.Contains(p, "/") {
		testenv.Unavailable(t, "a core file", fmt.Errorf("the machine's core_pattern (%s) writes cores to another folder", p))
	}
	cmd := exec.Command("sh", "-c", "ulimit -c unlimited; exec ./"+filepath.Base(bin))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("%s did not crash:\n%s", bin, out)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "core*"))
	for _, m := range matches {
		if info, err := os.Stat(m); err == nil && info.Mode().IsRegular() && !strings.HasSuffix(m, ".c") {
			return m
		}
	}
	testenv.Unavailable(t, "a core file", fmt.Errorf("%s crashed (%v) but wrote no core in %s (core_pattern %q; the hard core limit may be 0)", bin, err, dir, strings.TrimSpace(string(pattern))))
	return ""
}

func TestCoreC(t *testing.T) {
	needAdapter(t, "lldb")
	root := testenv.Tree(t, map[string]string{"crash.c": cCrash})
	bin := testenv.BuildC(t, root, "crash.c", "crash")
	core := makeCore(t, root, bin)
	coreSession(t, root, bin, core, "depth", 6, "*p = 42;", "n", "0")
}

func TestCoreGo(t *testing.T) {
	needAdapter(t, "delve")
	goBin := testenv.LookPath(t, "go")
	root := testenv.Tree(t, map[string]string{"go.mod": "module crash\n\ngo 1.22\n", "main.go": goCrash})
	bin := filepath.Join(root, "crash")
	build := exec.Command(goBin, "build", "-gcflags=all=-N -l", "-o", bin, ".")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	core := makeCore(t, root, bin, "GOTRACEBACK=crash")
	coreSession(t, root, bin, core, "main.walk", 12, "return n.next.val", "k", "0")
}

// coreSession opens core and reads the crash: the stop at the crashing
// line with its locals, the threads, the stack, scopes, variables and
// evaluate; every resume is refused as read-only.
func coreSession(t *testing.T, root, bin, core, fn string, line int, src, local, value string) {
	t.Helper()
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	res, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, bin), Core: at(root, core)}, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != "stopped" || res.Stop == nil || res.Stop.Reason != "crash" || res.Frame == nil ||
		!strings.Contains(res.Frame.Name, fn) || res.Frame.Line != line {
		t.Fatalf("opening the core: %+v (stop %+v, frame %+v)", res, res.Stop, res.Frame)
	}
	wantStop(t, res, "crash", line, src)
	if strings.Contains(res.Exception+res.Stop.Text, "continue") {
		t.Fatalf("the crash is described as the adapter's attempt to run it: %q %q", res.Exception, res.Stop.Text)
	}
	wantLocal(t, res.Locals, local, value)
	if res.Core == nil || res.Core.File != "core" || res.Core.Total == 0 || len(res.Core.Threads) == 0 || len(res.Core.Stack) == 0 {
		t.Fatalf("the core's threads and stack: %+v", res.Core)
	}
	if f := res.Core.Stack[min(1, res.Core.Above)]; !strings.Contains(f.Name, fn) || f.Line != line {
		t.Fatalf("the core's stack does not show the crashing frame near its top: %+v", res.Core.Stack)
	}
	th, err := s.Threads(ctx)
	if err != nil || th.Total == 0 {
		t.Fatalf("threads: %+v %v", th, err)
	}
	stack, err := s.Stack(ctx, 0)
	if err != nil || len(stack.Frames) < 3 {
		t.Fatalf("stack: %+v %v", stack, err)
	}
	calls := 0
	for _, f := range stack.Frames {
		if strings.Contains(f.Name, fn) {
			calls++
		}
	}
	if calls != 4 { // depth 3, 2, 1, 0
		t.Fatalf("stack: %d frames of %s, want 4: %+v", calls, fn, stack.Frames)
	}
	scopes, err := s.Scopes(ctx, res.Frame.ID)
	if err != nil || len(scopes.Scopes) == 0 {
		t.Fatalf("scopes: %+v %v", scopes, err)
	}
	vars, err := s.Variables(ctx, scopes.Scopes[0].Ref, false)
	if err != nil || localNamed(vars.Variables, local) == nil {
		t.Fatalf("variables: %+v %v", vars, err)
	}
	ev, err := s.Evaluate(ctx, local+" + 40", res.Frame.ID, 0)
	if err != nil || ev.Value == nil || ev.Value.Value != "40" {
		t.Fatalf("evaluate: %+v %v", ev, err)
	}
	// Issue 26: without frame_id it ran in the top frame (runtime.raise in
	// a Go crash), not the crashing frame the result showed.
	ev, err = s.Evaluate(ctx, local+" + 40", "", 0)
	if err != nil || ev.Value == nil || ev.Value.Value != "40" || ev.Frame != res.Frame.ID {
		t.Fatalf("evaluate without frame_id, in the frame the crash showed (%s): %+v %v", res.Frame.ID, ev, err)
	}
	readOnly := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "a core file is read-only") {
			t.Errorf("%s on a core: %v", what, err)
		}
	}
	for _, op := range []string{"continue", "step_over", "step_in", "step_out", "pause"} {
		_, err := s.Resume(ctx, op, 0, time.Second)
		readOnly(op, err)
	}
	_, err = s.RunToLine(ctx, at(root, filepath.Join(root, filepath.Base(res.Frame.File))), line, time.Second)
	readOnly("run_to_line", err)
	_, err = s.Restart(ctx, time.Second)
	readOnly("restart", err)
	_, err = s.SetVariable(ctx, "", res.Frame.ID, local, "7", 0)
	readOnly("set_variable", err)
	_, err = s.Watch(ctx, "", local, "", false)
	readOnly("watch", err)
	bp, err := s.SetBreakpoints(ctx, at(root, filepath.Join(root, filepath.Base(res.Frame.File))), []breakpoint.LineSpec{{Line: line}}, nil, false)
	if err != nil || !bp.Pending || !strings.Contains(bp.Note, "core file") {
		t.Errorf("a breakpoint set on a core: %+v %v", bp, err)
	}
	// Still the crash, after all that was refused.
	if again, err := s.Stack(ctx, 0); err != nil || len(again.Frames) != len(stack.Frames) {
		t.Fatalf("stack after the refusals: %+v %v", again, err)
	}
	adapter := s.sess.AdapterPID()
	term, err := s.Terminate(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if term.PID != 0 || term.Killed || !term.Core || term.Debuggee != result.DebuggeeNone {
		t.Fatalf("terminate of a core session: %+v", term)
	}
	waitGone(t, "the adapter", adapter)
	if _, err := os.Stat(core); err != nil {
		t.Fatalf("the core file is gone after the session: %v", err)
	}
}

// A core launch that cannot be: each says what is wrong, before any
// adapter starts.
func TestCoreRefusals(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"crash.c": cCrash, "notes.txt": "not a core\n", "app.py": "print(1)\n"})
	bin := testenv.BuildC(t, root, "crash.c", "crash")
	s := newSupervisor(t, root, Config{})
	for _, c := range []struct {
		what string
		l    adapter.LaunchSpec
		want string
	}{
		{"a missing core", adapter.LaunchSpec{Program: at(root, bin), Core: at(root, "core.404")}, "core core.404 does not exist"},
		{"a text file", adapter.LaunchSpec{Program: at(root, bin), Core: at(root, "notes.txt")}, "is not a core file (not an ELF file)"},
		{"an executable", adapter.LaunchSpec{Program: at(root, bin), Core: at(root, bin)}, "not a core file; give the crash's core as core"},
		{"a folder", adapter.LaunchSpec{Program: at(root, bin), Core: at(root, ".")}, "is a folder"},
		{"debugpy", adapter.LaunchSpec{Adapter: "debugpy", Program: at(root, "app.py"), Core: at(root, "notes.txt")}, "debugpy cannot open a core file; core works with delve (Go) and lldb"},
		{"no program", adapter.LaunchSpec{Core: at(root, bin)}, "core needs program"},
		{"attach", adapter.LaunchSpec{Attach: true, PID: 1, Core: at(root, bin)}, "core goes with launch"},
	} {
		before := len(proc.Children())
		_, err := s.Launch(testCtx(t), c.l, time.Second)
		if err == nil || (c.want != "" && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v", c.what, err)
		}
		if len(proc.Children()) != before {
			t.Errorf("%s started a process before it was refused", c.what)
		}
	}
}

const cSecret = `#include <stdlib.h>

int depth(int n, int secret) {
	int *p = 0;
	if (n == 0) {
		*p = secret;
	}
	return depth(n - 1, secret) + 1;
}

int main(int argc, char **argv) {
	int secret = argc > 1 ? atoi(argv[1]) : 111;
	return depth(3, secret);
}
`

const goSecret = `package main

import (
	"fmt"
	"os"
	"strconv"
)

type node struct {
	next *node
	v    int
}

func crash(n *node, secret int) int {
	return n.next.v + secret
}

func main() {
	secret := 111
	if len(os.Args) > 1 {
		secret, _ = strconv.Atoi(os.Args[1])
	}
	fmt.Println(crash(&node{}, secret))
}
`

// R10: launch with core checked the core's path through the guard, and
// the adapter opened the path later: a name swapped in between (here, at
// once after the check: a link to a core outside the root) was read, and
// an outside core's value shown (10 of 60 races). The adapter now opens
// the very file checked (/proc/PID/fd/N of the descriptor kept open).
func TestCoreSwappedAfterTheCheck(t *testing.T) {
	for _, c := range []struct{ adapter, file, src string }{{"lldb", "crash.c", cSecret}, {"delve", "main.go", goSecret}} {
		t.Run(c.adapter, func(t *testing.T) {
			needAdapter(t, c.adapter)
			root := testenv.Tree(t, map[string]string{c.file: c.src, "go.mod": "module crash\n\ngo 1.22\n"})
			bin := filepath.Join(root, "crash")
			if c.adapter == "lldb" {
				testenv.BuildC(t, root, c.file, "crash")
			} else {
				build := exec.Command(testenv.LookPath(t, "go"), "build", "-gcflags=all=-N -l", "-o", bin, ".")
				build.Dir = root
				if out, err := build.CombinedOutput(); err != nil {
					t.Fatalf("build: %v\n%s", err, out)
				}
			}
			core := makeCore(t, root, bin, "GOTRACEBACK=crash")
			// The same program's core outside the root, with another secret.
			outside := t.TempDir()
			data, err := os.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(outside, "crash"), data, 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("sh", "-c", "ulimit -c unlimited; exec ./crash 777")
			cmd.Dir = outside
			cmd.Env = append(os.Environ(), "GOTRACEBACK=crash")
			cmd.Run()
			secretCore := filepath.Join(outside, "core")
			if _, err := os.Stat(secretCore); err != nil {
				testenv.Unavailable(t, "a core file", fmt.Errorf("the second crash wrote no core: %v", err))
			}
			coreHook = func() {
				// After the check, before the adapter opens anything.
				tmp := core + ".swap"
				if err := os.Symlink(secretCore, tmp); err != nil {
					t.Error(err)
				}
				if err := os.Rename(tmp, core); err != nil {
					t.Error(err)
				}
			}
			t.Cleanup(func() { coreHook = nil })
			s := newSupervisor(t, root, Config{})
			ctx := testCtx(t)
			res, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, bin), Core: at(root, core)}, 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Lstat(core); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("the hook did not swap the core: %v", err)
			}
			ev, err := s.Evaluate(ctx, "secret", "", 0)
			if err != nil || ev.Value == nil {
				t.Fatalf("evaluate secret in %+v: %+v %v", res.Frame, ev, err)
			}
			if ev.Value.Value != "111" {
				t.Fatalf("the session read the core swapped in after the check: secret = %s, want 111", ev.Value.Value)
			}
			s.Terminate(ctx, false)
		})
	}
}
