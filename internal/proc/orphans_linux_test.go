package proc

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// N18: a grandchild that left the group and cleared its environment is
// reparented to a process that adopts orphans, and ended at Shutdown; the
// reaper has ended too by the time the process exits.
func TestAdoptedOrphanEndsAtShutdown(t *testing.T) {
	dir := t.TempDir()
	parent := selfChild(t, "adopt:"+dir)
	in, err := parent.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer parent.Process.Kill()
	var orphan int
	waitFor(t, "the orphan never started", 20*time.Second, func() bool {
		orphan = readPid(filepath.Join(dir, "orphan"))
		return orphan != 0
	})
	t.Cleanup(func() { syscall.Kill(orphan, syscall.SIGKILL) })
	waitFor(t, "the orphan was not reparented to the subreaper", 5*time.Second, func() bool {
		ppid, _, _ := statOf(orphan)
		return ppid == parent.Process.Pid
	})
	var reaper int
	waitFor(t, "the adopting process started no reaper", 5*time.Second, func() bool {
		reaper = readPid(filepath.Join(dir, "reaper"))
		return reaper != 0
	})
	in.Close()
	if err := parent.Wait(); err != nil {
		t.Fatalf("the adopting process: %v", err)
	}
	if Running(reaper) {
		syscall.Kill(reaper, syscall.SIGKILL)
		t.Errorf("the reaper (pid %d) outlived the process that ended normally", reaper)
	}
	waitFor(t, "the adopted orphan outlived Shutdown", 5*time.Second, func() bool { return !Running(orphan) })
}
