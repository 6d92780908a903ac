package dap

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/breakpoint"
	"github.com/builtin-tools/builtin-tools/dap/result"
	"github.com/builtin-tools/builtin-tools/dap/stack"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

func newSupervisor(t testing.TB, root string, cfg Config) *Supervisor {
	t.Helper()
	g, err := pathguard.New(root)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSupervisor(g, cfg)
	t.Cleanup(func() { s.Close(); g.Close() })
	return s
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func wantStop(t *testing.T, res *result.StopResult, reason string, line int, src string) {
	t.Helper()
	if res.Outcome != "stopped" || res.Stop == nil || res.Stop.Reason != reason || res.Frame == nil || res.Frame.Line != line {
		t.Fatalf("want a %s stop at line %d, got %+v (frame %+v)", reason, line, res, res.Frame)
	}
	found := false
	for _, l := range res.Frame.Source {
		if l.Current && strings.Contains(l.Text, src) {
			found = true
		}
	}
	if !found {
		t.Fatalf("the stop does not quote %q: %+v", src, res.Frame.Source)
	}
}

func localNamed(vars []stack.Var, name string) *stack.Var {
	for i := range vars {
		if vars[i].Name == name {
			return &vars[i]
		}
	}
	return nil
}

// wantLocal fails t unless locals hold name with value.
func wantLocal(t *testing.T, locals []stack.Var, name, value string) {
	t.Helper()
	if v := localNamed(locals, name); v == nil || v.Value != value {
		t.Fatalf("local %s: want %s in %+v", name, value, locals)
	}
}

func waitGone(t *testing.T, what string, pid int) {
	t.Helper()
	if !testenv.Exits(pid, 10*time.Second) {
		t.Fatalf("%s (pid %d) still runs", what, pid)
	}
}

// waitSession waits until cond, read under the session's lock, holds: on
// the session's change channel, which its events and its end close (no
// clock to wait on: the adapter and the program are real processes).
func waitSession(t *testing.T, ctx context.Context, sess *Session, what string, cond func(*Session) bool) {
	t.Helper()
	for {
		sess.mu.Lock()
		ok, changed := cond(sess), sess.changed
		sess.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, context.Cause(ctx))
		}
	}
}

// sample writes src as file in a fresh root, and returns the root and the
// program that adapter id launches for it: the package's folder (delve, with
// a go.mod), the executable gcc builds of it (lldb), else the file.
func sample(t *testing.T, id, file, src string) (string, pathguard.Path) {
	t.Helper()
	files := map[string]string{file: src}
	if id == "delve" {
		files["go.mod"] = "module example.com/p\n\ngo 1.22\n"
	}
	root := testenv.Tree(t, files)
	switch id {
	case "delve":
		return root, at(root, root)
	case "lldb":
		return root, at(root, buildC(t, root))
	}
	return root, at(root, file)
}

// stoppedSample launches the sample of src (see sample) on adapter id, on a
// supervisor of its own, and returns once the program stops at line of
// file, with the test's context and the sample's root.
func stoppedSample(t *testing.T, id, file, src string, line int) (*Supervisor, context.Context, string) {
	t.Helper()
	needAdapter(t, id)
	root, program := sample(t, id, file, src)
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	stopAt(t, s, ctx, root, file, line, adapter.LaunchSpec{Adapter: id, Program: program}, time.Minute)
	return s, ctx, root
}

// needAdapter skips (or, under BUILTIN_TOOLS_REQUIRE, fails) a test whose
// adapter is not installed, naming the install step.
func needAdapter(t testing.TB, id string) adapter.Spec {
	t.Helper()
	testenv.SetupPath()
	spec, _ := adapter.Lookup(id)
	if cmd, _ := spec.Command(context.Background()); cmd == nil {
		testenv.Missing(t, spec.Commands[0][0], spec.Install)
	}
	return spec
}

// stopAt sets a breakpoint at file:line of root and launches l, failing tb
// unless the program stops within wait.
// continueToEnd drops the breakpoint at line of file and continues: the
// sample program ends with exit code 0 and prints "total 6", and its one
// breakpoint never hit is at neverHit.
func continueToEnd(t *testing.T, s *Supervisor, ctx context.Context, root, file string, line, neverHit int) {
	t.Helper()
	s.SetBreakpoints(ctx, at(root, file), nil, []int{line}, false)
	done, err := s.Resume(ctx, "continue", 0, 30*time.Second)
	if err != nil || done.Outcome != "exited" || done.ExitCode == nil || *done.ExitCode != 0 {
		t.Fatalf("continue to the end: %+v %v", done, err)
	}
	if !strings.Contains(done.Output, "total 6") {
		t.Fatalf("output %q", done.Output)
	}
	if len(done.NeverHit) != 1 || done.NeverHit[0].Line != neverHit {
		t.Fatalf("never hit %+v", done.NeverHit)
	}
}

func stopAt(tb testing.TB, s *Supervisor, ctx context.Context, root, file string, line int, l adapter.LaunchSpec, wait time.Duration) *result.StopResult {
	tb.Helper()
	s.SetBreakpoints(ctx, at(root, file), []breakpoint.LineSpec{{Line: line}}, nil, false)
	stop, err := s.Launch(ctx, l, wait)
	if err != nil || stop.Outcome != "stopped" {
		tb.Fatalf("launch: %+v %v", stop, err)
	}
	return stop
}
