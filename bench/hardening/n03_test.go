//go:build hardening

package hardening

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// N3: a worker spawned from plan or readonly mode does not write the root.
func TestN3(t *testing.T) { runCase(t, "N3", caseN3) }

func caseN3(c *cx) {
	for _, mode := range []string{"plan", "readonly"} {
		c.sub(mode, func(c *cx) {
			root, _ := c.pair(mode)
			writeFile(filepath.Join(root, "a.txt"), "a\n")
			s := c.serveIn(0, root, c.vibeEnv(), "--without", "lsp", "--mode", mode, "--approve", "write=deny,exec=deny",
				"--vibe", "--worker-command", "fast=sh")
			defer s.close()
			sp := s.tool("vibe_spawn", map[string]any{"label": "h", "brief": "echo pwned > written-in-" + mode + ".txt\necho done\n"})
			var w toolResult
			if sp.ok() {
				w = s.toolWithin(min(timeout, 60*time.Second), "vibe_wait", map[string]any{"timeout_seconds": 30})
			}
			wrote := exists(filepath.Join(root, "written-in-"+mode+".txt"))
			c.line("serve --mode "+mode+" --approve write=deny,exec=deny --vibe --worker-command fast=sh; vibe_spawn {brief: echo pwned > f}: f written?",
				yesNo(wrote)+" (spawn: "+sp.summary(120)+"; wait: "+w.summary(80)+")",
				"yes (the worker ran in the root and wrote it)")
			c.want(!strings.Contains(sp.text, "bad arguments"), "a well-formed spawn (this case's own error)")
			c.want(!wrote, "the worker writes nothing in the root")
		})
	}
}
