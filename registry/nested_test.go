package registry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/runtest"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/registry/elicit"
	"github.com/builtin-tools/builtin-tools/registry/toolschema"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

type cellParams struct {
	Tool string `json:"tool" jsonschema:"the tool a cell calls"`
	Args string `json:"args,omitempty" jsonschema:"its arguments, JSON"`
}

// cellTool stands in for eval: a serial exec tool whose handler calls other
// tools as children, as a cell's tool() bridge will.
var cellTool = registry.Descriptor{Name: "cell", Tier: tiers.Exec, Description: "runs a cell", Serial: true, Asks: true,
	Handler: registry.Func(func(ctx context.Context, c *registry.Call, p cellParams) (msg, error) {
		res := c.Call(ctx, "an eval cell", p.Tool, json.RawMessage(p.Args))
		written := make([]string, 0)
		for _, w := range c.Written() {
			written = append(written, c.Rel(w))
		}
		prefix := "ok"
		if res.IsError {
			prefix = "child failed"
		}
		return msg{prefix + ": " + registry.ResultText(res) + " | parent saw " + strings.Join(written, ",")}, nil
	})}

// REG-11: a child call runs in its parent's mode, its written files reach
// the parent, its approval prompt names where it came from, and a serial
// tool calling itself is refused at once instead of waiting on itself.
func TestNestedCalls(t *testing.T) {
	var mu sync.Mutex
	var prompts []string
	approver := approverFunc(func(ctx context.Context, c *registry.Call) (bool, string, error) {
		mu.Lock()
		defer mu.Unlock()
		prompts = append(prompts, c.Chain())
		return true, "", nil
	})
	r := newRun(t, registry.Config{Families: []registry.Extension{toyFiles, family("eval", cellTool)},
		Policy: registry.Policy{tiers.Write: registry.Ask}, Approver: approver})

	text, isErr := call(t, r, tiers.Normal, "cell", `{"tool":"put","args":"{\"path\":\"lib/auth.dart\",\"content\":\"x\"}"}`)
	if isErr || !contains(text, "ok: created lib/auth.dart", "parent saw lib/auth.dart") {
		t.Fatalf("child write: %q", text)
	}
	if !slices.Equal(prompts, []string{"cell → an eval cell: put"}) {
		t.Fatalf("approval prompts %q", prompts)
	}

	done := make(chan string, 1)
	go func() {
		text, _ := call(t, r, tiers.Normal, "cell", `{"tool":"cell","args":"{\"tool\":\"look\",\"args\":\"{}\"}"}`)
		done <- text
	}()
	select {
	case text := <-done:
		if !contains(text, "child failed", "cell cannot be called from inside its own call", "cell → an eval cell: cell") {
			t.Fatalf("reentrant call: %q", text)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a serial tool called from its own call waited on itself")
	}

	// A child inherits its parent's mode: a read tool's child cannot write
	// in plan mode.
	bridge := registry.Descriptor{Name: "bridge", Tier: tiers.Read, Description: "calls put",
		Handler: registry.Func(func(ctx context.Context, c *registry.Call, p noParams) (msg, error) {
			return msg{registry.ResultText(c.Call(ctx, "a test", "put", json.RawMessage(`{"path":"p","content":"x"}`)))}, nil
		})}
	r2 := newRun(t, registry.Config{Families: []registry.Extension{toyFiles, family("b", bridge)}})
	if text, _ := call(t, r2, tiers.Plan, "bridge", `{}`); !strings.Contains(text, "not available in plan mode") {
		t.Fatalf("child escaped its parent's mode: %q", text)
	}
}

// REG-13: a run notifies its peers outside any call, and sends log
// messages only to peers that asked for that level.
func TestNotifyOutsideCalls(t *testing.T) {
	r := newRun(t, registry.Config{})
	ctx := context.Background()
	c := runtest.Client(t, r, tiers.Normal)
	got := make(chan mcp.JSONRPCNotification, 8)
	c.OnNotification(func(n mcp.JSONRPCNotification) { got <- n })
	r.Notify("notifications/builtin-tools/worker", map[string]any{"id": "w1", "status": "succeeded"})
	select {
	case n := <-got:
		if n.Method != "notifications/builtin-tools/worker" || n.Params.AdditionalFields["id"] != "w1" {
			t.Fatalf("notification %+v", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no notification outside a call")
	}
	// The in-process session starts at level error: an info message is not
	// sent until the peer asks for it.
	r.Log(mcp.LoggingLevelInfo, "debug", "stopped at main.go:3")
	//lint:ignore SA1019 the run still serves clients of revisions with logging
	if err := c.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelInfo}}); err != nil {
		t.Fatal(err)
	}
	r.Log(mcp.LoggingLevelInfo, "debug", "stopped at main.go:4")
	select {
	case n := <-got:
		if n.Method != "notifications/message" || !strings.Contains(n.Params.AdditionalFields["data"].(string), "main.go:4") {
			t.Fatalf("log message %+v (the one before setLevel must not be sent)", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no log message after setLevel")
	}
}

// REG-12: every tool lists an outputSchema and returns structuredContent
// that matches it, through a peer and on the direct path.
func TestStructuredContent(t *testing.T) {
	r := newRun(t, registry.Config{})
	ctx := context.Background()
	c := runtest.Client(t, r, tiers.Normal)
	for _, tool := range listTools(t, c) {
		b, _ := json.Marshal(tool)
		var wire struct {
			OutputSchema struct {
				Type       string         `json:"type"`
				Properties map[string]any `json:"properties"`
			} `json:"outputSchema"`
		}
		json.Unmarshal(b, &wire)
		if wire.OutputSchema.Type != "object" || wire.OutputSchema.Properties["msg"] == nil {
			t.Errorf("%s lists output schema %s", tool.Name, b)
		}
	}
	res := runtest.ClientCall(t, c, "put", map[string]any{"path": "a.txt", "content": "x"})
	b, _ := json.Marshal(res.StructuredContent)
	if string(b) != `{"msg":"created a.txt"}` {
		t.Fatalf("structuredContent through the peer: %s", b)
	}
	direct, _ := r.Call(ctx, tiers.Normal, "look", json.RawMessage(`{"path":"a.txt"}`))
	if m, ok := direct.StructuredContent.(msg); !ok || m.Msg != "x" {
		t.Fatalf("structuredContent on the direct path: %#v", direct.StructuredContent)
	}
}

// nilList is a result whose handler leaves its list nil.
type nilList struct {
	Items []string `json:"items"`
}

func (nilList) Text() string { return "none" }

// REG-12: a result is published with its nil lists empty, so a strict
// client reading it through a peer keeps it (toolschema fills them).
func TestNilListPublishedEmpty(t *testing.T) {
	tool := registry.Descriptor{Name: "nils", Tier: tiers.Read, Description: "nils",
		Handler: registry.Func(func(ctx context.Context, c *registry.Call, p noParams) (nilList, error) { return nilList{}, nil })}
	r := newRun(t, registry.Config{Families: []registry.Extension{family("nils", tool)}})
	c := runtest.Client(t, r, tiers.Normal)
	tools := listTools(t, c)
	res := runtest.ClientCall(t, c, "nils", nil)
	if err := toolschema.CheckResult(tools[0], res); err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(res.StructuredContent); string(b) != `{"items":[]}` {
		t.Errorf("structuredContent through the peer: %s", b)
	}
}

// elicitApprover asks through the call's MCP client, as askuser's
// elicitation port does.
type elicitApprover struct{}

func (elicitApprover) Approve(ctx context.Context, c *registry.Call) (bool, string, error) {
	res, err := c.Elicit(ctx, mcp.ElicitationParams{Mode: mcp.ElicitationModeForm, Message: "Allow " + c.Chain() + "?",
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}})
	if err != nil {
		return false, "", err
	}
	ok, _ := res.Content.(map[string]any)["ok"].(bool)
	return ok, "the operator said no", nil
}

type elicitor struct {
	mu   sync.Mutex
	seen []string
	ok   bool
}

func (e *elicitor) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	e.mu.Lock()
	e.seen = append(e.seen, req.Params.Message)
	e.mu.Unlock()
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
		Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"ok": e.ok}}}, nil
}

// A question asked deep in a nested call reaches the root call's client as
// a multi round-trip input request, on both protocol eras, and the parked
// call resumes with the answer.
func TestQuestionFromANestedCall(t *testing.T) {
	for _, version := range []string{mcp.ProtocolVersion20251125, mcp.ProtocolVersion20260728} {
		t.Run(version, func(t *testing.T) {
			for _, ok := range []bool{true, false} {
				r := newRun(t, registry.Config{Families: []registry.Extension{toyFiles, family("eval", cellTool)},
					Policy: registry.Policy{tiers.Write: registry.Ask}, Approver: elicitApprover{}, ClientProtocol: version})
				el := &elicitor{ok: ok}
				c, err := r.Client(context.Background(), tiers.Normal, client.WithElicitationHandler(el))
				if err != nil {
					t.Fatal(err)
				}
				res := runtest.ClientCall(t, c, "cell", map[string]any{"tool": "put", "args": `{"path":"a.txt","content":"x"}`})
				text := registry.ResultText(res)
				want := "ok: created a.txt"
				if !ok {
					want = "child failed: put is refused: the operator said no"
				}
				if !strings.Contains(text, want) || len(el.seen) != 1 || el.seen[0] != "Allow cell → an eval cell: put?" {
					t.Fatalf("approved=%v: %q, asked %q", ok, text, el.seen)
				}
				c.Close()
			}
		})
	}
}

// A retry carrying a request state the run does not hold (an old one, or
// another session's) is refused with what to do.
func TestForeignRequestState(t *testing.T) {
	p := serveStdio(t, registry.Config{})
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"look","arguments":{"path":"x"},"requestState":"0123456789abcdef","inputResponses":{}}}`)
	a := p.answer()
	res, _ := a["result"].(map[string]any)
	b, _ := json.Marshal(res)
	if res["isError"] != true || !strings.Contains(string(b), "call the tool again") {
		t.Fatalf("foreign request state: %v", a)
	}
}

// A child's progress goes to the token of the peer call it came from.
func TestChildProgressReachesTheParentToken(t *testing.T) {
	tick := toolOf("tick", tiers.Read, func(ctx context.Context, c *registry.Call) (string, error) {
		c.Progress(ctx, 1, 2, "half way")
		return "ticked", nil
	})
	parent := registry.Descriptor{Name: "parent", Tier: tiers.Read, Description: "calls tick",
		Handler: registry.Func(func(ctx context.Context, c *registry.Call, p noParams) (msg, error) {
			return msg{registry.ResultText(c.Call(ctx, "a test", "tick", nil))}, nil
		})}
	r := newRun(t, registry.Config{Families: []registry.Extension{family("p", tick, parent)}})
	c := runtest.Client(t, r, tiers.Normal)
	got := make(chan mcp.JSONRPCNotification, 4)
	c.OnNotification(func(n mcp.JSONRPCNotification) { got <- n })
	req := mcp.CallToolRequest{}
	req.Params.Name = "parent"
	req.Params.Meta = &mcp.Meta{ProgressToken: "tok-1"}
	res, err := c.CallTool(context.Background(), req)
	if err != nil || registry.ResultText(res) != "ticked" {
		t.Fatalf("%v %q", err, registry.ResultText(res))
	}
	select {
	case n := <-got:
		f := n.Params.AdditionalFields
		if n.Method != "notifications/progress" || f["progressToken"] != "tok-1" || f["message"] != "half way" {
			t.Fatalf("progress %+v", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the child's progress did not reach the parent's token")
	}
}

// A question asked while no relay listens fails at once, and the call's
// end does not block the goroutine that ran it: here the client never
// comes back for the first question, and the handler asks a second.
func TestQuestionWithNoRelay(t *testing.T) {
	errs := make(chan error, 2)
	twice := registry.Descriptor{Name: "twice", Tier: tiers.Read, Description: "asks twice", Asks: true,
		Handler: registry.Func(func(ctx context.Context, c *registry.Call, p struct{}) (msg, error) {
			for range 2 {
				t0 := time.Now()
				_, err := c.Elicit(ctx, mcp.ElicitationParams{Mode: mcp.ElicitationModeForm, Message: "ok?",
					RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}})
				errs <- fmt.Errorf("after %s: %w", time.Since(t0).Round(time.Millisecond), err)
			}
			return msg{"done"}, nil
		})}
	p := serveStdio(t, registry.Config{QuestionTimeout: 200 * time.Millisecond}, twice)
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	if a := p.answer(); a["result"] == nil {
		t.Fatalf("initialize: %v", a)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// A request of the multi round-trip era: its question comes back as
	// input_required, which this client never answers.
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"twice","arguments":{},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}}`)
	a := p.answer()
	if b, _ := json.Marshal(a); !strings.Contains(string(b), "inputRequests") {
		t.Fatalf("want input_required, got %s", b)
	}
	first, second := <-errs, <-errs
	if !errors.Is(first, elicit.ErrNoAnswer) {
		t.Fatalf("first question: %v", first)
	}
	// ErrNoPeer, not ErrNoAnswer: the second question was refused, not
	// left to run out its timeout.
	if !errors.Is(second, elicit.ErrNoPeer) {
		t.Fatalf("second question, with no relay: %v", second)
	}
	testenv.WaitFor(t, time.Minute, "the end of the goroutine that ran the call", func() bool {
		buf := make([]byte, 1<<20)
		return !strings.Contains(string(buf[:runtime.Stack(buf, true)]), "elicit.(*Parking).Converse.func1")
	})
}

// A wrapper's report reaches the text and the structured result, on a
// direct call and on a child call (an eval cell's tool() gets the child's
// structured result), and the structured result still fits the tool's
// output schema.
func TestReportsReachStructuredContent(t *testing.T) {
	checker := registry.Family[registry.None]{Key: registry.NewKey[registry.None]("checker"),
		Wrappers: []registry.Wrapper{{Name: "checker", Applies: registry.WritesFiles,
			Wrap: func(next registry.HandlerFunc) registry.HandlerFunc {
				return func(ctx context.Context, c *registry.Call) (*mcp.CallToolResult, error) {
					res, err := next(ctx, c)
					c.Report("diagnostics", "1 new error in "+c.Rel(c.Written()[0]), map[string]any{"errors": 1})
					return res, err
				}
			}}}}
	r := newRun(t, registry.Config{Families: []registry.Extension{toyFiles, checker, family("cells", cellTool)}})
	res, err := r.Call(context.Background(), tiers.Normal, "put", json.RawMessage(`{"path":"a.go","content":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if text := registry.ResultText(res); !strings.Contains(text, "created a.go") || !strings.Contains(text, "1 new error in a.go") {
		t.Fatalf("text: %q", text)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(b), `"msg":"created a.go"`) || !strings.Contains(string(b), `"reports":[{"kind":"diagnostics","text":"1 new error in a.go","data":{"errors":1}}]`) {
		t.Fatalf("structured: %s", b)
	}
	for _, d := range r.Registered() {
		if d.Name == "put" {
			if err := fitsSchema(d.OutputSchema(), res.StructuredContent); err != nil {
				t.Fatalf("the structured result does not fit the output schema: %v", err)
			}
		}
	}
	out, _ := call(t, r, tiers.Normal, "cell", `{"tool":"put","args":"{\"path\":\"b.go\",\"content\":\"y\"}"}`)
	if !strings.Contains(out, "1 new error in b.go") {
		t.Fatalf("child call: %q", out)
	}
}

func fitsSchema(schema json.RawMessage, v any) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("out.json", doc); err != nil {
		return err
	}
	sch, err := c.Compile("out.json")
	if err != nil {
		return err
	}
	b, _ := json.Marshal(v)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// The question timeout fires at its time, on a fake clock: a client of the
// earlier era that never answers an elicitation/create cannot hold the
// call past Config.QuestionTimeout.
func TestQuestionTimeoutFiresAtItsTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ask := registry.Descriptor{Name: "ask", Tier: tiers.Read, Description: "asks once", Asks: true,
			Handler: registry.Func(func(ctx context.Context, c *registry.Call, p struct{}) (msg, error) {
				_, err := c.Elicit(ctx, mcp.ElicitationParams{Mode: mcp.ElicitationModeForm, Message: "ok?",
					RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}})
				return msg{}, err
			})}
		r := newRun(t, registry.Config{QuestionTimeout: 7 * time.Minute, ClientProtocol: mcp.ProtocolVersion20251125,
			Families: []registry.Extension{toyFiles, family("ask", ask)}})
		c, err := r.Client(context.Background(), tiers.Normal, client.WithElicitationHandler(silent{}))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		t0 := time.Now()
		res := runtest.ClientCall(t, c, "ask", nil)
		if d := time.Since(t0); d != 7*time.Minute {
			t.Fatalf("the call returned after %s, want the question timeout 7m0s", d)
		}
		if text := registry.ResultText(res); !res.IsError || !strings.Contains(text, "did not answer within 7m0s") {
			t.Fatalf("%q", text)
		}
	})
}

// silent is a client that never answers a question.
type silent struct{}

func (silent) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
