//go:build hardening

package hardening

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// N23: `debug evaluate` is bounded like a resume: a 60 s sleep evaluated at
// a breakpoint held the serial debug tool for the whole 60 s.
func TestN23(t *testing.T) { runCase(t, "N23", caseN23) }

func caseN23(c *cx) {
	c.need("python3")
	root := c.root
	writeFile(filepath.Join(root, "p.py"), "x = 1\nprint(x)\n")
	s := c.serve(root, "--without", "lsp")
	defer s.close()
	s.tool("debug", map[string]any{"operation": "breakpoints", "file": "p.py", "lines": []int{2}})
	l := s.toolWithin(90*time.Second, "debug", map[string]any{"operation": "launch", "adapter": "debugpy", "program": "p.py"})
	if !l.ok() {
		c.t.Fatalf("launch: %s", l.summary(200))
	}
	e := s.toolWithin(90*time.Second, "debug", map[string]any{"operation": "evaluate", "expression": "__import__('time').sleep(60)"})
	st := s.toolWithin(30*time.Second, "debug", map[string]any{"operation": "status"})
	c.line("debug evaluate __import__('time').sleep(60) at a breakpoint (debugpy): time, answer; status after",
		fmt.Sprintf("%s: %s; status in %s", secs(e.dur), e.summary(120), secs(st.dur)), "60.07 s: `= ` (the sleep's None); status then in 0.01 s")
	c.want(e.err == nil && e.dur < 40*time.Second, "evaluate answered within 40 s")
	c.want(st.err == nil && st.dur < 10*time.Second, "the debug tool free again")
	s.toolWithin(30*time.Second, "debug", map[string]any{"operation": "terminate"})
}
