package graphtool_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/graph/graphtool"
	"github.com/builtin-tools/builtin-tools/graph/index"
	"github.com/builtin-tools/builtin-tools/internal/test/runtest"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/registry/toolschema"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

// A change made outside the tools to more files than a query re-reads
// before it answers: the query answers at once, from the files it
// re-read, and says how many are still pending (text and structured); a
// later query, once the background refresher has read them, has the full
// answer.
func TestQueryDoesNotWaitForALargeOutsideChange(t *testing.T) {
	const n = 60
	files := map[string]string{"go.mod": "module m\n", "a.go": "package m\n\nfunc Target() {}\n"}
	for i := range n {
		files[fmt.Sprintf("b%02d.go", i)] = fmt.Sprintf("package m\n\nfunc B%02d() {}\n", i)
	}
	root := testenv.Tree(t, files)
	release := make(chan struct{})
	var once sync.Once
	index.BeforeBackgroundReadForTest = func(string) { <-release }
	t.Cleanup(func() { index.BeforeBackgroundReadForTest = nil })
	r, err := builtintools.NewRun(builtintools.Options{Root: root, Without: []string{"lsp"},
		Settings: map[string]any{"code_graph": graphtool.Config{Wait: time.Minute}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	t.Cleanup(func() { once.Do(func() { close(release) }) }) // before the run closes
	ctx := context.Background()
	c, err := r.Client(ctx, tiers.Normal)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var tool mcp.Tool
	for _, tl := range list.Tools {
		if tl.Name == "code_graph" {
			tool = tl
		}
	}
	ask := func(args map[string]any) (string, map[string]any) {
		t.Helper()
		res := runtest.ClientCall(t, c, "code_graph", args)
		if err := toolschema.CheckResult(tool, res); err != nil {
			t.Fatal(err)
		}
		sc, _ := res.StructuredContent.(map[string]any)
		st, _ := sc["index"].(map[string]any)
		return registry.ResultText(res), st
	}
	callers := map[string]any{"operation": "callers", "symbol": "Target"}
	if got, _ := ask(callers); !strings.Contains(got, "0 call sites") {
		t.Fatalf("before the change: %s", got)
	}
	time.Sleep(10 * time.Millisecond) // modification times the stamps tell apart
	changed := map[string]string{}
	for i := range n {
		changed[fmt.Sprintf("b%02d.go", i)] = fmt.Sprintf("package m\n\nfunc B%02d() { Target() }\n", i)
	}
	testenv.WriteTree(t, root, changed)
	// 16 re-read before the answer; 44 pending, held by the test.
	got, st := ask(callers)
	if !strings.Contains(got, "16 call sites (16 exact") || !strings.Contains(got, "(44 changed files are being re-read in the background") || st["pending"] != float64(44) {
		t.Fatalf("right after the change: index %v\n%s", st, got)
	}
	if got, st := ask(map[string]any{"operation": "status"}); !strings.Contains(got, "44 changed files are being re-read") || st["pending"] != float64(44) {
		t.Fatalf("status: index %v\n%s", st, got)
	}
	once.Do(func() { close(release) })
	deadline := time.Now().Add(time.Minute)
	for {
		got, st = ask(callers)
		if st["pending"] == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still pending after a minute: %s", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(got, fmt.Sprintf("%d call sites (%d exact", n, n)) || strings.Contains(got, "re-read in the background") {
		t.Fatalf("once the refresher is done: %s", got)
	}
}
