package dap

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/breakpoint"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

const busyGo = `package main

import "fmt"

func main() {
	n := 0
	for {
		n++
		if n%100000000 == 0 {
			fmt.Println("still", n)
		}
	}
}
`

func goRoot(t *testing.T, src string, more map[string]string) string {
	t.Helper()
	testenv.LookPath(t, "dlv")
	files := map[string]string{"go.mod": "module example.com/p\n\ngo 1.22\n", "main.go": src}
	for k, v := range more {
		files[k] = v
	}
	return testenv.Tree(t, files)
}

// delve pauses a busy loop; a pause of a stopped program answers at once;
// a resume that outlasts its wait says the program still runs; terminate
// mid-run leaves no process. (That a pause reaches a continue waiting for
// a stop is TestPauseReachesAWaitingContinue's, on synctest's clock.)
func TestPauseBusyLoopAndTerminate(t *testing.T) {
	root := goRoot(t, busyGo, nil)
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	res, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, root)}, 300*time.Millisecond)
	if err != nil || res.Outcome != "running" || !strings.Contains(res.Note, "still running") {
		t.Fatalf("launch of a busy loop: %+v %v", res, err)
	}
	p, err := s.Resume(ctx, "pause", 0, 10*time.Second)
	if err != nil || p.Outcome != "stopped" || p.Stop.Reason != "pause" {
		t.Fatalf("pause: %+v %v", p, err)
	}
	again, err := s.Resume(ctx, "pause", 0, time.Second)
	if err != nil || again.Stop == nil || again.Stop.N != p.Stop.N || !strings.Contains(again.Note, "already stopped") {
		t.Fatalf("pause while stopped: %+v %v", again, err)
	}
	if _, err := s.Resume(ctx, "continue", 0, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	sess := s.sess
	adapter, prog := sess.AdapterPID(), sess.PID()
	if prog == 0 {
		t.Fatal("no process event: the program's pid is unknown")
	}
	if _, err := s.Terminate(ctx, false); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "dlv", adapter)
	waitGone(t, "the busy program", prog)
	if _, err := os.Stat(sess.tmp); !os.IsNotExist(err) {
		t.Fatalf("the session folder (build output, socket) is still there: %v", err)
	}
	if _, err := s.Resume(ctx, "continue", 0, 0); err == nil || !strings.Contains(err.Error(), "it was terminated") {
		t.Fatalf("a resume after terminate: %v", err)
	}
}

// The session's time limit stops it, and the next call says why. The
// limit counts delve's build, which a loaded machine can make take
// seconds: it is 10 s (the waits themselves are TestTimeLimitBoundsAWait's,
// on synctest's clock).
func TestTimeLimit(t *testing.T) {
	root := goRoot(t, busyGo, nil)
	s := newSupervisor(t, root, Config{TTL: 10 * time.Second})
	ctx := testCtx(t)
	if _, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, root)}, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	prog := s.sess.PID()
	// A continue waits for the limit (real time: the program is delve's);
	// the call after it says why the session ended.
	if res, err := s.Resume(ctx, "continue", 0, time.Minute); err != nil || res.Outcome != "ended" {
		t.Fatalf("a continue at the time limit: %+v %v", res, err)
	}
	_, err := s.Resume(ctx, "pause", 0, time.Second)
	if err == nil || !strings.Contains(err.Error(), "time limit of 10s") {
		t.Fatalf("after the time limit: %v", err)
	}
	waitGone(t, "the program", prog)
	res, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, root)}, 100*time.Millisecond)
	if err != nil || res.Outcome != "running" {
		t.Fatalf("a launch after expiry: %+v %v", res, err)
	}
}

const panicGo = `package main

import "fmt"

func divide(a, b int) int {
	return a / b
}

func main() {
	zero := 0
	fmt.Println(divide(1, zero))
}
`

// A panic comes back in one result: the message, the top frame in the
// checkout with its source, and its locals.
func TestGoPanicSummary(t *testing.T) {
	root := goRoot(t, panicGo, nil)
	s := newSupervisor(t, root, Config{})
	res, err := s.Launch(testCtx(t), adapter.LaunchSpec{Program: at(root, root)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != "stopped" || res.Stop.Reason != "exception" || !strings.Contains(res.Exception, "integer divide by zero") {
		t.Fatalf("panic: %+v %+v", res, res.Stop)
	}
	if res.Frame == nil || res.Frame.File != "main.go" || res.Frame.Line != 6 || localNamed(res.Locals, "b") == nil {
		t.Fatalf("panic frame %+v locals %+v", res.Frame, res.Locals)
	}
}

const pyRaise = `def parse(s):
    return int(s)


print(parse("12x"))
`

// An uncaught Python exception stops there, with its type and message.
func TestPythonUncaughtException(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"app.py": pyRaise})
	s := newSupervisor(t, root, Config{})
	res, err := s.Launch(testCtx(t), adapter.LaunchSpec{Program: at(root, filepath.Join(root, "app.py"))}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != "stopped" || res.Stop.Reason != "exception" || !strings.Contains(res.Exception, "ValueError") {
		t.Fatalf("exception: %+v %+v", res, res.Stop)
	}
	if res.Frame == nil || res.Frame.File != "app.py" || res.Frame.Line != 2 {
		t.Fatalf("exception frame %+v", res.Frame)
	}
}

const loopGo = `package main

import "fmt"

func main() {
	for i := 0; i < 10; i++ {
		j := i * 2
		fmt.Println("i is", i, j)
	}
}
`

// A conditional breakpoint stops only when its condition holds; a
// logpoint prints and does not stop; hits are counted.
func TestConditionAndLogpoint(t *testing.T) {
	root := goRoot(t, loopGo, nil)
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	s.SetBreakpoints(ctx, at(root, "main.go"), []breakpoint.LineSpec{{Line: 8, Condition: "i == 6"}}, nil, false)
	s.SetBreakpoints(ctx, at(root, "main.go"), []breakpoint.LineSpec{{Line: 7, LogMessage: "looping {i}"}}, nil, false)
	res, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, root)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != "stopped" || res.Stop.Reason != "breakpoint" {
		t.Fatalf("condition: %+v", res)
	}
	wantLocal(t, res.Locals, "i", "6")
	done, err := s.Resume(ctx, "continue", 0, 30*time.Second)
	if err != nil || done.Outcome != "exited" {
		t.Fatalf("%+v %v", done, err)
	}
	out, _ := s.Output(1 << 20)
	all := res.Output + done.Output + out.Output
	if !strings.Contains(all, "looping 3") || !strings.Contains(all, "i is 9 18") {
		t.Fatalf("logpoint output missing: %q", all)
	}
	for _, b := range s.bps.All() {
		if b.Line == 8 && b.Hits != 1 {
			t.Fatalf("hits of the conditional breakpoint: %+v", b)
		}
	}
}

const testGo = `package main

import "testing"

func add(a, b int) int { return a + b }

func TestAdd(t *testing.T) {
	got := add(2, 3)
	if got != 5 {
		t.Fatal(got)
	}
}

func TestOther(t *testing.T) {}
`

// A Go test debugged by name (delve's test mode).
func TestGoTestByName(t *testing.T) {
	root := goRoot(t, loopGo, map[string]string{"add_test.go": testGo})
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	res := stopAt(t, s, ctx, root, "add_test.go", 9, adapter.LaunchSpec{Program: at(root, root), Test: "TestAdd"}, 0)
	if res.Outcome != "stopped" || res.Frame == nil || res.Frame.Line != 9 {
		t.Fatalf("test stop: %+v %+v", res, res.Frame)
	}
	wantLocal(t, res.Locals, "got", "5")
}

const pyTest = `def add(a, b):
    return a + b


def test_add():
    got = add(2, 3)
    assert got == 5


def test_other():
    pass
`

// A pytest run debugged, by module with -k.
func TestPytestByName(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"test_add.py": pyTest})
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	res := stopAt(t, s, ctx, root, "test_add.py", 7, adapter.LaunchSpec{Module: "pytest", Args: []string{"-q", "-k", "test_add", "test_add.py"}}, 30*time.Second)
	if res.Outcome != "stopped" || res.Frame == nil || res.Frame.Line != 7 {
		t.Fatalf("pytest stop: %+v %+v", res, res.Frame)
	}
	wantLocal(t, res.Locals, "got", "5")
}

// A program that does not build comes back with the compiler's message.
func TestBuildError(t *testing.T) {
	root := goRoot(t, "package main\n\nfunc main() {\n\tundefinedThing()\n}\n", nil)
	s := newSupervisor(t, root, Config{})
	_, err := s.Launch(testCtx(t), adapter.LaunchSpec{Program: at(root, root)}, 0)
	if err == nil || !strings.Contains(err.Error(), "undefined: undefinedThing") {
		t.Fatalf("build error: %v", err)
	}
	if st := s.Status(); st.Session != nil {
		t.Fatalf("a failed launch left a session: %+v", st.Session)
	}
}

const crashC = `#include <stdio.h>

int main(void) {
	int *p = 0;
	printf("about to crash\n");
	fflush(stdout);
	return *p;
}
`

// A debuggee that crashes stops with the signal, at its line.
func TestNativeCrash(t *testing.T) {
	needAdapter(t, "lldb")
	root := testenv.Tree(t, map[string]string{"main.c": crashC})
	bin := buildC(t, root)
	s := newSupervisor(t, root, Config{})
	res, err := s.Launch(testCtx(t), adapter.LaunchSpec{Program: at(root, bin)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != "stopped" || res.Stop.Reason != "exception" || res.Frame == nil || res.Frame.Line != 7 {
		t.Fatalf("crash: %+v %+v %+v", res, res.Stop, res.Frame)
	}
	if !strings.Contains(res.Stop.Description+res.Stop.Text, "SIGSEGV") && !strings.Contains(res.Stop.Description+res.Stop.Text, "EXC_BAD_ACCESS") {
		t.Fatalf("the stop does not name the signal: %+v", res.Stop)
	}
}

// The adapter killed under a session: a clear error, the session gone,
// the next launch works.
func TestAdapterKilled(t *testing.T) {
	root := goRoot(t, busyGo, nil)
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	if _, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, root)}, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	prog := s.sess.PID()
	syscall.Kill(s.sess.AdapterPID(), syscall.SIGKILL)
	waitSession(t, ctx, s.sess, "the session's end", func(sess *Session) bool { return sess.ended != "" })
	_, err := s.Resume(ctx, "pause", 0, time.Second)
	if err == nil || !strings.Contains(err.Error(), "adapter exited unexpectedly") {
		t.Fatalf("after the adapter died: %v", err)
	}
	waitGone(t, "the program", prog)
	if res, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, root)}, 100*time.Millisecond); err != nil || res.Outcome != "running" {
		t.Fatalf("a launch after the adapter died: %+v %v", res, err)
	}
}

// Bad input the engine answers with what to do.
func TestBadInput(t *testing.T) {
	root := goRoot(t, loopGo, nil)
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	if _, err := s.Stack(ctx, 0); err == nil || !strings.Contains(err.Error(), "start one with operation launch") {
		t.Fatalf("stack without a session: %v", err)
	}
	if _, err := s.Launch(ctx, adapter.LaunchSpec{Attach: true}, 0); err == nil || !strings.Contains(err.Error(), "attach needs port") {
		t.Fatalf("attach with neither port nor pid: %v", err)
	}
	if _, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, filepath.Join(root, "README")), Adapter: "gdb"}, 0); err == nil || !strings.Contains(err.Error(), "unknown adapter") {
		t.Fatalf("unknown adapter: %v", err)
	}
	if _, err := s.SetBreakpoints(ctx, at(root, "main.go"), []breakpoint.LineSpec{{Line: 0}}, nil, false); err == nil {
		t.Fatal("line 0 accepted")
	}
	// A line with no code: the adapter binds it elsewhere or refuses it,
	// and the result says which.
	s.SetBreakpoints(ctx, at(root, "main.go"), []breakpoint.LineSpec{{Line: 2}}, nil, false)
	if _, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, root)}, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, b := range s.bps.All() {
		if b.Line == 2 && b.Verified && b.BoundLine == 0 {
			t.Fatalf("a breakpoint on a blank line claims to be there: %+v", b)
		}
		if b.Line == 2 && !b.Verified && b.Message == "" {
			t.Fatalf("an unverified breakpoint without the adapter's reason: %+v", b)
		}
	}
}
