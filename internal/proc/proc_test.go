package proc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const childEnv = "BUILTIN_TOOLS_PROC_TEST_CHILD"

// TestMain lets the test binary be the process that gets killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		cmd := exec.Command("/bin/sh", "-c", `sleep 301 & echo $! > "$1/helper"; exec sleep 302`, "sh", dir)
		if err := Start(cmd); err != nil {
			os.Exit(3)
		}
		os.WriteFile(filepath.Join(dir, "server"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
		select {} // until killed
	}
	os.Exit(m.Run())
}

// D12: SIGKILL of the process that started a server leaves neither the
// server nor the helper it forked into its group.
func TestNothingOutlivesAKilledParent(t *testing.T) {
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(self, "-test.run=^$")
	parent.Env = append(os.Environ(), childEnv+"="+dir)
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer parent.Process.Kill()
	var server, helper int
	for deadline := time.Now().Add(20 * time.Second); server == 0 || helper == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the child never started its server")
		}
		server, helper = readPid(filepath.Join(dir, "server")), readPid(filepath.Join(dir, "helper"))
		time.Sleep(10 * time.Millisecond)
	}
	if !alive(server) || !alive(helper) {
		t.Fatal("server or helper not running before the kill")
	}
	parent.Process.Signal(syscall.SIGKILL)
	parent.Wait()
	for deadline := time.Now().Add(10 * time.Second); alive(server) || alive(helper); {
		if time.Now().After(deadline) {
			t.Fatalf("after SIGKILL of their parent: server (pid %d) alive %v, helper (pid %d) alive %v", server, alive(server), helper, alive(helper))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readPid(path string) int {
	data, _ := os.ReadFile(path)
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return n
}

// alive reports a process that exists and is not a zombie.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// The reaper kills the groups still recorded when its input ends, and only
// those: a group removed with "-" is left alone.
func TestReaperKillsOnlyRecordedGroups(t *testing.T) {
	start := func() *exec.Cmd {
		c := exec.Command("sleep", "305")
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		go c.Wait()
		t.Cleanup(func() { c.Process.Kill() })
		return c
	}
	kept, killed := start(), start()
	script := exec.Command("/bin/sh", "-c", reaperScript)
	script.Stdin = strings.NewReader("+ " + strconv.Itoa(kept.Process.Pid) + "\n+ " + strconv.Itoa(killed.Process.Pid) + "\n- " + strconv.Itoa(kept.Process.Pid) + "\n")
	if out, err := script.CombinedOutput(); err != nil {
		t.Fatalf("reaper: %v\n%s", err, out)
	}
	for deadline := time.Now().Add(5 * time.Second); alive(killed.Process.Pid); {
		if time.Now().After(deadline) {
			t.Fatal("a recorded group survived the end of the reaper's input")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !alive(kept.Process.Pid) {
		t.Fatal("a group removed from the record was killed")
	}
}
