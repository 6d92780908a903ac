//go:build hardening

package hardening

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// R15 (L-7 of the third attack): a helper that clears its environment and
// calls setsid (`env -i setsid sleep`), started from a cell and from a
// worker, is gone 3 s after serve is SIGKILLed. It escapes the process
// group and the environment tag, so only a cgroup per child catches it:
// where this system gives none (`builtin-tools version` says why), the
// case is skipped with that reason.
func TestR15(t *testing.T) { runCase(t, "R15", caseR15) }

func caseR15(c *cx) {
	c.need("python3")
	out, err := exec.Command(bin, "version").Output()
	check(err)
	if line := strings.TrimSpace(string(out)); strings.Contains(line, "no cgroup of their own") {
		c.lacks("R15 needs a cgroup per child, which this system does not give: %s", line)
		return
	}
	root := c.root
	cellPid, workerPid := filepath.Join(c.base, "cell.pid"), filepath.Join(c.base, "worker.pid")
	s := c.serveIn(0, root, c.vibeEnv(), "--without", "lsp", "--vibe", "--worker-command", "fast=sh")
	defer s.kill()
	e := s.cell(60*time.Second, fmt.Sprintf("import subprocess\nsubprocess.run(['sh', '-c', 'env -i setsid sleep 406 & echo $! > %s'])\n'started'\n", cellPid))
	v := s.tool("vibe_spawn", map[string]any{"label": "h", "brief": "env -i setsid sleep 407 & echo $! > " + workerPid + "\nsleep 100\n"})
	pids := map[string]int{}
	testenv.Until(20*time.Second, func() bool {
		pids["cell"], pids["worker"] = pidIn(cellPid), pidIn(workerPid)
		return pids["cell"] != 0 && pids["worker"] != 0
	})
	s.signal(syscall.SIGKILL, 10*time.Second)
	testenv.Until(3*time.Second, func() bool { return !alive(pids["cell"]) && !alive(pids["worker"]) })
	var left []string
	for who, pid := range pids {
		if pid != 0 && alive(pid) {
			left = append(left, fmt.Sprintf("%s's (pid %d)", who, pid))
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	c.line("`env -i setsid sleep` from a cell and from a worker; SIGKILL of serve: alive 3 s later",
		fmt.Sprintf("%d of 2: %s (eval: %s; vibe: %s)", len(left), strings.Join(left, ", "), e.summary(40), v.summary(40)), "2 of 2: cell's, worker's (at 2962245, before the fix)")
	c.want(pids["cell"] != 0 && pids["worker"] != 0, "both helpers started (%v)", pids)
	c.want(len(left) == 0, "none alive")
}

// pidIn is the pid written in path, 0 while there is none.
func pidIn(path string) int {
	var pid int
	fmt.Sscan(readFile(path), &pid)
	return pid
}
