package lsp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
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
	spec := langserver.Spec{
		ID: "fake-forking", Language: "Fake", RootMarkers: []string{"fake.toml"},
		Extensions: map[string]string{".fake": "fake"},
		Command:    []string{"/bin/sh", "-c", fmt.Sprintf(`sleep 301 & echo $! > %s/server-helper; exec %s -fake-lsp=mute`, dir, exe)},
		Checker:    []string{"/bin/sh", "-c", fmt.Sprintf(`sleep 302 & echo $! > %s/checker-helper; wait`, dir)},
	}
	sup := NewSupervisor(root, Config{Servers: []langserver.Spec{spec}, StartTimeout: 10 * time.Second})
	at, _ := sup.co.Guard().Path(filepath.Join(root, "a.fake"))
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
	pids := []int{testenv.PidFile(t, filepath.Join(dir, "server-helper")), testenv.PidFile(t, filepath.Join(dir, "checker-helper"))}
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
	for _, p := range pids {
		if !testenv.Gone(p) {
			t.Errorf("helper %d still runs after its supervisor's process was killed", p)
		}
	}
}
