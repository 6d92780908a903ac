//go:build hardening

package hardening

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// N18: children that call setsid do not outlive serve: a cell's, a
// worker's, a language server helper's and a debuggee's `setsid sleep`
// are gone after serve is SIGKILLed or its input ends.
func TestN18(t *testing.T) { runCase(t, "N18", caseN18) }

func caseN18(c *cx) {
	c.need("python3")
	for _, how := range []string{"SIGKILL", "EOF"} {
		c.sub(how, func(c *cx) {
			root, _ := c.pair(how)
			fake := filepath.Join(c.base, "fakebin-"+how)
			script(filepath.Join(fake, "typescript-language-server"),
				"if [ \"$1\" = --version ]; then echo 4.3.3; exit 0; fi\nsetsid sleep 204 &\nexec cat >/dev/null\n")
			writeFile(filepath.Join(root, "package.json"), "{\"name\":\"x\"}\n")
			writeFile(filepath.Join(root, "a.ts"), "export function g() { return 1 }\n")
			writeFile(filepath.Join(root, "spawn.py"), "import subprocess, time\nsubprocess.Popen(['setsid', 'sleep', '205'])\ntime.sleep(100)\n")
			s := c.serveIn(0, root, c.vibeEnv(fake), "--vibe", "--worker-command", "fast=sh")
			s.toolAsync("lsp", map[string]any{"operation": "hover", "file": "a.ts", "line": 1, "symbol": "g"})
			e := s.cell(60*time.Second, "import subprocess\nsubprocess.Popen(['setsid', 'sleep', '202'])\n'started'\n")
			v := s.tool("vibe_spawn", map[string]any{"label": "h", "brief": "setsid sleep 203 &\nsleep 100\n"})
			d := s.toolWithin(60*time.Second, "debug", map[string]any{"operation": "launch", "adapter": "debugpy", "program": "spawn.py", "timeout_seconds": 5})
			want := map[string]string{"202": "cell", "203": "worker", "204": "server helper", "205": "debuggee"}
			var seen map[string]int
			testenv.Until(20*time.Second, func() bool {
				seen = sleepers(c.base)
				return len(seen) >= len(want)
			})
			if how == "SIGKILL" {
				s.signal(syscall.SIGKILL, 10*time.Second)
			} else {
				s.closeStdin(30 * time.Second)
			}
			var left map[string]int
			testenv.Until(3*time.Second, func() bool {
				left = sleepers(c.base)
				return len(left) == 0
			})
			var names []string
			for arg := range left {
				names = append(names, want[arg]+" (sleep "+arg+")")
			}
			c.line(fmt.Sprintf("setsid children of a cell, a worker, a server helper, a debuggee; %s of serve: alive 3 s later", how),
				fmt.Sprintf("%d of %d: %s (eval: %s; vibe: %s; debug: %s)", len(left), len(seen), strings.Join(names, ", "), e.summary(40), v.summary(40), d.summary(60)), map[string]string{"SIGKILL": "4 of 4: cell, worker, server helper, debuggee", "EOF": "4 of 4: cell, worker, server helper, debuggee"}[how])
			c.want(len(seen) == len(want), "all four setsid children started (saw %d)", len(seen))
			c.want(len(left) == 0, "none alive")
			s.kill()
		})
	}
}

// sleepers maps the argument of each running tagged `sleep 20N` to its pid.
func sleepers(tag string) map[string]int {
	out := map[string]int{}
	for _, p := range tagged(tag) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.pid))
		if err != nil {
			continue
		}
		f := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(f) == 2 && f[0] == "sleep" && strings.HasPrefix(f[1], "20") {
			out[f[1]] = p.pid
		}
	}
	return out
}
