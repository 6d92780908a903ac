//go:build hardening

package hardening

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// N22: a worktree worker does not silently miss uncommitted changes: the
// spawn answer says the worktree is at HEAD and names the uncommitted
// files.
func TestN22(t *testing.T) { runCase(t, "N22", caseN22) }

func caseN22(c *cx) {
	c.need("git")
	root := c.root
	writeFile(filepath.Join(root, "a.txt"), "committed\n")
	gitRepo(root)
	f, err := os.OpenFile(filepath.Join(root, "a.txt"), os.O_APPEND|os.O_WRONLY, 0)
	check(err)
	_, err = f.WriteString("uncommitted line\n")
	check(err)
	check(f.Close())
	s := c.serveIn(0, root, c.vibeEnv(), "--without", "lsp", "--vibe", "--worker-command", "fast=sh")
	defer s.close()
	sp := s.tool("vibe_spawn", map[string]any{"label": "wt", "isolation": "worktree", "brief": "cat a.txt\n"})
	w := s.toolWithin(60*time.Second, "vibe_wait", map[string]any{"worker_ids": []string{workerID.FindString(sp.text)}, "timeout_seconds": 30})
	saw := strings.Contains(w.text, "uncommitted line")
	told := strings.Contains(sp.text, "a.txt")
	c.line("a.txt has an uncommitted line; vibe_spawn isolation worktree `cat a.txt`: the spawn answer; did the worker see the line",
		fmt.Sprintf("%s; saw it: %s", sp.summary(200), yesNo(saw)), "started w1 \"wt\" [fast] (running), nothing about a.txt; saw it: no")
	c.want(sp.ok() && (saw || told), "the spawn answer names a.txt as uncommitted (or the worker sees it)")
}
