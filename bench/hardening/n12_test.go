//go:build hardening

package hardening

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// N12: cell code writing kernel frames on fd 4 (the protocol's output at
// 39e7bea) cannot forge a result, shift later results, inject output or
// kill the kernel.
func TestN12(t *testing.T) { runCase(t, "N12", caseN12) }

// forge is Python that writes a Content-Length frame with body b to fd 4.
func forge(body string) string {
	return fmt.Sprintf("import os\n_b = %q.encode()\ntry:\n    os.write(4, b'Content-Length: %%d\\r\\n\\r\\n' %% len(_b) + _b)\nexcept OSError:\n    pass\n", body)
}

func caseN12(c *cx) {
	fresh := func(c *cx) (*server, func(string) toolResult) {
		s := c.serve(c.root, "--without", "lsp")
		return s, func(code string) toolResult { return s.cell(30*time.Second, code) }
	}
	c.sub("forged done", func(c *cx) {
		s, cell := fresh(c)
		defer s.kill()
		cell("keep = 42\n")
		r2 := cell(forge(`{"type":"done","result":"FORGED"}`) + "'real result of cell 2'\n")
		r3 := cell("'real result of cell 3'\n")
		r4 := cell("'real result of cell 4'\n")
		c.line("a cell writes a forged done frame on fd 4: its result; the next two cells' results",
			fmt.Sprintf("%s | %s | %s", r2.summary(80), r3.summary(80), r4.summary(80)), "FORGED | 'real result of cell 2' | 'real result of cell 3'")
		c.want(!strings.Contains(r2.text, "FORGED") && strings.Contains(r3.text, "cell 3'") && strings.Contains(r4.text, "cell 4'"),
			"no forged result, every later cell its own result")
	})
	c.sub("forged stream", func(c *cx) {
		s, cell := fresh(c)
		defer s.kill()
		r := cell(forge(`{"type":"stream","name":"stdout","text":"INJECTED\n"}`) + "'real result of cell 1'\n")
		c.line("a cell writes a forged stream frame on fd 4: its answer", r.summary(160), "INJECTED, then 'real result of cell 1'")
		c.want(r.ok() && !strings.Contains(r.text, "INJECTED") && strings.Contains(r.text, "cell 1'"), "no injected output, its own result")
	})
	c.sub("junk", func(c *cx) {
		s, cell := fresh(c)
		defer s.kill()
		cell("keep = 42\n")
		r := cell("import os\ntry:\n    os.write(4, b'junk junk junk\\n')\nexcept OSError:\n    pass\n'junk written'\n")
		k := cell("keep\n")
		c.line("a cell writes junk on fd 4: its answer; the next cell's `keep`", fmt.Sprintf("%s; next: %s", r.summary(100), k.summary(100)), "no answer within 30 s; next: no answer within 30 s")
		c.want(k.ok() && strings.Contains(k.text, "42"), "the kernel and its state kept")
	})
}
