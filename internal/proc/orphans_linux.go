package proc

import (
	"bytes"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// endTagged kills every process whose environment carries tag (or, when
// prefix is set, any tag starting with it): what a child left behind
// outside its group. Two passes, for children forked during the first.
func endTagged(tag string) { scanTagged(tagVar+"="+tag+"\x00", false) }

func endAllTagged() { scanTagged(tagVar+"="+tagPrefix(), true) }

func scanTagged(want string, prefix bool) {
	self := os.Getpid()
	reaper := ReaperPID()
	for pass := 0; pass < 2; pass++ {
		found := false
		forEachPid(func(pid int) {
			if pid == self || pid == reaper {
				return
			}
			env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
			if err != nil || !hasEnv(env, want, prefix) {
				return
			}
			found = true
			syscall.Kill(pid, syscall.SIGKILL)
		})
		if !found {
			return
		}
	}
}

// hasEnv reports whether env (NUL-separated) holds an entry equal to want
// (which ends in NUL), or with prefix, one that starts with it.
func hasEnv(env []byte, want string, prefix bool) bool {
	for len(env) > 0 {
		i := bytes.IndexByte(env, 0)
		entry := env
		if i >= 0 {
			entry = env[:i+1]
			env = env[i+1:]
		} else {
			env = nil
		}
		if prefix && bytes.HasPrefix(entry, []byte(want)) || !prefix && string(entry) == want {
			return true
		}
	}
	return false
}

func forEachPid(f func(pid int)) {
	d, err := os.Open("/proc")
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil && pid > 1 {
			f(pid)
		}
	}
}

// statOf reads a process's parent and state from /proc/PID/stat.
func statOf(pid int) (ppid int, state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) S ppid ...": comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 || len(f[0]) != 1 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, f[0][0], err == nil
}

var adoptOnce sync.Once

// AdoptOrphans makes this process a child subreaper: a process a child
// started that lost its parent (a daemon that double-forked, a setsid
// helper) is reparented here instead of to init. Orphans that exit are
// reaped at once; those still running at [Shutdown] are killed. Only a
// command should call it: it must start every child through this package
// (a child started another way that exits could be reaped here first).
func AdoptOrphans() error {
	var err error
	adoptOnce.Do(func() {
		if err = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return
		}
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGCHLD)
		go func() {
			for range ch {
				orphans(false)
			}
		}()
	})
	return err
}

// orphans reaps this process's children that this package did not start
// and that have exited; with kill it first kills those still running.
func orphans(kill bool) {
	spawnMu.Lock()
	defer spawnMu.Unlock()
	self, reaper := os.Getpid(), ReaperPID()
	forEachPid(func(pid int) {
		if pid == reaper || known.has(pid) {
			return
		}
		ppid, state, ok := statOf(pid)
		if !ok || ppid != self {
			return
		}
		if state != 'Z' {
			if !kill {
				return
			}
			syscall.Kill(pid, syscall.SIGKILL)
		}
		var ws unix.WaitStatus
		flags := unix.WNOHANG
		if kill {
			flags = 0
		}
		unix.Wait4(pid, &ws, flags, nil)
	})
}

// Shutdown ends what this process's children left behind: every process
// carrying one of its tags or in one of their cgroups, and the orphans
// adopted since AdoptOrphans; and the daemon cgroup it used or runs in,
// once no daemon runs there (StartDetached).
// The reaper does the same when this process ends without calling it; here
// it is told the sweep is done and waited for, briefly.
func Shutdown() {
	endAllTagged()
	removeCgroups := Cgroups.Shutdown()
	orphans(true)
	removeCgroups()
	reap.finish(2 * time.Second)
	// After the reaper, which runs in this process's cgroup.
	Cgroups.EndDaemons()
}
