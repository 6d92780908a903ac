package dap

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/breakpoint"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

const lateGo = `package main

import (
	"fmt"
	"time"
)

func main() {
	time.Sleep(700 * time.Millisecond)
	fmt.Println("woke")
	big := make([]int, 500)
	m := map[string]int{}
	for i := range big {
		big[i] = i
		m[fmt.Sprint("k", i)] = i
	}
	fmt.Println(len(big), len(m))
}
`

// A stop that happens between calls is reported by the next call first,
// without resuming; a huge slice or map is capped and says so.
func TestStopBetweenCallsAndCaps(t *testing.T) {
	root := goRoot(t, lateGo, nil)
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	s.SetBreakpoints(ctx, at(root, "main.go"), []breakpoint.LineSpec{{Line: 17}}, nil, false)
	res, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, root)}, 100*time.Millisecond)
	if err != nil || res.Outcome != "running" {
		t.Fatalf("launch: %+v %v", res, err)
	}
	// The program reaches line 17 while no call runs.
	waitSession(t, ctx, s.sess, "the stop at line 17", func(sess *Session) bool { return len(sess.stops) > 0 && !sess.running })
	res, err = s.Resume(ctx, "continue", 0, 0)
	if err != nil || res.Outcome != "stopped" || !res.Earlier || res.Frame.Line != 17 || !strings.Contains(res.Note, "not resumed") {
		t.Fatalf("the stop between calls: %+v %v", res, err)
	}
	big := localNamed(res.Locals, "big")
	if big == nil || big.Ref == "" {
		t.Fatalf("locals %+v", res.Locals)
	}
	vars, err := s.Variables(ctx, big.Ref, false)
	if err != nil || len(vars.Variables) != 50 || vars.More == 0 {
		t.Fatalf("a 500-element slice: %d shown, more %d, %v", len(vars.Variables), vars.More, err)
	}
}

// Goroutines are grouped by where they are.
func TestThreadsGrouped(t *testing.T) {
	src := `package main

import "sync"

func work(wg *sync.WaitGroup, ch chan int) {
	defer wg.Done()
	<-ch
}

func main() {
	var wg sync.WaitGroup
	ch := make(chan int)
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go work(&wg, ch)
	}
	close(ch)
	wg.Wait()
}
`
	root := goRoot(t, src, nil)
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	s.SetBreakpoints(ctx, at(root, "main.go"), []breakpoint.LineSpec{{Line: 17}}, nil, false)
	if _, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, root)}, 0); err != nil {
		t.Fatal(err)
	}
	th, err := s.Threads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Each of the five is in work or still in the go statement's wrapper;
	// the groups carry no goroutine or thread number.
	n := 0
	for _, g := range th.Groups {
		if strings.Contains(g.Name, "Thread") || strings.Contains(g.Name, "[Go") {
			t.Fatalf("a group name keeps an id: %q", g.Name)
		}
		if strings.Contains(g.Name, "main.work") || strings.Contains(g.Name, "gowrap") {
			n += g.Count
		}
	}
	if n != 5 || len(th.Groups) > 3 {
		t.Fatalf("five goroutines not grouped: %+v", th.Groups)
	}
}

const threadsC = `#include <pthread.h>
#include <stdio.h>

static int hits;

void *run(void *arg) {
	int me = *(int *)arg;
	__sync_fetch_and_add(&hits, me);
	return NULL;
}

int main(void) {
	pthread_t t[4];
	int ids[4] = {1, 2, 3, 4};
	for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, run, &ids[i]);
	for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
	printf("hits %d\n", hits);
	return 0;
}
`

// lldb-dap sends one stopped event per thread; they are one stop, and the
// next continue really continues. The source changed after the build is
// said.
func TestLLDBThreadBurstAndStaleSource(t *testing.T) {
	needAdapter(t, "lldb")
	root := testenv.Tree(t, map[string]string{"main.c": threadsC})
	bin := testenv.BuildC(t, root, "main.c", "prog", "-pthread")
	later := time.Now().Add(time.Minute)
	os.Chtimes(filepath.Join(root, "main.c"), later, later)
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	s.SetBreakpoints(ctx, at(root, "main.c"), []breakpoint.LineSpec{{Line: 8}}, nil, false)
	res, err := s.Launch(ctx, adapter.LaunchSpec{Program: at(root, bin)}, 0)
	if err != nil || res.Outcome != "stopped" || res.Frame.Line != 8 {
		t.Fatalf("launch: %+v %v", res, err)
	}
	if !res.Frame.Newer {
		t.Errorf("the source is newer than the program, and the stop does not say so")
	}
	stops := 1
	for {
		r, err := s.Resume(ctx, "continue", 0, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if r.Outcome == "exited" {
			if !strings.Contains(r.Output, "hits 10") {
				t.Fatalf("output %q", r.Output)
			}
			break
		}
		stops++
		if stops > 4 {
			t.Fatalf("more stops than threads: %+v", r)
		}
	}
}

const rustMain = `fn total(xs: &[i32]) -> i32 {
    let mut sum = 0;
    for x in xs {
        sum += x;
    }
    sum
}

fn main() {
    let xs = vec![1, 2, 3];
    println!("total {}", total(&xs));
}
`

// A Rust program built offline with cargo, debugged with lldb-dap.
func TestLLDBRust(t *testing.T) {
	cargo := testenv.LookPath(t, "cargo")
	needAdapter(t, "lldb")
	root := testenv.Tree(t, map[string]string{"Cargo.toml": "[package]\nname = \"sum\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n", "src/main.rs": rustMain})
	build := exec.Command(cargo, "build", "--offline", "--quiet")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("cargo build: %v\n%s", err, out)
	}
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	res := stopAt(t, s, ctx, root, "src/main.rs", 4, adapter.LaunchSpec{Program: at(root, filepath.Join(root, "target", "debug", "sum"))}, 0)
	wantStop(t, res, "breakpoint", 4, "sum += x")
	wantLocal(t, res.Locals, "sum", "0")
	s.SetBreakpoints(ctx, at(root, "src/main.rs"), nil, []int{4}, false)
	done, err := s.Resume(ctx, "continue", 0, 30*time.Second)
	if err != nil || done.Outcome != "exited" || !strings.Contains(done.Output, "total 6") {
		t.Fatalf("continue: %+v %v", done, err)
	}
}

// An adapter that exits during initialize is a clear error and leaves no
// session.
func TestAdapterExitsDuringInitialize(t *testing.T) {
	adapter.Table = append(adapter.Table, adapter.Spec{ID: "broken", Language: "test", Commands: [][]string{{"sh", "-c", "echo 'cannot start: no licence' >&2; exit 3"}}, Transport: adapter.Stdio, Adapter: scripted{}})
	defer func() { adapter.Table = adapter.Table[:len(adapter.Table)-1] }()
	root := testenv.Tree(t, map[string]string{"x": ""})
	s := newSupervisor(t, root, Config{})
	_, err := s.Launch(testCtx(t), adapter.LaunchSpec{Adapter: "broken", Program: at(root, filepath.Join(root, "x"))}, 0)
	if err == nil || !strings.Contains(err.Error(), "failed to initialize") || !strings.Contains(err.Error(), "no licence") {
		t.Fatalf("an adapter that dies at once: %v", err)
	}
	if st := s.Status(); st.Session != nil {
		t.Fatalf("left a session: %+v", st.Session)
	}
}

const pyServer = `import sys, time
import debugpy

debugpy.listen(("127.0.0.1", int(sys.argv[1])))
print("listening", flush=True)
n = 0
while True:
    n += 1
    time.sleep(0.01)
`

// attach to a Python program that listens for a debugger; terminate
// detaches and leaves the program running (it was not ours to stop).
func TestDebugpyAttach(t *testing.T) {
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		testenv.Missing(t, py, "not installed")
	}
	root := testenv.Tree(t, map[string]string{"server.py": pyServer})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	prog := exec.Command(py, filepath.Join(root, "server.py"), strconv.Itoa(port))
	out, _ := prog.StdoutPipe()
	if err := prog.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { prog.Process.Kill(); prog.Wait() }()
	buf := make([]byte, 64)
	if n, _ := out.Read(buf); !strings.Contains(string(buf[:n]), "listening") {
		t.Fatalf("the program did not start listening: %q", buf[:n])
	}
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	res := stopAt(t, s, ctx, root, "server.py", 8, adapter.LaunchSpec{Adapter: "debugpy", Attach: true, Port: port}, 20*time.Second)
	wantStop(t, res, "breakpoint", 8, "n += 1")
	if _, err := s.Terminate(ctx, false); err != nil {
		t.Fatal(err)
	}
	// A real process: only time tells that no kill comes after.
	if testenv.Exits(prog.Process.Pid, 200*time.Millisecond) {
		t.Fatal("terminate of an attach session killed a program it did not start")
	}
}

// adapters says, per adapter, which half of marker-and-binary is missing;
// no Dart SDK installs here, so dart's binary is reported missing.
func TestAdapterStatuses(t *testing.T) {
	testenv.LookPath(t, "dlv")
	root := testenv.Tree(t, map[string]string{"go.mod": "module m\n", "tools/pubspec.yaml": "name: x\n", "vendor/x/Cargo.toml": ""})
	s := newSupervisor(t, root, Config{})
	byID := map[string]adapter.Status{}
	for _, st := range s.Adapters(testCtx(t)) {
		byID[st.ID] = st
	}
	if d := byID["delve"]; d.State != adapter.StateAvailable || d.Binary == "" || !slices.Equal(d.MarkerDirs, []string{"."}) {
		t.Errorf("delve: %+v", d)
	}
	if _, err := exec.LookPath("dart"); err != nil {
		if d := byID["dart"]; d.State != adapter.StateNoBinary || d.Install == "" || !slices.Equal(d.MarkerDirs, []string{"tools"}) {
			t.Errorf("dart without its SDK: %+v", d)
		}
	}
	if l := byID["lldb"]; len(l.MarkerDirs) != 0 {
		t.Errorf("a marker in vendored code counted for lldb: %+v", l)
	}
}
