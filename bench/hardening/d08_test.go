//go:build hardening

package hardening

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// D8: patterns of N space-separated metavariables are refused at once (or
// searched) in bounded time and memory.
func TestD8(t *testing.T) { runCase(t, "D8", caseD8) }

func caseD8(c *cx) {
	root := c.root
	writeFile(filepath.Join(root, "x.go"), "package x\n\nfunc f(a, b int) int { return a + b }\n")
	before := map[int]string{
		200:    "not measured (the largest count accepted now)",
		1000:   "0.7 s, 52 MB",
		4000:   "7.6 s, 589 MB",
		100000: ">120 s, no answer, 7.4 GB and rising; serve alive 60 s after stdin closed",
	}
	for _, n := range []int{200, 1000, 4000, 100000} {
		c.sub(fmt.Sprint(n), func(c *cx) {
			vars := make([]string, n)
			for i := range vars {
				vars[i] = fmt.Sprintf("$A%d", i)
			}
			pat := strings.Join(vars, " ")
			s := c.serve(root, "--without", "lsp")
			r := s.tool("ast_grep", map[string]any{"pattern": pat, "language": "go"})
			h := s.hwm()
			d, ok := s.closeStdin(60 * time.Second)
			c.line(fmt.Sprintf("ast_grep of %d metavariables (%d bytes): wall time, VmHWM, answer", n, len(pat)),
				fmt.Sprintf("%s, %s, %s; exit after stdin close: %s", secs(r.dur), mib(h), r.summary(120), exitFigure(d, ok)),
				before[n])
			c.want(r.err == nil && r.dur < 10*secsDur && h > 0 && h < 200<<10 && ok && d < 10*secsDur,
				"an answer within 10 s under 200 MiB, exit within 10 s of EOF")
		})
	}
}

const secsDur = time.Second
