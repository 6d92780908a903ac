package agentstream

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
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
			f, err := os.Open(filepath.Join("../testdata/agents", c.fixture))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var out bytes.Buffer
			var reports []Usage
			res := Read(f, &out, Streams{claude: true, codex: true}, nil, func(u Usage) { reports = append(reports, u) })
			if c.result == "" && res.Final != nil || c.result != "" && (res.Final == nil || *res.Final != c.result) {
				t.Errorf("result %v", res.Final)
			}
			if u := res.Usage; c.in+c.out > 0 && (u == nil || u.InputTokens != c.in || u.CachedInputTokens != c.cached || u.OutputTokens != c.out || u.CostUSD != c.cost || u.Model != c.model) {
				t.Errorf("usage %+v", u)
			}
			if s := res.Session; s == nil || s.Backend+" "+s.ID != c.session {
				t.Errorf("session %+v", s)
			}
			if got := strings.Join(res.Errors, "; "); c.errs == "" && got != "" || !strings.Contains(got, c.errs) {
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
	res := Read(strings.NewReader("{\"model\":\"m\"}\n{not json\n{\"type\":\"assistant\"}\n{\"result\":\"ok\",\"usage\":{\"input_tokens\":1,\"output_tokens\":2}}\n"), &out, Streams{}, nil, nil)
	if res.Final == nil || *res.Final != "ok" || res.Usage == nil || res.Usage.Tokens() != 3 || res.Usage.Model != "m" || res.Session != nil || res.Agent {
		t.Fatalf("%+v %+v", res, res.Usage)
	}
	if out.String() != "{not json\n{\"type\":\"assistant\"}\n" {
		t.Fatalf("output %q", out.String())
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
		got, ok := ResumeLine(c.line, c.s)
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
		b, err := os.ReadFile(filepath.Join("../testdata/agents", name))
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
		res := Read(bytes.NewReader(data), &out, Streams{claude: true, codex: true}, nil, func(u Usage) {})
		if out.Len() > len(data)+64*bytes.Count(data, []byte("\n"))+4096 && !res.Agent {
			t.Fatalf("%d bytes of output from %d of input", out.Len(), len(data))
		}
		if res.Final != nil && res.Agent && len(res.Errors) > 0 {
			t.Fatalf("a final result despite errors %v", res.Errors)
		}
		if res.Session != nil && (res.Session.ID == "" || !utf8.ValidString(res.Session.Backend)) {
			t.Fatalf("session %+v", res.Session)
		}
	})
}
