//go:build hardening

package hardening

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// D7: memory and result size stay bounded on huge files and lines.
func TestD7(t *testing.T) { runCase(t, "D7", caseD7) }

func caseD7(c *cx) {
	root := c.root
	sp := filepath.Join(root, "s.txt")
	f, err := os.Create(sp)
	check(err)
	_, err = f.WriteString(strings.Repeat("line of text\n", 800))
	check(err)
	check(f.Truncate(2 << 30))
	_, err = f.WriteAt([]byte("\nlast\n"), (2<<30)-6)
	check(err)
	check(f.Close())
	tail := func() string {
		f, err := os.Open(sp)
		if err != nil {
			return err.Error()
		}
		defer f.Close()
		b := make([]byte, 6)
		f.ReadAt(b, (2<<30)-6)
		fi, _ := f.Stat()
		return fmt.Sprintf("size %d, ends %q", fi.Size(), b)
	}

	// One fresh server per measurement, so VmHWM is that call's.
	measure := func(tool string, args map[string]any) (toolResult, int64) {
		s := c.serve(root, "--without", "lsp")
		r := s.tool(tool, args)
		h := s.hwm()
		s.close()
		return r, h
	}
	const small = 200 << 10 // kB: a bounded serve stays well under this
	c.sub("read 2 GiB", func(c *cx) {
		r, h := measure("read", map[string]any{"path": "s.txt", "limit": 1})
		c.line("read {limit:1} of a 2 GiB sparse file: VmHWM, wall time", fmt.Sprintf("%s, %s (%s)", mib(h), secs(r.dur), r.summary(80)),
			"4.2 GB max RSS, 6.2 s")
		c.want(r.ok() && h > 0 && h < small, "the first line, under 200 MiB")
	})
	c.sub("edit 2 GiB", func(c *cx) {
		r, h := measure("edit", map[string]any{"path": "s.txt", "old_string": "last\n", "new_string": "LAST\n"})
		c.line("edit of the 2 GiB file: answer, VmHWM", fmt.Sprintf("%s; %s; file %s", r.summary(120), mib(h), tail()),
			"no answer, OOM-killed at 24.4 GB RSS after writing the change")
		c.want(r.err == nil && r.isError && h > 0 && h < small && strings.HasSuffix(tail(), `"\nlast\n"`), "refused under 200 MiB, the file unchanged")
	})
	c.sub("patch 2 GiB", func(c *cx) {
		patch := "--- a/s.txt\n+++ b/s.txt\n@@ -1,2 +1,2 @@\n-line of text\n+LINE OF TEXT\n line of text\n"
		r, h := measure("apply_patch", map[string]any{"patch": patch})
		c.line("apply_patch of the 2 GiB file: VmHWM", fmt.Sprintf("%s (%s)", mib(h), r.summary(120)), "4.2 GB RSS")
		c.want(r.err == nil && r.isError && h > 0 && h < small, "refused under 200 MiB")
	})
	check(os.Remove(sp))

	lp := filepath.Join(root, "l.txt")
	c.sub("50 MB line", func(c *cx) {
		writeFile(lp, "head\n"+strings.Repeat("x", 50<<20)+"\nlast\n")
		r, h := measure("edit", map[string]any{"path": "l.txt", "old_string": "last\n", "new_string": "LAST\n"})
		c.line("edit next to a 50 MB line: response bytes, VmHWM", fmt.Sprintf("%s, %s (%s)", byteSize(r.size), mib(h), r.summary(120)),
			"52 MB response, 425 MB RSS")
		c.want(r.err == nil && r.size < 64<<10 && h > 0 && h < small, "an answer under 64 KiB, serve under 200 MiB")
	})

	// Under the edit size limit, the quoted line must still be cut.
	c.sub("15 MiB line", func(c *cx) {
		writeFile(lp, "head\n"+strings.Repeat("x", 15<<20)+"\nlast\n")
		r, h := measure("edit", map[string]any{"path": "l.txt", "old_string": "last\n", "new_string": "LAST\n"})
		c.line("edit next to a 15 MiB line (under the 16 MiB edit limit): response bytes, VmHWM", fmt.Sprintf("%s, %s (%s)", byteSize(r.size), mib(h), r.summary(120)),
			"not measured (the 50 MB line gave a 52 MB response)")
		c.want(r.ok() && r.size < 64<<10 && h > 0 && h < 2*small, "edited, an answer under 64 KiB, serve under 400 MiB")
	})
}
