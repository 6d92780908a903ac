//go:build hardening

package hardening

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// N11: a kernel message over the 64 MiB frame cap neither kills the kernel
// nor hangs the call: a 70 MB print, a 70 M-character last expression.
func TestN11(t *testing.T) { runCase(t, "N11", caseN11) }

func caseN11(c *cx) {
	for _, k := range []struct{ name, code string }{
		{"print", "print('x' * 70_000_000)\n"},
		{"last expression", "'y' * 70_000_000\n"},
	} {
		c.sub(k.name, func(c *cx) {
			s := c.serveIn(memLimit, c.root, nil, "--without", "lsp")
			defer s.kill()
			if r := s.cell(60*time.Second, "keep = 42\n"); !r.ok() {
				c.t.Fatalf("first cell: %s", r.summary(200))
			}
			r := s.cell(90*time.Second, k.code)
			after := s.cell(30*time.Second, "keep\n")
			c.line(fmt.Sprintf("cell `%s`: answer time, answer; the next cell's `keep`", strings.TrimSpace(k.code)),
				fmt.Sprintf("%s: %s (%s); next: %s", secs(r.dur), r.summary(140), byteSize(r.size), after.summary(80)), map[string]string{"print": "0.59 s: kernel state: lost: the kernel died; next: a fresh kernel, keep undefined", "last expression": "90.04 s: no answer within 90 s; next: no answer within 30 s (the report: 300 s, then the state lost)"}[k.name])
			c.want(r.err == nil && r.size < 1<<20, "an answer within 90 s, under 1 MiB")
			c.want(after.ok() && strings.Contains(after.text, "42"), "the state kept")
		})
	}
}
