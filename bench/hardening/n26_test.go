//go:build hardening

package hardening

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// N26: the temp-file sweep does not delete a live temp file of a process
// in another PID namespace, whose pid does not run here.
func TestN26(t *testing.T) { runCase(t, "N26", caseN26) }

func caseN26(c *cx) {
	if _, err := exec.Command("unshare", "--pid", "--fork", "--mount-proc", "true").CombinedOutput(); err != nil {
		c.lacks("no PID namespace here (unshare --pid: %v)", err)
	}
	root := c.root
	writeFile(filepath.Join(root, "big.txt"), "original\n")
	// Inside, serve runs as pid 77771, which cannot run here (pid_max is
	// lower); its temp files carry that pid.
	ns := []string{"unshare", "--pid", "--fork", "--kill-child", "--mount-proc", "sh", "-c", `echo 77770 > /proc/sys/kernel/ns_last_pid; "$@"; exit $?`, "sh"}
	inner, err := c.startServeVia(ns, root, nil, "--without", "lsp", "--max-frame", fmt.Sprint(512<<20))
	check(err)
	check(inner.initialize())
	defer inner.close()
	// The inner serve writes a large file; its temp file's name is seen
	// mid-write. A temp file of that name is then left beside, an hour old,
	// while the inner serve still runs: the sweep here cannot see its pid.
	// (Stopping the writer mid-write instead would hold the folder's lock,
	// and the write here would wait for it.)
	content := strings.Repeat(strings.Repeat("x", 99)+"\n", 1_500_000) // 150 MB
	p := inner.toolAsync("write", map[string]any{"path": "big.txt", "content": content})
	seen := tempDuring(root, p, timeout)
	r := inner.awaitTool(p, timeout)
	if seen == "" {
		c.lacks("the inner write ended before its temp file was seen")
	}
	writeFile(seen, "a live write's temp file\n")
	hour := time.Now().Add(-time.Hour)
	check(os.Chtimes(seen, hour, hour))
	s := c.serve(root, "--without", "lsp")
	w := s.toolWithin(30*time.Second, "write", map[string]any{"path": "other.txt", "content": "later\n"})
	s.close()
	kept := exists(seen)
	c.line("a serve in another PID namespace (pid 77771 there) runs; a temp file of its name, an hour old, beside; a write here in that folder: the temp file kept?",
		fmt.Sprintf("%s (%s; here: %s; the inner write: %s)", yesNo(kept), filepath.Base(seen), w.summary(40), r.summary(60)), "no (.big.txt.tmp-77771-…, swept); with the writer stopped mid-write instead: swept, and the inner write failed: big.txt: no such file or directory")
	c.want(w.ok() && kept, "the write done, the other namespace's temp file kept")
}
