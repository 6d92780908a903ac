package debugtool_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/dap"
	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/debugtool"
	"github.com/builtin-tools/builtin-tools/dap/result"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// Issue 19 §3: every debug result says what happened. These drive the
// tool as an agent does, against the real adapters, and read its text.

// opArg is the argument that picks what debug does.
const opArg = "operation"

// debugRun is a run over a checkout of files with the debug tool.
func debugRun(t *testing.T, files map[string]string, cfg dap.Config) (*registry.Run, string) {
	t.Helper()
	root := testenv.Tree(t, files)
	r, err := builtintools.NewRun(builtintools.Options{Root: root, ConversationID: "truth", Without: []string{"lsp", "structural"},
		Settings: map[string]any{debugtool.Key.Name(): cfg}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, root
}

// dbg calls debug with args (the operation first) and returns its text,
// whether it is an error, and its structured result.
func dbg(t *testing.T, r *registry.Run, op string, args map[string]any) (string, bool, debugtool.DebugResult) {
	t.Helper()
	m := map[string]any{opArg: op}
	for k, v := range args {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := r.Call(ctx, tiers.Normal, "debug", b)
	if err != nil {
		t.Fatalf("debug %s: %v", b, err)
	}
	out, _ := res.StructuredContent.(debugtool.DebugResult)
	return registry.ResultText(res), res.IsError, out
}

// program starts argv outside builtin-tools, as a user's program would
// run, and waits for its first line of output.
func program(t *testing.T, dir string, argv ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Scan()
		line <- sc.Text()
		for sc.Scan() {
		}
	}()
	select {
	case l := <-line:
		if !strings.HasPrefix(l, "ready") {
			t.Fatalf("%v said %q", argv, l)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%v did not start", argv)
	}
	return cmd
}

const goLoop = `package main

import (
	"fmt"
	"time"
)

func main() {
	fmt.Println("ready")
	n := 0
	for {
		n++
		time.Sleep(10 * time.Millisecond)
	}
}
`

const cLoop = `#include <stdio.h>
#include <unistd.h>
int main(void) {
	volatile long n = 0;
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		n++;
		usleep(10000);
	}
}
`

const pyListen = `import sys, time
import debugpy

debugpy.listen(("127.0.0.1", int(sys.argv[1])))
print("ready", flush=True)
n = 0
while True:
    n += 1
    time.sleep(0.01)
`

const pyLoop = `import time
print("ready", flush=True)
n = 0
while True:
    n += 1
    time.sleep(0.01)
`

// buildGo builds the Go loop in root.
func buildGo(t *testing.T, root string) string {
	t.Helper()
	gobin := testenv.LookPath(t, "go")
	cmd := exec.Command(gobin, "build", "-gcflags=all=-N -l", "-o", "loopgo", ".")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return filepath.Join(root, "loopgo")
}

func buildCLoop(t *testing.T, root string) string {
	t.Helper()
	return testenv.BuildC(t, root, "loop.c", "loopc")
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func systemPython(t *testing.T) string {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import debugpy").Run(); err != nil {
		testenv.Missing(t, "debugpy", "apt-get install python3-debugpy")
	}
	return py
}

// attachTarget is a program to attach to and how: start writes its
// source into the run's root, runs it there and says where it loops.
type attachTarget struct {
	name  string
	start func(t *testing.T, root string) (pid int, args map[string]any, file string, line int)
}

func write(t *testing.T, root, name, text string) {
	if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func attachTargets() []attachTarget {
	return []attachTarget{
		{"delve", func(t *testing.T, root string) (int, map[string]any, string, int) {
			testenv.LookPath(t, "dlv")
			write(t, root, "go.mod", "module example.com/loop\n\ngo 1.22\n")
			write(t, root, "main.go", goLoop)
			p := program(t, root, buildGo(t, root))
			return p.Process.Pid, map[string]any{"pid": p.Process.Pid}, "main.go", 12
		}},
		{"lldb", func(t *testing.T, root string) (int, map[string]any, string, int) {
			testenv.LookPath(t, "lldb-dap-19")
			write(t, root, "loop.c", cLoop)
			p := program(t, root, buildCLoop(t, root))
			return p.Process.Pid, map[string]any{"pid": p.Process.Pid}, "loop.c", 8
		}},
		{"debugpy", func(t *testing.T, root string) (int, map[string]any, string, int) {
			py := systemPython(t)
			write(t, root, "server.py", pyListen)
			port := freePort(t)
			p := program(t, root, py, "server.py", strconv.Itoa(port))
			return p.Process.Pid, map[string]any{"port": port}, "server.py", 8
		}},
	}
}

// attachAndStop attaches to a target with a breakpoint in its loop, and
// checks it stops there: the attach is real.
func attachAndStop(t *testing.T, r *registry.Run, args map[string]any, file string, line int) debugtool.DebugResult {
	t.Helper()
	dbg(t, r, "breakpoints", map[string]any{"file": file, "lines": []int{line}})
	args["timeout_seconds"] = 30
	text, isErr, out := dbg(t, r, "attach", args)
	if isErr || out.Stop == nil || out.Stop.Outcome != "stopped" || out.Stop.Frame == nil || out.Stop.Frame.Line != line {
		t.Fatalf("attach %v: want a stop at %s:%d: %s", args, file, line, text)
	}
	return out
}

// §3: terminate after attach said "the program, the adapter and their
// files are gone" while the program kept running. It detaches by default
// (here from a program stopped at a breakpoint) and says the program still
// runs, and it does; with terminate_debuggee it ends the program and says
// so only once it is gone.
func TestTerminateAfterAttach(t *testing.T) {
	for _, tg := range attachTargets() {
		t.Run(tg.name, func(t *testing.T) {
			r, root := debugRun(t, map[string]string{"README": "attach\n"}, dap.Config{})
			pid, args, file, line := tg.start(t, root)
			args["adapter"] = tg.name
			attachAndStop(t, r, args, file, line)
			if text, isErr, _ := dbg(t, r, "restart", nil); !isErr || !strings.Contains(text, "terminate, then attach again") {
				t.Fatalf("restart after attach: %s", text)
			}
			text, isErr, out := dbg(t, r, "terminate", nil)
			want := fmt.Sprintf("the program, pid %d, is still running", pid)
			if isErr || !strings.Contains(text, "Detached") || !strings.Contains(text, want) {
				t.Fatalf("terminate after attach: %s", text)
			}
			if out.Terminated == nil || !out.Terminated.Detached || out.Terminated.Debuggee != result.DebuggeeRunning || out.Terminated.PID != pid {
				t.Errorf("structured: %+v", out.Terminated)
			}
			// Past many turns of its loop, breakpoint line included: a real
			// process, which only real time shows running on.
			time.Sleep(500 * time.Millisecond)
			if st := state(pid); st == "" || st == "t" || st == "T" {
				t.Fatalf("the result says the program still runs; its state is %q", st)
			}

			attachAndStop(t, r, args, file, line)
			text, isErr, out = dbg(t, r, "terminate", map[string]any{"terminate_debuggee": true})
			if isErr || !strings.Contains(text, fmt.Sprintf("pid %d, has ended", pid)) {
				t.Fatalf("terminate with terminate_debuggee: %s", text)
			}
			if out.Terminated == nil || out.Terminated.Debuggee != result.DebuggeeEnded {
				t.Errorf("structured: %+v", out.Terminated)
			}
			if !testenv.Exits(pid, time.Second) {
				t.Fatal("the result says the program ended; it still runs")
			}
		})
	}
}

// state is pid's state letter, "" when it is gone or a zombie.
func state(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) == 0 || f[0] == "Z" {
		return ""
	}
	return f[0]
}

// gdbCannotCall says why gdb cannot call a function inside another
// process on this machine ("" when it can): some kernels and virtual
// machines refuse ptrace's write of the extended register state, and
// debugpy's attach by pid is such a call.
func gdbCannotCall(t *testing.T) string {
	t.Helper()
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, "gdb", "--nx", "--batch", "--pid", strconv.Itoa(sleeper.Process.Pid), "--eval-command", "call (int)getpid()").CombinedOutput()
	if strings.Contains(string(out), "Couldn't write extended state status") {
		return "gdb on this machine cannot call a function in another process (the kernel refuses to write its extended register state)"
	}
	return ""
}

// Where gdb cannot inject code, attach by pid to a Python program fails,
// and the error says why and what works instead (debugpy.listen + port,
// or launch), not only debugpy's timeout.
func TestAttachByPidWhereGdbCannotInject(t *testing.T) {
	py := systemPython(t)
	testenv.LookPath(t, "gdb")
	if gdbCannotCall(t) == "" {
		t.Skip("gdb injects code on this machine; TestAttachPicksTheAdapter attaches by pid")
	}
	r, root := debugRun(t, map[string]string{"README": "attach\n"}, dap.Config{})
	write(t, root, "loop.py", pyLoop)
	p := program(t, root, py, "loop.py")
	text, isErr, _ := dbg(t, r, "attach", map[string]any{"pid": p.Process.Pid, "timeout_seconds": 30})
	if !isErr || !strings.Contains(text, "cannot run code inside another process") || !strings.Contains(text, "attach with port") {
		t.Fatalf("attach by pid where gdb cannot inject: %s", text)
	}
}

// §3: attach with port and no adapter failed with "program  does not
// exist". A port means debugpy; a pid the adapter for what the process
// runs (delve for Go, debugpy for Python, lldb for other native code);
// neither is an error naming both.
func TestAttachPicksTheAdapter(t *testing.T) {
	py := func(t *testing.T, root string) (int, map[string]any, string, int) {
		py := systemPython(t)
		testenv.LookPath(t, "gdb") // debugpy injects itself with it
		if why := gdbCannotCall(t); why != "" {
			t.Skipf("%s; TestAttachByPidWhereGdbCannotInject checks what the tool says then", why)
		}
		write(t, root, "loop.py", pyLoop)
		p := program(t, root, py, "loop.py")
		return p.Process.Pid, map[string]any{"pid": p.Process.Pid}, "loop.py", 5
	}
	targets := append(attachTargets(), attachTarget{"debugpy by pid", py})
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			r, root := debugRun(t, map[string]string{"README": "attach\n"}, dap.Config{})
			_, args, file, line := tg.start(t, root)
			out := attachAndStop(t, r, args, file, line)
			if want := strings.Fields(tg.name)[0]; out.Stop.Session.Adapter != want {
				t.Fatalf("attach %v chose %s, want %s", args, out.Stop.Session.Adapter, want)
			}
			dbg(t, r, "terminate", map[string]any{"terminate_debuggee": true})
		})
	}
	t.Run("neither", func(t *testing.T) {
		r, _ := debugRun(t, map[string]string{"README": "attach\n"}, dap.Config{})
		text, isErr, _ := dbg(t, r, "attach", nil)
		if !isErr || !strings.Contains(text, "port") || !strings.Contains(text, "pid") || strings.Contains(text, "program  ") {
			t.Fatalf("attach with neither port nor pid: %s", text)
		}
		text, isErr, _ = dbg(t, r, "attach", map[string]any{"pid": 9999999})
		if !isErr || !strings.Contains(text, "no process 9999999") {
			t.Fatalf("attach to a pid that cannot exist: %s", text)
		}
	})
}

const goVars = `package main

import "fmt"

type item struct {
	name  string
	price int
}

func total(p *item, xs []int) int {
	sum := 0
	for _, x := range xs {
		sum += x * p.price
	}
	return sum
}

func main() {
	fmt.Println(total(&item{"tea", 3}, []int{1, 2}))
}
`

const pyVars = `class Item:
    def __init__(self, name, price):
        self.name = name
        self.price = price


def main():
    it = Item("tea", 3)
    xs = [1, 2, 3]
    print(it.price, xs)


main()
`

const cVars = `#include <stdio.h>
#include <stdlib.h>
struct item { const char *name; int price; };
int main(void) {
	struct item *p = malloc(sizeof *p);
	p->name = "tea";
	p->price = 3;
	printf("%d\n", p->price);
	return 0;
}
`

// §3: variables said "0 children" for a Go struct pointer, Python objects
// and lists, and a C pointer, each of which expands. A child count is the
// adapter's, or "expandable" when it gives none; debugpy's "special
// variables" and "function variables" groups are left out unless all is
// asked for; delve's unset result slot (~r0) is never shown as a value.
func TestVariablesSayWhatExpands(t *testing.T) {
	type expand struct{ name, child string }
	cases := []struct {
		name, file string
		line       int
		files      map[string]string
		program    string
		setup      func(t *testing.T, root string)
		expands    []expand
	}{
		{"delve", "main.go", 13, map[string]string{"go.mod": "module example.com/v\n\ngo 1.22\n", "main.go": goVars}, ".",
			func(t *testing.T, root string) { testenv.LookPath(t, "dlv") }, []expand{{"p", "main.item"}, {"xs", "[1]"}}},
		{"debugpy", "app.py", 10, map[string]string{"requirements.txt": "", "app.py": pyVars}, "app.py",
			func(t *testing.T, root string) { systemPython(t) }, []expand{{"it", "price"}, {"xs", "len()"}}},
		{"lldb", "main.c", 8, map[string]string{"Makefile": "", "main.c": cVars}, "prog",
			func(t *testing.T, root string) {
				testenv.LookPath(t, "lldb-dap-19")
				testenv.BuildC(t, root, "main.c", "prog")
			}, []expand{{"p", "price"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, root := debugRun(t, c.files, dap.Config{})
			c.setup(t, root)
			dbg(t, r, "breakpoints", map[string]any{"file": c.file, "lines": []int{c.line}})
			text, isErr, out := dbg(t, r, "launch", map[string]any{"program": c.program})
			if isErr || out.Stop == nil || out.Stop.Frame == nil {
				t.Fatalf("launch: %s", text)
			}
			if strings.Contains(text, "~r0 =") || strings.Contains(text, "special variables =") {
				t.Errorf("the stop's locals show an unset result slot or debugpy's groups: %s", text)
			}
			for _, e := range c.expands {
				var ref string
				for _, v := range out.Stop.Locals {
					if v.Name == e.name {
						ref = v.Ref
					}
				}
				if ref == "" {
					t.Fatalf("no reference for %s in %s", e.name, text)
				}
				_, _, sc := dbg(t, r, "scopes", map[string]any{"frame_id": out.Stop.Frame.ID})
				listing, isErr, _ := dbg(t, r, "variables", map[string]any{"reference": sc.Scopes.Scopes[0].Ref})
				if isErr || strings.Contains(listing, "0 children") || strings.Contains(listing, "~r0 =") {
					t.Errorf("the frame's variables: %s", listing)
				}
				if c.name == "delve" && !strings.Contains(listing, "not shown: ~r0") {
					t.Errorf("the result slot's leaving out is not said: %s", listing)
				}
				children, isErr, _ := dbg(t, r, "variables", map[string]any{"reference": ref})
				if isErr || !strings.Contains(children, e.child) {
					t.Errorf("%s does not expand to %s: %s", e.name, e.child, children)
				}
				if c.name == "debugpy" {
					if strings.Contains(children, "special variables =") || strings.Contains(children, "function variables =") || !strings.Contains(children, "all: true") {
						t.Errorf("debugpy's groups shown without all, or their leaving out not said: %s", children)
					}
					all, _, _ := dbg(t, r, "variables", map[string]any{"reference": ref, "all": true})
					if !strings.Contains(all, "special variables =") {
						t.Errorf("all: true does not show debugpy's groups: %s", all)
					}
				}
			}
			dbg(t, r, "terminate", nil)
		})
	}
}

// §3: adapters named /usr/bin/python3 while the launch ran the checkout's
// .venv/bin/python. It names the interpreter the program runs with, and
// the program does run with it; one that cannot run debugpy (a venv
// without it, where Debian's debugpy needs packages only the system has)
// is said by adapters, and the launch says so at once instead of waiting
// 15 s for a debuggee that died.
func TestAdaptersNameTheInterpreter(t *testing.T) {
	py := systemPython(t)
	for _, c := range []struct {
		name  string
		flags []string
		works bool
	}{
		{"venv with the system's packages", []string{"--system-site-packages"}, true},
		{"venv without debugpy", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, root := debugRun(t, map[string]string{"requirements.txt": "", "which.py": "import sys\nprint('python', sys.executable)\n"}, dap.Config{})
			args := append(append([]string{"-m", "venv", "--without-pip"}, c.flags...), filepath.Join(root, ".venv"))
			if out, err := exec.Command(py, args...).CombinedOutput(); err != nil {
				testenv.Unavailable(t, "python3 -m venv", fmt.Errorf("%v: %s", err, out))
			}
			text, _, out := dbg(t, r, "adapters", nil)
			var row adapter.Status
			for _, a := range out.Adapters {
				if a.ID == "debugpy" {
					row = a
				}
			}
			if row.Interpreter != ".venv/bin/python" || !strings.Contains(text, "programs run with .venv/bin/python") || (row.InterpreterProblem == "") != c.works {
				t.Fatalf("adapters does not name the checkout's interpreter truly: %+v\n%s", row, text)
			}
			t0 := time.Now()
			text, isErr, _ := dbg(t, r, "launch", map[string]any{"program": "which.py"})
			if c.works && (isErr || !strings.Contains(text, "python "+filepath.Join(root, ".venv", "bin", "python"))) {
				t.Fatalf("the program did not run with the interpreter adapters named: %s", text)
			}
			// "cannot launch under debugpy" is the pre-flight's refusal,
			// said before any launch: no wall-clock bound is needed to
			// tell it from a debuggee that died after the launch's wait.
			if !c.works && (!isErr || !strings.Contains(text, "cannot launch under debugpy: .venv/bin/python cannot run debugpy")) {
				t.Fatalf("a launch with an interpreter that cannot run debugpy (%s): %s", time.Since(t0), text)
			}
		})
	}

	// Without a venv: the adapter's own python, named as such.
	r, _ := debugRun(t, map[string]string{"requirements.txt": ""}, dap.Config{})
	text, _, out := dbg(t, r, "adapters", nil)
	for _, a := range out.Adapters {
		if a.ID == "debugpy" && (a.Interpreter == "" || !strings.Contains(text, "programs run with "+a.Interpreter)) {
			t.Fatalf("adapters without a venv: %+v\n%s", a, text)
		}
	}
}

const goSleeper = `package main

import "time"

func work(n int) int { return n + 1 }

func main() {
	n := 0
	for {
		n = work(n)
		time.Sleep(20 * time.Millisecond)
	}
}
`

// §3: pause reported "thread 0" in a runtime frame while threads listed
// goroutine 1. It reports the goroutine the program's own code runs on,
// at its frame in the checkout nearest the top.
func TestPauseShowsTheUsersGoroutine(t *testing.T) {
	testenv.LookPath(t, "dlv")
	r, _ := debugRun(t, map[string]string{"go.mod": "module example.com/s\n\ngo 1.22\n", "main.go": goSleeper}, dap.Config{})
	if text, isErr, _ := dbg(t, r, "launch", map[string]any{"program": ".", "timeout_seconds": 1}); isErr {
		t.Fatal(text)
	}
	for i := range 5 {
		text, isErr, out := dbg(t, r, "pause", nil)
		if isErr || out.Stop == nil || out.Stop.Stop == nil {
			t.Fatalf("pause %d: %s", i, text)
		}
		if out.Stop.Stop.ThreadID != 1 || out.Stop.Frame == nil || out.Stop.Frame.File != "main.go" || !strings.Contains(text, "thread 1") {
			t.Fatalf("pause %d: want goroutine 1 at main.go: %s", i, text)
		}
		stack, _, _ := dbg(t, r, "stack", nil)
		if !strings.Contains(stack, "Stack of thread 1") || !strings.Contains(stack, "main.go") {
			t.Fatalf("the stack after pause %d is not the reported goroutine's: %s", i, stack)
		}
		dbg(t, r, "continue", map[string]any{"timeout_seconds": 1})
	}
}

// The same for lldb: a C program paused in usleep is shown at its frame in
// loop.c, not in libc.
func TestPauseShowsTheCheckoutsFrame(t *testing.T) {
	testenv.LookPath(t, "lldb-dap-19")
	r, root := debugRun(t, map[string]string{"Makefile": "", "loop.c": cLoop}, dap.Config{})
	buildCLoop(t, root)
	text, isErr, _ := dbg(t, r, "launch", map[string]any{"program": "loopc", "timeout_seconds": 1})
	// Past the dynamic loader first: on a loaded machine the program can
	// still be starting, and a pause there is in no frame of the checkout.
	for i := 0; !isErr && !strings.Contains(text, "ready") && i < 30; i++ {
		text, isErr, _ = dbg(t, r, "continue", map[string]any{"timeout_seconds": 1})
	}
	if isErr || !strings.Contains(text, "ready") {
		t.Fatalf("the program did not start: %s", text)
	}
	text, isErr, out := dbg(t, r, "pause", nil)
	if isErr || out.Stop == nil || out.Stop.Frame == nil || out.Stop.Frame.File != "loop.c" || !strings.Contains(text, "Stopped at loop.c:") {
		t.Fatalf("pause of a C program: %s", text)
	}
}
