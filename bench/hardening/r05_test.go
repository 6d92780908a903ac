//go:build hardening

package hardening

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// R5: ast_grep rules were exponential through shared utils (u0 = any of
// two matches of u1, …, u40 a leaf: 2^40 checks at every node), and
// matching looked at no context: operation test on a one-line snippet
// gave no answer, a cancelled call went on spinning a core until serve
// exited, and `builtin-tools call` never ended. Such a rule is refused at
// once; a costly rule within the bounds stops when cancelled.
func TestR5(t *testing.T) { runCase(t, "R5", caseR5) }

func doublingRule(n int) map[string]any {
	utils := map[string]any{fmt.Sprintf("u%d", n): map[string]any{"kind": "identifier", "regex": "^NEVER$"}}
	for k := range n {
		next := fmt.Sprintf("u%d", k+1)
		utils[fmt.Sprintf("u%d", k)] = map[string]any{"any": []any{map[string]any{"matches": next}, map[string]any{"matches": next}}}
	}
	return map[string]any{"operation": "test", "language": "go", "code": "package p\nvar x = y\n", "rule": map[string]any{"matches": "u0"}, "utils": utils}
}

// cpuTicks is a process's user and system time in clock ticks, or -1.
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return -1
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

func caseR5(c *cx) {
	c.sub("operation test, 40 levels of shared utils", func(c *cx) {
		s := c.serve(c.root, "--without", "lsp")
		defer s.close()
		r := s.toolWithin(30*time.Second, "ast_grep", doublingRule(40))
		c.line("ast_grep operation test of the 40-level rule on a one-line snippet: answer", fmt.Sprintf("%s: %s", secs(r.dur), r.summary(160)), "no answer in 20 s; a core busy until serve exited")
		c.want(r.err == nil && r.isError && strings.Contains(r.text, "once each matches is counted"), "refused at once, saying why")
	})
	c.sub("builtin-tools call", func(c *cx) {
		o := c.callWithin(60*time.Second, true, c.root, nil, "--root", c.root, "ast_grep", mustJSON(doublingRule(40)))
		c.line("builtin-tools call ast_grep with the 40-level rule: ends", fmt.Sprintf("%s: %s", secs(o.dur), o.summary(120)), "never ended")
		c.want(!o.timedOut && strings.Contains(o.stdout+o.stderr, "once each matches is counted"), "ends with the refusal")
	})
	c.sub("cancelled search", func(c *cx) {
		// Rules within every bound can still be costly: has in has, all
		// the way down, over deeply nested code (each file stops at the
		// step budget, about half a second).
		deep := "package p\n\nvar x = " + strings.Repeat("(", 400) + "y" + strings.Repeat(")", 400) + "\n"
		for i := range 60 {
			writeFile(filepath.Join(c.root, "deep", fmt.Sprintf("d%02d.go", i)), deep)
		}
		rule := map[string]any{"kind": "identifier", "regex": "^NEVER$"}
		for range 6 {
			rule = map[string]any{"kind": "parenthesized_expression", "has": map[string]any{"stopBy": "end", "kind": "parenthesized_expression", "all": []any{rule}}}
		}
		s := c.serve(c.root, "--without", "lsp")
		defer s.close()
		start := cpuTicks(s.pid())
		p := s.toolAsync("ast_grep", map[string]any{"rule": rule, "path": "deep", "language": "go"})
		// Cancelled once the search has spent half a second of CPU.
		testenv.Until(30*time.Second, func() bool { return cpuTicks(s.pid())-start >= 50 })
		before := cpuTicks(s.pid())
		busy := before - start
		sent := time.Now()
		check(s.notify("notifications/cancelled", map[string]any{"requestId": mustAtoi(p.key), "reason": "R5"}))
		// The time of the last tick of CPU serve spent, over 2 s.
		last, ticks := time.Duration(0), cpuTicks(s.pid())
		sample := time.NewTicker(5 * time.Millisecond)
		defer sample.Stop()
		for range sample.C {
			if time.Since(sent) >= 2*time.Second {
				break
			}
			if n := cpuTicks(s.pid()); n != ticks {
				last, ticks = time.Since(sent), n
			}
		}
		used := ticks - before
		answered := "none"
		if m, err := s.await(p, 10*time.Millisecond); err == nil {
			answered = toToolResult(m, nil, 0).summary(60)
		}
		pr := s.toolWithin(10*time.Second, "ast_grep", map[string]any{"pattern": "y", "path": "deep/d00.go", "language": "go"})
		c.line("a search cancelled once it spent 0.5 s of CPU matching: serve's CPU before and after the cancel; the cancelled call's answer; the next call",
			fmt.Sprintf("%d ticks before; busy until %d ms after it (%d ticks in the 2 s after); answer: %s; next call: %s", busy, last.Milliseconds(), used, answered, pr.summary(60)),
			"a core busy until serve exited (5.6 s of CPU in 10 s)")
		c.want(busy > 20 && last < 500*time.Millisecond && pr.ok(), "busy matching before the cancel, stopped at it, and serve answers")
	})
}

func mustAtoi(s string) int {
	n, err := strconv.Atoi(s)
	check(err)
	return n
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	check(err)
	return string(b)
}
