//go:build hardening

package hardening

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// N14: what a server's preparation reads goes through the guard: a
// compile_commands.json linked to /dev/zero or made a FIFO, and a go.mod
// linked to /dev/zero, neither grow memory without bound nor hang.
func TestN14(t *testing.T) { runCase(t, "N14", caseN14) }

func caseN14(c *cx) {
	cRoot := func(c *cx, name string) string {
		c.need("clangd")
		root, _ := c.pair(name)
		writeFile(filepath.Join(root, "main.c"), "int add(int a, int b) { return a + b; }\nint main(void) { return add(1, 2); }\n")
		return root
	}
	hoverC := map[string]any{"operation": "hover", "file": "main.c", "line": 2, "symbol": "add"}
	limited := func(c *cx, root, what, before string, args map[string]any) {
		s := c.serveIn(memLimit, root, nil, "--mode", "readonly")
		defer s.kill()
		r := s.toolWithin(90*time.Second, "lsp", args)
		_, perr := s.call("ping", nil, 10*time.Second)
		h := s.hwm()
		fig := r.summary(160)
		if perr != nil {
			fig += "; serve: " + s.exitString() + ": " + excerpt(lastLine(s.stderr.String()), 100)
		}
		c.line(what+": answer time, answer; serve alive; VmHWM", fmt.Sprintf("%s: %s; alive: %s; %s", secs(r.dur), fig, yesNo(perr == nil), mib(h)), before)
		c.want(r.err == nil && perr == nil && h > 0 && h < 500<<10 && !strings.Contains(r.text, "out of memory") && !strings.Contains(r.text, "exited"),
			"an answer, serve alive under 500 MiB, no server dead of memory")
	}
	c.sub("compile_commands.json -> /dev/zero", func(c *cx) {
		root := cRoot(c, "zero")
		check(os.Symlink("/dev/zero", filepath.Join(root, "compile_commands.json")))
		limited(c, root, "readonly lsp hover main.c, compile_commands.json -> /dev/zero (serve under a 4 GiB address-space limit)", "4.44 s: no answer; serve died (exit status 2) at the 4 GiB limit", hoverC)
	})
	c.sub("compile_commands.json FIFO", func(c *cx) {
		root := cRoot(c, "fifo")
		check(unix.Mkfifo(filepath.Join(root, "compile_commands.json"), 0o644))
		o := c.callWithin(60*time.Second, true, root, nil, "--root", root, "--mode", "readonly", "lsp", `{"operation":"hover","file":"main.c","line":2,"symbol":"add"}`)
		fig := o.summary(160)
		if o.timedOut {
			fig += fmt.Sprintf("; ended by SIGTERM within 5 s: %s", yesNo(o.termExited))
		}
		c.line("call lsp hover main.c, compile_commands.json a FIFO: answer", fig, "no answer within 60 s; SIGTERM did not end it within 5 s (the report: alive after 10 min)")
		c.want(!o.timedOut, "an answer within 60 s")
	})
	c.sub("go.mod -> /dev/zero", func(c *cx) {
		c.need("gopls")
		root, _ := c.pair("gomod")
		writeFile(filepath.Join(root, "main.go"), "package main\n\nfunc main() {}\n")
		check(os.Symlink("/dev/zero", filepath.Join(root, "go.mod")))
		limited(c, root, "readonly lsp hover main.go, go.mod -> /dev/zero (serve under a 4 GiB address-space limit)", "5.03 s: gopls (root .) exited on textDocument/hover: exit status 2: fatal error: out of memory; serve alive, 21 MiB",
			map[string]any{"operation": "hover", "file": "main.go", "line": 3, "symbol": "main"})
	})
}
