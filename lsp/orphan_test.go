package lsp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

const orphanChildEnv = "BUILTIN_TOOLS_LSP_ORPHAN_CHILD"

// orphanChild is the process the test kills: a supervisor with a server
// that forked a helper, and a project checker that forked one too.
func orphanChild(dir string) {
	exe, _ := os.Executable()
	root := filepath.Join(dir, "root")
	os.MkdirAll(root, 0o755)
	os.WriteFile(filepath.Join(root, "fake.toml"), nil, 0o644)
	os.WriteFile(filepath.Join(root, "a.fake"), []byte("hello\n"), 0o644)
	spec := ServerSpec{
		ID: "fake-forking", Language: "Fake", RootMarkers: []string{"fake.toml"},
		Extensions: map[string]string{".fake": "fake"},
		Command:    []string{"/bin/sh", "-c", fmt.Sprintf(`sleep 301 & echo $! > %s/server-helper; exec %s -fake-lsp=mute`, dir, exe)},
		Checker:    []string{"/bin/sh", "-c", fmt.Sprintf(`sleep 302 & echo $! > %s/checker-helper; wait`, dir)},
	}
	sup := NewSupervisor(root, Config{Servers: []ServerSpec{spec}, StartTimeout: 10 * time.Second})
	at, _ := sup.Guard().Path(filepath.Join(root, "a.fake"))
	if _, err := sup.Reload(context.Background(), at); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	go sup.Check(context.Background())
	select {}
}

// D12: SIGKILL of the process running the supervisor leaves no server, no
// checker, and no helper either of them forked.
func TestSigkillLeavesNoOrphans(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(exe, "-test.run=^$")
	child.Env = append(os.Environ(), orphanChildEnv+"="+dir)
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	var pids []int
	for deadline := time.Now().Add(30 * time.Second); len(pids) < 2; {
		if time.Now().After(deadline) {
			t.Fatal("the child never started its server and checker")
		}
		pids = pids[:0]
		for _, f := range []string{"server-helper", "checker-helper"} {
			data, _ := os.ReadFile(filepath.Join(dir, f))
			if n, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
				pids = append(pids, n)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
	for deadline := time.Now().Add(10 * time.Second); ; {
		var left []int
		for _, p := range pids {
			if testenv.ProcessRunning(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("helpers %v still run after their supervisor's process was killed", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
