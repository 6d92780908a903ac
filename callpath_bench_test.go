package builtintools_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/files"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// The same trivial read call, in process and over stdio, in one benchmark
// run, both on the same MCP revision:
// go test -run XXX -bench 'Call(Direct|InProcess|Stdio)$' -benchtime 5000x -count 5 .
func benchRoot(b *testing.B) string {
	root := b.TempDir()
	if err := os.WriteFile(filepath.Join(root, "small.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return root
}

func readRequest() mcp.CallToolRequest {
	req := mcp.CallToolRequest{}
	req.Params.Name = "read"
	req.Params.Arguments = map[string]any{"path": "small.txt"}
	return req
}

// runCalls times the read call through c.
func runCalls(b *testing.B, c client.MCPClient) {
	ctx := context.Background()
	req := readRequest()
	timeCalls(b, func() error { return failed(c.CallTool(ctx, req)) })
}

// timeCalls makes one call to warm up, then times each of b.N calls and
// reports the median and the 99th percentile beside ns/op.
func timeCalls(b *testing.B, call func() error) {
	if err := call(); err != nil {
		b.Fatalf("warm-up call: %v", err)
	}
	times := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		err := call()
		times = append(times, time.Since(t0))
		if err != nil {
			b.Fatalf("call: %v", err)
		}
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds())/1000, "p50-µs")
	b.ReportMetric(float64(times[len(times)*99/100].Nanoseconds())/1000, "p99-µs")
}

// failed is a call's error, or its result's text when it is a tool error.
func failed(res *mcp.CallToolResult, err error) error {
	if err == nil && res.IsError {
		return errors.New(registry.ResultText(res))
	}
	return err
}

// BenchmarkCallDirect measures Run.Call, the path an interpreter's tool()
// bridge and a linking harness use: no JSON-RPC round trip.
func BenchmarkCallDirect(b *testing.B) {
	r, err := registry.NewRun(registry.Config{Root: benchRoot(b), Families: []registry.Extension{files.Family}})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	args := json.RawMessage(`{"path":"small.txt"}`)
	ctx := context.Background()
	timeCalls(b, func() error { return failed(r.Call(ctx, tiers.Normal, "read", args)) })
}

func BenchmarkCallInProcess(b *testing.B) {
	benchInProcess(b, mcp.ProtocolVersion20251125)
}

// BenchmarkCallInProcessModern measures the 2026-07-28 revision's cost.
func BenchmarkCallInProcessModern(b *testing.B) {
	benchInProcess(b, mcp.ProtocolVersion20260728)
}

func benchInProcess(b *testing.B, version string) {
	r, err := registry.NewRun(registry.Config{Root: benchRoot(b), Families: []registry.Extension{files.Family}, ClientProtocol: version})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	c, err := r.Client(context.Background(), tiers.Normal)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	runCalls(b, c)
}

func BenchmarkCallStdio(b *testing.B) {
	bin := testenv.Command(b)
	c, err := client.NewStdioMCPClient(bin, os.Environ(), "serve", "--root", benchRoot(b), "--ask", "none", "--lsp-broker=false")
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	if _, err := c.Initialize(context.Background(), init); err != nil {
		b.Fatal(err)
	}
	runCalls(b, c)
}
