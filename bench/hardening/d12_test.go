//go:build hardening

package hardening

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// D12: no process is left running after serve is SIGKILLed.
func TestD12(t *testing.T) { runCase(t, "D12", caseD12) }

func caseD12(c *cx) {
	// Real gopls, started by a hover.
	c.sub("gopls", func(c *cx) {
		root := c.root
		writeFile(filepath.Join(root, "go.mod"), "module example.com/k\n\ngo 1.22\n")
		writeFile(filepath.Join(root, "main.go"), "package main\n\nfunc main() {}\n")
		s := c.serve(root)
		r := s.tool("lsp", map[string]any{"operation": "hover", "file": "main.go", "line": 3, "symbol": "main"})
		if !r.ok() {
			c.line("hover to start gopls", r.summary(200), "-")
		}
		rec, surv := killAndCheck(s, nil)
		c.line("SIGKILL serve with gopls running: processes below serve, and alive 3 s later",
			fmt.Sprintf("%s -> alive: %s", procList(rec), procList(surv)),
			"gopls and its children gone within 3 s (PASS with real gopls)")
		c.want(r.ok() && len(rec) > 0 && len(surv) == 0, "gopls ran, nothing alive 3 s after")
	})

	// Stand-ins: a checker on PATH that runs helpers, and a language server
	// that starts a helper and never answers.
	fake := filepath.Join(c.base, "fakebin")
	writeFile(filepath.Join(fake, "tsc"), "#!/bin/sh\nsleep 299 &\nsleep 298\n")
	writeFile(filepath.Join(fake, "typescript-language-server"),
		"#!/bin/sh\nif [ \"$1\" = --version ]; then echo 4.3.3; exit 0; fi\nsleep 301 &\nexec cat >/dev/null\n")
	check(os.Chmod(filepath.Join(fake, "tsc"), 0o755))
	check(os.Chmod(filepath.Join(fake, "typescript-language-server"), 0o755))
	for _, t := range []struct{ what, before string }{
		{"checker", "simulated checker (sleep 300) still running"},
		{"server", "the stand-in server's worker (sleep 301) reparented to PID 1, alive"},
	} {
		c.sub("stand-in "+t.what, func(c *cx) {
			root, _ := c.pair("ts-" + t.what)
			writeFile(filepath.Join(root, "package.json"), "{\"name\":\"x\"}\n")
			writeFile(filepath.Join(root, "a.ts"), "export function g() { return 1 }\n")
			s := c.serveIn(0, root, c.env(fake))
			args := map[string]any{"operation": "diagnostics", "file": "*"}
			if t.what == "server" {
				args = map[string]any{"operation": "hover", "file": "a.ts", "line": 1, "symbol": "g"}
			}
			p := s.toolAsync("lsp", args)
			rec, surv := killAndCheck(s, func(ps []procInfo) bool {
				for _, p := range ps {
					if p.comm == "sleep" {
						return true
					}
				}
				return false
			})
			if len(rec) == 0 {
				m := s.awaitTool(p, time.Second)
				c.line("stand-in "+t.what+": no process seen below serve", m.summary(200), t.before)
				c.t.Fatal("the stand-in never ran")
			}
			c.line(fmt.Sprintf("SIGKILL serve while a stand-in %s runs helpers: processes below serve, and alive 3 s later", t.what),
				fmt.Sprintf("%s -> alive: %s", procList(rec), procList(surv)), t.before)
			c.want(len(surv) == 0, "nothing alive 3 s after")
		})
	}
}

// killAndCheck waits (up to 30 s) until ready accepts the processes below
// s (nil: at once), SIGKILLs s, and lists those processes and the ones of
// their groups still alive 3 s later. Survivors are then killed.
func killAndCheck(s *server, ready func([]procInfo) bool) (rec, surv []procInfo) {
	if !testenv.Until(30*time.Second, func() bool {
		rec = descendants(s.pid())
		return ready == nil || ready(rec)
	}) {
		s.kill()
		return nil, nil
	}
	if _, ok := s.signal(syscall.SIGKILL, 10*time.Second); !ok {
		return rec, nil
	}
	surv = survivors(rec, 3*time.Second)
	killPids(surv)
	return rec, surv
}

func procList(ps []procInfo) string {
	if len(ps) == 0 {
		return "none"
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].pid < ps[j].pid })
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s %d (group %d, parent %d)", p.comm, p.pid, p.pgid, p.ppid))
	}
	return strings.Join(out, ", ")
}

// rust-analyzer: rustup's proxy without the component is reported once,
// clearly, and writes do not repeat it: the first write's result gives the
// reason, later ones only say in one short line that the file was not
// checked (a write's verdict is never silent about that, WRT-4).
func TestRustAnalyzer(t *testing.T) { runCase(t, "rust-analyzer", caseRA) }

func caseRA(c *cx) {
	root := c.root
	writeFile(filepath.Join(root, "Cargo.toml"), "[package]\nname = \"ra\"\nversion = \"0.1.0\"\nedition = \"2021\"\n")
	writeFile(filepath.Join(root, "src", "main.rs"), "fn main() {}\n")
	s := c.serve(root)
	defer s.close()
	r := s.tool("lsp", map[string]any{"operation": "status"})
	status := r.summary(300)
	for _, l := range strings.Split(r.text, "\n") {
		if strings.Contains(l, "rust-analyzer") && strings.HasPrefix(l, "- ") {
			status = l
		}
	}
	c.line("lsp status: the rust-analyzer line", excerpt(status, 400), "n/a (not in the report)")
	c.want(r.ok() && strings.Contains(status, "rust-analyzer"), "status names rust-analyzer")
	notes, long, lens := 0, 0, []string{}
	for i := 1; i <= 5; i++ {
		r := s.tool("write", map[string]any{"path": "src/main.rs", "content": fmt.Sprintf("fn main() {\n    let _x = %d;\n}\n", i)})
		_, rest, _ := strings.Cut(r.text, "\n")
		if !r.ok() {
			lens = append(lens, "error: "+r.summary(100))
			continue
		}
		if note := strings.TrimSpace(rest); note != "" {
			notes++
			lens = append(lens, fmt.Sprint(len(note)))
			if len(note) > 120 {
				long++
			}
		}
	}
	c.line("5 writes of src/main.rs: results carrying a diagnostics note (note length, bytes)",
		fmt.Sprintf("%d of 5 (%s)", notes, strings.Join(lens, ", ")), "n/a (not in the report)")
	c.want(long <= 1 && len(lens) == notes, "5 writes, at most the first carrying the reason at length")
}
