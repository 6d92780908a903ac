package registry

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

type noParams struct{}

func toyRun(t *testing.T, tools ...Descriptor) *Run {
	t.Helper()
	r, err := NewRun(Config{Root: t.TempDir(), Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// REG-5: mcp-go's WithToolFilter is enforced on tools/call, not only on
// tools/list. This test uses the run's filter alone, without the hook that
// adds the explanation, so it proves the filter is a gate by itself.
func TestToolFilterRefusesCallsByName(t *testing.T) {
	var ran atomic.Int32
	h := func(ctx context.Context, c *Call, p noParams) (*mcp.CallToolResult, error) {
		ran.Add(1)
		return Text("ran")
	}
	r := toyRun(t, Tool("look", tiers.Read, "reads", nil, h), Tool("change", tiers.Write, "writes", nil, h))
	s := server.NewMCPServer("bare", "1", server.WithToolCapabilities(true), server.WithToolFilter(r.filter(tiers.Plan)))
	var tools []server.ServerTool
	for _, e := range r.registeredLocked() {
		tools = append(tools, r.serverTool(e))
	}
	s.AddTools(r.bindAll(tiers.Plan, tools)...)
	c, err := client.NewInProcessClient(s)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 1 || list.Tools[0].Name != "look" {
		t.Fatalf("plan filter listed %v, want only look", list.Tools)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "change"
	if _, err := c.CallTool(ctx, req); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("calling a filtered-out tool by name: err = %v, want mcp-go's not-found refusal", err)
	}
	if ran.Load() != 0 {
		t.Fatal("the filtered-out tool's handler ran")
	}
	req.Params.Name = "look"
	if _, err := c.CallTool(ctx, req); err != nil || ran.Load() != 1 {
		t.Fatalf("visible tool: err %v, ran %d", err, ran.Load())
	}
}

// REG-10: calls to a serial tool run one at a time, in arrival order.
func TestSerialToolRunsInArrivalOrder(t *testing.T) {
	var (
		mu      sync.Mutex
		order   []int
		running atomic.Int32
		overlap atomic.Bool
	)
	release := make(chan struct{})
	type p struct {
		N int `json:"n" jsonschema:"call number"`
	}
	d := Tool("step", tiers.Exec, "serial", nil, func(ctx context.Context, c *Call, p p) (*mcp.CallToolResult, error) {
		if running.Add(1) > 1 {
			overlap.Store(true)
		}
		defer running.Add(-1)
		if p.N == 0 {
			<-release
		}
		mu.Lock()
		order = append(order, p.N)
		mu.Unlock()
		return Text("ok")
	})
	d.Serial = true
	r := toyRun(t, d)
	e := r.tools["step"]
	ctx := context.Background()
	var wg sync.WaitGroup
	const n = 8
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res, err := r.Call(ctx, tiers.Normal, "step", []byte(`{"n":`+string(rune('0'+i))+`}`))
			if err != nil || res.IsError {
				t.Errorf("call %d: %v %v", i, err, ResultText(res))
			}
		}(i)
		// Wait until call i holds the lock (i == 0) or is queued, so
		// arrival order is known.
		for {
			e.serial.mu.Lock()
			ready := e.serial.held && len(e.serial.waiters) == i
			e.serial.mu.Unlock()
			if ready {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	close(release)
	wg.Wait()
	for i, v := range order {
		if v != i {
			t.Fatalf("calls ran in order %v, want arrival order", order)
		}
	}
	if overlap.Load() {
		t.Fatal("two calls to a serial tool ran at once")
	}
	if got := e.tool.Meta.AdditionalFields[MetaParallel]; got != false {
		t.Fatalf("serial tool's _meta %s = %v, want false", MetaParallel, got)
	}
}

// A waiter that gives up leaves the queue without blocking those behind it.
func TestFIFOWaiterGivesUp(t *testing.T) {
	f := newFIFO()
	if err := f.lock(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() { errc <- f.lock(ctx) }()
	for {
		f.mu.Lock()
		n := len(f.waiters)
		f.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("cancelled waiter got the lock")
	}
	f.unlock()
	if err := f.lock(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.unlock()
}
