// Package runtest holds the steps that tests of several packages take on a
// registry.Run: calling a tool with arguments, directly or through an MCP
// client, timing such calls for a benchmark, and connecting the client.
// It is apart from testenv, which registry's own tests import.
package runtest

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// Call calls tool on r in mode with args as its JSON arguments and gives
// the result's text and whether it is a tool error; a protocol error fails
// t.
func Call(t testing.TB, r *registry.Run, mode tiers.Mode, tool string, args map[string]any) (string, bool) {
	t.Helper()
	b, _ := json.Marshal(args)
	res, err := r.Call(context.Background(), mode, tool, b)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return registry.ResultText(res), res.IsError
}

// Latencies calls tool on r in mode b.N times, the i-th with args(i) as its
// arguments (encoded before the call is timed), and reports the calls'
// median and 90th percentile in milliseconds (median-ms, p90-ms). A call
// that fails, or whose text and tool-error flag ok refuses, fails b.
func Latencies(b *testing.B, r *registry.Run, mode tiers.Mode, tool string, args func(i int) map[string]any, ok func(i int, text string, isErr bool) bool) {
	b.Helper()
	ctx := context.Background()
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		raw, _ := json.Marshal(args(i))
		start := time.Now()
		res, err := r.Call(ctx, mode, tool, raw)
		times = append(times, time.Since(start))
		if err != nil {
			b.Fatalf("%s %d: %v", tool, i, err)
		}
		if text := registry.ResultText(res); !ok(i, text, res.IsError) {
			b.Fatalf("%s %d: %q", tool, i, text)
		}
	}
	b.StopTimer()
	slices.Sort(times)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(times[len(times)/2]), "median-ms")
	b.ReportMetric(ms(times[len(times)*9/10]), "p90-ms")
}

// Client connects an in-process MCP client to r in mode, closed when t
// ends.
func Client(t testing.TB, r *registry.Run, mode tiers.Mode) *client.Client {
	t.Helper()
	c, err := r.Client(context.Background(), mode)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// ClientCall calls tool through c with args, as an agent does, and gives
// the result; a protocol error fails t.
func ClientCall(t testing.TB, c *client.Client, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	if args != nil {
		req.Params.Arguments = args // a nil map would be sent as null
	}
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}
