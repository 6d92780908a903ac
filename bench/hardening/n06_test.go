//go:build hardening

package hardening

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

var workerID = regexp.MustCompile(`\bw\d+\b`)

// N6: a worker's background child does not keep it running: the shell's
// exit ends the run with its result, vibe_kill and SIGTERM of serve do not
// wait for a setsid child.
func TestN6(t *testing.T) { runCase(t, "N6", caseN6) }

func caseN6(c *cx) {
	root := c.root
	writeFile(filepath.Join(root, "a.txt"), "a\n")
	start := func(c *cx) *server {
		return c.serveIn(0, root, c.vibeEnv(), "--without", "lsp", "--vibe", "--worker-command", "fast=sh")
	}

	c.sub("background child", func(c *cx) {
		s := start(c)
		defer s.close()
		sp := s.tool("vibe_spawn", map[string]any{"label": "h", "brief": "sleep 40 &\necho result-line\n"})
		id := workerID.FindString(sp.text)
		w := s.toolWithin(30*time.Second, "vibe_wait", map[string]any{"worker_ids": []string{id}, "timeout_seconds": 8})
		ended := w.ok() && strings.Contains(w.text, "result-line")
		l := s.tool("vibe_list", map[string]any{})
		c.line("brief `sleep 40 & echo result-line` (the shell exits at once): vibe_wait 8 s; vibe_list",
			fmt.Sprintf("wait: %s; list: %s", w.summary(120), l.summary(120)), "wait: \"waited 8s: still running or queued: w1\"; list: w1 \"h\" [fast] running, 8s")
		c.want(ended && !strings.Contains(l.text, "running"), "the run ended with its result within 8 s")
	})

	c.sub("setsid child: vibe_kill", func(c *cx) {
		s := start(c)
		defer s.close()
		sp := s.tool("vibe_spawn", map[string]any{"label": "h", "brief": "setsid sleep 30 &\nsleep 100\n"})
		id := workerID.FindString(sp.text)
		bothSleep(s)
		k := s.toolWithin(60*time.Second, "vibe_kill", map[string]any{"worker_id": id})
		c.line("brief `setsid sleep 30 & sleep 100`: vibe_kill time, answer", secs(k.dur)+": "+k.summary(120), "29.01 s: w1 \"h\" [fast] killed, 30s (vibe_kill waited for the setsid child)")
		c.want(k.ok() && k.dur < 10*time.Second, "vibe_kill answered within 10 s")
	})

	c.sub("setsid child: SIGTERM", func(c *cx) {
		s := start(c)
		sp := s.tool("vibe_spawn", map[string]any{"label": "h", "brief": "setsid sleep 30 &\nsleep 100\n"})
		_ = sp
		bothSleep(s)
		d, ok := s.signal(syscall.SIGTERM, 30*time.Second)
		c.line("the same worker running: serve's exit after SIGTERM", exitFigure(d, ok), "exited in 10.01 s (the setsid child survived)")
		c.want(ok && d < 5*time.Second, "exit within 5 s")
	})
}

// bothSleep waits (up to 30 s) until the worker's shell has started its
// setsid child and its own sleep: two sleep processes below s.
func bothSleep(s *server) {
	testenv.Until(30*time.Second, func() bool { return named(descendants(s.pid()), "sleep") >= 2 })
}
