package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/files"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

type noParams struct{}

func newRun(t *testing.T, cfg registry.Config) *registry.Run {
	t.Helper()
	if cfg.Root == "" {
		cfg.Root = t.TempDir()
	}
	r, err := registry.NewRun(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func call(t *testing.T, r *registry.Run, mode tiers.Mode, name, args string) (string, bool) {
	t.Helper()
	res, err := r.Call(context.Background(), mode, name, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	return registry.ResultText(res), res.IsError
}

// fake resource that records when it is closed.
type closer struct {
	name string
	log  *[]string
	mu   *sync.Mutex
}

func (c closer) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	*c.log = append(*c.log, c.name)
	return nil
}

// REG-2: a tool is registered only once its resource is attached, and a
// peer already serving learns of it (tools/list_changed).
func TestRegisteredWhenResourceAttached(t *testing.T) {
	lspTool := registry.Tool("lsp", tiers.Read, "language server", []registry.ResourceKind{registry.LSP},
		func(ctx context.Context, c *registry.Call, p noParams) (*mcp.CallToolResult, error) {
			return registry.Text("status")
		})
	debugTool := registry.Tool("debug", tiers.Exec, "debugger", []registry.ResourceKind{registry.Debugger, registry.Conversation},
		func(ctx context.Context, c *registry.Call, p noParams) (*mcp.CallToolResult, error) {
			return registry.Text("ok")
		})
	r := newRun(t, registry.Config{Tools: append(files.Tools(), lspTool, debugTool)})
	ctx := context.Background()
	c, err := r.Client(ctx, tiers.Normal)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	changed := make(chan struct{}, 4)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			changed <- struct{}{}
		}
	})
	names := func() []string {
		res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tool := range res.Tools {
			out = append(out, tool.Name)
		}
		return out
	}
	if got := names(); slices.Contains(got, "lsp") || slices.Contains(got, "debug") {
		t.Fatalf("tools listed before their resources: %v", got)
	}
	text, isErr := call(t, r, tiers.Normal, "lsp", `{}`)
	if !isErr || !strings.Contains(text, "needs lsp") {
		t.Fatalf("calling an unregistered tool: %q", text)
	}
	if err := r.Attach(registry.LSP, struct{}{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed after attaching a resource")
	}
	if got := names(); !slices.Contains(got, "lsp") {
		t.Fatalf("lsp not listed after attaching its resource: %v", got)
	}
	// debug needs a conversation id too, which this run lacks.
	if err := r.Attach(registry.Debugger, struct{}{}); err != nil {
		t.Fatal(err)
	}
	if got := names(); slices.Contains(got, "debug") {
		t.Fatalf("debug listed without a conversation id: %v", got)
	}
	if err := r.Attach(registry.LSP, struct{}{}); err == nil {
		t.Fatal("a second lsp resource was accepted")
	}
}

// REG-5: plan mode lists read tools only and refuses the others by name,
// saying why — through the MCP peer and through the direct call path.
func TestPlanModeRefusesWriteByName(t *testing.T) {
	r := newRun(t, registry.Config{Tools: files.Tools()})
	ctx := context.Background()
	c, err := r.Client(ctx, tiers.Plan)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 1 || res.Tools[0].Name != "read" {
		t.Fatalf("plan mode lists %v", res.Tools)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "write"
	req.Params.Arguments = map[string]any{"path": "x.txt", "content": "no"}
	// D15: refused as a tool error, in the same form as Run.Call gives.
	refused, err := c.CallTool(ctx, req)
	if err != nil || !refused.IsError || !strings.Contains(registry.ResultText(refused), "not available in plan mode") {
		t.Fatalf("plan-mode write: %v %v", refused, err)
	}
	if _, err := os.Stat(filepath.Join(r.Root(), "x.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("plan-mode write changed the disk")
	}
	text, isErr := call(t, r, tiers.ReadOnly, "edit", `{"path":"x","old_string":"a","new_string":"b"}`)
	if !isErr || !strings.Contains(text, "not available in readonly mode") {
		t.Fatalf("direct call path let readonly edit: %q", text)
	}
	// An unknown tool is a protocol error (-32602), as the MCP specification
	// says.
	req.Params.Name = "nope"
	if _, err := c.CallTool(ctx, req); err == nil || !strings.Contains(err.Error(), "nope") || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("unknown tool: %v", err)
	}
}

// REG-8: a wrapper applies the same way to a call from the MCP peer and to
// one from the direct path (an interpreter's tool() bridge), and sees the
// files the call wrote.
func TestOneCallPathForEveryCaller(t *testing.T) {
	r := newRun(t, registry.Config{Tools: files.Tools()})
	var mu sync.Mutex
	var seen []string
	r.Use(registry.Wrapper{
		Name:    "record",
		Applies: func(d *registry.Descriptor) bool { return d.Tier == tiers.Write },
		Wrap: func(next registry.HandlerFunc) registry.HandlerFunc {
			return func(ctx context.Context, c *registry.Call) (*mcp.CallToolResult, error) {
				res, err := next(ctx, c)
				mu.Lock()
				for _, w := range c.Written() {
					seen = append(seen, c.Rel(w))
				}
				mu.Unlock()
				res.Content = append(res.Content, mcp.NewTextContent("[wrapped]"))
				return res, err
			}
		},
	})
	ctx := context.Background()
	c, err := r.Client(ctx, tiers.Normal)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := mcp.CallToolRequest{}
	req.Params.Name = "write"
	req.Params.Arguments = map[string]any{"path": "a.txt", "content": "one\n"}
	res, err := c.CallTool(ctx, req)
	if err != nil || !strings.Contains(registry.ResultText(res), "[wrapped]") {
		t.Fatalf("peer call not wrapped: %v %q", err, registry.ResultText(res))
	}
	text, _ := call(t, r, tiers.Normal, "write", `{"path":"b/b.txt","content":"two\n"}`)
	if !strings.Contains(text, "[wrapped]") {
		t.Fatalf("direct call not wrapped: %q", text)
	}
	text, _ = call(t, r, tiers.Normal, "read", `{"path":"a.txt"}`)
	if strings.Contains(text, "[wrapped]") {
		t.Fatal("wrapper applied to a read tool it does not apply to")
	}
	if !slices.Equal(seen, []string{"a.txt", "b/b.txt"}) {
		t.Fatalf("wrapper saw writes %v", seen)
	}
}

type approverFunc func(ctx context.Context, c *registry.Call) (bool, string, error)

func (f approverFunc) Approve(ctx context.Context, c *registry.Call) (bool, string, error) {
	return f(ctx, c)
}

// REG-7: the approval gate per tier — allow, ask (yes, no, no one to ask)
// and deny; read tools never pass through it.
func TestApprovalGate(t *testing.T) {
	write := `{"path":"f.txt","content":"x"}`
	asked := 0
	yes := approverFunc(func(ctx context.Context, c *registry.Call) (bool, string, error) { asked++; return true, "", nil })
	no := approverFunc(func(ctx context.Context, c *registry.Call) (bool, string, error) {
		asked++
		return false, "the operator denied it", nil
	})
	gone := approverFunc(func(ctx context.Context, c *registry.Call) (bool, string, error) {
		asked++
		return false, "", errors.New("no human is attached to answer")
	})
	cases := []struct {
		name     string
		policy   registry.Policy
		approver registry.Approver
		allowed  bool
		want     string
		asks     int
	}{
		{"default allows", nil, nil, true, "created f.txt", 0},
		{"ask and yes", registry.Policy{tiers.Write: registry.Ask}, yes, true, "created f.txt", 1},
		{"ask and no", registry.Policy{tiers.Write: registry.Ask}, no, false, "the operator denied it", 1},
		{"ask and nobody there", registry.Policy{tiers.Write: registry.Ask}, gone, false, "no human is attached", 1},
		{"ask without approver fails closed", registry.Policy{tiers.Write: registry.Ask}, nil, false, "fail closed", 0},
		{"deny", registry.Policy{tiers.Write: registry.Deny}, yes, false, "write=deny", 0},
		{"exec policy does not gate write", registry.Policy{tiers.Exec: registry.Deny}, nil, true, "created f.txt", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			asked = 0
			r := newRun(t, registry.Config{Tools: files.Tools(), Policy: tc.policy, Approver: tc.approver})
			text, isErr := call(t, r, tiers.Normal, "write", write)
			if isErr == tc.allowed || !strings.Contains(text, tc.want) {
				t.Fatalf("got (error=%v) %q, want allowed=%v with %q", isErr, text, tc.allowed, tc.want)
			}
			_, statErr := os.Stat(filepath.Join(r.Root(), "f.txt"))
			if (statErr == nil) != tc.allowed {
				t.Fatalf("file exists=%v, allowed=%v", statErr == nil, tc.allowed)
			}
			if asked != tc.asks {
				t.Fatalf("approver asked %d times, want %d", asked, tc.asks)
			}
			// Reads are never gated.
			if text, isErr := call(t, r, tiers.Normal, "read", `{"path":"."}`); isErr {
				t.Fatalf("read gated: %q", text)
			}
			if asked != tc.asks {
				t.Fatal("a read tool went through the approval gate")
			}
		})
	}
}

func TestParsePolicy(t *testing.T) {
	p, err := registry.ParsePolicy("write=ask, exec=deny")
	if err != nil || p[tiers.Write] != registry.Ask || p[tiers.Exec] != registry.Deny {
		t.Fatalf("%v %v", p, err)
	}
	for _, bad := range []string{"write", "read=ask", "write=maybe", "root=allow"} {
		if _, err := registry.ParsePolicy(bad); err == nil {
			t.Errorf("ParsePolicy(%q) accepted", bad)
		}
	}
}

// Missing, mistyped and unknown arguments get a tool error that names the
// argument and lists what the tool takes.
func TestArgumentErrors(t *testing.T) {
	r := newRun(t, registry.Config{Tools: files.Tools()})
	cases := map[string][]string{
		`{}`:                          {`missing required argument "path"`, "path (string) required"},
		`{"path": 7}`:                 {`argument "path" must be string, not number`},
		`{"path": "a", "lmit": 3}`:    {`unknown argument "lmit"`, `did you mean "limit"`},
		`{"path": "a", "limit": "3"}`: {`argument "limit" must be integer, not string`},
		`[1,2]`:                       {"must be a JSON object"},
		`{"path": `:                   {"not valid JSON"},
	}
	for args, wants := range cases {
		text, isErr := call(t, r, tiers.Normal, "read", args)
		if !isErr {
			t.Errorf("%s accepted: %q", args, text)
			continue
		}
		for _, w := range wants {
			if !strings.Contains(text, w) {
				t.Errorf("%s: error %q lacks %q", args, text, w)
			}
		}
	}
	// null and empty arguments mean {}.
	text, isErr := call(t, r, tiers.Normal, "read", `null`)
	if !isErr || !strings.Contains(text, `missing required argument "path"`) {
		t.Errorf("null arguments: %q", text)
	}
}

// REG-1: closing a run closes its resources, newest first, and later calls
// fail with a clear message.
func TestCloseStopsEverything(t *testing.T) {
	r, err := registry.NewRun(registry.Config{Root: t.TempDir(), Tools: files.Tools()})
	if err != nil {
		t.Fatal(err)
	}
	var log []string
	var mu sync.Mutex
	r.Attach(registry.LSP, closer{"lsp", &log, &mu})
	r.Attach(registry.Kernels, closer{"kernel", &log, &mu})
	r.OnClose(func() error { mu.Lock(); log = append(log, "staged edits"); mu.Unlock(); return nil })
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(log, []string{"kernel", "lsp", "staged edits"}) {
		t.Fatalf("close order %v", log)
	}
	if err := r.Close(); err != nil || len(log) != 3 {
		t.Fatal("a second Close did work again")
	}
	text, isErr := call(t, r, tiers.Normal, "read", `{"path":"."}`)
	if !isErr || !strings.Contains(text, "closed") {
		t.Fatalf("call after close: %q", text)
	}
	if err := r.Attach(registry.AskPort, struct{}{}); !errors.Is(err, registry.ErrClosed) {
		t.Fatalf("attach after close: %v", err)
	}
}

func TestCatalogChecks(t *testing.T) {
	h := func(ctx context.Context, c *registry.Call, p noParams) (*mcp.CallToolResult, error) {
		return registry.Text("")
	}
	dup := []registry.Descriptor{registry.Tool("a", tiers.Read, "a", nil, h), registry.Tool("a", tiers.Read, "a", nil, h)}
	if _, err := registry.NewRun(registry.Config{Root: t.TempDir(), Tools: dup}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("duplicate tool: %v", err)
	}
	bad := registry.Tool("b", "root", "b", nil, h)
	if _, err := registry.NewRun(registry.Config{Root: t.TempDir(), Tools: []registry.Descriptor{bad}}); err == nil {
		t.Fatal("unknown tier accepted")
	}
	if _, err := registry.NewRun(registry.Config{Root: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Fatal("missing root accepted")
	}
}

// A panicking handler becomes a tool error, not a crashed server.
func TestPanicIsToolError(t *testing.T) {
	boom := registry.Tool("boom", tiers.Read, "panics", nil, func(ctx context.Context, c *registry.Call, p noParams) (*mcp.CallToolResult, error) {
		var m map[string]int
		m["x"] = 1
		return nil, nil
	})
	r := newRun(t, registry.Config{Tools: []registry.Descriptor{boom}})
	text, isErr := call(t, r, tiers.Normal, "boom", `{}`)
	if !isErr || !strings.Contains(text, "internal error in boom") {
		t.Fatalf("%q", text)
	}
}
