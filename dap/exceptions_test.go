package dap

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

const pyFailingTest = `def add(a, b):
    return a + b + 1


def test_add():
    got = add(2, 3)
    assert got == 5, "add is off"
`

// A failing assert in a pytest test, launched as a module with no
// exceptions named, stops at the assert with its frame and locals (the
// runner catches it, so it is user_unhandled, on by default for pytest);
// before, the run went to its end.
func TestPytestAssertStops(t *testing.T) {
	needAdapter(t, "debugpy")
	root := testenv.Tree(t, map[string]string{"test_add.py": pyFailingTest})
	s := newSupervisor(t, root, Config{})
	res, err := s.Launch(testCtx(t), adapter.LaunchSpec{Module: "pytest", Args: []string{"-q", "-p", "no:cacheprovider", "test_add.py"}}, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != "stopped" || res.Stop.Reason != "exception" {
		t.Fatalf("a failing assert under pytest: %+v %+v", res, res.Stop)
	}
	wantStop(t, res, "exception", 7, `assert got == 5`)
	if res.Frame.File != "test_add.py" || !strings.Contains(res.Exception, "AssertionError") {
		t.Fatalf("frame %+v exception %q", res.Frame, res.Exception)
	}
	wantLocal(t, res.Locals, "got", "6")
	if e := res.Exceptions; e == nil || strings.Join(e.Filters, ",") != "uncaught,userUnhandled" {
		t.Fatalf("filters sent: %+v", res.Exceptions)
	}
}

const pyCaught = `def parse(s):
    try:
        return int(s)
    except ValueError:
        return 0


print("parsed", parse("x"))
`

// A caught exception: by default the program runs to its end; with raised
// it stops where it is raised; with [] nothing stops it, uncaught or not.
func TestDebugpyExceptionKinds(t *testing.T) {
	needAdapter(t, "debugpy")
	root := testenv.Tree(t, map[string]string{"app.py": pyCaught, "raise.py": pyRaise})
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	res, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, "app.py")}, 30*time.Second)
	if err != nil || res.Outcome != "exited" {
		t.Fatalf("a caught exception by default: %+v %v", res, err)
	}
	s.Terminate(ctx, false)
	res, err = s.Launch(ctx, adapter.LaunchSpec{Program: at(root, "app.py"), Exceptions: []string{"raised"}}, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wantStop(t, res, "exception", 3, "return int(s)")
	if !strings.Contains(res.Exception, "ValueError") || strings.Join(res.Exceptions.Filters, ",") != "raised" {
		t.Fatalf("raised: %q %+v", res.Exception, res.Exceptions)
	}
	s.Terminate(ctx, false)
	res, err = s.Launch(ctx, adapter.LaunchSpec{Program: at(root, "raise.py"), Exceptions: []string{}}, 30*time.Second)
	if err != nil || res.Outcome != "exited" || res.ExitCode == nil || *res.ExitCode == 0 {
		t.Fatalf("an uncaught exception with exceptions []: %+v %v", res, err)
	}
}

// An exception kind or filter an adapter lacks is refused, naming what it
// has: a kind before the adapter starts, a filter name against its
// initialize answer (and no session is left).
func TestExceptionsBadInput(t *testing.T) {
	needAdapter(t, "debugpy")
	root := goRoot(t, loopGo, map[string]string{"app.py": pyCaught})
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	_, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, root), Exceptions: []string{"raised"}}, 0)
	if err == nil || !errors.Is(err, adapter.ErrBadArgument) || !strings.Contains(err.Error(), "delve has no filter for raised exceptions; it has uncaught") {
		t.Fatalf("raised for delve: %v", err)
	}
	_, err = s.Launch(ctx, adapter.LaunchSpec{Program: at(root, "app.py"), Exceptions: []string{"cpp_throw"}}, 0)
	if err == nil || !strings.Contains(err.Error(), `debugpy offers no exception filter "cpp_throw"`) || !strings.Contains(err.Error(), "raised, uncaught, userUnhandled") {
		t.Fatalf("a filter debugpy lacks: %v", err)
	}
	if st := s.Status(); st.Session != nil {
		t.Fatalf("a refused launch left a session: %+v", st.Session)
	}
	if _, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, "app.py"), Exceptions: []string{" "}}, 0); err == nil || !strings.Contains(err.Error(), "empty name") {
		t.Fatalf("an empty name: %v", err)
	}
}

const cppThrow = `#include <cstdio>
#include <stdexcept>

int parse(int x) {
	if (x < 0) {
		throw std::runtime_error("negative");
	}
	return x;
}

int main(int argc, char **argv) {
	try {
		parse(-1);
	} catch (const std::exception &e) {
		std::printf("caught %s\n", e.what());
	}
	if (argc > 1) {
		parse(-2);
	}
	return 0;
}
`

// C++ under lldb-dap: raised is cpp_throw and stops at the throw of a
// caught exception; by default a caught one runs on, and an uncaught one
// stops on the abort it ends in; cpp_catch is lldb-dap's own filter name.
func TestLLDBExceptions(t *testing.T) {
	needAdapter(t, "lldb")
	gxx := testenv.LookPath(t, "g++")
	root := testenv.Tree(t, map[string]string{"main.cpp": cppThrow})
	bin := filepath.Join(root, "prog")
	if out, err := exec.Command(gxx, "-g", "-O0", "-o", bin, filepath.Join(root, "main.cpp")).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	res, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, bin)}, 30*time.Second)
	if err != nil || res.Outcome != "exited" || !strings.Contains(res.Output, "caught negative") {
		t.Fatalf("a caught exception by default: %+v %v", res, err)
	}
	s.Terminate(ctx, false)
	res, err = s.Launch(ctx, adapter.LaunchSpec{Program: at(root, bin), Exceptions: []string{"raised"}}, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != "stopped" || res.Stop.Reason != "exception" || res.Frame == nil || res.Frame.Line != 6 {
		t.Fatalf("raised: %+v %v (frame %+v)", res, err, res.Frame)
	}
	if strings.Join(res.Exceptions.Filters, ",") != "cpp_throw" {
		t.Fatalf("filters %+v", res.Exceptions)
	}
	s.Terminate(ctx, false)
	res, err = s.Launch(ctx, adapter.LaunchSpec{Program: at(root, bin), Args: []string{"uncaught"}}, 30*time.Second)
	if err != nil || res.Outcome != "stopped" || res.Stop.Reason != "exception" || !strings.Contains(res.Stop.Description+res.Stop.Text, "SIGABRT") {
		t.Fatalf("an uncaught C++ exception by default: %+v %v %+v", res, err, res.Stop)
	}
	if res.Frame == nil || res.Frame.File != "main.cpp" || res.Frame.Line != 6 {
		t.Fatalf("the uncaught exception's frame in the checkout: %+v", res.Frame)
	}
	s.Terminate(ctx, false)
	res, err = s.Launch(ctx, adapter.LaunchSpec{Program: at(root, bin), Exceptions: []string{"cpp_catch"}}, 30*time.Second)
	if err != nil || res.Outcome != "stopped" || strings.Join(res.Exceptions.Filters, ",") != "cpp_catch" {
		t.Fatalf("cpp_catch: %+v %v", res, err)
	}
	s.Terminate(ctx, false)
}

// The adapters listing says which kinds each adapter has, and what it
// stops on without a filter (delve: every unrecovered panic already).
func TestAdaptersListExceptions(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"go.mod": "module x\n"})
	s := newSupervisor(t, root, Config{})
	for _, a := range s.Adapters(testCtx(t)) {
		switch a.ID {
		case "delve":
			if strings.Join(a.Exceptions, ",") != "uncaught" || !strings.Contains(a.ExceptionNote, "stops on every unrecovered panic") {
				t.Errorf("delve: %+v", a)
			}
		case "debugpy":
			if strings.Join(a.Exceptions, ",") != "uncaught,raised,user_unhandled" {
				t.Errorf("debugpy: %+v", a)
			}
		}
	}
}
