package vibe

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// The recorded streams of the real agent CLIs (testdata/agents, in
// claude's stream-json and codex exec --json formats) give the result,
// the usage, the session and the errors, and what the agent did as
// output lines.
func TestAgentStreams(t *testing.T) {
	for _, c := range []struct {
		fixture       string
		result        string // "" : no final result
		in, cached    int
		out           int
		cost          float64
		session, errs string
		said, model   string
		usageReports  int // at least
	}{
		{"claude-stream.jsonl", "Sorted the imports in main.go; goimports -l . is clean now.", 34490, 29150, 103, 0.0421345,
			"claude 3f1c2a9e-6b7d-4e21-9a0c-5d8e7f6a1b2c", "", "→ Bash {\"command\":\"goimports -l .\"", "claude-sonnet-4-5-20250929", 3},
		{"claude-error.jsonl", "", 4103, 0, 80, 0.0187, "claude 9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a", "claude ended with error_max_turns",
			"← tool error: Claude requested permissions to write", "claude-sonnet-4-5-20250929", 2},
		{"codex-exec.jsonl", "Sorted the imports in main.go; goimports -l . is clean now.", 24763, 24448, 122, 0,
			"codex 0199a7e2-5c3b-7d11-9f4e-2b6c8d0a1e57", "", "$ bash -lc 'goimports -l .' (exit 0)\nchanged: update main.go", "", 1},
		{"codex-failed.jsonl", "", 0, 0, 0, 0, "codex 0199a7e3-0a1b-7c2d-8e3f-4a5b6c7d8e9f", "codex's turn failed: stream disconnected",
			"codex error: stream disconnected", "", 0},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata/agents", c.fixture))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var out bytes.Buffer
			var reports []Usage
			res := readStdout(f, &out, agentStreams{claude: true, codex: true}, nil, func(u Usage) { reports = append(reports, u) })
			if c.result == "" && res.final != nil || c.result != "" && (res.final == nil || *res.final != c.result) {
				t.Errorf("result %v", res.final)
			}
			if u := res.usage; c.in+c.out > 0 && (u == nil || u.InputTokens != c.in || u.CachedInputTokens != c.cached || u.OutputTokens != c.out || u.CostUSD != c.cost || u.Model != c.model) {
				t.Errorf("usage %+v", u)
			}
			if s := res.session; s == nil || s.Backend+" "+s.ID != c.session {
				t.Errorf("session %+v", s)
			}
			if got := strings.Join(res.errs, "; "); c.errs == "" && got != "" || !strings.Contains(got, c.errs) {
				t.Errorf("errors %q", got)
			}
			if !strings.Contains(out.String(), c.said) || strings.Contains(out.String(), `"type"`) {
				t.Errorf("output %q", out.String())
			}
			if len(reports) < c.usageReports {
				t.Errorf("usage was reported %d times: %+v", len(reports), reports)
			}
			// The usage reported along the way only grows.
			for i := 1; i < len(reports); i++ {
				if reports[i].Tokens() < reports[i-1].Tokens() {
					t.Errorf("usage went down: %+v", reports)
				}
			}
		})
	}
}

// A plain JSON line is still a result with usage, and a line that only
// looks like a record is output.
func TestPlainRecordsAndNonRecords(t *testing.T) {
	var out bytes.Buffer
	res := readStdout(strings.NewReader("{\"model\":\"m\"}\n{not json\n{\"type\":\"assistant\"}\n{\"result\":\"ok\",\"usage\":{\"input_tokens\":1,\"output_tokens\":2}}\n"), &out, agentStreams{}, nil, nil)
	if res.final == nil || *res.final != "ok" || res.usage == nil || res.usage.Tokens() != 3 || res.usage.Model != "m" || res.session != nil || res.agent {
		t.Fatalf("%+v %+v", res, res.usage)
	}
	if out.String() != "{not json\n{\"type\":\"assistant\"}\n" {
		t.Fatalf("output %q", out.String())
	}
}

func agentRoster(t *testing.T) *Roster {
	t.Helper()
	dir, _ := filepath.Abs("testdata/agents")
	r, err := New(Config{StateDir: t.TempDir(), Dir: t.TempDir(), Backends: map[string]Backend{
		"fast": Command{Line: dir + "/fake-claude.sh -p --output-format stream-json --verbose", Grace: 500 * time.Millisecond},
		"good": Command{Line: dir + "/fake-codex.sh exec --json -", Grace: 500 * time.Millisecond}}})
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

// A session id that cannot go in a command line is never resumed.
func TestResumeLine(t *testing.T) {
	for _, c := range []struct {
		line string
		s    Session
		want string
	}{
		{"claude -p --output-format stream-json --verbose", Session{"claude", "abc-1"}, "claude -p --output-format stream-json --verbose --resume abc-1"},
		{"codex exec --json", Session{"codex", "t-1"}, "codex exec --json resume t-1"},
		{"codex exec --json -", Session{"codex", "t-1"}, "codex exec --json resume t-1 -"},
		{"codex --json", Session{"codex", "t-1"}, ""},
		{"claude -p", Session{"claude", "x; rm -rf ~"}, ""},
		{"claude -p", Session{"claude", "$(id)"}, ""},
		{"claude -p", Session{"other", "x"}, ""},
	} {
		got, ok := resumeLine(c.line, c.s)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%q %+v: %q %v", c.line, c.s, got, ok)
		}
	}
}

// FuzzEvents: any stream, records of the agent CLIs mixed with anything,
// is read without a panic; the output is what was not a record, and the
// usage reported along the way never goes negative.
func FuzzEvents(f *testing.F) {
	for _, name := range []string{"claude-stream.jsonl", "claude-error.jsonl", "codex-exec.jsonl", "codex-failed.jsonl", "claude-resume.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata/agents", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		lines := bytes.Split(b, []byte("\n"))
		f.Add(bytes.Join(lines[len(lines)/2:], []byte("\n")))
	}
	f.Add([]byte(`{"type":"assistant","session_id":"s","message":{"id":"m","content":"hi","usage":{"input_tokens":-5}}}`))
	f.Add([]byte(`{"type":"item.completed","item":{"type":"agent_message","text":"\xff"}}` + "\n" + `{"type":"turn.completed","usage":null}`))
	f.Add([]byte("{\"result\":\"ok\"}\nplain \xe2\x82\n{\"type\":\"result\",\"session_id\":\"s\",\"is_error\":true,\"errors\":[\"x\"]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		res := readStdout(bytes.NewReader(data), &out, agentStreams{claude: true, codex: true}, nil, func(u Usage) {})
		if out.Len() > len(data)+64*bytes.Count(data, []byte("\n"))+4096 && !res.agent {
			t.Fatalf("%d bytes of output from %d of input", out.Len(), len(data))
		}
		if res.final != nil && res.agent && len(res.errs) > 0 {
			t.Fatalf("a final result despite errors %v", res.errs)
		}
		if res.session != nil && (res.session.ID == "" || !utf8.ValidString(res.session.Backend)) {
			t.Fatalf("session %+v", res.session)
		}
	})
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
