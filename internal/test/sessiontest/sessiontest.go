// Package sessiontest checks tool output as session transcripts: a txtar
// archive holds the files of a checkout and a script of calls with the
// output each gave, and the script is replayed against a fresh run in
// process and over stdio (the real command), which must both give the
// golden output. With -update the in-process replay rewrites the outputs,
// for review as a diff.
//
// Archive layout:
//
//	-- root/notes.txt --           a file of the checkout (under root/)
//	buy milk
//	-- session --
//	> read {"path": "notes.txt"}   a call: tool and JSON arguments
//	     1	buy milk               its text output, to the next call
//	>> [plan] edit {...}           >> also shows structuredContent;
//	                               [mode] calls in plan or readonly mode
//	> ask_user {...}               a call that asks the human:
//	< {"action":"accept","content":{"choice":"red"}}
//	< after 3s {"action":"decline"}
//	? Which colour?                the cards the client was shown
//	? schema: {...}                (its requested schema), then the output
//
// The "< " lines right after a call are the answers its questions get, in
// order: an elicitation result as JSON, given at once or "after" a delay
// (a human who answers late). A session with answers connects clients that
// declare the elicitation capability; a question past the last answer is
// answered with an error. Both replays answer the same way.
//
// An error result's output starts with "error: ". The run's root is shown
// as $ROOT.
package sessiontest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/registry/toolschema"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/rogpeppe/go-internal/txtar"
)

// Config is the one declaration of what a session's runs have: the
// in-process run is made from it by Options.NewRun, and the stdio replay
// turns it into the command's flags, so the two cannot disagree. Both
// replays have no run-time grammar folder and no code-graph snapshot, and
// no ask port unless Ask says.
type Config struct {
	// Without names the families left out (builtintools' family names).
	Without []string
	// Conversation is the run's conversation id ("" for a fresh one).
	Conversation string
	// Ask is where questions go: "" (nowhere: ask_user is absent) or
	// "elicit" (the client's elicitation, answered by the session's "<"
	// lines).
	Ask string
	// AskTimeout bounds one question (0: the command's default).
	AskTimeout time.Duration
	// Workers turn vibe mode on: the worker command of each tier, by
	// tier or tier@mode (--worker-command fast=CMD).
	Workers map[string]string
	// VibeState is the workers' state folder; with Workers and none given,
	// each replay gets a temporary one (never the user's cache).
	VibeState string
	// Protocol is the MCP revision both replays' clients negotiate
	// (default 2025-11-25).
	Protocol string
}

// Flags are the `builtin-tools serve` flags that give c, besides --root
// and --mode.
func (c Config) Flags() []string {
	ask := c.Ask
	if ask == "" {
		ask = "none"
	}
	f := []string{"--ask", ask, "--grammars", "", "--graph-cache", ""}
	if c.AskTimeout > 0 {
		f = append(f, "--ask-timeout", c.AskTimeout.String())
	}
	if len(c.Without) > 0 {
		f = append(f, "--without", strings.Join(c.Without, ","))
	}
	if c.Conversation != "" {
		f = append(f, "--conversation", c.Conversation)
	}
	if len(c.Workers) > 0 {
		f = append(f, "--vibe", "--vibe-state", c.VibeState)
		keys := make([]string, 0, len(c.Workers))
		for k := range c.Workers {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			f = append(f, "--worker-command", k+"="+c.Workers[k])
		}
	}
	return f
}

// protocol is the revision the replays' clients negotiate.
func (c Config) protocol() string {
	if c.Protocol == "" {
		return mcp.ProtocolVersion20251125
	}
	return c.Protocol
}

// Options configure the runs a session is replayed against.
type Options struct {
	Config Config
	// NewRun makes the in-process run over root as c says (the harness
	// knows no family: the test links what it needs).
	NewRun func(root string, c Config) (*registry.Run, error)
	// Update rewrites the outputs from the in-process replay.
	Update bool
	// Scrub replaces, in order, what changes from run to run (a time left,
	// a duration) before outputs are compared.
	Scrub []Scrub
	// CheckArguments fails a step whose text quotes a snake_case name that
	// is no argument of the tool called, nor of a tool named on the same
	// line (UnknownArguments); Terms are the tools' words that are not
	// arguments.
	CheckArguments bool
	Terms          []string
}

// Scrub is one replacement: every match of Pattern becomes Replace.
type Scrub struct {
	Pattern, Replace string
}

type step struct {
	mode       tiers.Mode
	tool       string
	args       string
	structured bool
	answers    []answer
	want       string
}

// answer is how the client answers one question: a result, at once or
// after a delay.
type answer struct {
	line   string // as the session spells it, after "< "
	after  time.Duration
	result mcp.ElicitationResult
}

func parseAnswer(line string) (answer, error) {
	a := answer{line: line}
	rest := line
	if d, r, ok := strings.Cut(line, " "); ok && d == "after" {
		dur, r2, _ := strings.Cut(strings.TrimSpace(r), " ")
		var err error
		if a.after, err = time.ParseDuration(dur); err != nil {
			return a, fmt.Errorf("answer %q: after what time: %v", line, err)
		}
		rest = r2
	}
	dec := json.NewDecoder(strings.NewReader(rest))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a.result); err != nil {
		return a, fmt.Errorf("answer %q is not an elicitation result: %v", line, err)
	}
	if a.result.Action == "" {
		return a, fmt.Errorf("answer %q has no action (accept, decline or cancel)", line)
	}
	return a, nil
}

// Run replays every *.txtar under dir.
func Run(t *testing.T, dir string, opts Options) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no sessions under %s: %v", dir, err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			replay(t, path, opts)
		})
	}
}

func replay(t *testing.T, path string, opts Options) {
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var script []byte
	for _, f := range ar.Files {
		if f.Name == "session" {
			script = f.Data
		}
	}
	scrubbers := compileScrub(opts.Scrub)
	steps, err := parse(script)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	asks := false
	for _, s := range steps {
		asks = asks || len(s.answers) > 0
	}
	drivers := []struct {
		name    string
		connect func(t *testing.T, root string, mode tiers.Mode, c Config, h *human) peer
	}{
		{"inprocess", func(t *testing.T, root string, mode tiers.Mode, c Config, h *human) peer {
			return inProcess(t, root, mode, opts.NewRun, c, h)
		}},
		{"stdio", func(t *testing.T, root string, mode tiers.Mode, c Config, h *human) peer {
			return overStdio(t, root, mode, c, h)
		}},
	}
	for i, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			root := checkout(t, ar)
			cfg := opts.Config
			if len(cfg.Workers) > 0 && cfg.VibeState == "" {
				cfg.VibeState = t.TempDir()
			}
			var h *human
			if asks {
				h = &human{}
			}
			peers := map[tiers.Mode]peer{}
			defer func() {
				for _, p := range peers {
					p.close()
				}
			}()
			var got []string
			for _, s := range steps {
				p, ok := peers[s.mode]
				if !ok {
					p = d.connect(t, root, s.mode, cfg, h)
					peers[s.mode] = p
				}
				out, res := render(t, p, h, root, s)
				checkResult(t, d.name, p, s, res)
				if opts.CheckArguments {
					text, _, _ := strings.Cut(out, "\nstructured: ")
					if bad := UnknownArguments(p.tools(t), s.tool, text, opts.Terms); len(bad) > 0 {
						t.Errorf("> %s %s: its text quotes %s, which %s takes as no argument:\n%s", s.tool, s.args, strings.Join(bad, ", "), s.tool, text)
					}
				}
				got = append(got, scrub(out, scrubbers))
			}
			if opts.Update && i == 0 {
				write(t, path, ar, steps, got)
				for j := range steps {
					steps[j].want = got[j] // the other drivers check the new output
				}
				return
			}
			for j, s := range steps {
				if got[j] != s.want {
					t.Errorf("%s: > %s %s\n--- got ---\n%s\n--- want ---\n%s", filepath.Base(path), s.tool, s.args, got[j], s.want)
				}
			}
		})
	}
}

func parse(script []byte) ([]step, error) {
	var steps []step
	sc := bufio.NewScanner(bytes.NewReader(script))
	sc.Buffer(nil, 1<<20)
	var out []string
	flush := func() {
		if len(steps) > 0 {
			steps[len(steps)-1].want = strings.TrimRight(strings.Join(out, "\n"), "\n")
		}
		out = nil
	}
	for sc.Scan() {
		line := sc.Text()
		if a, ok := strings.CutPrefix(line, "< "); ok && len(steps) > 0 && len(out) == 0 {
			ans, err := parseAnswer(strings.TrimSpace(a))
			if err != nil {
				return nil, err
			}
			steps[len(steps)-1].answers = append(steps[len(steps)-1].answers, ans)
			continue
		}
		if !strings.HasPrefix(line, "> ") && !strings.HasPrefix(line, ">> ") {
			if len(steps) == 0 {
				if strings.TrimSpace(line) != "" {
					return nil, fmt.Errorf("output %q before the first call", line)
				}
				continue
			}
			out = append(out, line)
			continue
		}
		flush()
		s := step{mode: tiers.Normal, structured: strings.HasPrefix(line, ">> ")}
		rest := strings.TrimSpace(strings.TrimLeft(line, ">"))
		if strings.HasPrefix(rest, "[") {
			m, r, ok := strings.Cut(rest[1:], "]")
			if !ok {
				return nil, fmt.Errorf("call %q: mode without ]", line)
			}
			mode, err := tiers.ParseMode(m)
			if err != nil {
				return nil, err
			}
			s.mode, rest = mode, strings.TrimSpace(r)
		}
		s.tool, s.args, _ = strings.Cut(rest, " ")
		if s.args = strings.TrimSpace(s.args); s.args == "" {
			s.args = "{}"
		}
		if !json.Valid([]byte(s.args)) {
			return nil, fmt.Errorf("call %q: arguments are not JSON", line)
		}
		steps = append(steps, s)
	}
	flush()
	return steps, sc.Err()
}

func checkout(t *testing.T, ar *txtar.Archive) string {
	root := t.TempDir()
	for _, f := range ar.Files {
		name, ok := strings.CutPrefix(f.Name, "root/")
		if !ok {
			continue
		}
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The golden output names the root as the run resolves it.
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// checkResult holds a result to what a strict client expects: valid
// against the tool's output schema, and no count in its text that its
// structured content leaves out.
func checkResult(t *testing.T, driver string, p peer, s step, res *mcp.CallToolResult) {
	t.Helper()
	if res == nil {
		return
	}
	for _, tool := range p.tools(t) {
		if tool.Name != s.tool {
			continue
		}
		if err := toolschema.CheckResult(tool, res); err != nil {
			t.Errorf("%s: > %s %s: a strict client would throw this result away: %v", driver, s.tool, s.args, err)
		}
		if res.IsError {
			return
		}
		if bad := Unsaid(res); len(bad) > 0 {
			t.Errorf("%s: > %s %s: the text states what the structured content does not carry: %s", driver, s.tool, s.args, strings.Join(bad, "; "))
		}
	}
}

func render(t *testing.T, p peer, h *human, root string, s step) (string, *mcp.CallToolResult) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var args map[string]any
	json.Unmarshal([]byte(s.args), &args)
	if h != nil {
		h.begin(s.answers)
	}
	res, err := p.call(ctx, s.tool, args)
	var out string
	if h != nil {
		cards, left := h.end()
		if left > 0 {
			t.Errorf("> %s %s: %d of its answers were not asked for", s.tool, s.args, left)
		}
		out = cards
	}
	switch {
	case err != nil:
		out += "protocol error: " + err.Error()
	case res.IsError:
		out += "error: " + registry.ResultText(res)
	default:
		out += strings.TrimRight(registry.ResultText(res), "\n")
		if s.structured {
			b, err := json.Marshal(res.StructuredContent)
			if err != nil {
				t.Fatal(err)
			}
			out += "\nstructured: " + string(b)
		}
	}
	if err != nil {
		res = nil
	}
	return strings.TrimRight(strings.ReplaceAll(out, root, "$ROOT"), "\n"), res
}

type scrubber struct {
	re   *regexp.Regexp
	repl string
}

func compileScrub(list []Scrub) []scrubber {
	out := make([]scrubber, 0, len(list))
	for _, sc := range list {
		out = append(out, scrubber{regexp.MustCompile(sc.Pattern), sc.Replace})
	}
	return out
}

func scrub(s string, scrubbers []scrubber) string {
	for _, sc := range scrubbers {
		s = sc.re.ReplaceAllString(s, sc.repl)
	}
	return s
}

func write(t *testing.T, path string, ar *txtar.Archive, steps []step, got []string) {
	var b strings.Builder
	for i, s := range steps {
		b.WriteString(">")
		if s.structured {
			b.WriteString(">")
		}
		b.WriteString(" ")
		if s.mode != tiers.Normal {
			fmt.Fprintf(&b, "[%s] ", s.mode)
		}
		fmt.Fprintf(&b, "%s %s\n", s.tool, s.args)
		for _, a := range s.answers {
			fmt.Fprintf(&b, "< %s\n", a.line)
		}
		fmt.Fprintf(&b, "%s\n", got[i])
	}
	for i, f := range ar.Files {
		if f.Name == "session" {
			ar.Files[i].Data = []byte(b.String())
		}
	}
	if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
		t.Fatal(err)
	}
}

type peer struct {
	c     client.MCPClient
	close func()
	list  *[]mcp.Tool // the tools it lists, once asked
}

func (p peer) tools(t *testing.T) []mcp.Tool {
	if *p.list == nil {
		res, err := p.c.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		*p.list = res.Tools
	}
	return *p.list
}

func (p peer) call(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	return p.c.CallTool(ctx, req)
}

func inProcess(t *testing.T, root string, mode tiers.Mode, newRun func(string, Config) (*registry.Run, error), c Config, h *human) peer {
	run, err := newRun(root, c)
	if err != nil {
		t.Fatal(err)
	}
	var copts []client.ClientOption
	if h != nil {
		copts = append(copts, client.WithElicitationHandler(h))
	}
	cl, err := run.Client(context.Background(), mode, copts...)
	if err != nil {
		run.Close()
		t.Fatal(err)
	}
	return peer{cl, func() { cl.Close(); run.Close() }, new([]mcp.Tool)}
}

func overStdio(t *testing.T, root string, mode tiers.Mode, c Config, h *human) peer {
	bin := testenv.Command(t)
	// No broker: the in-process replay it is compared with has none (a
	// library run shares servers within its process only), and a test
	// must not reach the servers of the user's other processes.
	args := append([]string{"serve", "--root", root, "--mode", string(mode), "--lsp-broker=false"}, c.Flags()...)
	tr := transport.NewStdio(bin, os.Environ(), args...)
	ctx := context.Background()
	if err := tr.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var copts []client.ClientOption
	if h != nil {
		copts = append(copts, client.WithElicitationHandler(h))
	}
	cl := client.NewClient(tr, copts...)
	if err := cl.Start(ctx); err != nil {
		cl.Close()
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = c.protocol()
	init.Params.ClientInfo = mcp.Implementation{Name: "sessiontest", Version: "1"}
	if _, err := cl.Initialize(ctx, init); err != nil {
		cl.Close()
		t.Fatal(err)
	}
	if got := cl.ProtocolVersion(); got != init.Params.ProtocolVersion {
		cl.Close()
		t.Skipf("serve over stdio negotiated %s, not the session's %s: this replay would test another era", got, init.Params.ProtocolVersion)
	}
	return peer{cl, func() { cl.Close() }, new([]mcp.Tool)}
}

// human is the client's elicitation handler: it shows each card by
// recording it, and answers with the current call's next scripted answer.
// When the call returns, an answer still being delayed is dropped.
type human struct {
	mu      sync.Mutex
	answers []answer
	cards   []string
	done    chan struct{} // closed when the current call returned
}

func (h *human) begin(answers []answer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.answers, h.cards, h.done = answers, nil, make(chan struct{})
}

// end returns the cards shown during the call, as output lines, and how
// many answers were left.
func (h *human) end() (string, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	close(h.done)
	var b strings.Builder
	for _, c := range h.cards {
		b.WriteString(c)
	}
	return b.String(), len(h.answers)
}

func (h *human) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	var b strings.Builder
	for _, l := range strings.Split(req.Params.Message, "\n") {
		b.WriteString(strings.TrimRight("? "+l, " ") + "\n")
	}
	schema, _ := json.Marshal(req.Params.RequestedSchema)
	fmt.Fprintf(&b, "? schema: %s\n", schema)
	h.mu.Lock()
	h.cards = append(h.cards, b.String())
	if len(h.answers) == 0 {
		h.mu.Unlock()
		return nil, errors.New("the session gives no answer for this question")
	}
	a, done := h.answers[0], h.done
	h.answers = h.answers[1:]
	h.mu.Unlock()
	if a.after > 0 {
		t := time.NewTimer(a.after)
		defer t.Stop()
		select {
		case <-t.C:
		case <-done:
			return nil, errors.New("the call ended before the answer")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	res := a.result
	return &res, nil
}
