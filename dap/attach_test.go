package dap

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/target"
	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// attachSelfEnv makes the test binary a process that asks a debugger to
// attach to itself, then says what happened.
const attachSelfEnv = "BUILTIN_TOOLS_DAP_ATTACH_SELF"

func attachSelf(id string) {
	root, _ := os.MkdirTemp("", "attach-self-")
	defer os.RemoveAll(root)
	g, err := pathguard.New(root)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	s := NewSupervisor(g, Config{})
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.Launch(ctx, adapter.LaunchSpec{Adapter: id, Attach: true, PID: os.Getpid()}, 5*time.Second); err != nil {
		fmt.Println("refused:", err)
		return
	}
	fmt.Println("attached")
}

// H2: attach to this very process froze it for good (stopped by the
// debugger, deaf to SIGTERM and EOF). The process is a child here, so a
// freeze shows as a child that never answers.
func TestAttachToItselfRefused(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"lldb", "delve"} {
		t.Run(id, func(t *testing.T) {
			needAdapter(t, id)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), attachSelfEnv+"="+id)
			cmd.WaitDelay = time.Second
			out, err := cmd.Output()
			if ctx.Err() != nil {
				t.Fatalf("asking %s to attach to its own process froze it: no answer in 60 s (%v)", id, err)
			}
			if !strings.HasPrefix(string(out), "refused:") || !strings.Contains(string(out), "this builtin-tools process itself") {
				t.Fatalf("attach to itself: %q %v", out, err)
			}
		})
	}
}

// Its ancestors, its threads and the processes it started are refused as
// well, each naming why, before any adapter starts; a program of the
// user's is not.
func TestAttachRefusesOwnProcesses(t *testing.T) {
	gcc := testenv.LookPath(t, "gcc")
	sleeper, err := proc.Start(exec.Command("sleep", "60"), proc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sleeper.Kill()
	var thread int
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, e := range tasks {
		if n, _ := strconv.Atoi(e.Name()); n != os.Getpid() && n > 0 {
			thread = n
		}
	}
	targets := []struct {
		what string
		pid  int
		why  string
	}{
		{"its parent", os.Getppid(), "an ancestor of this builtin-tools process"},
		{"pid 1", 1, "an ancestor"},
		{"a process it started", sleeper.Pid(), "a process builtin-tools started"},
		{"one of its threads", thread, "this builtin-tools process itself"},
		{"its process reaper", proc.ReaperPID(), "a process builtin-tools started"},
	}
	root := testenv.Tree(t, map[string]string{"loop.c": "#include <unistd.h>\nint main(void) {\n\tvolatile long n = 0;\n\tfor (;;) {\n\t\tn++;\n\t\tusleep(1000);\n\t}\n}\n"})
	for _, id := range []string{"lldb", "delve"} {
		t.Run(id, func(t *testing.T) {
			needAdapter(t, id)
			s := newSupervisor(t, root, Config{})
			for _, tg := range targets {
				if tg.pid <= 0 {
					continue
				}
				before := len(proc.Children())
				_, err := s.Launch(testCtx(t), adapter.LaunchSpec{Adapter: id, Attach: true, PID: tg.pid}, time.Second)
				if err == nil || !strings.Contains(err.Error(), tg.why) || !strings.Contains(err.Error(), strconv.Itoa(tg.pid)) {
					t.Errorf("attach to %s (pid %d): %v", tg.what, tg.pid, err)
				}
				if s.sess != nil || len(proc.Children()) != before {
					t.Fatalf("attach to %s started an adapter before it was refused", tg.what)
				}
			}
		})
	}

	// A program of the user's, started outside builtin-tools: attached,
	// then left running when the session ends.
	bin := filepath.Join(root, "loop")
	if out, err := exec.Command(gcc, "-g", "-O0", "-o", bin, filepath.Join(root, "loop.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	needAdapter(t, "lldb")
	prog := exec.Command(bin)
	if err := prog.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { prog.Process.Kill(); prog.Wait() }()
	if slices.Contains(proc.Children(), prog.Process.Pid) {
		t.Fatal("a program started with os/exec counts as builtin-tools' own")
	}
	s := newSupervisor(t, root, Config{})
	ctx := testCtx(t)
	if _, err := s.Launch(ctx, adapter.LaunchSpec{Adapter: "lldb", Attach: true, PID: prog.Process.Pid}, 5*time.Second); err != nil {
		t.Fatalf("attach to a program of the user's: %v", err)
	}
	if _, err := s.Terminate(ctx, false); err != nil {
		t.Fatal(err)
	}
	// A real process: only time tells that no kill comes after.
	if testenv.Exits(prog.Process.Pid, 300*time.Millisecond) {
		t.Fatal("ending an attach session killed the program it attached to")
	}
}

// Issue 19 §3: the time limit of an attach session said "the adapter and
// the program were stopped"; it detaches, says so, and the program runs on.
func TestTimeLimitDetaches(t *testing.T) {
	needAdapter(t, "lldb")
	gcc := testenv.LookPath(t, "gcc")
	root := testenv.Tree(t, map[string]string{"loop.c": "#include <unistd.h>\nint main(void) {\n\tfor (;;)\n\t\tusleep(1000);\n}\n"})
	bin := filepath.Join(root, "loop")
	if out, err := exec.Command(gcc, "-g", "-o", bin, filepath.Join(root, "loop.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	prog := exec.Command(bin)
	if err := prog.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { prog.Process.Kill(); prog.Wait() }()
	// The limit counts lldb's attach, seconds on a loaded machine.
	s := newSupervisor(t, root, Config{TTL: 10 * time.Second})
	ctx := testCtx(t)
	if _, err := s.Launch(ctx, adapter.LaunchSpec{Attach: true, PID: prog.Process.Pid}, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	res, err := s.Resume(ctx, "continue", 0, time.Minute)
	if err != nil || res.Outcome != "ended" || !strings.Contains(res.Ended, "detached from the program") {
		t.Fatalf("an attach session at its time limit: %+v %v", res, err)
	}
	// lldb lets go of it after the session ends: a real process's state,
	// polled until it runs (or 5 s).
	waitState(ctx, prog.Process.Pid, 5*time.Second, func(st string) bool { return st != "t" && st != "T" })
	if st := target.State(prog.Process.Pid); st == "" || st == "t" || st == "T" {
		t.Fatalf("the program attached to did not run on after the time limit (state %q)", st)
	}
}

// A Python process by pid is debugpy's, which attaches with gdb: without
// gdb the attach says so, and names the other way (a port).
func TestAttachPythonByPidNeedsGdb(t *testing.T) {
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		testenv.Missing(t, py, "not installed")
	}
	prog := exec.Command(py, "-c", "import time; time.sleep(60)")
	if err := prog.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { prog.Process.Kill(); prog.Wait() }()
	root := testenv.Tree(t, map[string]string{"x.py": ""})
	s := newSupervisor(t, root, Config{})
	t.Setenv("PATH", t.TempDir())
	_, err := s.Launch(testCtx(t), adapter.LaunchSpec{Attach: true, PID: prog.Process.Pid}, time.Second)
	if err == nil || !strings.Contains(err.Error(), "with gdb, which is not installed") || !strings.Contains(err.Error(), "attach with port") {
		t.Fatalf("attach to a Python pid without gdb: %v", err)
	}
}
