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

// R3 (M-1): with %autoreload 2, after a reload that failed (a syntax
// error, an exception at import, an import interrupted by a cancel), names
// imported with `from m import f` and existing instances kept old code for
// good while m.f ran the new: ('f2', 'f3', 'm2'). IPython updates them on
// the next good reload; so does eval now.
func TestR3(t *testing.T) { runCase(t, "R3", caseR3) }

func caseR3(c *cx) {
	c.need("python3")
	version := func(v string) string {
		return "def f():\n    return 'f" + v + "'\n\nclass C:\n    def m(self):\n        return 'm" + v + "'\n"
	}
	bad := map[string]string{
		"syntax": "def f(:\n    pass\n",
		"raise":  "def f():\n    return 'half'\n\nraise RuntimeError('not today')\n",
		"cancel": "def f():\n    return 'half'\n\nimport time\nopen('started', 'w').close()\nwhile True:\n    time.sleep(0.05)\n",
	}
	const probe = "(f(), m.f(), c.m())"
	for _, kind := range []string{"syntax", "raise", "cancel"} {
		c.sub(kind, func(c *cx) {
			root, _ := c.pair(kind)
			mod := filepath.Join(root, "m.py")
			writeFile(mod, version("1"))
			s := c.serve(root, "--without", "lsp")
			defer s.close()
			s.cell(60*time.Second, "%load_ext autoreload\n%autoreload 2\nimport m\nfrom m import f\nc = m.C()\n"+probe)
			writeFile(mod, version("2"))
			s.cell(60*time.Second, probe)
			writeFile(mod, bad[kind])
			if kind == "cancel" {
				p := s.toolAsync("eval", map[string]any{"code": probe, "description": "a cell of the hardening reproductions"})
				testenv.Until(30*time.Second, func() bool { return exists(filepath.Join(root, "started")) })
				check(s.notify("notifications/cancelled", map[string]any{"requestId": requestID(p), "reason": "the reproduction cancels it"}))
				s.awaitTool(p, 60*time.Second)
			} else {
				s.cell(60*time.Second, probe)
			}
			writeFile(mod, version("3"))
			r := s.cell(60*time.Second, probe)
			writeFile(mod, version("4"))
			r4 := s.cell(60*time.Second, probe)
			got := lastLine(r.text) + ", then " + lastLine(r4.text)
			c.line(fmt.Sprintf("%%autoreload 2: (f(), m.f(), c.m()) after a reload that failed (%s), fixed twice", kind), got,
				"('f2', 'f3', 'm2'), then ('f2', 'f4', 'm2')")
			c.want(strings.Contains(r.text, "('f3', 'f3', 'm3')") && strings.Contains(r4.text, "('f4', 'f4', 'm4')"), "the new code through every name")
		})
	}
}

// requestID is the JSON-RPC id of a request sent, as a number.
func requestID(p *pendingCall) int64 {
	var id int64
	fmt.Sscan(p.key, &id)
	return id
}
