//go:build hardening

package hardening

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

var resultFile = regexp.MustCompile(`(/[^\s"')]+\.txt)`)

// N17: a worker stdout line over 16 MiB does not drop the rest (its final
// result included), and the result file said to hold the whole result
// does.
func TestN17(t *testing.T) { runCase(t, "N17", caseN17) }

func caseN17(c *cx) {
	root := c.root
	start := func(c *cx) *server {
		// A budget larger than the worker result's own cut, so its note shows.
		return c.serveIn(memLimit, root, c.vibeEnv(), "--without", "lsp", "--output-budget", "100000", "--vibe", "--worker-command", "fast=sh")
	}
	c.sub("20 MB line", func(c *cx) {
		s := start(c)
		defer s.kill()
		// A stream of records (R6: its first line is one) with a 20 MB line.
		sp := s.tool("vibe_spawn", map[string]any{"label": "h", "brief": "echo '{\"model\":\"m\"}'\nhead -c 20000000 /dev/zero | tr '\\0' x\necho\necho '{\"result\":\"FINAL ANSWER\"}'\n"})
		w := s.toolWithin(90*time.Second, "vibe_wait", map[string]any{"worker_ids": []string{workerID.FindString(sp.text)}, "timeout_seconds": 60})
		c.line("a worker prints a 20 MB line, then {\"result\":\"FINAL ANSWER\"}: its end", w.summary(200), "w1 failed, exit 0: \"it ended without a final result\"")
		c.want(w.ok() && strings.Contains(w.text, "FINAL ANSWER") && !strings.Contains(w.text, "failed"), "the final result, not failed")
	})
	c.sub("100 MB result", func(c *cx) {
		s := start(c)
		defer s.kill()
		sp := s.tool("vibe_spawn", map[string]any{"label": "h", "brief": "i=0\nwhile [ $i -lt 100 ]; do head -c 1048575 /dev/zero | tr '\\0' y; echo; i=$((i+1)); done\necho LAST-LINE-OF-THE-RESULT\n"})
		w := s.toolWithin(150*time.Second, "vibe_wait", map[string]any{"worker_ids": []string{workerID.FindString(sp.text)}, "timeout_seconds": 120})
		fig, whole := "no file named", false
		if m := resultFile.FindStringSubmatch(w.text); m != nil {
			b, err := os.ReadFile(m[1])
			fig = fmt.Sprintf("%s: %s", m[1], err)
			if err == nil {
				whole = strings.Contains(string(b[max(0, len(b)-100):]), "LAST-LINE-OF-THE-RESULT")
				fig = fmt.Sprintf("the file holds %s, ends with the last line: %s", byteSize(len(b)), yesNo(whole))
			}
		}
		claims := strings.Contains(w.text, "whole result")
		c.line("a worker prints 100 MB (100 lines of 1 MiB, then a last line): the answer says the file holds the whole result; the file",
			fmt.Sprintf("%s; %s (%s)", yesNo(claims), fig, w.summary(60)), "yes; the file holds 16777215 bytes (16.0 MiB), ends with the last line: no")
		c.want(w.ok() && (whole || !claims), "the result file holds the whole output, or the answer does not say it does")
	})
}
