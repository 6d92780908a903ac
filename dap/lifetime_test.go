package dap

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Debuggees that start a helper and a setsid'd one, per adapter: each
// writes the two pids into the folder named by its first argument, then
// runs until stopped.
const (
	spawnSh = `sleep 300 & echo $! > "$1/plain"; setsid sleep 301 & echo $! > "$1/setsid"`
	spawnGo = "package main\n\nimport (\n\t\"os\"\n\t\"os/exec\"\n\t\"time\"\n)\n\nfunc main() {\n\texec.Command(\"/bin/sh\", \"-c\", `" + spawnSh + "`, \"sh\", os.Args[1]).Run()\n\tfor {\n\t\ttime.Sleep(10 * time.Millisecond)\n\t}\n}\n"
	spawnPy = "import subprocess, sys, time\nsubprocess.run(['/bin/sh', '-c', '''" + spawnSh + "''', 'sh', sys.argv[1]])\nwhile True:\n    time.sleep(0.01)\n"
)

var spawnC = "#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\nint main(int argc, char **argv) {\n\tchar cmd[4096];\n\tsnprintf(cmd, sizeof cmd, \"/bin/sh -c '" + strings.ReplaceAll(spawnSh, `"`, `\"`) + "' sh %s\", argv[1]);\n\tsystem(cmd);\n\tfor (;;) {\n\t\tusleep(10000);\n\t}\n}\n"

// writeSpawn writes the debuggee for adapter id into root (and builds it
// for lldb).
func writeSpawn(root, id string) error {
	files := map[string]string{"delve": "main.go", "debugpy": "spawn.py", "lldb": "spawn.c"}
	text := map[string]string{"delve": spawnGo, "debugpy": spawnPy, "lldb": spawnC}
	if id == "delve" {
		if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/spawn\n\ngo 1.22\n"), 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(root, files[id]), []byte(text[id]), 0o644); err != nil {
		return err
	}
	if id == "lldb" {
		if out, err := exec.Command("gcc", "-g", "-O0", "-o", filepath.Join(root, "spawn"), filepath.Join(root, "spawn.c")).CombinedOutput(); err != nil {
			return fmt.Errorf("gcc: %v\n%s", err, out)
		}
	}
	return nil
}

// spawnLaunch is the launch of the debuggee writeSpawn wrote.
func spawnLaunch(root, id string) adapter.LaunchSpec {
	// An environment of the agent's own must not replace the inherited one.
	l := adapter.LaunchSpec{Adapter: id, Program: at(root, filepath.Join(root, "spawn")), Args: []string{root}, Env: map[string]string{"SPAWN_TEST": "1"}}
	switch id {
	case "delve":
		l.Program = at(root, root)
	case "debugpy":
		l.Program = at(root, filepath.Join(root, "spawn.py"))
	}
	return l
}

// spawnRoot is a root with the debuggee for id, and its launch.
func spawnRoot(t *testing.T, id string) (string, adapter.LaunchSpec) {
	t.Helper()
	if id == "lldb" {
		testenv.LookPath(t, "gcc")
	}
	root := testenv.Tree(t, nil)
	if err := writeSpawn(root, id); err != nil {
		t.Fatal(err)
	}
	return root, spawnLaunch(root, id)
}

// spawned waits for the debuggee's two pids.
func spawned(t testing.TB, root string) (plain, setsid int) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		a, _ := os.ReadFile(filepath.Join(root, "plain"))
		b, _ := os.ReadFile(filepath.Join(root, "setsid"))
		plain, _ = strconv.Atoi(strings.TrimSpace(string(a)))
		setsid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		if plain > 0 && setsid > 0 {
			os.Remove(filepath.Join(root, "plain"))
			os.Remove(filepath.Join(root, "setsid"))
			// The shell writes a pid right after its fork: wait for the
			// exec of sleep, since a process caught mid-exec shows an
			// empty environment.
			for _, pid := range []int{plain, setsid} {
				testenv.WaitFor(t, 10*time.Second, "sleep to run in pid "+strconv.Itoa(pid), func() bool {
					cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
					return strings.HasPrefix(string(cmd), "sleep\x00")
				})
			}
			return plain, setsid
		}
		if time.Now().After(deadline) {
			t.Fatal("the debuggee did not start its helpers")
		}
		// Real processes write the files: polled, not on synctest's clock.
		time.Sleep(20 * time.Millisecond)
	}
}

// tagged reports whether pid's environment carries this process's tag.
func tagged(pid int) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	prefix := "BUILTIN_TOOLS_PROC=" + strings.ReplaceAll(proc.Owner(), "-", "_") + "_"
	return err == nil && strings.Contains("\x00"+string(env), "\x00"+prefix)
}

// L5: a debuggee's setsid'd child left its group, so only the environment
// tag finds it; under every adapter the debuggee and both its children
// carry the tag, and terminate and Close end them all.
func TestDebuggeeChildrenEnd(t *testing.T) {
	for _, id := range []string{"delve", "debugpy", "lldb"} {
		t.Run(id, func(t *testing.T) {
			needAdapter(t, id)
			root, l := spawnRoot(t, id)
			s := newSupervisor(t, root, Config{})
			ctx := testCtx(t)
			for _, end := range []string{"terminate", "close"} {
				if _, err := s.Launch(ctx, l, 500*time.Millisecond); err != nil {
					t.Fatal(err)
				}
				plain, setsid := spawned(t, root)
				prog := s.sess.PID()
				for what, pid := range map[string]int{"the debuggee": prog, "its child": plain, "its setsid'd child": setsid} {
					if !tagged(pid) {
						t.Errorf("%s (pid %d) does not carry the environment tag", what, pid)
					}
				}
				if env, _ := os.ReadFile("/proc/" + strconv.Itoa(prog) + "/environ"); !strings.Contains(string(env), "\x00SPAWN_TEST=1\x00") {
					t.Errorf("the launch's environment did not reach the debuggee")
				}
				if end == "terminate" {
					if _, err := s.Terminate(ctx, false); err != nil {
						t.Fatal(err)
					}
				} else {
					s.Close()
				}
				for what, pid := range map[string]int{"the debuggee": prog, "its child": plain, "its setsid'd child": setsid} {
					waitGone(t, what+" after "+end, pid)
				}
			}
		})
	}
}

// killedEnv makes the test binary a process that debugs the spawning
// program and waits to be killed.
const killedEnv = "BUILTIN_TOOLS_DAP_KILLED"

func debugUntilKilled(arg string) {
	id, root, _ := strings.Cut(arg, ":")
	g, err := pathguard.New(root)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	s := NewSupervisor(g, Config{})
	l := spawnLaunch(root, id)
	if _, err := s.Launch(context.Background(), l, 500*time.Millisecond); err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("ready", s.sess.PID())
	select {}
}

// L5, the report's case: the process running the session is SIGKILLed;
// the reaper ends the debuggee and both its children.
func TestDebuggeeChildrenEndWhenKilled(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"delve", "debugpy", "lldb"} {
		t.Run(id, func(t *testing.T) {
			needAdapter(t, id)
			root, _ := spawnRoot(t, id)
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), killedEnv+"="+id+":"+root)
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			line, _ := bufio.NewReader(out).ReadString('\n')
			f := strings.Fields(line)
			if len(f) != 2 || f[0] != "ready" {
				t.Fatalf("the debugging process: %q", line)
			}
			prog, _ := strconv.Atoi(f[1])
			plain, setsid := spawned(t, root)
			syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
			for what, pid := range map[string]int{"the debuggee": prog, "its child": plain, "its setsid'd child": setsid} {
				waitGone(t, what+" after SIGKILL", pid)
			}
		})
	}
}
