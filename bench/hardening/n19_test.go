//go:build hardening

package hardening

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// N19: temp folders (eval's, debug's, gopls's, vibe's) do not stay after
// serve is SIGKILLed: the reaper removes them, or the next serve sweeps a
// dead owner's.
func TestN19(t *testing.T) { runCase(t, "N19", caseN19) }

func caseN19(c *cx) {
	c.need("gopls")
	c.need("dlv")
	root := c.root
	writeFile(filepath.Join(root, "go.mod"), "module example.com/tmp\n\ngo 1.22\n")
	writeFile(filepath.Join(root, "main.go"), "package main\n\nimport \"time\"\n\nfunc main() {\n\t<-time.After(100 * time.Second)\n}\n")
	env := c.vibeEnv()
	s := c.serveIn(0, root, env, "--vibe", "--worker-command", "fast=sh")
	calls := []toolResult{
		s.cell(60*time.Second, "open('/dev/null').close()\n'ok'\n"),
		s.tool("lsp", map[string]any{"operation": "hover", "file": "main.go", "line": 6, "symbol": "After"}),
		s.tool("vibe_spawn", map[string]any{"label": "h", "brief": "sleep 100\n"}),
		s.toolWithin(90*time.Second, "debug", map[string]any{"operation": "launch", "adapter": "delve", "program": ".", "timeout_seconds": 3}),
	}
	running := folders(c.tmp)
	s.signal(syscall.SIGKILL, 10*time.Second)
	var afterKill []string
	testenv.Until(5*time.Second, func() bool {
		afterKill = folders(c.tmp)
		return len(afterKill) == 0
	})
	s2 := c.serveIn(0, root, env, "--without", "lsp")
	r := s2.tool("write", map[string]any{"path": "x.txt", "content": "x\n"})
	s2.close()
	afterNext := folders(c.tmp)
	var said []string
	for _, r := range calls {
		said = append(said, r.summary(40))
	}
	c.line("serve ran eval, lsp (gopls), vibe and debug (delve), then SIGKILL: builtin-tools-* folders in its TMPDIR while running; 5 s after; after the next serve",
		fmt.Sprintf("%s; %s; %s (calls: %s; write: %s)", listOrNone(running), listOrNone(afterKill), listOrNone(afterNext),
			strings.Join(said, " | "), r.summary(40)), "dap (1.8 MiB), eval (14 KiB), gopls, vibe: all four left 5 s after, and after the next serve")
	c.want(len(running) > 0, "the run used temp folders (else the case measures nothing)")
	c.want(len(afterKill) == 0 || len(afterNext) == 0, "none left once the reaper or the next serve has run")
}

// folders lists the builtin-tools-* entries in dir, and their size.
func folders(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "builtin-tools") {
			var n int64
			filepath.WalkDir(filepath.Join(dir, e.Name()), func(p string, d os.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() {
					if fi, err := d.Info(); err == nil {
						n += fi.Size()
					}
				}
				return nil
			})
			out = append(out, fmt.Sprintf("%s (%s)", strings.TrimPrefix(e.Name(), "builtin-tools-"), byteSize(int(n))))
		}
	}
	sort.Strings(out)
	return out
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, " ")
}
