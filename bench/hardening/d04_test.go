//go:build hardening

package hardening

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// swapper exchanges two paths with renameat2(RENAME_EXCHANGE) in a loop.
type swapper struct {
	a, b  string
	stop  atomic.Bool
	swaps atomic.Int64
	wg    sync.WaitGroup
}

func startSwapper(a, b string) *swapper {
	w := &swapper{a: a, b: b}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for !w.stop.Load() {
			if unix.Renameat2(unix.AT_FDCWD, w.a, unix.AT_FDCWD, w.b, unix.RENAME_EXCHANGE) == nil {
				w.swaps.Add(1)
			}
		}
	}()
	return w
}

// halt stops the loop and leaves a as the real folder.
func (w *swapper) halt() int64 {
	w.stop.Store(true)
	w.wg.Wait()
	if fi, err := os.Lstat(w.a); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		unix.Renameat2(unix.AT_FDCWD, w.a, unix.AT_FDCWD, w.b, unix.RENAME_EXCHANGE)
	}
	return w.swaps.Load()
}

// D4: check-then-use races, and resolve through a folder replaced by a
// link: nothing outside is read, created or changed, no temp file is left.
func TestD4(t *testing.T) { runCase(t, "D4", caseD4) }

func caseD4(c *cx) {
	const calls = 800
	root, outside := c.root, c.outside
	sub, sublink := filepath.Join(root, "sub"), filepath.Join(root, "sublink")
	odir := filepath.Join(outside, "dir")
	writeFile(filepath.Join(sub, "a.txt"), "inside SECRET\n")
	writeFile(filepath.Join(odir, "a.txt"), "OUTSIDE SECRET\n")
	check(os.Symlink("../outside/dir", sublink))

	type phase struct {
		tool   string
		args   func(i int) map[string]any
		count  func(results []toolResult) (string, int)
		before string
	}
	refused := func(rs []toolResult) int {
		n := 0
		for _, r := range rs {
			if !r.ok() {
				n++
			}
		}
		return n
	}
	phases := []phase{
		{"read", func(int) map[string]any { return map[string]any{"path": "sub/a.txt"} },
			func(rs []toolResult) (string, int) {
				n := 0
				for _, r := range rs {
					if strings.Contains(r.text, "OUTSIDE SECRET") {
						n++
					}
				}
				return fmt.Sprintf("%d results with OUTSIDE SECRET", n), n
			}, "76 results with OUTSIDE SECRET; temp files 0 outside / 0 inside"},
		{"write", func(i int) map[string]any {
			return map[string]any{"path": fmt.Sprintf("sub/pwn%d.txt", i), "content": "PWNED\n"}
		},
			func([]toolResult) (string, int) {
				n := countGlob(odir, "pwn*.txt")
				return fmt.Sprintf("%d files created outside (%d inside)", n, countGlob(sub, "pwn*.txt")), n
			}, "52 files created outside; temp files 24 outside / 30 inside"},
		{"edit", func(int) map[string]any {
			return map[string]any{"path": "sub/a.txt", "old_string": "SECRET", "new_string": "SECRET!"}
		},
			func([]toolResult) (string, int) {
				n := strings.Count(readFile(filepath.Join(odir, "a.txt")), "!")
				return fmt.Sprintf("outside file modified %d× (inside %d×)",
					n, strings.Count(readFile(filepath.Join(sub, "a.txt")), "!")), n
			}, "outside file modified 25×; temp files 4 outside / 15 inside"},
		{"apply_patch", func(i int) map[string]any {
			return map[string]any{"patch": fmt.Sprintf("--- /dev/null\n+++ b/sub/p%d.txt\n@@ -0,0 +1 @@\n+new\n", i)}
		},
			func([]toolResult) (string, int) {
				n := countGlob(odir, "p[0-9]*.txt")
				return fmt.Sprintf("%d files created outside (%d inside)", n, countGlob(sub, "p[0-9]*.txt")), n
			}, "55 files created outside; temp files 37 outside / 56 inside"},
	}
	for _, ph := range phases {
		c.sub(ph.tool, func(c *cx) {
			s := c.serve(root, "--without", "lsp")
			w := startSwapper(sub, sublink)
			var rs []toolResult
			for i := 0; i < calls; i++ {
				rs = append(rs, s.tool(ph.tool, ph.args(i)))
			}
			swaps := w.halt()
			s.close()
			fig, escaped := ph.count(rs)
			tOut, tIn := len(temps(outside)), len(temps(root))
			c.line(fmt.Sprintf("%d sequential %s calls under a sub<->sublink swap loop", calls, ph.tool),
				fmt.Sprintf("%s; temp files %d outside / %d inside; %d calls refused, %d swaps",
					fig, tOut, tIn, refused(rs), swaps),
				ph.before)
			c.want(escaped == 0 && tOut == 0 && tIn == 0, "0 outside, 0 temp files left")
		})
	}

	// resolve after pkg/ was replaced by a link to a copy outside.
	c.sub("resolve", func(c *cx) {
		root, outside := c.pair("stale")
		src := "package pkg\n\nfunc f() error { return nil }\n\nfunc %s() error {\n\terr := f()\n\tif err != nil {\n\t\treturn err\n\t}\n\treturn nil\n}\n"
		writeFile(filepath.Join(root, "pkg", "a.go"), fmt.Sprintf(src, "A"))
		writeFile(filepath.Join(root, "pkg", "b.go"), strings.Replace(fmt.Sprintf(src, "B"), "func f()", "func g()", 1))
		s := c.serve(root, "--without", "lsp")
		defer s.close()
		r := s.tool("ast_edit", map[string]any{"pattern": "if err != nil { $$$B }", "rewrite": "if err != nil { panic(err) }",
			"path": "pkg", "language": "go"})
		id := editID.FindString(r.text)
		if id == "" {
			c.line("resolve after pkg/ became a link to ../outside/pkg: outside files written", "ast_edit staged nothing: "+r.summary(200), "2 of 2")
			c.t.Fatal("ast_edit staged nothing")
		}
		check(copyTree(filepath.Join(root, "pkg"), filepath.Join(outside, "pkg")))
		check(os.RemoveAll(filepath.Join(root, "pkg")))
		check(os.Symlink("../outside/pkg", filepath.Join(root, "pkg")))
		r = s.tool("resolve", map[string]any{"edit_id": id, "action": "accept"})
		written := 0
		for _, f := range []string{"a.go", "b.go"} {
			if strings.Contains(readFile(filepath.Join(outside, "pkg", f)), "panic(err)") {
				written++
			}
		}
		c.line("resolve accept after pkg/ became a link to ../outside/pkg: outside files written",
			fmt.Sprintf("%d of 2; resolve said: %s", written, r.summary(200)),
			"2 of 2 (\"accepted edit_3: 2 replacements in 2 files\")")
		c.want(written == 0 && !r.ok(), "resolve refused, 0 outside files written")
	})
}
