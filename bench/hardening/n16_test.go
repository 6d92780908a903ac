//go:build hardening

package hardening

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// N16: worker results and worktrees survive serve's death: a finished,
// unread result and a running worktree worker (with a commit) are reported
// by the next serve over the same root, and a new worktree spawn does not
// collide with the old branch.
func TestN16(t *testing.T) { runCase(t, "N16", caseN16) }

func caseN16(c *cx) {
	c.need("git")
	root := c.root
	writeFile(filepath.Join(root, "a.txt"), "a\n")
	gitRepo(root)
	env := c.vibeEnv()
	start := func() *server {
		return c.serveIn(0, root, env, "--without", "lsp", "--vibe", "--worker-command", "fast=sh")
	}
	s1 := start()
	sp1 := s1.tool("vibe_spawn", map[string]any{"label": "h", "brief": "echo result-one-unread\n"})
	sp2 := s1.tool("vibe_spawn", map[string]any{"label": "wt", "isolation": "worktree",
		"brief": "echo change > wt.txt\ngit add wt.txt\ngit -c user.name=h -c user.email=h@example.com commit -qm wt\nsleep 100\n"})
	if !sp1.ok() || !sp2.ok() {
		c.t.Fatalf("spawns: %s; %s", sp1.summary(150), sp2.summary(150))
	}
	// w1 ends, w2 commits.
	testenv.Until(30*time.Second, func() bool {
		log, _ := runProg(root, os.Environ(), "git", "log", "--all", "--oneline")
		return strings.Contains(s1.tool("vibe_list", map[string]any{}).text, "unread results: w1") && strings.Contains(log, " wt\n")
	})
	rec := descendants(s1.pid())
	s1.signal(syscall.SIGKILL, 10*time.Second)
	survivors(rec, 10*time.Second) // the workers go with serve

	s2 := start()
	defer s2.close()
	c.sub("unread result", func(c *cx) {
		l := s2.tool("vibe_list", map[string]any{})
		w := s2.toolWithin(30*time.Second, "vibe_wait", map[string]any{"worker_ids": []string{"w1"}, "timeout_seconds": 5})
		got := strings.Contains(l.text+w.text, "result-one-unread")
		c.line("after SIGKILL of serve, a new serve over the same root: vibe_list; vibe_wait w1",
			fmt.Sprintf("list: %s; wait w1: %s", l.summary(160), w.summary(100)), "list: \"no workers yet\"; wait w1: no worker \"w1\"")
		c.want(got, "w1's unread result readable")
		c.want(strings.Contains(l.text, "lost"), "the worker that was running reported lost")
	})
	c.sub("worktree spawn", func(c *cx) {
		// Ids restarted at w1 collided with the old run's vibe/wt-w2.
		s2.toolWithin(30*time.Second, "vibe_wait", map[string]any{"worker_ids": []string{workerID.FindString(
			s2.tool("vibe_spawn", map[string]any{"label": "plain", "brief": "echo first\n"}).text)}, "timeout_seconds": 10})
		sp := s2.tool("vibe_spawn", map[string]any{"label": "wt", "isolation": "worktree", "brief": "echo second\n"})
		var w toolResult
		if id := workerID.FindString(sp.text); sp.ok() && id != "" {
			w = s2.toolWithin(60*time.Second, "vibe_wait", map[string]any{"worker_ids": []string{id}, "timeout_seconds": 30})
		}
		branches, _ := runProg(root, os.Environ(), "git", "branch", "--list", "vibe/*")
		c.line("the new serve spawns a plain worker, then a worktree worker labelled wt: spawn; its end; branches",
			fmt.Sprintf("%s; %s; branches: %s", sp.summary(120), w.summary(80), strings.Join(strings.Fields(branches), " ")), "started w2 \"wt\"; w2 failed: making its worktree: git worktree add … (the branch vibe/wt-w2 of the killed run); branches: vibe/wt-w2")
		c.want(sp.ok() && w.ok() && strings.Contains(w.text, "second"), "the spawn ran to its end")
	})
}
