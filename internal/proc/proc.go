// Package proc starts the processes a run owns — language servers,
// project checkers, and later debug adapters, kernels and workers — so
// that none outlives the run, even when the run's own process is killed
// with SIGKILL and gets no chance to clean up.
//
// Every child gets its own process group, so its helpers can be killed
// with it. Two mechanisms cover the death of this process:
//
//   - On Linux the child gets a parent-death signal (SIGKILL). The kernel
//     sends it when the thread that forked the child exits, so children are
//     forked from one goroutine locked to an OS thread that never exits.
//   - That kills only the child, not its helpers. A small reaper (a POSIX
//     shell reading a pipe from this process) records each process group;
//     when the pipe ends — this process exited, however it died — it kills
//     every group still recorded.
package proc

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

type startReq struct {
	cmd  *exec.Cmd
	done chan error
}

var (
	spawnOnce sync.Once
	spawnCh   chan startReq
)

// spawner forks from one locked thread that never exits, so a child's
// parent-death signal fires only when the process dies.
func spawner() {
	runtime.LockOSThread()
	for req := range spawnCh {
		req.done <- req.cmd.Start()
	}
}

// Start starts cmd in a process group of its own, with a parent-death
// signal where the system has one, and records the group with the reaper.
// Call Done with the process once it has been waited for and its group
// killed.
func Start(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setDeathSignal(cmd.SysProcAttr)
	spawnOnce.Do(func() {
		spawnCh = make(chan startReq)
		go spawner()
	})
	done := make(chan error, 1)
	spawnCh <- startReq{cmd, done}
	if err := <-done; err != nil {
		return err
	}
	reap.add(cmd.Process.Pid)
	return nil
}

// KillGroup sends SIGKILL to the process group led by pid.
func KillGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// Track records a process group this process did not start but must not
// leave behind (a debuggee that its adapter put in a group of its own), so
// the reaper kills it if this process dies first. Forget it with Done.
func Track(pgid int) {
	if pgid > 1 {
		reap.add(pgid)
	}
}

// Done forgets the group led by pid: it has ended and nothing of it may
// be killed later by mistake.
func Done(pid int) { reap.remove(pid) }

// reaper is the shell that kills recorded groups when this process ends.
type reaper struct {
	mu     sync.Mutex
	w      io.WriteCloser
	cmd    *exec.Cmd
	failed bool
}

var reap reaper

// The reaper keeps a list of group ids, updated by "+ID" and "-ID" lines,
// and kills them all at end of input. It ignores the signals a terminal or
// a supervisor sends to this process's group, so it outlives this process
// long enough to act.
const reaperScript = `trap '' INT TERM HUP QUIT
g=" "
while read -r op id; do
	case $op in
	+) g="$g$id " ;;
	-) case "$g" in *" $id "*) g="${g%% $id *} ${g#* $id }" ;; esac ;;
	esac
done
for id in $g; do kill -KILL "-$id" 2>/dev/null; done
`

func (r *reaper) start() bool {
	if r.w != nil || r.failed {
		return r.w != nil
	}
	cmd := exec.Command("/bin/sh", "-c", reaperScript)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	w, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		// Without a shell the parent-death signal still stops the children;
		// their helpers are then stopped only by a normal shutdown.
		fmt.Fprintf(os.Stderr, "builtin-tools: no process reaper (%v); helpers of a server may outlive a killed process\n", err)
		r.failed = true
		return false
	}
	go cmd.Wait() // ends only when this process does, or the pipe closes
	r.w, r.cmd = w, cmd
	return true
}

func (r *reaper) add(pid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.start() {
		fmt.Fprintf(r.w, "+ %d\n", pid)
	}
}

func (r *reaper) remove(pid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w != nil {
		fmt.Fprintf(r.w, "- %d\n", pid)
	}
}
