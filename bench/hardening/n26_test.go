//go:build hardening

package hardening

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// N26: the temp-file sweep does not delete a live temp file of a process
// in another PID namespace, whose pid does not run here.
func TestN26(t *testing.T) { runCase(t, "N26", caseN26) }

func caseN26(c *cx) {
	if _, err := exec.Command("unshare", "--pid", "--fork", "--mount-proc", "true").CombinedOutput(); err != nil {
		c.t.Skipf("no PID namespace here (unshare --pid: %v)", err)
	}
	root := c.root
	writeFile(filepath.Join(root, "big.txt"), "original\n")
	// Inside, serve runs as pid 77771, which cannot run here (pid_max is
	// lower); its temp files carry that pid.
	ns := []string{"unshare", "--pid", "--fork", "--kill-child", "--mount-proc", "sh", "-c", `echo 77770 > /proc/sys/kernel/ns_last_pid; "$@"; exit $?`, "sh"}
	inner, err := c.startServeVia(ns, root, nil, "--without", "lsp", "--max-frame", fmt.Sprint(512<<20))
	check(err)
	check(inner.initialize())
	defer inner.kill()
	var serve int
	for _, p := range descendants(inner.pid()) {
		if p.comm == "builtin-tools" {
			serve = p.pid
		}
	}
	if serve == 0 {
		c.t.Fatal("serve not found inside the namespace")
	}
	content := strings.Repeat(strings.Repeat("x", 99)+"\n", 1_500_000) // 150 MB
	p := inner.toolAsync("write", map[string]any{"path": "big.txt", "content": content})
	var seen string
	deadline := time.Now().Add(timeout)
	for seen == "" && time.Now().Before(deadline) {
		if t := temps(root); len(t) > 0 {
			seen = t[0]
			syscall.Kill(serve, syscall.SIGSTOP)
		} else {
			time.Sleep(time.Millisecond)
		}
	}
	if seen == "" {
		c.t.Skip("the inner write ended before its temp file was seen")
	}
	defer syscall.Kill(serve, syscall.SIGCONT)
	hour := time.Now().Add(-time.Hour)
	check(os.Chtimes(seen, hour, hour))
	s := c.serve(root, "--without", "lsp")
	w := s.tool("write", map[string]any{"path": "other.txt", "content": "later\n"})
	s.close()
	kept := exists(seen)
	syscall.Kill(serve, syscall.SIGCONT)
	r := inner.awaitTool(p, timeout)
	c.line("a serve in another PID namespace is mid-write (its temp file an hour old); a write here in that folder: the live temp file kept? the inner write's answer",
		fmt.Sprintf("%s (%s; here: %s); inner: %s", yesNo(kept), filepath.Base(seen), w.summary(40), r.summary(120)), "no (.big.txt.tmp-77771-…: the sweep deleted it); inner: could not write big.txt: big.txt: no such file or directory")
	c.want(kept && r.ok() && readFile(filepath.Join(root, "big.txt")) == content, "the temp file kept, the inner write completed")
}
