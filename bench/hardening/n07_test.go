//go:build hardening

package hardening

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// N7: tool() called from threads in an eval cell: 8 threads × 50 calls
// each get their own answer, the cell ends, the state is kept.
func TestN7(t *testing.T) { runCase(t, "N7", caseN7) }

func caseN7(c *cx) {
	root := c.root
	for i := 0; i < 50; i++ {
		writeFile(filepath.Join(root, fmt.Sprintf("f%02d.txt", i)), fmt.Sprintf("content-of-%02d\n", i))
	}
	c.sub("threads", func(c *cx) {
		s := c.serve(root, "--without", "lsp")
		defer s.kill()
		r := s.cell(60*time.Second, "keep = 42\n")
		if !r.ok() {
			c.t.Fatalf("first cell: %s", r.summary(200))
		}
		code := `from concurrent.futures import ThreadPoolExecutor
paths = [f"f{i:02d}.txt" for i in range(50)] * 8
def one(p):
    try:
        return p[1:3] in str(tool("read", {"path": p}))
    except Exception as e:
        return repr(e)
with ThreadPoolExecutor(8) as ex:
    got = list(ex.map(one, paths))
bad = [g for g in got if g is not True]
f"{len(got) - len(bad)} of {len(got)} matched; first bad: {bad[:1]}"
`
		r = s.cell(60*time.Second, code)
		k := s.cell(30*time.Second, "keep\n")
		c.line("8 threads × 50 tool('read') calls in one cell: answer; the next cell's `keep`",
			fmt.Sprintf("%s (in %s); next: %s", r.summary(160), secs(r.dur), k.summary(80)), "no answer within 60 s; next: no answer within 30 s (the report: 303 s, then the state lost)")
		c.want(r.ok() && strings.Contains(r.text, "400 of 400 matched"), "400 of 400 calls answered with their own file, within 60 s")
		c.want(k.ok() && strings.Contains(k.text, "42"), "the state kept")
	})
	c.sub("late output", func(c *cx) {
		s := c.serve(root, "--without", "lsp")
		defer s.kill()
		r1 := s.cell(60*time.Second, "import threading, time\nthreading.Thread(target=lambda: (time.sleep(1), print('LATE PRINT FROM CELL 1'), open('printed', 'w').close())).start()\n'cell 1 done'\n")
		testenv.Until(30*time.Second, func() bool { return exists(filepath.Join(root, "printed")) })
		r2 := s.cell(60*time.Second, "'cell 2 done'\n")
		c.line("a thread prints 1 s after its cell returned: where the print shows",
			fmt.Sprintf("cell 1: %s; cell 2: %s", r1.summary(80), r2.summary(160)), "cell 1: 'cell 1 done'; cell 2: LATE PRINT FROM CELL 1, then 'cell 2 done', with no note")
		// The fix may attribute it to no cell, or to the next with a note
		// naming where it came from; cell 2 showing it bare is the defect.
		late := strings.Contains(r2.text, "LATE PRINT")
		noted := strings.Contains(r2.text, "cell 1") || strings.Contains(r2.text, "earlier cell") || strings.Contains(r2.text, "previous cell")
		c.want(r1.ok() && r2.ok(), "both cells answered")
		c.want(!late || noted, "the late print not silently billed to cell 2")
	})
}
