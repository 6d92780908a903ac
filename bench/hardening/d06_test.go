//go:build hardening

package hardening

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"golang.org/x/sys/unix"
)

// D6: a FIFO named like source code is refused at once, and serve still
// exits on EOF and SIGTERM while a server is stuck on one.
func TestD6(t *testing.T) { runCase(t, "D6", caseD6) }

func caseD6(c *cx) {
	wait := min(timeout, 30*time.Second) // a hang costs this much per call
	root := c.root
	check(unix.Mkfifo(filepath.Join(root, "p.go"), 0o644))
	writeFile(filepath.Join(root, "ok.go"), "package ok\n")

	c.sub("ast tools", func(c *cx) {
		s := c.serve(root, "--without", "lsp")
		defer s.close()
		r := s.toolWithin(wait, "ast_grep", map[string]any{"pattern": "package $A", "path": "p.go"})
		c.line("ast_grep {path: p.go} on a FIFO: time, answer", secs(r.dur)+": "+r.summary(160), "no answer (hung >10 min)")
		c.want(r.err == nil && r.isError, "a tool error at once")
		r = s.toolWithin(wait, "ast_edit", map[string]any{"pattern": "package $A", "rewrite": "package b", "path": "p.go"})
		c.line("ast_edit {path: p.go} on a FIFO: time, answer", secs(r.dur)+": "+r.summary(160), "hung until the FIFO was opened, then staged an edit")
		c.want(r.err == nil && r.isError, "a tool error at once")
		r = s.toolWithin(wait, "ast_grep", map[string]any{"pattern": "package $A", "language": "go"})
		c.line("ast_grep over the whole root holding the FIFO: time, answer", secs(r.dur)+": "+r.summary(120), "skipped FIFOs (PASS)")
		c.want(r.ok(), "the search answered")
		d, ok := s.closeStdin(30 * time.Second)
		c.line("serve (ast session) exit after stdin is closed", exitFigure(d, ok), "still alive after 20 s (a call blocked on the FIFO)")
		c.want(ok && d < 10*time.Second, "exit within 10 s of EOF")
	})

	// lsp on a FIFO in a Go module.
	lspSession := func(c *cx) (*server, toolResult) {
		root, _ := c.pair(fmt.Sprintf("mod%d", time.Now().UnixNano()))
		writeFile(filepath.Join(root, "go.mod"), "module example.com/f\n\ngo 1.22\n")
		writeFile(filepath.Join(root, "main.go"), "package main\n\nfunc main() {}\n")
		check(unix.Mkfifo(filepath.Join(root, "pipe.go"), 0o644))
		s := c.serve(root)
		return s, s.toolWithin(wait, "lsp", map[string]any{"operation": "diagnostics", "file": "pipe.go"})
	}
	hover := map[string]any{"operation": "hover", "file": "main.go", "line": 3, "symbol": "main"}
	c.sub("lsp", func(c *cx) {
		s, r := lspSession(c)
		defer s.close()
		c.line("lsp diagnostics {file: pipe.go}, a FIFO in a Go module: time, answer", secs(r.dur)+": "+r.summary(160), "no answer (hung; gopls stalled on the FIFO too)")
		c.want(r.err == nil && r.isError, "a tool error at once")
		// gopls's own go list may block on the FIFO: serve's bounds end the
		// wait (about 90 s), with an answer.
		r = s.tool("lsp", hover)
		c.line("then lsp hover main.go (a regular file) in that module: time, answer", secs(r.dur)+": "+r.summary(160), "-")
		c.want(r.err == nil, "an answer (an error is fine) before the client's timeout")
	})

	// Exit while a hover is blocked.
	for _, how := range []string{"stdin is closed", "SIGTERM"} {
		c.sub("exit after "+how, func(c *cx) {
			s, _ := lspSession(c)
			s.toolAsync("lsp", hover)
			// The hover is in flight once gopls's go list runs (and blocks
			// on the FIFO) below serve.
			var rec []procInfo
			testenv.Until(30*time.Second, func() bool {
				rec = descendants(s.pid())
				return named(rec, "go") > 0
			})
			var d time.Duration
			var ok bool
			if how == "SIGTERM" {
				d, ok = s.signal(syscall.SIGTERM, 30*time.Second)
			} else {
				d, ok = s.closeStdin(30 * time.Second)
			}
			surv := survivors(rec, 3*time.Second)
			killPids(surv)
			c.line("serve exit after "+how+", a hover in flight (gopls's go list blocked on the FIFO); alive 3 s later",
				fmt.Sprintf("%s; alive: %s (of %d below serve)", exitFigure(d, ok), procList(surv), len(rec)),
				map[string]string{"stdin is closed": "still alive after 20 s", "SIGTERM": "still alive 10 s after SIGTERM (only SIGKILL ended it)"}[how])
			c.want(ok && d < 10*time.Second && len(surv) == 0, "exit within 10 s, nothing left")
		})
	}
}

func exitFigure(d time.Duration, ok bool) string {
	if !ok {
		return fmt.Sprintf("still running after %s", secs(d))
	}
	return "exited in " + secs(d)
}
