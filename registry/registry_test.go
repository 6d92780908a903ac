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
	"testing/synctest"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/runtest"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

type fakeDebugger struct{}

var debugKey = registry.NewKey[*fakeDebugger]("dbg")

// REG-2: a tool is registered only once its resource is attached, and a
// peer already serving learns of it (tools/list_changed).
func TestRegisteredWhenResourceAttached(t *testing.T) {
	debugTool := registry.Descriptor{Name: "debug", Tier: tiers.Exec, Description: "debugger",
		Handler: registry.With(debugKey, func(ctx context.Context, c *registry.Call, d *fakeDebugger, p noParams) (msg, error) {
			return msg{"ok"}, nil
		})}
	dbg := registry.Family[*fakeDebugger]{Key: debugKey, Tools: []registry.Descriptor{debugTool},
		Open: func(env *registry.Env) (*fakeDebugger, error) { return nil, registry.ErrSkip }}
	r := newRun(t, registry.Config{Families: []registry.Extension{toyFiles, dbg}})
	ctx := context.Background()
	c := runtest.Client(t, r, tiers.Normal)
	changed := make(chan struct{}, 4)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			changed <- struct{}{}
		}
	})
	names := func() []string {
		var out []string
		for _, tool := range listTools(t, c) {
			out = append(out, tool.Name)
		}
		return out
	}
	if got := names(); slices.Contains(got, "debug") {
		t.Fatalf("tool listed before its resource: %v", got)
	}
	text, isErr := call(t, r, tiers.Normal, "debug", `{}`)
	if !isErr || !strings.Contains(text, "needs the dbg resource") {
		t.Fatalf("calling an unregistered tool: %q", text)
	}
	// Through the peer the refusal is the same tool error.
	req := mcp.CallToolRequest{}
	req.Params.Name = "debug"
	if res, err := c.CallTool(ctx, req); err != nil || !res.IsError || registry.ResultText(res) != text {
		t.Fatalf("peer refusal differs from the direct one: %v %q", err, registry.ResultText(res))
	}
	if err := registry.Attach(r, debugKey, &fakeDebugger{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed after attaching a resource")
	}
	if got := names(); !slices.Contains(got, "debug") {
		t.Fatalf("debug not listed after attaching its resource: %v", got)
	}
	if text, isErr := call(t, r, tiers.Normal, "debug", `{}`); isErr || text != "ok" {
		t.Fatalf("debug after attach: %q", text)
	}
	if err := registry.Attach(r, debugKey, &fakeDebugger{}); err == nil {
		t.Fatal("a second dbg resource was accepted")
	}
}

// REG-5: plan mode lists read tools only and refuses the others by name,
// saying why, in one form through the MCP peer and the direct call path.
func TestPlanModeRefusesWriteByName(t *testing.T) {
	r := newRun(t, registry.Config{})
	ctx := context.Background()
	c := runtest.Client(t, r, tiers.Plan)
	if tools := listTools(t, c); len(tools) != 1 || tools[0].Name != "look" {
		t.Fatalf("plan mode lists %v", tools)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "put"
	req.Params.Arguments = map[string]any{"path": "x.txt", "content": "no"}
	refused, err := c.CallTool(ctx, req)
	if err != nil || !refused.IsError || !strings.Contains(registry.ResultText(refused), "not available in plan mode") {
		t.Fatalf("plan-mode write: %v %v", refused, err)
	}
	if _, err := os.Stat(filepath.Join(r.Root(), "x.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("plan-mode write changed the disk")
	}
	text, isErr := call(t, r, tiers.Plan, "put", `{"path":"x","content":"b"}`)
	if !isErr || text != registry.ResultText(refused) {
		t.Fatalf("direct refusal %q differs from the peer's %q", text, registry.ResultText(refused))
	}
	// An unknown tool is a protocol error (-32602) through a peer, as the
	// MCP specification says, and a tool error with a suggestion directly.
	req.Params.Name = "pot"
	if _, err := c.CallTool(ctx, req); err == nil || !strings.Contains(err.Error(), "pot") || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("unknown tool: %v", err)
	}
	if text, isErr := call(t, r, tiers.Normal, "pot", `{}`); !isErr || !contains(text, `unknown tool "pot"`, `did you mean "put"`) {
		t.Fatalf("unknown tool, direct: %q", text)
	}
}

var recordKey = registry.NewKey[*[]string]("record")

// REG-8: a family's wrapper applies the same way to a call from the MCP peer
// and to one from the direct path (an interpreter's tool() bridge), selects
// tools by what they declare (Writes), sees the files the call wrote, and
// applies only while its family's resource is attached.
func TestOneCallPathForEveryCaller(t *testing.T) {
	var mu sync.Mutex
	record := registry.Family[*[]string]{Key: recordKey,
		Open: func(env *registry.Env) (*[]string, error) { return &[]string{}, nil },
		Wrappers: []registry.Wrapper{{
			Name:    "record",
			Applies: registry.WritesFiles,
			Wrap: func(next registry.HandlerFunc) registry.HandlerFunc {
				return func(ctx context.Context, c *registry.Call) (*mcp.CallToolResult, error) {
					res, err := next(ctx, c)
					seen, _ := recordKey.Of(c.Run)
					mu.Lock()
					for _, w := range c.Written() {
						*seen = append(*seen, c.Rel(w))
					}
					mu.Unlock()
					res.Content = append(res.Content, mcp.NewTextContent("[wrapped]"))
					return res, err
				}
			},
		}},
	}
	// A write-tier tool that writes nothing is not wrapped.
	stage := toolOf("stage", tiers.Write, func(ctx context.Context, c *registry.Call) (string, error) { return "staged", nil })
	r := newRun(t, registry.Config{Families: []registry.Extension{toyFiles, family("more", stage), record}})
	ctx := context.Background()
	c := runtest.Client(t, r, tiers.Normal)
	req := mcp.CallToolRequest{}
	req.Params.Name = "put"
	req.Params.Arguments = map[string]any{"path": "a.txt", "content": "one\n"}
	res, err := c.CallTool(ctx, req)
	if err != nil || !strings.Contains(registry.ResultText(res), "[wrapped]") {
		t.Fatalf("peer call not wrapped: %v %q", err, registry.ResultText(res))
	}
	text, _ := call(t, r, tiers.Normal, "put", `{"path":"b/b.txt","content":"two\n"}`)
	if !strings.Contains(text, "[wrapped]") {
		t.Fatalf("direct call not wrapped: %q", text)
	}
	for _, name := range []string{"look", "stage"} {
		text, _ = call(t, r, tiers.Normal, name, `{"path":"a.txt"}`)
		if strings.Contains(text, "[wrapped]") {
			t.Fatalf("wrapper applied to %s, which writes no files", name)
		}
	}
	seen, _ := recordKey.Of(r)
	if !slices.Equal(*seen, []string{"a.txt", "b/b.txt"}) {
		t.Fatalf("wrapper saw writes %v", *seen)
	}
	// Without its family the wrapper is gone too.
	r2 := newRun(t, registry.Config{Families: []registry.Extension{toyFiles, record}, Without: []string{"record"}})
	if text, _ := call(t, r2, tiers.Normal, "put", `{"path":"c.txt","content":"x"}`); strings.Contains(text, "[wrapped]") {
		t.Fatalf("wrapper of a family left out still applied: %q", text)
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
			r := newRun(t, registry.Config{Policy: tc.policy, Approver: tc.approver})
			text, isErr := call(t, r, tiers.Normal, "put", write)
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
			if text, isErr := call(t, r, tiers.Normal, "look", `{"path":"f.txt"}`); isErr && tc.allowed {
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
	r := newRun(t, registry.Config{})
	cases := map[string][]string{
		`{}`:                          {`missing required argument "path"`, "path (string) required"},
		`{"path": 7}`:                 {`argument "path" must be string, not number`},
		`{"path": "a", "lmit": 3}`:    {`unknown argument "lmit"`, `did you mean "limit"`},
		`{"path": "a", "limit": "3"}`: {`argument "limit" must be integer, not string`},
		`[1,2]`:                       {"must be a JSON object"},
		`{"path": `:                   {"not valid JSON"},
	}
	for args, wants := range cases {
		text, isErr := call(t, r, tiers.Normal, "look", args)
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
	text, isErr := call(t, r, tiers.Normal, "look", `null`)
	if !isErr || !strings.Contains(text, `missing required argument "path"`) {
		t.Errorf("null arguments: %q", text)
	}
}

// REG-1: closing a run closes its resources, newest first, and later calls
// fail with a clear message.
func TestCloseStopsEverything(t *testing.T) {
	var log []string
	var mu sync.Mutex
	opener := func(name string) registry.Extension {
		return registry.Family[*closer]{Key: registry.NewKey[*closer](name),
			Open: func(env *registry.Env) (*closer, error) { return &closer{name, &log, &mu}, nil }}
	}
	r, err := registry.NewRun(registry.Config{Root: t.TempDir(), Families: []registry.Extension{toyFiles, opener("lsp"), opener("kernel")}})
	if err != nil {
		t.Fatal(err)
	}
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
	text, isErr := call(t, r, tiers.Normal, "look", `{"path":"."}`)
	if !isErr || !strings.Contains(text, "closed") {
		t.Fatalf("call after close: %q", text)
	}
	if err := registry.Attach(r, debugKey, &fakeDebugger{}); !errors.Is(err, registry.ErrClosed) {
		t.Fatalf("attach after close: %v", err)
	}
}

// REG-13: Close cancels a call in flight and waits for it before it closes
// the resources under it; the call's result says the run closed. In a
// synctest bubble the test holds the call's cleanup: while it is held,
// Close is seen blocked with the resource still open.
func TestCloseCancelsCallsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log []string
		var mu sync.Mutex
		started, cleanup := make(chan struct{}), make(chan struct{})
		block := toolOf("block", tiers.Read, func(ctx context.Context, c *registry.Call) (string, error) {
			close(started)
			<-ctx.Done()
			<-cleanup // cleanup that Close must wait for
			mu.Lock()
			log = append(log, "call ended")
			mu.Unlock()
			return "", ctx.Err()
		})
		res := registry.Family[*closer]{Key: registry.NewKey[*closer]("res"), Tools: []registry.Descriptor{block},
			Open: func(env *registry.Env) (*closer, error) { return &closer{"resource closed", &log, &mu}, nil }}
		r, err := registry.NewRun(registry.Config{Root: t.TempDir(), Families: []registry.Extension{res}})
		if err != nil {
			t.Fatal(err)
		}
		if r.Context().Err() != nil {
			t.Fatal("a new run's context is done")
		}
		out := make(chan *mcp.CallToolResult, 1)
		go func() {
			res, _ := r.Call(context.Background(), tiers.Normal, "block", json.RawMessage(`{}`))
			out <- res
		}()
		<-started
		closed := make(chan error, 1)
		go func() { closed <- r.Close() }()
		synctest.Wait()
		mu.Lock()
		held := slices.Clone(log)
		mu.Unlock()
		select {
		case err := <-closed:
			t.Fatalf("Close returned (%v) while a call ran; log %v", err, held)
		default:
		}
		if len(held) != 0 {
			t.Fatalf("while the call's cleanup runs: %v", held)
		}
		close(cleanup)
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(log, []string{"call ended", "resource closed"}) {
			t.Fatalf("order %v: the resource closed under a running call", log)
		}
		if res := <-out; res == nil || !contains(registry.ResultText(res), "block was cancelled", "the run is closed") {
			t.Fatalf("cancelled call said %v", res)
		}
		if r.Context().Err() == nil {
			t.Fatal("the run's context survived Close")
		}
	})
}

func TestFamilyChecks(t *testing.T) {
	dup := family("a", lookTool, lookTool)
	if _, err := registry.NewRun(registry.Config{Root: t.TempDir(), Families: []registry.Extension{dup}}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("duplicate tool: %v", err)
	}
	bad := lookTool
	bad.Tier = "root"
	if _, err := registry.NewRun(registry.Config{Root: t.TempDir(), Families: []registry.Extension{family("b", bad)}}); err == nil {
		t.Fatal("unknown tier accepted")
	}
	if _, err := registry.NewRun(registry.Config{Root: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Fatal("missing root accepted")
	}
	_, err := registry.NewRun(registry.Config{Root: t.TempDir(), Families: []registry.Extension{toyFiles}, Without: []string{"toyfile"}})
	if err == nil || !contains(err.Error(), `unknown family "toyfile"`, "toyfiles") {
		t.Fatalf("a misspelt without: %v", err)
	}
	_, err = registry.NewRun(registry.Config{Root: t.TempDir(), Families: []registry.Extension{toyFiles}, Settings: map[string]any{"lps": 1}})
	if err == nil || !strings.Contains(err.Error(), `family "lps"`) {
		t.Fatalf("a setting for no family: %v", err)
	}
	typed := registry.Family[*closer]{Key: registry.NewKey[*closer]("typed"),
		Open: func(env *registry.Env) (*closer, error) {
			_, err := registry.Setting[time.Duration](env, "typed")
			return nil, err
		}}
	_, err = registry.NewRun(registry.Config{Root: t.TempDir(), Families: []registry.Extension{typed}, Settings: map[string]any{"typed": "1s"}})
	if err == nil || !strings.Contains(err.Error(), "time.Duration") {
		t.Fatalf("a setting of the wrong type: %v", err)
	}
}

// A panicking handler becomes a tool error, not a crashed server.
func TestPanicIsToolError(t *testing.T) {
	boom := toolOf("boom", tiers.Read, func(ctx context.Context, c *registry.Call) (string, error) {
		panic("boom")
	})
	r := newRun(t, registry.Config{Families: []registry.Extension{family("b", boom)}})
	text, isErr := call(t, r, tiers.Normal, "boom", `{}`)
	if !isErr || !strings.Contains(text, "internal error in boom") {
		t.Fatalf("%q", text)
	}
}

func TestPolicyString(t *testing.T) {
	for in, want := range map[string]string{"": "write=allow,exec=allow", "exec=deny": "write=allow,exec=deny", "write=ask,exec=deny": "write=ask,exec=deny"} {
		p, err := registry.ParsePolicy(in)
		if err != nil {
			t.Fatal(err)
		}
		if p.String() != want {
			t.Errorf("%q: %q, want %q", in, p.String(), want)
		}
		if back, err := registry.ParsePolicy(p.String()); err != nil || back.String() != want {
			t.Errorf("%q does not read back: %v", p.String(), err)
		}
	}
}

// Under write=ask a staging tool is not asked about — the call that applies
// what it staged is, once, with the tool's summary for the card; a call
// that writes nothing (its Approve hook says so) is not asked either.
func TestApprovalAskedOnceForStagedWrites(t *testing.T) {
	var asked []string
	approver := approverFunc(func(ctx context.Context, c *registry.Call) (bool, string, error) {
		asked = append(asked, c.Tool.Name+": "+c.ApprovalSummary())
		return true, "", nil
	})
	stage := registry.Descriptor{Name: "stage", Tier: tiers.Write, Description: "stages", Stages: true,
		Handler: registry.Func(func(ctx context.Context, c *registry.Call, p noParams) (msg, error) { return msg{"staged e1"}, nil })}
	type applyParams struct {
		Action string `json:"action" jsonschema:"accept or discard"`
	}
	apply := registry.Descriptor{Name: "apply", Tier: tiers.Write, Description: "applies", Writes: true,
		Handler: registry.Func(func(ctx context.Context, c *registry.Call, p applyParams) (msg, error) {
			return msg{p.Action + "ed"}, nil
		}, registry.Approve(func(ctx context.Context, c *registry.Call, _ registry.None, p applyParams) (bool, string) {
			return p.Action == "accept", "e1: 2 files, +3 -1 lines"
		}))}
	r := newRun(t, registry.Config{Policy: registry.Policy{tiers.Write: registry.Ask}, Approver: approver,
		Families: []registry.Extension{toyFiles, family("staging", stage, apply)}})
	for _, c := range []struct{ tool, args, want string }{{"stage", `{}`, "staged e1"}, {"apply", `{"action":"discard"}`, "discarded"}, {"apply", `{"action":"accept"}`, "accepted"}} {
		if out, isErr := call(t, r, tiers.Normal, c.tool, c.args); isErr || out != c.want {
			t.Fatalf("%s %s: %q", c.tool, c.args, out)
		}
	}
	if len(asked) != 1 || asked[0] != "apply: e1: 2 files, +3 -1 lines" {
		t.Fatalf("asked %q, want once, for the accept, with its summary", asked)
	}
	// Deny still refuses a staging tool: what it stages could never be applied.
	r = newRun(t, registry.Config{Policy: registry.Policy{tiers.Write: registry.Deny},
		Families: []registry.Extension{toyFiles, family("staging", stage, apply)}})
	if out, isErr := call(t, r, tiers.Normal, "stage", `{}`); !isErr || !strings.Contains(out, "write=deny") {
		t.Fatalf("stage under deny: %q", out)
	}
}
