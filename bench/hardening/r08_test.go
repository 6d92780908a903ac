//go:build hardening

package hardening

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// R8: lsp_fix and lsp_rename misreported what they wrote: a 20 MB edit was
// written and reported as an error, a command's first edit stayed while
// the answer said "not applied", and a rename of README onto itself
// deleted it and reported "0 edits in 0 files".
func TestR8(t *testing.T) { runCase(t, "R8", caseR8) }

func caseR8(c *cx) {
	insert := func(text string) map[string]any {
		return map[string]any{"range": map[string]any{"start": map[string]int{"line": 0, "character": 0}, "end": map[string]int{"line": 0, "character": 0}}, "newText": text}
	}
	uri := func(path string) string { return (&url.URL{Scheme: "file", Path: path}).String() }
	// offering is a fake gopls whose one code action and whose rename both
	// answer with edit.
	offering := func(c *cx, title, kind string, edit any) []string {
		return c.fakeGopls(map[string]any{"answers": map[string]any{
			"textDocument/codeAction": []any{map[string]any{"title": title, "kind": kind, "edit": edit}},
			"textDocument/rename":     edit,
		}})
	}
	// fixFirst lists main.go's code actions and applies the first.
	fixFirst := func(s *server) toolResult {
		s.tool("lsp", map[string]any{"operation": "code_actions", "file": "main.go", "line": 1, "symbol": "package"})
		return s.tool("lsp_fix", map[string]any{"id": "action_1"})
	}
	renameMain := func(s *server) toolResult {
		return s.tool("lsp_rename", map[string]any{"file": "main.go", "line": 3, "symbol": "main", "new_name": "run"})
	}
	c.sub("20 MB edit", func(c *cx) {
		root, _ := c.pair("big")
		goFiles(root)
		main := filepath.Join(root, "main.go")
		edit := map[string]any{"changes": map[string]any{uri(main): []any{insert("//" + strings.Repeat("x", 20<<20) + "\n")}}}
		s := c.serveIn(0, root, offering(c, "Format document", "source.format", edit))
		fix := fixFirst(s)
		sizeFix := fileSize(main)
		ren := renameMain(s)
		sizeRen := fileSize(main)
		c.line("an edit making main.go 20 MB: lsp_fix, then lsp_rename: main.go's size after each, and the answers",
			fmt.Sprintf("%d, %d bytes; %s; %s", sizeFix, sizeRen, fix.summary(120), ren.summary(120)),
			"20971553 bytes written by both; lsp_fix answered only \"main.go is 20971553 bytes, over the 16777216-byte limit\", lsp_rename \"rename applied, but re-syncing gopls failed\"")
		c.want(sizeFix < 1<<20 && sizeRen < 1<<20 && fix.isError && ren.isError && strings.Contains(fix.text, "16 MiB") && strings.Contains(ren.text, "16 MiB"),
			"both refused before writing, saying the 16 MiB limit")
	})
	c.sub("second edit refused", func(c *cx) {
		root, outside := c.pair("two")
		goFiles(root)
		main := filepath.Join(root, "main.go")
		victim := filepath.Join(outside, "victim.go")
		writeFile(victim, "package victim\n")
		env := c.fakeGopls(map[string]any{
			"answers": map[string]any{"textDocument/codeAction": []any{map[string]any{"title": "Fix", "kind": "quickfix",
				"command": map[string]any{"title": "Fix", "command": "atk.cmd"}}}},
			"commands": map[string]any{"atk.cmd": []any{
				map[string]any{"edit": map[string]any{"changes": map[string]any{uri(main): []any{insert("// first\n")}}}},
				map[string]any{"edit": map[string]any{"changes": map[string]any{uri(victim): []any{insert("// second\n")}}}},
			}},
		})
		r := fixFirst(c.serveIn(0, root, env))
		first := strings.HasPrefix(readFile(main), "// first\n")
		named := strings.Contains(r.text, "main.go (1 edit) was written")
		c.line("a command sending two edits, the second outside the root: main.go keeps the first; does the answer say so?",
			fmt.Sprintf("first kept: %s; said: %s; outside untouched: %s (%s)", yesNo(first), yesNo(named), yesNo(readFile(victim) == "package victim\n"), r.summary(200)),
			"first kept: yes; said: no (\"…sent an edit that was not applied: …\")")
		c.want(named && readFile(victim) == "package victim\n", "the error to name main.go as written, and the outside file untouched")
	})
	c.sub("rename onto itself", func(c *cx) {
		root, _ := c.pair("self")
		goFiles(root)
		readme := filepath.Join(root, "README")
		self := map[string]any{"documentChanges": []any{map[string]any{"kind": "rename", "oldUri": uri(readme), "newUri": uri(readme), "options": map[string]any{"overwrite": true}}}}
		s := c.serveIn(0, root, offering(c, "Tidy", "source", self))
		fix := fixFirst(s)
		afterFix := exists(readme)
		ren := renameMain(s)
		kept := afterFix && exists(readme)
		said := strings.Contains(fix.text, "onto itself") && strings.Contains(ren.text, "onto itself")
		c.line("documentChanges: rename README → README with overwrite, by lsp_fix and lsp_rename: README kept? said?",
			fmt.Sprintf("%s; %s (%s; %s)", yesNo(kept), yesNo(said), fix.summary(120), ren.summary(120)), "no: README deleted, \"0 edits in 0 files\"")
		c.want(kept && said, "README kept and both answers saying the rename onto itself was skipped")
	})
}

func fileSize(path string) int64 {
	info, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return info.Size()
}
