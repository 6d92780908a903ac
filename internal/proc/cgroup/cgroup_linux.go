package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Where the system lets this process make cgroups (cgroup v2, its own
// cgroup writable: a subtree delegated to the user, or root), every child
// starts inside a cgroup of its own, <own cgroup>/builtin-tools-<owner>/N,
// placed there by the kernel as it is forked (clone3 CLONE_INTO_CGROUP),
// so nothing it starts can leave: not a helper that called setsid, nor one
// that also cleared its environment (R15), which the group and the tag
// miss. When the child ends, every process in its cgroup is killed; when
// this process dies, the reaper kills every process in every one of them.
// Elsewhere (cgroup v1 only, a cgroup not delegated, clone3 refused by a
// seccomp filter) Containment says why, and what can then escape.

// Children is the cgroups of this process's children. Its fields say
// what it needs of the process; it makes its folder at its first Setup.
type Children struct {
	Owner func() string           // this process's owner name: the folder is builtin-tools-<owner>
	Gone  func(owner string) bool // whether the process another owner names has gone (the sweep)
	Lock  sync.Locker             // held while the probe child starts, as every child's start is
	Made  func(base string)       // told of the folder once made (the reaper ends what is in it)

	once    sync.Once
	base    string // the folder of this process's cgroups; "" when none
	why     string // why there is none
	seq     atomic.Int64
	daemons atomic.Pointer[string] // the daemon cgroup a daemon start used
}

const cgroupPrefix = "builtin-tools-"

// Containment reports whether each child runs in a cgroup of its own, and
// says where, or why not and what can then outlive this process.
func (c *Children) Containment() (bool, string) {
	c.Setup()
	if c.base != "" {
		return true, "each child gets a cgroup of its own, under this process's cgroup " + filepath.Dir(c.base) +
			": everything a child starts ends with it, and with this process however it dies"
	}
	return false, c.why + "; so a helper that both clears its environment and calls setsid " +
		"(env -i setsid …) escapes the process group and the environment tag, and outlives a SIGKILL " +
		"of this process (a normal exit, SIGTERM or the end of serve's input still ends it: " +
		"the command adopts orphans)"
}

// Setup makes the folder once, ending what an earlier process of this
// owner left in it, and checks that a child starts inside a cgroup; where
// one cannot, Containment says why. It takes Lock: call it outside.
func (c *Children) Setup() {
	c.once.Do(func() {
		own, err := Own()
		if err != nil {
			c.why = err.Error()
			return
		}
		base := filepath.Join(own, cgroupPrefix+c.Owner())
		if err := os.Mkdir(base, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			c.why = fmt.Sprintf("this process's cgroup %s is not writable (%v): not delegated to this user, or mounted read-only", own, unwrapPath(err))
			return
		}
		// Left by an earlier process of this id: what runs there is not ours.
		endCgroups(base, false)
		// A child not recorded yet could be taken for an orphan: the probe
		// starts as every child does, under Lock.
		c.Lock.Lock()
		err = probeClone(base)
		c.Lock.Unlock()
		if err != nil {
			os.Remove(base)
			c.why = fmt.Sprintf("a child cannot be started inside a cgroup (clone3 into %s: %v; a seccomp filter may refuse clone3)", base, unwrapPath(err))
			return
		}
		c.base = base
		c.Made(base)
		go c.sweep(own)
	})
}

// Own is the folder of this process's cgroup in the cgroup v2
// hierarchy, from /proc/self/cgroup and the hierarchy's mount.
func Own() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("this process's cgroup cannot be read (%v)", unwrapPath(err))
	}
	path := ""
	for _, l := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			path = p
		}
	}
	if path == "" || strings.HasSuffix(path, " (deleted)") {
		return "", errors.New("this system has no cgroup v2 hierarchy (cgroup v1 only)")
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("the mounts cannot be read (%v)", unwrapPath(err))
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 1 || g[0] != "cgroup2" {
			continue
		}
		root, mnt := unescapeMount(f[3]), unescapeMount(f[4])
		rel, ok := strings.CutPrefix(path, root)
		if !ok || rel != "" && root != "/" && rel[0] != '/' {
			continue
		}
		return filepath.Join(mnt, rel), nil
	}
	return "", fmt.Errorf("the cgroup v2 hierarchy is not mounted where this process can see its cgroup %s", path)
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// probeClone starts a child that exits at once inside a cgroup under
// base, as every child will be: a kernel or filter that refuses clone3
// refuses it here, not at a real child's start.
func probeClone(base string) error {
	dir, fd, err := newCgroup(base, "probe")
	if err != nil {
		return err
	}
	defer os.Remove(dir)
	defer syscall.Close(fd)
	p, err := os.StartProcess("/bin/sh", []string{"sh", "-c", ":"}, &os.ProcAttr{
		Env: []string{}, Sys: &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}})
	if err != nil {
		return err
	}
	_, err = p.Wait()
	return err
}

// newCgroup makes base/name and opens it for clone3.
func newCgroup(base, name string) (string, int, error) {
	dir := filepath.Join(base, name)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", -1, err
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(dir)
		return "", -1, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return dir, fd, nil
}

// Into makes the cgroup a child starts in and sets a to start it there;
// done closes what the start needed, and removes the cgroup when the start
// failed. "" when children get no cgroup here. The caller ran Setup first,
// outside Lock.
func (c *Children) Into(a *syscall.SysProcAttr) (dir string, done func(started bool)) {
	if c.base == "" {
		return "", func(bool) {}
	}
	dir, fd, err := newCgroup(c.base, strconv.FormatInt(c.seq.Add(1), 10))
	if err != nil {
		return "", func(bool) {} // its tag and group still cover it
	}
	a.UseCgroupFD, a.CgroupFD = true, fd
	return dir, func(started bool) {
		syscall.Close(fd)
		if !started {
			os.Remove(dir)
		}
	}
}

// DaemonsName is the cgroup daemons start in (proc.StartDetached): not a
// builtin-tools-<owner> folder, so no process's sweep takes it for one
// of a process gone.
const DaemonsName = cgroupPrefix + "daemons"

// Daemons is the cgroup a daemon this process starts runs in:
// DaemonsName in the cgroup of the outermost builtin-tools process
// among this one and its starters (a cgroup <c>/builtin-tools-<owner>/N
// is one that a builtin-tools process made for a child of its own, and
// ends with that child). "" where children get no cgroups.
func (c *Children) Daemons() string {
	c.Setup()
	if c.base == "" {
		return ""
	}
	d := filepath.Dir(c.base) // this process's own
	for {
		parent := filepath.Dir(d)
		if _, err := strconv.Atoi(filepath.Base(d)); err != nil || !strings.HasPrefix(filepath.Base(parent), cgroupPrefix) {
			break
		}
		d = filepath.Dir(parent)
	}
	return filepath.Join(d, DaemonsName)
}

// IntoDaemons sets a to start a daemon in the cgroup Daemons names,
// returned as dir; done closes what the start needed. Where that cgroup
// cannot be made, the daemon starts in this process's own (dir "").
func (c *Children) IntoDaemons(a *syscall.SysProcAttr) (dir string, done func()) {
	dir = c.Daemons()
	if dir == "" {
		return "", func() {}
	}
	fd, err := openDaemonCgroup(dir)
	if err != nil {
		return "", func() {}
	}
	a.UseCgroupFD, a.CgroupFD = true, fd
	c.daemons.Store(&dir)
	return dir, func() { syscall.Close(fd) } // and with it the start's lock
}

// The daemon cgroup is shared by the daemons of every builtin-tools
// process beside it, and removed once empty (RemoveDaemons), by
// whichever process sees it so. A start holds a shared flock on the
// folder from its open to the clone3 that puts the daemon in, a removal
// an exclusive one, so no removal falls between the two (a clone3 into
// a removed cgroup fails) and no start opens a folder just removed.

// openDaemonCgroup makes the daemon cgroup dir if needed and opens it
// for clone3, holding the start's shared lock.
func openDaemonCgroup(dir string) (int, error) {
	for range 3 {
		_, fd, err := newCgroup(filepath.Dir(dir), filepath.Base(dir))
		if errors.Is(err, syscall.ENOENT) {
			continue // removed between the mkdir and the open
		}
		if err != nil {
			return -1, err
		}
		if syscall.Flock(fd, syscall.LOCK_SH) == nil && isFolder(fd, dir) {
			return fd, nil
		}
		syscall.Close(fd) // removed between the open and the lock
	}
	return -1, &os.PathError{Op: "open", Path: dir, Err: syscall.ENOENT}
}

// RemoveDaemons removes the daemon cgroup dir when no daemon runs
// in it (rmdir refuses a cgroup holding a process or a cgroup) and no
// start is putting one there (it holds the shared lock).
func RemoveDaemons(dir string) {
	if dir == "" {
		return
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer syscall.Close(fd)
	if syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) == nil && isFolder(fd, dir) {
		syscall.Rmdir(dir)
	}
}

// isFolder reports whether fd is the folder dir names now.
func isFolder(fd int, dir string) bool {
	var a, b syscall.Stat_t
	return syscall.Fstat(fd, &a) == nil && syscall.Stat(dir, &b) == nil && a.Dev == b.Dev && a.Ino == b.Ino
}

// leaveDaemonCgroup, in a daemon at its end (its cgroup is a daemon
// cgroup), moves this process into the cgroup its daemon cgroup is in,
// and removes the daemon cgroup when no other daemon runs there: no
// process can remove the cgroup it is in, and no other learns when the
// last daemon ends. Then the cgroup its starters made removes the one a
// daemon that outlived them runs in.
func leaveDaemonCgroup() {
	own, err := Own()
	if err != nil || filepath.Base(own) != DaemonsName {
		return
	}
	if os.WriteFile(filepath.Join(filepath.Dir(own), "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0) != nil {
		return
	}
	RemoveDaemons(own)
}

// EndDaemons, at a normal shutdown, removes the daemon cgroup this
// process used if its daemons have ended, and the one this process runs
// in as a daemon if no other daemon runs there.
func (c *Children) EndDaemons() {
	if dir := c.daemons.Load(); dir != nil {
		RemoveDaemons(*dir)
	}
	leaveDaemonCgroup()
}

// End kills every process in a child's cgroup, then removes it (in
// the background: the killed take a moment to leave it).
func End(dir string) {
	if dir == "" {
		return
	}
	killCgroup(dir)
	if removeCgroup(dir) != nil {
		go func() {
			for i := 0; i < 100 && removeCgroup(dir) != nil; i++ {
				if _, err := os.Stat(dir); err != nil {
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
	}
}

// removeCgroup removes the cgroup dir and those inside it (a builtin-tools
// run as a child makes its children's there), innermost first; each goes
// once no process is left in it.
func removeCgroup(dir string) error {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			removeCgroup(filepath.Join(dir, e.Name()))
		}
	}
	return os.Remove(dir)
}

// killCgroup kills every process in the cgroup dir and those inside it: at
// once with cgroup.kill (Linux 5.14), else frozen (so that none forks
// meanwhile) and killed one by one (cgroup.procs lists only dir's own: a
// cgroup inside is ended the same way).
func killCgroup(dir string) {
	if writeControl(dir, "cgroup.kill") == nil {
		return
	}
	writeControl(dir, "cgroup.freeze")
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			killCgroup(filepath.Join(dir, e.Name()))
		}
	}
	for range 10 {
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		pids := strings.Fields(string(b))
		if err != nil || len(pids) == 0 {
			return
		}
		for _, p := range pids {
			if pid, err := strconv.Atoi(p); err == nil && pid > 0 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}

func writeControl(dir, name string) error {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString("1")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// endCgroups kills every process in every cgroup under base and removes
// them, and base too when whole.
func endCgroups(base string, whole bool) {
	removeCgroups(base, killCgroups(base), whole)
}

// killCgroups kills every process in every cgroup under base and returns
// their folders.
func killCgroups(base string) []string {
	ents, _ := os.ReadDir(base)
	var dirs []string
	for _, e := range ents {
		if e.IsDir() {
			d := filepath.Join(base, e.Name())
			killCgroup(d)
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// removeCgroups removes the cgroups dirs (under base) once the processes
// killed there are gone, waiting a second at most, and base when whole.
func removeCgroups(base string, dirs []string, whole bool) {
	for i := 0; i < 40 && len(dirs) > 0; i++ {
		left := dirs[:0]
		for _, d := range dirs {
			if removeCgroup(d) != nil {
				if _, err := os.Stat(d); err == nil {
					left = append(left, d)
				}
			}
		}
		if dirs = left; len(dirs) > 0 {
			time.Sleep(25 * time.Millisecond)
		}
	}
	if whole {
		os.Remove(base)
	}
}

// sweep ends the cgroups of processes of this instance that no
// longer run and whose reaper could not (it was killed too), and removes
// the daemon cgroup if it is empty: a daemon killed outright (SIGKILL, no
// Shutdown) removes it no more than its starters do.
func (c *Children) sweep(own string) {
	ents, _ := os.ReadDir(own)
	for _, e := range ents {
		owner, ok := strings.CutPrefix(e.Name(), cgroupPrefix)
		if ok && e.IsDir() && c.Gone(owner) {
			endCgroups(filepath.Join(own, e.Name()), true)
		}
	}
	RemoveDaemons(c.Daemons())
}

// Shutdown kills every process in the cgroups of this process's
// children, at a normal shutdown; the returned func removes the cgroups,
// once the caller reaped what it adopted of them.
func (c *Children) Shutdown() (remove func()) {
	if c.base == "" {
		return func() {}
	}
	dirs := killCgroups(c.base)
	return func() { removeCgroups(c.base, dirs, true) }
}
