//go:build hardening

package hardening

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// D2: read-tier lsp calls run nothing from the checkout and write nothing
// into it.
func TestD2(t *testing.T) { runCase(t, "D2", caseD2) }

func caseD2(c *cx) {
	// Repository-local programs that leave a mark outside the root.
	c.sub("repo-local servers", func(c *cx) {
		root, outside := c.pair("py")
		marker := filepath.Join(outside, "lb-PWNED")
		script := func(rel, what string) {
			p := filepath.Join(root, rel)
			writeFile(p, fmt.Sprintf("#!/bin/sh\necho \"%s ran as $(id -un)\" >> %s\nexit 1\n", what, marker))
			check(os.Chmod(p, 0o755))
		}
		script(".venv/bin/pyright-langserver", "pyright-langserver")
		script(".venv/bin/pyright", "pyright")
		script("node_modules/.bin/tsc", "tsc")
		script("node_modules/.bin/typescript-language-server", "typescript-language-server")
		writeFile(filepath.Join(root, "pyproject.toml"), "[project]\nname=\"x\"\n")
		writeFile(filepath.Join(root, "m.py"), "def f():\n    return 1\n")
		writeFile(filepath.Join(root, "package.json"), "{\"name\":\"x\"}\n")
		writeFile(filepath.Join(root, "a.ts"), "export function g() { return 1 }\n")
		markLines := func() int {
			return strings.Count(readFile(marker), "ran as")
		}
		var figs []string
		ran := 0
		for _, call := range []struct{ label, mode, args string }{
			{"readonly hover m.py", "readonly", `{"operation":"hover","file":"m.py","line":1,"symbol":"f"}`},
			{"readonly hover a.ts", "readonly", `{"operation":"hover","file":"a.ts","line":1,"symbol":"g"}`},
			{"plan diagnostics *", "plan", `{"operation":"diagnostics","file":"*"}`},
		} {
			o := c.call(root, nil, "--root", root, "--mode", call.mode, "lsp", call.args)
			ran = markLines()
			figs = append(figs, fmt.Sprintf("%d after %s (%s)", ran, call.label, o.summary(60)))
		}
		c.line("repo-local .venv/bin and node_modules/.bin scripts: marker lines (want 0)", strings.Join(figs, "; "),
			"pyright-langserver, typescript-language-server and tsc ran, as root")
		c.want(ran == 0, "no checkout program run; %d ran", ran)
	})

	// A crate whose build.rs leaves a mark.
	c.sub("build.rs", func(c *cx) {
		root, outside := c.pair("rs")
		marker := filepath.Join(outside, "PWNED-buildrs")
		writeFile(filepath.Join(root, "Cargo.toml"), "[package]\nname = \"rt\"\nversion = \"0.1.0\"\nedition = \"2021\"\n")
		writeFile(filepath.Join(root, "build.rs"), fmt.Sprintf("fn main() {\n    std::fs::write(%q, \"build.rs ran\").unwrap();\n}\n", marker))
		writeFile(filepath.Join(root, "src", "main.rs"), "fn main() {\n    println!(\"hi\");\n}\n")
		o := c.call(root, nil, "--root", root, "--mode", "readonly", "lsp", `{"operation":"diagnostics","file":"*"}`)
		c.line("Rust crate, readonly diagnostics \"*\": build.rs marker, target/, Cargo.lock exist?",
			fmt.Sprintf("%s, %s, %s (%s)", yesNo(exists(marker)), yesNo(exists(filepath.Join(root, "target"))),
				yesNo(exists(filepath.Join(root, "Cargo.lock"))), o.summary(160)),
			"yes, yes, yes (cargo check ran build.rs)")
		c.want(!exists(marker) && !exists(filepath.Join(root, "target")) && !exists(filepath.Join(root, "Cargo.lock")),
			"no build.rs run, no target/ or Cargo.lock written")
	})

	// clangd in readonly mode.
	c.sub("clangd index", func(c *cx) {
		root, _ := c.pair("c")
		writeFile(filepath.Join(root, "main.c"), "int add(int a, int b) { return a + b; }\nint main(void) { return add(1, 2); }\n")
		writeFile(filepath.Join(root, "compile_commands.json"),
			fmt.Sprintf("[{\"directory\":%q,\"command\":\"cc -c main.c\",\"file\":\"main.c\"}]\n", root))
		s := c.serve(root, "--mode", "readonly")
		r := s.tool("lsp", map[string]any{"operation": "hover", "file": "main.c", "line": 2, "symbol": "add"})
		// The background index writes after the answer, and what is
		// measured is that nothing comes: no event ends this wait.
		time.Sleep(3 * time.Second)
		var names []string
		ents, _ := os.ReadDir(root)
		for _, e := range ents {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		s.close()
		c.line("clangd hover in readonly, C file with compile_commands.json: .cache/ in the root (3 s after)?",
			fmt.Sprintf("%s; root holds %s (hover: %s)", yesNo(exists(filepath.Join(root, ".cache"))), strings.Join(names, ", "), r.summary(60)),
			"yes, .cache/clangd/index/main.c.*.idx")
		c.want(!exists(filepath.Join(root, ".cache")), "no .cache/ in the root")
		c.want(r.ok() && strings.Contains(r.text, "add"), "the hover answered (clangd ran)")
	})
}

// D3: a symlinked module folder pointing outside the root, with gopls:
// nothing outside is quoted or changed.
func TestD3(t *testing.T) { runCase(t, "D3", caseD3) }

func caseD3(c *cx) {
	root, outside := c.root, c.outside
	writeFile(filepath.Join(root, "go.mod"), "module example.com/t\n\ngo 1.22\n")
	ext := filepath.Join(outside, "ext", "e.go")
	extSrc := "package ext\n\n// Helper is outside the root.\nfunc Helper() int { return 1 }\n"
	writeFile(ext, extSrc)
	check(os.Symlink("../outside/ext", filepath.Join(root, "ext")))
	mainSrc := "package main\n\nimport \"example.com/t/ext\"\n\nfunc main() {\n\tprintln(ext.Helper())\n}\n"
	writeFile(filepath.Join(root, "main.go"), mainSrc)

	c.sub("read", func(c *cx) {
		o := c.call(root, nil, "--root", root, "read", `{"path":"ext/e.go"}`)
		c.line("read ext/e.go (through the link)", o.summary(140), "refused (correct)")
		c.want(o.code == 1 && !strings.Contains(o.stdout, "Helper"), "read refused")
	})
	c.sub("definition", func(c *cx) {
		o := c.call(root, nil, "--root", root, "--mode", "readonly", "lsp", `{"operation":"definition","file":"main.go","line":6,"symbol":"Helper"}`)
		c.line("lsp definition of ext.Helper: output quotes the outside file?",
			fmt.Sprintf("%s (%s)", yesNo(strings.Contains(o.stdout, "return 1")), o.summary(200)),
			"yes: ext/e.go:4:6: func Helper() int { return 1 }")
		c.want(!strings.Contains(o.stdout, "return 1") && strings.Contains(o.stdout, "e.go"), "the location named, not quoted")
	})
	c.sub("rename", func(c *cx) {
		o := c.call(root, nil, "--root", root, "lsp_rename", `{"file":"main.go","line":6,"symbol":"Helper","new_name":"Pwned"}`)
		outChanged, inChanged := readFile(ext) != extSrc, readFile(filepath.Join(root, "main.go")) != mainSrc
		c.line("lsp_rename Helper -> Pwned: outside file changed? main.go changed?",
			fmt.Sprintf("%s, %s (%s)", yesNo(outChanged), yesNo(inChanged), o.summary(200)),
			"yes (outside/ext/e.go now has func Pwned)")
		c.want(!outChanged && !inChanged && o.code == 1, "the rename refused, no file changed")
	})
}
