package askuser_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/askuser"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/registry/elicit"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// elicitor is an MCP client's elicitation handler scripted by a test: it
// records each request and answers with the next response.
type elicitor struct {
	mu      sync.Mutex
	seen    []mcp.ElicitationRequest
	answers []mcp.ElicitationResult
}

func (e *elicitor) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seen = append(e.seen, req)
	if len(e.answers) == 0 {
		return nil, errors.New("test elicitor has no answer left")
	}
	a := e.answers[0]
	e.answers = e.answers[1:]
	return &a, nil
}

func accept(content map[string]any) mcp.ElicitationResult {
	return mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: content}}
}

func action(a mcp.ElicitationResponseAction) mcp.ElicitationResult {
	return mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: a}}
}

func newRun(t *testing.T, opts builtintools.Options) *registry.Run {
	t.Helper()
	if opts.Root == "" {
		opts.Root = t.TempDir()
	}
	r, err := builtintools.NewRun(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func callTool(t *testing.T, c client.MCPClient, name string, args map[string]any) (string, bool) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return registry.ResultText(res), res.IsError
}

var colour = map[string]any{
	"question": "Which colour should the button be?",
	"context":  "The design doc does not say; it decides the CSS variable.",
	"options": []any{
		map[string]any{"label": "red", "description": "matches the logo"},
		map[string]any{"label": "blue"},
	},
}

func with(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{}
	for kk, vv := range m {
		out[kk] = vv
	}
	out[k] = v
	return out
}

// ASK-1, ASK-2, ASK-4: ask_user through the in-process client's
// elicitation, on the protocol before multi round-trip requests (mcp-go
// sends elicitation/create for the run) and on 2026-07-28 (the client
// answers the input_required result and retries).
func TestAskUserThroughElicitation(t *testing.T) {
	for _, version := range []string{mcp.ProtocolVersion20251125, mcp.ProtocolVersion20260728} {
		t.Run(version, func(t *testing.T) { askThroughElicitation(t, version) })
	}
}

func askThroughElicitation(t *testing.T, version string) {
	cases := []struct {
		name    string
		args    map[string]any
		answer  mcp.ElicitationResult
		want    string
		isError bool
	}{
		{"one option", colour, accept(map[string]any{"choice": "red"}), `The user chose "red".`, false},
		{"several options", with(colour, "multi_select", true), accept(map[string]any{"choice": []any{"red", "blue"}}), `chose "red", "blue"`, false},
		{"free text", with(colour, "allow_free_text", true), accept(map[string]any{"answer": "teal, like the footer"}), "wrote: teal, like the footer", false},
		{"declined", colour, action(mcp.ElicitationResponseActionDecline), "Skipped (declined)", false},
		{"cancelled", colour, action(mcp.ElicitationResponseActionCancel), "Skipped (cancelled)", false},
		{"not offered", colour, accept(map[string]any{"choice": "green"}), `picked "green", which was not offered`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			el := &elicitor{answers: []mcp.ElicitationResult{tc.answer}}
			r := newRun(t, builtintools.Options{Ask: askuser.Elicitation{}, ClientProtocol: version})
			c, err := r.Client(context.Background(), tiers.Plan, client.WithElicitationHandler(el))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			text, isErr := callTool(t, c, "ask_user", tc.args)
			if isErr != tc.isError || !strings.Contains(text, tc.want) {
				t.Fatalf("got (error=%v) %q, want %q", isErr, text, tc.want)
			}
			if strings.HasPrefix(tc.want, "Skipped") && !strings.Contains(text, "explicitly stated assumption") {
				t.Fatalf("a skip must tell the agent how to go on: %q", text)
			}
			if len(el.seen) != 1 {
				t.Fatalf("client was asked %d times", len(el.seen))
			}
			msg := el.seen[0].Params.Message
			for _, want := range []string{"Which colour", "design doc", "1. red — matches the logo", "2. blue"} {
				if !strings.Contains(msg, want) {
					t.Errorf("card %q lacks %q", msg, want)
				}
			}
			schema, _ := json.Marshal(el.seen[0].Params.RequestedSchema)
			if !strings.Contains(string(schema), `"enum":["red","blue"]`) {
				t.Errorf("schema %s does not offer the labels", schema)
			}
		})
	}
}

// ASK-3: a client that cannot show questions makes ask_user fail at once,
// telling the agent to proceed on an assumption.
func TestElicitationWithoutCapabilityFailsClosed(t *testing.T) {
	r := newRun(t, builtintools.Options{Ask: askuser.Elicitation{}, AskTimeout: time.Hour})
	c, err := r.Client(context.Background(), tiers.Normal) // no elicitation handler
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The call runs on another goroutine, so it must not use t.Fatal.
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = "ask_user"
		req.Params.Arguments = colour
		res, err := c.CallTool(context.Background(), req)
		done <- result{res, err}
	}()
	var text string
	var isErr bool
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		text, isErr = registry.ResultText(r.res), r.res.IsError
	case <-time.After(30 * time.Second):
		t.Fatal("ask_user blocked although the client cannot answer")
	}
	if !isErr || !strings.Contains(text, "did not declare the elicitation capability") || !strings.Contains(text, "explicitly stated assumption") {
		t.Fatalf("%q", text)
	}
}

// ASK-2: a timeout is an error carrying the same instruction.
func TestAskUserTimeout(t *testing.T) {
	never := askuser.Func(func(ctx context.Context, q askuser.Question) (askuser.Answer, error) {
		<-ctx.Done()
		return askuser.Answer{}, ctx.Err()
	})
	r := newRun(t, builtintools.Options{Ask: never, AskTimeout: 50 * time.Millisecond})
	res, err := r.Call(context.Background(), tiers.Normal, "ask_user", mustJSON(colour))
	if err != nil {
		t.Fatal(err)
	}
	text := registry.ResultText(res)
	if !res.IsError || !strings.Contains(text, "timed out") || !strings.Contains(text, "do not ask this question again") {
		t.Fatalf("%q", text)
	}
}

// ASK-3: with no port the tool is not registered; a port that finds nobody
// fails at once.
func TestNoHuman(t *testing.T) {
	r := newRun(t, builtintools.Options{})
	for _, d := range r.Registered() {
		if d.Name == "ask_user" {
			t.Fatal("ask_user registered without an ask port")
		}
	}
	gone := askuser.Func(func(ctx context.Context, q askuser.Question) (askuser.Answer, error) {
		return askuser.Answer{}, askuser.ErrNoHuman
	})
	r = newRun(t, builtintools.Options{Ask: gone})
	res, _ := r.Call(context.Background(), tiers.Normal, "ask_user", mustJSON(colour))
	if !res.IsError || !strings.Contains(registry.ResultText(res), "Do not wait for an answer") {
		t.Fatalf("%q", registry.ResultText(res))
	}
}

func TestAskUserRejectsUnanswerableQuestions(t *testing.T) {
	r := newRun(t, builtintools.Options{Ask: askuser.Func(func(ctx context.Context, q askuser.Question) (askuser.Answer, error) {
		t.Error("port asked an invalid question")
		return askuser.Answer{}, nil
	})})
	cases := map[string]string{
		`{"question": "Pick?"}`: "allow_free_text",
		`{"question": "   "}`:   "question is empty",
		`{"question": "Pick?", "options": [{"label": "a"}, {"label": "a"}]}`:     "offered twice",
		`{"question": "Pick?", "allow_free_text": true, "multi_select": true}`:   "multi_select needs options",
		`{"question": "Pick?", "options": [{"label": ""}]}`:                      "needs a label",
		`{"question": "Pick?", "options": [{"description": "no label"}]}`:        `missing required argument "options.0.label"`,
		`{"question": "Pick?", "options": "a,b"}`:                                `argument "options" must be array`,
		`{"question": "Pick?", "allow_free_text": true, "urgency": "very high"}`: `unknown argument "urgency"`,
	}
	for args, want := range cases {
		res, _ := r.Call(context.Background(), tiers.Normal, "ask_user", json.RawMessage(args))
		if !res.IsError || !strings.Contains(registry.ResultText(res), want) {
			t.Errorf("%s: %q, want %q", args, registry.ResultText(res), want)
		}
	}
}

// ASK-4: the terminal port reads numbers, labels or free text; an empty
// line skips; bad input is asked again; closed input means nobody is there.
func TestTerminalPort(t *testing.T) {
	q := askuser.Question{Question: "Which?", Options: []askuser.Option{{Label: "alpha"}, {Label: "beta"}}, AllowFreeText: true}
	multi := askuser.Question{Question: "Which?", Options: q.Options, MultiSelect: true}
	only := askuser.Question{Question: "Which?", Options: q.Options}
	cases := []struct {
		name  string
		q     askuser.Question
		typed string
		want  askuser.Answer
	}{
		{"number", q, "2\n", askuser.Answer{Outcome: askuser.Answered, Choices: []string{"beta"}}},
		{"label", q, "Alpha\n", askuser.Answer{Outcome: askuser.Answered, Choices: []string{"alpha"}}},
		{"free text", q, "neither, use gamma\n", askuser.Answer{Outcome: askuser.Answered, Text: "neither, use gamma"}},
		{"several", multi, "1, 2\n", askuser.Answer{Outcome: askuser.Answered, Choices: []string{"alpha", "beta"}}},
		{"skip", q, "\n", askuser.Answer{Outcome: askuser.Declined}},
		{"retry after a bad number", only, "7\nzz\n1\n", askuser.Answer{Outcome: askuser.Answered, Choices: []string{"alpha"}}},
		{"three bad tries", only, "7\n8\n9\n", askuser.Answer{Outcome: askuser.Cancelled}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			port := askuser.NewTerminal(strings.NewReader(tc.typed), &out)
			a := &askuser.Asker{Port: port, Timeout: 10 * time.Second}
			got, err := a.Ask(context.Background(), tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if got.Outcome != tc.want.Outcome || strings.Join(got.Choices, ",") != strings.Join(tc.want.Choices, ",") || got.Text != tc.want.Text {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			if !strings.Contains(out.String(), "1. alpha") {
				t.Fatalf("card not shown: %q", out.String())
			}
		})
	}
	pr, pw := io.Pipe()
	pw.Close()
	port := askuser.NewTerminal(pr, io.Discard)
	if _, err := port.Ask(context.Background(), q); !errors.Is(err, askuser.ErrNoHuman) {
		t.Fatalf("closed terminal: %v", err)
	}
}

// REG-7, ASK-3: the approval gate asks through the same port and card.
func TestApprovalThroughElicitation(t *testing.T) {
	for _, tc := range []struct {
		answer  mcp.ElicitationResult
		allowed bool
		want    string
	}{
		{accept(map[string]any{"choice": "Allow"}), true, "created notes.txt"},
		{accept(map[string]any{"choice": "Deny"}), false, "the operator denied it"},
		{action(mcp.ElicitationResponseActionDecline), false, "declined the approval question"},
	} {
		el := &elicitor{answers: []mcp.ElicitationResult{tc.answer}}
		r := newRun(t, builtintools.Options{Ask: askuser.Elicitation{}, Policy: registry.Policy{tiers.Write: registry.Ask}})
		c, err := r.Client(context.Background(), tiers.Normal, client.WithElicitationHandler(el))
		if err != nil {
			t.Fatal(err)
		}
		text, isErr := callTool(t, c, "write", map[string]any{"path": "notes.txt", "content": "hello"})
		c.Close()
		if isErr == tc.allowed || !strings.Contains(text, tc.want) {
			t.Fatalf("got (error=%v) %q, want %q", isErr, text, tc.want)
		}
		_, statErr := os.Stat(filepath.Join(r.Root(), "notes.txt"))
		if (statErr == nil) != tc.allowed {
			t.Fatalf("file written=%v, allowed=%v", statErr == nil, tc.allowed)
		}
		if len(el.seen) != 1 || !strings.Contains(el.seen[0].Params.Message, "Allow write notes.txt? (a write tool)") ||
			!strings.Contains(el.seen[0].Params.Message, `"path": "notes.txt"`) {
			t.Fatalf("approval card: %+v", el.seen)
		}
	}
}

// ASK-4 over stdio against the real command, for a client on the protocol
// before multi round-trip requests and for one on 2026-07-28.
func TestElicitationOverStdio(t *testing.T) {
	bin := testenv.Command(t)
	for _, version := range []string{mcp.ProtocolVersion20250618, mcp.LATEST_PROTOCOL_VERSION} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			tr := transport.NewStdio(bin, os.Environ(), "serve", "--root", t.TempDir(), "--mode", "plan")
			if err := tr.Start(ctx); err != nil {
				t.Fatal(err)
			}
			el := &elicitor{answers: []mcp.ElicitationResult{accept(map[string]any{"choice": "blue"})}}
			c := client.NewClient(tr, client.WithElicitationHandler(el))
			defer c.Close()
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			init := mcp.InitializeRequest{}
			init.Params.ProtocolVersion = version
			init.Params.ClientInfo = mcp.Implementation{Name: "stdio-test", Version: "1"}
			if _, err := c.Initialize(ctx, init); err != nil {
				t.Fatal(err)
			}
			text, isErr := callTool(t, c, "ask_user", colour)
			if isErr || !strings.Contains(text, `chose "blue"`) {
				t.Fatalf("got (error=%v) %q", isErr, text)
			}
		})
	}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// The terminal port's Close ends its reader and makes later questions fail
// at once, so a run's close leaves no goroutine or descriptor behind.
func TestTerminalClose(t *testing.T) {
	in, w := io.Pipe()
	defer w.Close()
	term := askuser.NewTerminal(in, io.Discard)
	w.Write([]byte("1\n")) // a line the reader holds until someone asks
	if err := term.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := term.Ask(context.Background(), askuser.Question{Question: "Go on?", Options: []askuser.Option{{Label: "yes"}}})
	if !errors.Is(err, askuser.ErrNoHuman) || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("ask after Close: %v", err)
	}
	if err := term.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
}

// slowElicitor answers after delay, or never (delay 0: it waits for its
// request to be cancelled).
type slowElicitor struct {
	delay time.Duration
	calls chan struct{}
}

func (e *slowElicitor) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	e.calls <- struct{}{}
	if e.delay == 0 {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	select {
	case <-time.After(e.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	a := accept(map[string]any{"choice": "red"})
	return &a, nil
}

// The ask timeout fires through elicitation on both protocol eras: a client
// of the earlier era that never answers gets the timeout (with the seed's
// instruction) at the configured time, not when it gives up; a client of
// the multi round-trip era that answers after the timeout gets the
// timeout, not a stale acceptance. In a synctest bubble the call ends at
// the timeout exactly, or, on the multi round-trip era, when the client
// comes back.
func TestAskTimeoutThroughElicitation(t *testing.T) {
	const timeout = 5 * time.Minute
	for _, c := range []struct {
		version string
		delay   time.Duration
	}{{mcp.ProtocolVersion20251125, 0}, {mcp.ProtocolVersion20260728, 3 * timeout}} {
		t.Run(c.version, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				el := &slowElicitor{delay: c.delay, calls: make(chan struct{}, 4)}
				r := newRun(t, builtintools.Options{Ask: askuser.Elicitation{}, AskTimeout: timeout, ClientProtocol: c.version})
				cl, err := r.Client(context.Background(), tiers.Plan, client.WithElicitationHandler(el))
				if err != nil {
					t.Fatal(err)
				}
				defer cl.Close()
				ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
				defer cancel()
				req := mcp.CallToolRequest{}
				req.Params.Name = "ask_user"
				req.Params.Arguments = colour
				t0 := time.Now()
				res, err := cl.CallTool(ctx, req)
				if err != nil {
					t.Fatalf("after %s: %v", time.Since(t0), err)
				}
				text := registry.ResultText(res)
				if !res.IsError || !strings.Contains(text, "timed out") || !strings.Contains(text, "explicitly stated assumption") {
					t.Fatalf("after %s: %q", time.Since(t0), text)
				}
				if len(el.calls) != 1 {
					t.Fatalf("the client was asked %d times", len(el.calls))
				}
				// The end is the ask timeout, not the client's; on the multi
				// round-trip era the server can answer only when the client
				// comes back, so then.
				if d := time.Since(t0); d != max(timeout, c.delay) {
					t.Fatalf("the call ended after %s with a %s timeout (the client came back after %s)", d, timeout, c.delay)
				}
			})
		})
	}
}

// Issue 19: a client that was sent the question and failed to answer is
// not told the question "could not be asked".
func TestClientThatFailsToAnswer(t *testing.T) {
	el := &elicitor{} // no answer: its handler fails
	r := newRun(t, builtintools.Options{Ask: askuser.Elicitation{}})
	c, err := r.Client(context.Background(), tiers.Plan, client.WithElicitationHandler(el))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	text, isErr := callTool(t, c, "ask_user", colour)
	if !isErr || !strings.Contains(text, "The question was sent to the MCP client, but no answer came back") || strings.Contains(text, "could not be asked") ||
		!strings.Contains(text, "explicitly stated assumption") {
		t.Fatalf("got (error=%v) %q", isErr, text)
	}
}

// A question that got no answer to use fails with an *askuser.Error: its
// kind for errors.Is, its detail as data (ask_user words its own sentence
// from it, never by cutting the kind's words off the text), and the error
// behind it still matched.
func TestErrorKindsAndDetail(t *testing.T) {
	a := &askuser.Asker{Port: askuser.Func(func(ctx context.Context, q askuser.Question) (askuser.Answer, error) {
		return askuser.Answer{Outcome: askuser.Answered, Choices: []string{"green"}}, nil
	})}
	_, err := a.Ask(context.Background(), askuser.Question{Question: "Which?", Options: []askuser.Option{{Label: "red"}}})
	e, ok := errors.AsType[*askuser.Error](err)
	if !ok || !errors.Is(err, askuser.ErrInvalidAnswer) || errors.Is(err, askuser.ErrNoHuman) ||
		!strings.HasPrefix(e.Detail, `it picked "green", which was not offered`) || err.Error() != askuser.ErrInvalidAnswer.Error()+": "+e.Detail {
		t.Errorf("an answer not offered: %#v", err)
	}
	_, err = (&askuser.Asker{}).Ask(context.Background(), askuser.Question{Question: "Which?", AllowFreeText: true})
	if e, ok := errors.AsType[*askuser.Error](err); !ok || !errors.Is(err, askuser.ErrNoHuman) || e.Detail != "this run has no ask port" {
		t.Errorf("no port: %#v", err)
	}
	behind := fmt.Errorf("wrapped: %w", elicit.ErrNoAnswer)
	err = &askuser.Error{Kind: askuser.ErrNoHuman, Detail: behind.Error(), Err: behind}
	if !errors.Is(err, askuser.ErrNoHuman) || !errors.Is(err, elicit.ErrNoAnswer) || errors.Is(err, askuser.ErrTimeout) {
		t.Errorf("the error behind it is lost: %v", err)
	}
}
