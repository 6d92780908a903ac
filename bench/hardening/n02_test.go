//go:build hardening

package hardening

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// N2: write tools do not write the repository's metadata: an fsmonitor
// command added to .git/config, or an executable hook, runs at the next
// `git status` and shows in neither `git status` nor `git diff`.
func TestN2(t *testing.T) { runCase(t, "N2", caseN2) }

func caseN2(c *cx) {
	c.need("git")
	for _, layout := range []struct{ name, gitDir, before string }{
		{".git folder", ".git", "edit: edited .git/config; hook: created, executable; attributes: created; git status ran the fsmonitor command: yes; git status shows: \"\""},
		{"gitdir: file", "meta", "edit: edited meta/config; hook: created, executable; attributes: created; git status ran the fsmonitor command: yes; git status shows: \"?? meta/\""},
	} {
		c.sub(layout.name, func(c *cx) {
			root, outside := c.pair(strings.ReplaceAll(layout.name, " ", "-"))
			writeFile(filepath.Join(root, "a.txt"), "a\n")
			gitRepo(root)
			if layout.gitDir != ".git" { // a worktree-style .git file naming the real folder
				check(os.Rename(filepath.Join(root, ".git"), filepath.Join(root, layout.gitDir)))
				writeFile(filepath.Join(root, ".git"), "gitdir: "+layout.gitDir+"\n")
			}
			marker := filepath.Join(outside, "PWNED-fsmonitor")
			hookMarker := filepath.Join(outside, "PWNED-hook")
			s := c.serve(root, "--without", "lsp", "--approve", "exec=deny")
			defer s.close()
			cfg := layout.gitDir + "/config"
			before := readFile(filepath.Join(root, cfg))
			e := s.tool("edit", map[string]any{"path": cfg, "old_string": "[core]\n",
				"new_string": fmt.Sprintf("[core]\n\tfsmonitor = \"touch %s; false\"\n", marker)})
			hook := layout.gitDir + "/hooks/pre-commit"
			p := s.tool("apply_patch", map[string]any{"patch": fmt.Sprintf("diff --git a/%[1]s b/%[1]s\nnew file mode 100755\n--- /dev/null\n+++ b/%[1]s\n@@ -0,0 +1,2 @@\n+#!/bin/sh\n+touch %[2]s\n", hook, hookMarker)})
			w := s.tool("write", map[string]any{"path": layout.gitDir + "/info/attributes", "content": "*.txt filter=x\n"})
			fi, herr := os.Stat(filepath.Join(root, hook))
			exe := herr == nil && fi.Mode()&0o111 != 0
			status, _ := runProg(root, os.Environ(), "git", "status", "--porcelain")
			ran := exists(marker)
			changed := readFile(filepath.Join(root, cfg)) != before
			attrs := strings.Contains(readFile(filepath.Join(root, layout.gitDir, "info", "attributes")), "filter=x")
			c.line(fmt.Sprintf("%s, --approve exec=deny: edit %s adding core.fsmonitor; apply_patch of an executable %s; write info/attributes", layout.name, cfg, hook),
				fmt.Sprintf("edit: %s; hook: %s; attributes: %s; git status ran the fsmonitor command: %s; git status shows: %q",
					e.summary(80), map[bool]string{true: "created, executable", false: "not created (" + p.summary(80) + ")"}[exe], w.summary(60), yesNo(ran), strings.TrimSpace(status)),
				layout.before)
			c.want(!ran && !changed && !exe && !attrs, "the metadata writes refused: config and attributes unchanged, no hook, the fsmonitor command never run")
		})
	}
}
