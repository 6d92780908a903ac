package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc/cgroup"
)

// The daemon cgroup (StartDetached's) goes once its last daemon has
// ended: removed by the starter when the daemon ends first, else by the
// daemon itself at its Shutdown, after it moved out of it; and not
// before (the starter's Shutdown leaves it while the daemon runs). Each
// case runs in a cgroup of its own, so the daemon cgroup is the test's.
// Before, the empty builtin-tools-daemons folder stayed.
func TestDaemonCgroupRemovedWhenEmpty(t *testing.T) {
	if ok, why := Cgroups.Containment(); !ok {
		t.Skip(why)
	}
	own, err := cgroup.Own()
	if err != nil {
		t.Fatal(err)
	}
	// start runs this test binary as role inside a new cgroup; it returns
	// the daemon cgroup the child's daemon goes to.
	start := func(t *testing.T, role string) (*exec.Cmd, string) {
		cg, err := os.MkdirTemp(own, "proctest-")
		if err != nil {
			t.Skipf("no cgroup of the test's own: %v", err)
		}
		t.Cleanup(func() {
			cgroup.End(cg) // the child's reaper too, which runs in cg itself
		})
		fd, err := syscall.Open(cg, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer syscall.Close(fd)
		cmd := selfChild(t, role)
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd, filepath.Join(cg, cgroup.DaemonsName)
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	t.Run("the daemon ends first", func(t *testing.T) {
		dir := t.TempDir()
		_, daemons := start(t, "daemoncg-true:"+dir)
		waitFor(t, "the child never started its daemon", 20*time.Second, func() bool { return readPid(filepath.Join(dir, "daemon")) != 0 })
		waitFor(t, daemons+" stayed after its daemon ended", 20*time.Second, func() bool { return !exists(daemons) })
	})

	t.Run("the daemon outlives its starter", func(t *testing.T) {
		dir, release := gate(t)
		cmd, daemons := start(t, "daemoncg-outlive:"+dir)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("the starter: %v", err)
		}
		daemon := readPid(filepath.Join(dir, "daemon"))
		t.Cleanup(func() { syscall.Kill(daemon, syscall.SIGKILL) })
		b, _ := os.ReadFile(filepath.Join(daemons, "cgroup.procs"))
		if daemon == 0 || !strings.Contains("\n"+string(b), "\n"+strconv.Itoa(daemon)+"\n") {
			t.Fatalf("the daemon (pid %d) is not in %s after its starter's end: %q", daemon, daemons, b)
		}
		release("the daemon")
		waitFor(t, daemons+" stayed after its last daemon ended", 20*time.Second, func() bool { return !exists(daemons) })
	})

	t.Run("left by a daemon killed outright", func(t *testing.T) {
		// A daemon killed with SIGKILL, once its starters ended, leaves the
		// folder behind when its new parent is no builtin-tools process
		// (here the test's own reaper would remove it): a later process
		// beside it removes it when it sets up.
		dir, release := gate(t)
		_, daemons := start(t, "daemoncg-sweep:"+dir)
		if err := os.Mkdir(daemons, 0o755); err != nil {
			t.Fatal(err)
		}
		release("the later process")
		waitFor(t, daemons+" stayed after a later process set up beside it", 20*time.Second, func() bool { return !exists(daemons) })
	})
}

// gate makes a folder holding a fifo "go" that a child of role
// daemoncg-*:DIR waits on (waitGate); release lets it go, once it waits.
func gate(t *testing.T) (dir string, release func(who string)) {
	dir = t.TempDir()
	fifo := filepath.Join(dir, "go")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, func(who string) {
		var w *os.File
		waitFor(t, who+" never opened "+fifo, 20*time.Second, func() bool {
			var err error
			w, err = os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
			return err == nil
		})
		w.Close()
	}
}
