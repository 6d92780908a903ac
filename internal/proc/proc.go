//go:build unix

// Package proc is the only way this module runs a child process: language
// servers and checkers, debug adapters, kernels, workers, git and the
// probes that check a program runs. [Start] returns a [Process] that owns
// the child's pipes, waits for it, stops it, keeps its stderr's tail and
// makes sure nothing it started outlives it or this process.
//
// Every child gets its own process group and an environment tag
// (BUILTIN_TOOLS_PROC), inherited by everything it starts, and, where the
// system lets this process make cgroups, a cgroup of its own that nothing
// it starts can leave (package cgroup; [Cgroups].Containment says whether).
// Three mechanisms cover its end and the end of this process:
//
//   - When a child exits or is stopped, its group is killed, and so is every
//     process still carrying its tag (a helper that called setsid left the
//     group but not the environment) or still in its cgroup (one that also
//     cleared its environment).
//   - On Linux the child gets a parent-death signal (SIGKILL). The kernel
//     sends it when the thread that forked the child exits, so children are
//     forked from one goroutine locked to an OS thread that never exits.
//   - A small reaper (a POSIX shell reading a pipe from this process)
//     records each group; when the pipe ends — this process exited, however
//     it died — it kills every group still recorded, every process in the
//     children's cgroups and every process tagged by this process, and
//     removes those cgroups and this process's temporary folder ([TempDir]).
//
// A command (not a library) may also call [AdoptOrphans] so that orphans
// which dropped the tag are reparented to it and ended at [Shutdown].
package proc

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/lifetime"
	"github.com/builtin-tools/builtin-tools/internal/proc/cgroup"
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

// spawn starts cmd in a process group of its own, with a parent-death
// signal where the system has one, if contained in a cgroup of its own
// where the system gives one (its folder is returned), and records the
// group with the reaper.
func spawn(cmd *exec.Cmd, contained bool) (string, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setDeathSignal(cmd.SysProcAttr)
	cgroup, started := "", func(bool) {}
	if contained {
		cgroup, started = Cgroups.Into(cmd.SysProcAttr)
	}
	spawnOnce.Do(func() {
		spawnCh = make(chan startReq)
		go spawner()
	})
	done := make(chan error, 1)
	spawnCh <- startReq{cmd, done}
	err := <-done
	started(err == nil)
	if err != nil {
		return "", err
	}
	reap.add(cmd.Process.Pid)
	return cgroup, nil
}

// killGroup sends SIGKILL to the process group led by pid.
func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// Track records a process group this process did not start but must not
// leave behind (a debuggee that its adapter put in a group of its own), so
// the reaper kills it if this process dies first. End it with [Untrack].
func Track(pgid int) {
	if pgid > 1 {
		reap.add(pgid)
	}
}

// Untrack kills the group Track recorded and forgets it.
func Untrack(pgid int) {
	if pgid > 1 {
		killGroup(pgid)
		reap.remove(pgid)
	}
}

// Cgroups is the cgroups of this process's children; its Containment says
// whether each child gets one.
var Cgroups = &cgroup.Children{Owner: Owner, Gone: OwnerGone, Lock: &spawnMu, Made: func(base string) { reap.cgroups(base) }}

// reaper is the shell that kills recorded groups when this process ends.
type reaper struct {
	mu     sync.Mutex
	w      io.WriteCloser
	cmd    *exec.Cmd
	exited chan struct{}
	failed bool
}

var reap reaper

// The reaper keeps a list of group ids, updated by "+ ID" and "- ID" lines,
// and kills them all at end of input; then every process whose environment
// carries this process's tag prefix ($1), every process in the cgroups of
// this process's children (under the folder a "c PATH" line names, which
// goes with them), and this process's temporary folder (a "d PATH" line)
// go — the folder before the tag sweep, which forks twice per process on
// the machine and takes seconds on a busy one; an "x" line (a normal shutdown, which swept already) skips the tag
// sweep. It ignores the signals a terminal or a supervisor sends
// to this process's group, so it outlives this process long enough to act.
const reaperScript = `trap '' INT TERM HUP QUIT
g=" "
while read -r op id; do
	case $op in
	+) g="$g$id " ;;
	-) case "$g" in *" $id "*) g="${g%% $id *} ${g#* $id }" ;; esac ;;
	d) dir=$id ;;
	c) cg=$id ;;
	x) swept=1; break ;;
	esac
done
for id in $g; do kill -KILL "-$id" 2>/dev/null; done
[ -n "$cg" ] && [ -d "$cg" ] || cg=
if [ -n "$cg" ]; then
	for c in "$cg"/*/; do
		[ -d "$c" ] || continue
		if ! { echo 1 >"${c}cgroup.kill"; } 2>/dev/null; then
			{ echo 1 >"${c}cgroup.freeze"; } 2>/dev/null
			for i in 1 2 3; do kill -KILL $(cat "${c}cgroup.procs" 2>/dev/null) 2>/dev/null; done
		fi
	done
fi
if [ -n "$dir" ]; then rm -rf "$dir"; fi
if [ -z "$swept" ] && [ -n "$1" ] && [ -d /proc/self ]; then
	for e in /proc/[0-9]*/environ; do
		if tr '\0' '\n' <"$e" 2>/dev/null | grep -q "^BUILTIN_TOOLS_PROC=$1"; then
			p=${e#/proc/}
			kill -KILL "${p%/environ}" 2>/dev/null
		fi
	done
fi
i=0
while [ -n "$cg" ] && [ $i -lt 40 ] && ! rmdir "$cg" 2>/dev/null; do
	find "$cg" -depth -mindepth 1 -type d -exec rmdir {} + 2>/dev/null
	i=$((i+1))
	[ $i -gt 1 ] && { sleep 0.05 2>/dev/null || sleep 1; }
done
`

func (r *reaper) start() bool {
	if r.w != nil || r.failed {
		return r.w != nil
	}
	cmd := exec.Command("/bin/sh", "-c", reaperScript, "reaper", tagPrefix())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = withoutTag(os.Environ())
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
	known.add(cmd.Process.Pid, "")
	r.exited = make(chan struct{})
	go func(done chan struct{}) { // ends only when this process does, or the pipe closes
		cmd.Wait()
		close(done)
	}(r.exited)
	r.w, r.cmd = w, cmd
	return true
}

// add tells the reaper of a child's process group, starting it first.
func (r *reaper) add(pid int) { r.tell("+ %d\n", pid) }

// tell writes a line to the reaper, starting it first.
func (r *reaper) tell(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.start() {
		fmt.Fprintf(r.w, format, args...)
	}
}

func (r *reaper) remove(pid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w != nil {
		fmt.Fprintf(r.w, "- %d\n", pid)
	}
}

// finish ends the reaper at a normal shutdown, after this process has
// ended what its children left: an "x" line says the sweep is done, so it
// kills the recorded groups, removes the folder and exits at once, and this
// process waits up to d for it, so that nothing of the run outlives the
// process's own exit.
func (r *reaper) finish(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w == nil {
		return
	}
	fmt.Fprintf(r.w, "x\n")
	r.w.Close()
	r.w = nil
	lifetime.Await(context.Background(), r.exited, d)
}

// cgroups tells the reaper to end the cgroups under dir, and dir, when
// this process ends.
func (r *reaper) cgroups(dir string) { r.tell("c %s\n", dir) }

// folder tells the reaper to remove dir when this process ends.
func (r *reaper) folder(dir string) { r.tell("d %s\n", dir) }

// ReaperPID is the reaper's process id, 0 when none runs.
func ReaperPID() int {
	reap.mu.Lock()
	defer reap.mu.Unlock()
	if reap.cmd == nil || reap.cmd.Process == nil {
		return 0
	}
	return reap.cmd.Process.Pid
}
