package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// D7: memory and result size on huge files and lines.
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
	r, h := measure("read", map[string]any{"path": "s.txt", "limit": 1})
	c.line("read {limit:1} of a 2 GiB sparse file: VmHWM, wall time", fmt.Sprintf("%s, %s (%s)", mib(h), secs(r.dur), r.summary(80)),
		"4.2 GB max RSS, 6.2 s")
	r, h = measure("edit", map[string]any{"path": "s.txt", "old_string": "last\n", "new_string": "LAST\n"})
	c.line("edit of the 2 GiB file: answer, VmHWM", fmt.Sprintf("%s; %s; file %s", r.summary(120), mib(h), tail()),
		"no answer, OOM-killed at 24.4 GB RSS after writing the change")
	patch := "--- a/s.txt\n+++ b/s.txt\n@@ -1,2 +1,2 @@\n-line of text\n+LINE OF TEXT\n line of text\n"
	r, h = measure("apply_patch", map[string]any{"patch": patch})
	c.line("apply_patch of the 2 GiB file: VmHWM", fmt.Sprintf("%s (%s)", mib(h), r.summary(120)), "4.2 GB RSS")
	check(os.Remove(sp))

	lp := filepath.Join(root, "l.txt")
	writeFile(lp, "head\n"+strings.Repeat("x", 50<<20)+"\nlast\n")
	r, h = measure("edit", map[string]any{"path": "l.txt", "old_string": "last\n", "new_string": "LAST\n"})
	c.line("edit next to a 50 MB line: response bytes, VmHWM", fmt.Sprintf("%s, %s (%s)", byteSize(r.size), mib(h), r.summary(120)),
		"52 MB response, 425 MB RSS")

	// Under the edit size limit, the quoted line must still be cut.
	writeFile(lp, "head\n"+strings.Repeat("x", 15<<20)+"\nlast\n")
	r, h = measure("edit", map[string]any{"path": "l.txt", "old_string": "last\n", "new_string": "LAST\n"})
	c.line("edit next to a 15 MiB line (under the 16 MiB edit limit): response bytes, VmHWM", fmt.Sprintf("%s, %s (%s)", byteSize(r.size), mib(h), r.summary(120)),
		"not measured (the 50 MB line gave a 52 MB response)")
}
