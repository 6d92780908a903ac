package vibe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/vibe/runner"
)

func agentRoster(t *testing.T) *Roster {
	t.Helper()
	dir, _ := filepath.Abs("testdata/agents")
	r, err := New(Config{StateDir: t.TempDir(), Dir: t.TempDir(), Backends: map[string]runner.Backend{
		"fast": runner.Command{Line: dir + "/fake-claude.sh -p --output-format stream-json --verbose", Grace: 500 * time.Millisecond},
		"good": runner.Command{Line: dir + "/fake-codex.sh exec --json -", Grace: 500 * time.Millisecond}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// A worker run by claude's or codex's CLI (a script replaying their
// recorded streams) ends with the agent's result, usage and session, and
// vibe_send resumes that session with only the message.
func TestAgentWorkersResume(t *testing.T) {
	for _, c := range []struct {
		tier, session, first, second, resumeArgs string
	}{
		{"fast", "3f1c2a9e-6b7d-4e21-9a0c-5d8e7f6a1b2c", "Sorted the imports in main.go", "Also sorted the imports in util.go",
			"-p --output-format stream-json --verbose --resume 3f1c2a9e-6b7d-4e21-9a0c-5d8e7f6a1b2c"},
		{"good", "0199a7e2-5c3b-7d11-9f4e-2b6c8d0a1e57", "Sorted the imports in main.go", "Also sorted the imports in util.go",
			"exec --json resume 0199a7e2-5c3b-7d11-9f4e-2b6c8d0a1e57 -"},
	} {
		t.Run(c.tier, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "log")
			t.Setenv("FAKE_CLI_LOG", log)
			r := agentRoster(t)
			in, err := r.Spawn(SpawnRequest{Brief: "sort the imports", Label: "imports", Tier: c.tier})
			if err != nil {
				t.Fatal(err)
			}
			done, _ := wait(t, r, true, time.Minute, in.ID)
			d := done[0]
			if d.Status != Succeeded || !strings.HasPrefix(d.Result, c.first) || d.Session == nil || d.Session.ID != c.session || d.Usage == nil || d.Usage.Tokens() == 0 || d.Resumed {
				t.Fatalf("first run: %+v", d)
			}
			sent, _, err := r.Send(in.ID, "also util.go")
			if err != nil || !sent.Resumed {
				t.Fatalf("send: %v %+v", err, sent)
			}
			done, _ = wait(t, r, true, time.Minute, in.ID)
			if d := done[0]; d.Status != Succeeded || !strings.HasPrefix(d.Result, c.second) || !d.Resumed || d.Runs != 2 {
				t.Fatalf("resumed run: %+v", d)
			}
			b, _ := os.ReadFile(log)
			runs := strings.Split(strings.TrimSpace(string(b)), "\nargs: ")
			if len(runs) != 2 || !strings.Contains(runs[0], "prompt: sort the imports") ||
				runs[1] != c.resumeArgs+"\nprompt: also util.go" {
				t.Fatalf("the CLI was run as:\n%s", b)
			}
		})
	}
}

// An error the agent CLI reports fails the run, whatever its exit status,
// with the agent's words in why.
func TestAgentErrorsFailTheRun(t *testing.T) {
	r := agentRoster(t)
	a, _ := r.Spawn(SpawnRequest{Brief: "fixture claude-error.jsonl", Label: "a", Tier: "fast"})
	b, _ := r.Spawn(SpawnRequest{Brief: "fixture codex-failed.jsonl", Label: "b", Tier: "good"})
	done, _ := wait(t, r, true, time.Minute, a.ID, b.ID)
	for _, d := range done {
		want := map[string]string{a.ID: "claude ended with error_max_turns", b.ID: "exit status 1; codex's turn failed: stream disconnected"}[d.ID]
		if d.Status != Failed || !strings.HasPrefix(d.Why, want) || d.Session == nil {
			t.Errorf("%s: %+v", d.ID, d)
		}
	}
	// A resume of a session the CLI does not know fails as the CLI says.
	r2 := agentRoster(t)
	in, _ := r2.Spawn(SpawnRequest{Brief: "fixture claude-error.jsonl", Label: "c", Tier: "fast"})
	wait(t, r2, true, time.Minute, in.ID)
	sent, _, err := r2.Send(in.ID, "go on")
	if err != nil || !sent.Resumed {
		t.Fatalf("send: %v %+v", err, sent)
	}
	done, _ = wait(t, r2, true, time.Minute, in.ID)
	if d := done[0]; d.Status != Failed || !strings.Contains(d.Stderr, "No conversation found with session ID: 9d8c7b6a") {
		t.Fatalf("resume of an unknown session: %+v", d)
	}
}

// Budgets: a run whose reported usage passes max_tokens is stopped there
// (through its process) and fails with its output so far; a cost
// reported with the final result fails the run too, keeping the result.
func TestBudgets(t *testing.T) {
	r := agentRoster(t)
	tok, err := r.Spawn(SpawnRequest{Brief: "sort the imports slowly", Label: "tok", Tier: "fast", MaxTokens: 20000})
	if err != nil {
		t.Fatal(err)
	}
	cost, _ := r.Spawn(SpawnRequest{Brief: "sort the imports", Label: "cost", Tier: "fast", MaxCost: 0.01})
	ok, _ := r.Spawn(SpawnRequest{Brief: "sort the imports", Label: "ok", Tier: "fast", MaxCost: 1, MaxTokens: 1e6})
	done, _ := wait(t, r, true, time.Minute, tok.ID, cost.ID, ok.ID)
	by := map[string]Info{}
	for _, d := range done {
		by[d.ID] = d
	}
	if d := by[tok.ID]; d.Status != Failed || !d.OverBudget || !strings.HasPrefix(d.Why, "over budget: 34593 tokens used (34490 in, 103 out) of a budget of 20000; it was stopped") ||
		!strings.Contains(d.Result, "I'll look for files") || d.Spent == nil || d.Spent.Tokens() != 34593 {
		t.Errorf("max_tokens: %+v", d)
	}
	if d := by[cost.ID]; d.Status != Failed || !d.OverBudget || d.Why != "over budget: $0.0421 spent of a budget of $0.01, as reported with its final result (kept as the result)" ||
		!strings.HasPrefix(d.Result, "Sorted the imports") {
		t.Errorf("max_cost: %+v", d)
	}
	if d := by[ok.ID]; d.Status != Succeeded || d.OverBudget {
		t.Errorf("within budget: %+v", d)
	}
}

// A plain command that reports its usage as it goes (a stream of records:
// its first line is one) is stopped, and its process with it, when the
// usage passes max_tokens; the budget counts every run of the worker.
func TestBudgetStopsAPlainWorker(t *testing.T) {
	r := shRoster(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	brief := `echo '{"model":"m"}'; echo started; sleep 300 & echo $! > ` + pidFile + `; echo '{"usage":{"input_tokens":500,"output_tokens":100}}'; wait`
	in, err := r.Spawn(SpawnRequest{Brief: brief, Label: "plain", MaxTokens: 1000})
	if err != nil {
		t.Fatal(err)
	}
	// Its first run stays within the budget: it is stopped by hand.
	testenv.WaitFor(t, time.Minute, "the first usage report", func() bool {
		s := r.List()[0].Spent
		return s != nil && s.Tokens() > 0
	})
	if k, _, _ := r.Kill(in.ID); k.Status != Killed || k.Spent == nil || k.Spent.Tokens() != 600 {
		t.Fatalf("first run: %+v", k)
	}
	os.Remove(pidFile)
	if _, _, err := r.Send(in.ID, "again"); err != nil {
		t.Fatal(err)
	}
	done, pending := wait(t, r, true, 30*time.Second, in.ID)
	if len(pending) != 0 {
		t.Fatalf("the worker over its budget was not stopped: %+v", r.List())
	}
	d := done[0]
	if d.Status != Failed || !d.OverBudget || !strings.HasPrefix(d.Why, "over budget: 1200 tokens used (1000 in, 200 out) of a budget of 1000") || d.Result != "started" {
		t.Fatalf("second run: %+v", d)
	}
	if pid := testenv.PidFile(t, pidFile); !testenv.Gone(pid) {
		t.Fatalf("the over-budget worker's child %d outlived it", pid)
	}
}

func TestBadBudgets(t *testing.T) {
	r := shRoster(t)
	for _, req := range []SpawnRequest{{Brief: "x", MaxCost: -1}, {Brief: "x", MaxTokens: -5}} {
		if _, err := r.Spawn(req); err == nil || !strings.Contains(err.Error(), "or leave it out for no limit") {
			t.Errorf("%+v: %v", req, err)
		}
	}
}
