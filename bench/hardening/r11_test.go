//go:build hardening

package hardening

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// R11: `debug set_variable` had no time bound: a value that sleeps
// (debugpy) or one lldb-dap chews on (a 100,000-digit literal) held the
// serial debug tool, and `debug status` got no answer in 15 s. It is
// bounded like evaluate (timeout_seconds, default 10 s), and status
// answers while it runs.
func TestR11(t *testing.T) { runCase(t, "R11", caseR11) }

func caseR11(c *cx) {
	for _, a := range []struct{ adapter, prog, value, before string }{
		{"debugpy", "python3", "__import__('time').sleep(120) or 5", "120.27 s: x set to 5 once the sleep ended; status no answer within 30 s"},
		{"lldb", "lldb-dap-19", strings.Repeat("9", 100_000), "no answer within 90 s; status no answer within 30 s"},
	} {
		c.sub(a.adapter, func(c *cx) {
			c.need(a.prog)
			root, _ := c.pair(a.adapter)
			args := map[string]any{"operation": "launch", "adapter": a.adapter}
			if a.adapter == "debugpy" {
				writeFile(filepath.Join(root, "p.py"), "x = 1\nprint(x)\n")
				args["program"] = "p.py"
			} else {
				writeFile(filepath.Join(root, "p.c"), "#include <stdio.h>\nint main(void) {\n\tint x = 1;\n\tprintf(\"%d\\n\", x);\n\treturn 0;\n}\n")
				if out, err := exec.Command(c.need("gcc"), "-g", "-O0", "-o", filepath.Join(root, "p"), filepath.Join(root, "p.c")).CombinedOutput(); err != nil {
					c.t.Fatalf("gcc: %v\n%s", err, out)
				}
				args["program"] = "p"
			}
			file := map[string]string{"debugpy": "p.py", "lldb": "p.c"}[a.adapter]
			line := map[string]int{"debugpy": 2, "lldb": 4}[a.adapter]
			s := c.serve(root, "--without", "lsp")
			defer s.close()
			s.tool("debug", map[string]any{"operation": "breakpoints", "file": file, "lines": []int{line}})
			if l := s.toolWithin(90*time.Second, "debug", args); !l.ok() {
				c.t.Fatalf("launch: %s", l.summary(200))
			}
			set := s.toolAsync("debug", map[string]any{"operation": "set_variable", "name": "x", "value": a.value})
			// The set is under way: nothing an adapter shows says when it
			// began, so this waits on the clock.
			time.Sleep(time.Second)
			st := s.toolWithin(30*time.Second, "debug", map[string]any{"operation": "status"})
			sv := s.awaitTool(set, 90*time.Second)
			c.line(fmt.Sprintf("debug set_variable x to a value that does not finish (%s): time, answer; status sent during it", a.adapter),
				fmt.Sprintf("%s: %s; status in %s", secs(sv.dur), sv.summary(100), secs(st.dur)), a.before)
			c.want(sv.err == nil && sv.dur < 30*time.Second && strings.Contains(sv.text, "did not finish"), "set_variable answered within 30 s, saying the value still runs")
			c.want(st.ok() && st.dur < 5*time.Second, "status answered within 5 s while set_variable ran")
			s.toolWithin(30*time.Second, "debug", map[string]any{"operation": "terminate"})
		})
	}
}
