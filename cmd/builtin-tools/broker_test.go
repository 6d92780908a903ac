package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

func brokerPID(t *testing.T, dir string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "lsp-broker.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

// LSP-9: two serve processes with --lsp-broker over one Go module share
// one gopls, which the first started through the broker; the second's
// first answer comes from the warm server. SIGKILL of the broker takes its
// gopls along; each process's next call starts a new broker (or joins the
// one the other started) and answers; in the end, one gopls again, which
// the other process keeps using when the one that started the broker is
// killed.
func TestServeProcessesShareThroughBroker(t *testing.T) {
	root := shopModule(t, "package shop\n\n// Cart holds items.\ntype Cart struct{ Items []string }\n\n// Total counts the items.\nfunc (c *Cart) Total() int { return len(c.Items) }\n\nfunc use() int {\n\tc := &Cart{}\n\treturn c.Total() + c.Total()\n}\n")
	env, dir := brokerRuntime(t, root)
	refs := map[string]any{"operation": "references", "file": "cart.go", "line": 7, "symbol": "Total"}

	// The broker is on by default.
	a := startServeWith(t, env, "--root", root)
	b := startServeWith(t, env, "--root", root, "--lsp-memory-budget", "3GiB")
	t0 := time.Now()
	if text := a.text("lsp", refs); !strings.Contains(text, "cart.go:11") {
		t.Fatalf("a: %s", text)
	}
	ta := time.Since(t0)
	t0 = time.Now()
	if text := b.text("lsp", refs); !strings.Contains(text, "cart.go:11") {
		t.Fatalf("b: %s", text)
	}
	tb := time.Since(t0)
	gopls := proc.Working("gopls", root)
	if len(gopls) != 1 {
		t.Fatalf("two processes through the broker: want 1 gopls, got %v", gopls)
	}
	// Each process's status lists the broker's servers: the one gopls,
	// both processes connected.
	if text := a.text("lsp", map[string]any{"operation": "status"}); !strings.Contains(text, "servers of the broker (every process of this user): 1,") ||
		!strings.Contains(text, "2 processes connected") {
		t.Fatalf("a's status:\n%s", text)
	}
	// One budget, the broker's, set by a, which started it: b is told.
	if text := b.text("lsp", map[string]any{"operation": "status"}); !strings.Contains(text, "set when the broker started: it governs these servers, not this process's budget (3072 MiB)") {
		t.Fatalf("b's status:\n%s", text)
	}
	broker := brokerPID(t, dir)
	t.Logf("first answer: process 1 %v (cold), process 2 %v (warm, through the broker); one gopls, %d KiB resident", ta, tb, proc.RSSKB(gopls[0]))
	if text := b.text("write", map[string]any{"path": "f.go", "content": "package shop\n\nfunc f() int { return (&Cart{}).Total() }\n"}); strings.Contains(text, "New diagnostics") {
		t.Fatalf("b's write: %s", text)
	}

	// The broker killed: its gopls ends with it, and each process's
	// next call recovers.
	syscall.Kill(broker, syscall.SIGKILL)
	testenv.WaitFor(t, time.Minute, "gopls's end with its broker", func() bool { return len(proc.Working("gopls", root)) == 0 })
	for i, p := range []*servePeer{a, b} {
		if text := p.text("lsp", refs); !strings.Contains(text, "cart.go:11") {
			t.Fatalf("process %d after the broker's death: %s", i+1, text)
		}
	}
	if got := proc.Working("gopls", root); len(got) != 1 {
		t.Fatalf("after the broker's restart: want 1 gopls, got %v", got)
	}
	if pid := brokerPID(t, dir); pid == broker || !proc.Running(pid) {
		t.Fatalf("no new broker: %d", pid)
	}

	// The process that started the new broker killed: the other keeps
	// its server.
	before, starter := proc.Working("gopls", root), brokerPID(t, dir)
	a.kill()
	t0 = time.Now()
	if text := b.text("lsp", refs); !strings.Contains(text, "cart.go:11") {
		t.Fatalf("b after a's SIGKILL: %s", text)
	}
	t.Logf("b's answer after the broker's starter was killed: %v", time.Since(t0))
	if got := proc.Working("gopls", root); len(got) != 1 || got[0] != before[0] {
		t.Fatalf("after a's SIGKILL: gopls %v, before %v", got, before)
	}
	if !proc.Running(starter) {
		t.Fatalf("the broker %d ended with the process that started it", starter)
	}
}

// brokerRuntime is the environment of serve processes whose broker lives
// in a runtime folder of the test's own, and the broker's folder in it.
// At the end the broker the processes started last, which outlives them
// by its idle time, is ended, and root's gopls with it.
func brokerRuntime(t *testing.T, root string) (env []string, dir string) {
	t.Helper()
	runtime, err := os.MkdirTemp("", "rt-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(runtime) })
	dir = filepath.Join(runtime, "builtin-tools")
	t.Cleanup(func() {
		if pid := brokerPID(t, dir); pid > 0 {
			syscall.Kill(pid, syscall.SIGTERM)
			testenv.WaitFor(t, time.Minute, "the broker's end", func() bool { return testenv.Gone(pid) })
		}
		testenv.WaitFor(t, time.Minute, "gopls's end", func() bool { return len(proc.Working("gopls", root)) == 0 })
	})
	return append(os.Environ(), "XDG_RUNTIME_DIR="+runtime), dir
}

// Issue 32 §2: the broker, outside its starter's cgroup, lives on its own
// idle timer only: once the process that used it is killed (through
// proc, as a harness ends it), its gopls stops after the idle time and
// the broker exits after its grace, leaving no process. The broker here
// is started as serve starts it, with an idle time of 1 s and a grace of
// 3 s.
func TestBrokerEndsItselfWhenUnused(t *testing.T) {
	root := shopModule(t, "package shop\n\nfunc Total() int { return 1 }\n\nfunc use() int { return Total() }\n")
	env, dir := brokerRuntime(t, root)
	// serve first: the broker, with no client, waits only its grace.
	a := startServeWith(t, env, "--root", root)
	cmd := exec.Command(testenv.Command(t), "lsp-broker", "--dir", dir, "--idle", "1s", "--grace", "3s")
	cmd.Env = env
	pid, err := proc.StartDetached(cmd)
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, time.Minute, "the broker's socket", func() bool {
		_, err := os.Stat(filepath.Join(dir, "lsp-broker.sock"))
		return err == nil
	})
	if text := a.text("lsp", map[string]any{"operation": "references", "file": "cart.go", "line": 3, "symbol": "Total"}); !strings.Contains(text, "cart.go:5") {
		t.Fatalf("references: %s", text)
	}
	if brokerPID(t, dir) != pid || len(proc.Working("gopls", root)) != 1 {
		t.Fatalf("not through the broker %d: gopls %v", pid, proc.Working("gopls", root))
	}
	a.kill()
	testenv.WaitFor(t, time.Minute, "the unused broker's end, and its gopls's", func() bool {
		return !proc.Running(pid) && len(proc.Working("gopls", root)) == 0
	})
}

// shopModule is a one-package Go module in a folder of its own (links
// resolved, as gopls reports paths) with cart as its cart.go, for the
// broker tests' serve processes.
func shopModule(t *testing.T, cart string) string {
	testenv.LookPath(t, "gopls")
	testenv.SetupPath()
	root := t.TempDir()
	if resolved, err := filepath.EvalSymlinks(root); err == nil {
		root = resolved
	}
	testenv.WriteTree(t, root, map[string]string{"go.mod": "module example.com/shop\n\ngo 1.22\n", "cart.go": cart})
	return root
}
