// Package target checks what a debug session is pointed at before any
// adapter starts: a process one may attach to (never this process, one of
// its ancestors or a process it started, which a debugger would stop with
// the tools), what /proc says of a process (its state, its command name),
// and a crash's core file and executable, opened and checked and held open
// so that the adapter reads the very files checked (R10), with the adapter
// that opens such a core. It starts nothing and knows nothing of sessions.
package target

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/internal/proc"
)

// RefuseAttach says why a debugger must not attach to pid, nil when it
// may. A debugger stops the process it attaches to: this process (the
// tools' own), one of its ancestors (the agent that reads our answers) or a
// process it started (a language server, an adapter, a kernel, a worker,
// the process reaper) would stay stopped, and every call with it (H2).
func RefuseAttach(pid int) error {
	asked := pid
	if tgid := threadGroup(pid); tgid > 0 && tgid != pid {
		pid = tgid // a thread's id stops its process
	}
	self := os.Getpid()
	if pid == self {
		what := "this builtin-tools process itself"
		if asked != pid {
			what = fmt.Sprintf("a thread of this builtin-tools process itself (pid %d)", pid)
		}
		return adapter.BadArg("pid %d is %s: a debugger would stop it, and no call could answer again; attach to the program you want to debug", asked, what)
	}
	for p, n := os.Getppid(), 0; p > 0 && n < 128; p, n = parentOf(p), n+1 {
		if p == pid {
			return adapter.BadArg("pid %d (%s) is an ancestor of this builtin-tools process (the program that runs it, or one that started that): a debugger would stop it, and the tools with it; attach to the program you want to debug", pid, Comm(pid))
		}
	}
	if slices.Contains(proc.Children(), pid) {
		return adapter.BadArg("pid %d (%s) is a process builtin-tools started (a language server, a debug adapter, a kernel, a worker or its process reaper): a debugger would stop it, and the tools that use it; attach to the program you want to debug", pid, Comm(pid))
	}
	return nil
}

// statFields are the fields of /proc/PID/stat after the command name
// (state, ppid, …), nil when pid is gone.
func statFields(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	// "pid (comm) state ppid …": comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// parentOf is pid's parent from /proc/PID/stat, 0 when unknown.
func parentOf(pid int) int {
	f := statFields(pid)
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// threadGroup is the process a thread id belongs to, 0 when unknown.
func threadGroup(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// Comm is a process's command name, for messages.
func Comm(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// State is pid's state letter from /proc/PID/stat (R, S, D, T, t …),
// "" when it is gone or a zombie (it runs no more).
func State(pid int) string {
	f := statFields(pid)
	if len(f) == 0 || f[0] == "Z" || f[0] == "X" {
		return ""
	}
	return f[0]
}
