//go:build hardening

package hardening

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// R12 (L-4): forked children shared the Python kernel's private channel.
// After a bare os.fork() two kernels answered cells in turn (x went 1, 1,
// 2, 2, 3, 3, each result "kernel state: preserved"); 8 multiprocessing
// (fork) workers printing 8 lines of 200 KB each got 0 of 64 lines through
// whole, and the result blamed "code in the cell".
func TestR12(t *testing.T) { runCase(t, "R12", caseR12) }

var echoed = regexp.MustCompile(`\n(\d+)$`)

func caseR12(c *cx) {
	c.need("python3")
	root := c.root
	c.sub("bare fork", func(c *cx) {
		s := c.serve(root, "--without", "lsp")
		defer s.close()
		s.cell(60*time.Second, "import os\nx = 0\nos.fork()\n'forked'")
		var xs []string
		for i := 0; i < 6; i++ {
			r := s.cell(60*time.Second, "x += 1\nx")
			m := echoed.FindStringSubmatch(strings.TrimSpace(r.text))
			if m == nil {
				xs = append(xs, "?")
				continue
			}
			xs = append(xs, m[1])
		}
		got := strings.Join(xs, ", ")
		c.line("x += 1; x in six cells after a bare os.fork()", got, "1, 2, 3, 1, 4, 2 (the report: 1, 1, 2, 2, 3, 3)")
		c.want(got == "1, 2, 3, 4, 5, 6", "one kernel answering: 1, 2, 3, 4, 5, 6")
	})
	c.sub("multiprocessing", func(c *cx) {
		s := c.serve(root, "--without", "lsp")
		defer s.close()
		r := s.cell(120*time.Second, `import multiprocessing as mp, sys

def work(i):
    for j in range(8):
        sys.stdout.write(str(i) * 200_000 + '\n')
    return i

with mp.get_context('fork').Pool(8) as pool:
    got = pool.map(work, range(8))
got`)
		ok := r.ok() && strings.Contains(r.text, "[0, 1, 2, 3, 4, 5, 6, 7]") && !strings.Contains(r.text, "Dropped")
		c.line("8 multiprocessing (fork) workers printing 8 × 200 KB lines each from a function the cell defines: answer",
			r.summary(200), "the function did not pickle (attribute lookup on __main__ failed); with one that did, 0 of 64 lines whole and \"Dropped: 34 messages … (code in the cell wrote there)\"")
		c.want(ok, "the map's value, and nothing dropped from the kernel's channel")
	})
}
