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

	"github.com/builtin-tools/builtin-tools/internal/testenv"
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
	if !testenv.ProcessRunning(server) || !testenv.ProcessRunning(helper) {
		t.Fatal("server or helper not running before the kill")
	}
	parent.Process.Signal(syscall.SIGKILL)
	parent.Wait()
	for deadline := time.Now().Add(10 * time.Second); testenv.ProcessRunning(server) || testenv.ProcessRunning(helper); {
		if time.Now().After(deadline) {
			t.Fatalf("after SIGKILL of their parent: server (pid %d) alive %v, helper (pid %d) alive %v", server, testenv.ProcessRunning(server), helper, testenv.ProcessRunning(helper))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readPid(path string) int {
	data, _ := os.ReadFile(path)
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return n
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
	for deadline := time.Now().Add(5 * time.Second); testenv.ProcessRunning(killed.Process.Pid); {
		if time.Now().After(deadline) {
			t.Fatal("a recorded group survived the end of the reaper's input")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !testenv.ProcessRunning(kept.Process.Pid) {
		t.Fatal("a group removed from the record was killed")
	}
}
