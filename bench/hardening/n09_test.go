//go:build hardening

package hardening

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// N9: a result too large to build is refused before it is built: edit
// replace_all of 1 MiB over 50,000 matches (50 GB), and an ast_edit
// rewrite that expands to 4 GB, killed serve with `fatal error: out of
// memory`.
func TestN9(t *testing.T) { runCase(t, "N9", caseN9) }

func caseN9(c *cx) {
	root := c.root
	amplify := func(c *cx, tool string, args map[string]any, file, content string) {
		writeFile(filepath.Join(root, file), content)
		s := c.serveIn(memLimit, root, nil, "--without", "lsp")
		defer s.kill()
		r := s.toolWithin(min(timeout, 120*time.Second), tool, args)
		_, perr := s.call("ping", nil, 10*time.Second)
		h := s.hwm()
		alive := perr == nil
		fig := r.summary(140)
		if !alive {
			fig += "; serve: " + s.exitString() + ": " + excerpt(lastLine(s.stderr.String()), 100)
		}
		c.line(fmt.Sprintf("%s: answer after; serve alive; VmHWM", tool), fmt.Sprintf("%s: %s; alive: %s; %s", secs(r.dur), fig, yesNo(alive), mib(h)), map[string]string{"edit": "3.10 s: no answer; serve died (exit status 2, out of memory under the 4 GiB limit)", "ast_edit": "31.39 s: no answer; serve died (exit status 2, out of memory under the 4 GiB limit)"}[tool])
		c.want(r.err == nil && r.isError && alive && readFile(filepath.Join(root, file)) == content, "refused, serve alive, the file unchanged")
	}
	c.sub("edit replace_all", func(c *cx) {
		amplify(c, "edit", map[string]any{"path": "amp.txt", "old_string": "a", "new_string": strings.Repeat("B", 1<<20), "replace_all": true},
			"amp.txt", strings.Repeat("a\n", 50_000))
	})
	c.sub("ast_edit rewrite", func(c *cx) {
		var b strings.Builder
		b.WriteString("package p\n\nfunc f(...int) {}\n\nfunc g() {\n")
		for i := 0; i < 2000; i++ {
			b.WriteString("\tf(1)\n")
		}
		b.WriteString("}\n")
		amplify(c, "ast_edit", map[string]any{"pattern": "f($A)", "rewrite": "f(" + strings.Repeat("$A, ", 1_500_000) + "$A)", "path": "amp.go", "language": "go"},
			"amp.go", b.String())
	})
}
