package graphtool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/graph/graphtool"
	"github.com/builtin-tools/builtin-tools/internal/test/runtest"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

func call(t *testing.T, r interface {
	Call(context.Context, tiers.Mode, string, json.RawMessage) (*mcp.CallToolResult, error)
}, args map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(args)
	res, err := r.Call(context.Background(), tiers.Normal, "code_graph", b)
	if err != nil {
		t.Fatal(err)
	}
	return registry.ResultText(res)
}

// callersOf is the files of a cold tree calling one function: the first
// is target (package p000, defining name), every every-th one calls name,
// the others only their own functions.
func callersOf(target, name string, every int) func(i int) string {
	return func(i int) string {
		switch {
		case i == 0:
			return target
		case i%every == 0:
			return fmt.Sprintf("package p%03d\n\nimport \"m/p000\"\n\nfunc F%d() { p000.%s() }\n", i/20, i, name)
		}
		return fmt.Sprintf("package p%03d\n\nfunc F%d() { G%d() }\n\nfunc G%d() {}\n", i/20, i, i, i)
	}
}

// coldTree writes a Go module of n files under a fresh root, 20 a folder
// (p000/f0.go, …), file i holding body(i), and returns the root.
func coldTree(t *testing.T, n int, body func(i int) string) string {
	t.Helper()
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module m\n"), 0o644)
	for i := 0; i < n; i++ {
		dir := filepath.Join(root, fmt.Sprintf("p%03d", i/20))
		os.MkdirAll(dir, 0o755)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.go", i)), []byte(body(i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// coldRun is a run over root, closed with the test, whose code_graph
// answers at once instead of waiting for its build.
// skipIfBuiltFirst skips the test when got, the first answer of r, came
// from the full index because the build won the race.
func skipIfBuiltFirst(t *testing.T, r *registry.Run, got string) {
	t.Helper()
	g, _ := graphtool.Key.Of(r)
	if g.H.Index().Ready() && !strings.Contains(got, "ahead of the index") {
		t.Skipf("the build finished before the first query: %s", got)
	}
}

func coldRun(t *testing.T, root string) *registry.Run {
	t.Helper()
	r, err := builtintools.NewRun(builtintools.Options{Root: root, Without: []string{"lsp"},
		Settings: map[string]any{"code_graph": graphtool.Config{Wait: time.Nanosecond}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// A query made before the index is built answers from what is indexed
// and says how much that is; once built, the same query is complete.
func TestQueryBeforeReady(t *testing.T) {
	root := coldTree(t, 3000, callersOf("package p000\n\nfunc Target() {}\n", "Target", 1))
	r := coldRun(t, root)
	first := call(t, r, map[string]any{"operation": "status"})
	if !strings.Contains(first, "building:") {
		t.Fatalf("status right after the first use: %s", first)
	}
	g, _ := graphtool.Key.Of(r)
	if !g.H.Index().Wait(context.Background(), time.Minute) {
		t.Fatal("not built in a minute")
	}
	done := call(t, r, map[string]any{"operation": "callers", "symbol": "Target"})
	if !strings.Contains(done, "2999 call sites (2999 exact") || strings.Contains(done, "still building") {
		t.Fatalf("after the build: %s", done)
	}
}

// A partial answer names itself as one.
func TestPartialAnswerSaysSo(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module m\n"), 0o644)
	for i := 0; i < 3000; i++ {
		os.WriteFile(filepath.Join(root, fmt.Sprintf("f%d.go", i)), []byte(fmt.Sprintf("package m\n\nfunc F%d() { Target() }\n\nfunc Target%d() {}\n", i, i)), 0o644)
	}
	os.WriteFile(filepath.Join(root, "a.go"), []byte("package m\n\nfunc Target() {}\n"), 0o644)
	r := coldRun(t, root)
	// The build walks 3,000 files; the first query comes before it has
	// indexed them.
	got := call(t, r, map[string]any{"operation": "find", "symbol": "F1"})
	if !strings.Contains(got, "still building") {
		t.Fatalf("a query during the build did not say it was partial: %s", got)
	}
}

// A run whose queries got partial answers is told, by a log message, when
// the build finishes.
func TestReadyIsAnnounced(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module m\n"), 0o644)
	for i := 0; i < 3000; i++ {
		os.WriteFile(filepath.Join(root, fmt.Sprintf("f%d.go", i)), []byte(fmt.Sprintf("package m\n\nfunc F%d() { Target() }\n", i)), 0o644)
	}
	r := coldRun(t, root)
	ctx := context.Background()
	c, err := r.Client(ctx, tiers.Normal)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 8)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/message" {
			if s, ok := n.Params.AdditionalFields["data"].(string); ok {
				got <- s
			}
		}
	})
	//lint:ignore SA1019 the run still serves clients of revisions with logging
	if err := c.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelInfo}}); err != nil {
		t.Fatal(err)
	}
	res := runtest.ClientCall(t, c, "code_graph", map[string]any{"operation": "find", "symbol": "F1"})
	if text := res.Content[0].(mcp.TextContent).Text; !strings.Contains(text, "still building") {
		// The build won the race: a complete answer is not announced.
		select {
		case msg := <-got:
			t.Fatalf("a complete answer (%s) was followed by %q", text, msg)
		case <-time.After(200 * time.Millisecond):
		}
		return
	}
	select {
	case msg := <-got:
		if !strings.Contains(msg, "code graph ready: 3000 files indexed") {
			t.Fatalf("log message %q", msg)
		}
	case <-time.After(time.Minute):
		t.Fatal("no log message when the build finished")
	}
}

// callers on a cold tree answers at once from the files that hold the
// name, says so, and gives the full index's sites.
func TestCallersAheadOfTheIndex(t *testing.T) {
	root := coldTree(t, 3000, callersOf("package p000\n\nfunc Target() {}\n", "Target", 100))
	r := coldRun(t, root)
	got := call(t, r, map[string]any{"operation": "callers", "symbol": "Target"})
	if !strings.Contains(got, "29 call sites (29 exact") {
		t.Fatalf("callers on a cold tree: %s", got)
	}
	skipIfBuiltFirst(t, r, got)
	// 29 callers and the 20 files of the target's folder.
	if !strings.Contains(got, "computed from 49 files ahead of the index") {
		t.Fatalf("callers on a cold tree does not say it came from 49 files: %s", got)
	}
}

// find on a cold tree answers at once from the files that hold the name
// in any case, and says what it leaves out.
func TestFindAheadOfTheIndex(t *testing.T) {
	root := coldTree(t, 3000, func(i int) string {
		if i%500 == 0 {
			return fmt.Sprintf("package p%03d\n\nfunc RenderTarget%d() {}\n", i/20, i)
		}
		return fmt.Sprintf("package p%03d\n\nfunc F%d() {}\n", i/20, i)
	})
	r := coldRun(t, root)
	got := call(t, r, map[string]any{"operation": "find", "symbol": "rendertarget"})
	if !strings.Contains(got, "6 definitions match") {
		t.Fatalf("find on a cold tree: %s", got)
	}
	skipIfBuiltFirst(t, r, got)
	if !strings.Contains(got, "computed from 6 files ahead of the index") || !strings.Contains(got, "letters only in order are left out") {
		t.Fatalf("find on a cold tree does not say it came from 6 files, less letters-in-order matches: %s", got)
	}
}
