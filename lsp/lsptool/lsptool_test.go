package lsptool_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/files"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/lsptool"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

const goMod = "module example.com/shop\n\ngo 1.22\n"

const cartGo = `package shop

// Cart holds items.
type Cart struct{ Items []string }

// Total counts the items.
func (c *Cart) Total() int { return len(c.Items) }

func use() int {
	c := &Cart{}
	return c.Total() + c.Total()
}
`

// goRoot is a fresh root holding the shop module (go.mod, cart.go).
func goRoot(t testing.TB) string {
	t.Helper()
	return testenv.Tree(t, map[string]string{"go.mod": goMod, "cart.go": cartGo})
}

// openRun opens a run of cfg that closes when the test ends. A cfg without
// families gets files and lsp: the two families, without the tree-sitter
// tools builtintools brings (cgo), so these tests build everywhere lsp does.
func openRun(t testing.TB, cfg registry.Config) *registry.Run {
	t.Helper()
	if cfg.Families == nil {
		cfg.Families = []registry.Extension{files.Family, lsptool.Family}
	}
	r, err := registry.NewRun(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// goRun is a run of files and lsp over goRoot, on a real gopls.
func goRun(t testing.TB) *registry.Run {
	t.Helper()
	testenv.LookPath(t, "gopls")
	return openRun(t, registry.Config{Root: goRoot(t)})
}

func call(t testing.TB, r *registry.Run, mode tiers.Mode, tool string, args map[string]any) (string, bool) {
	t.Helper()
	b, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := r.Call(ctx, mode, tool, b)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return registry.ResultText(res), res.IsError
}

// LSP-3..5 through the registry: positions are line + symbol, results are
// root-relative with the line quoted.
func TestLSPToolOnGopls(t *testing.T) {
	r := goRun(t)
	text, isErr := call(t, r, tiers.Plan, "lsp", map[string]any{"operation": "references", "file": "cart.go", "line": 7, "symbol": "Total"})
	if isErr || !strings.Contains(text, "cart.go:11") || !strings.Contains(text, "c.Total() + c.Total()") {
		t.Fatalf("references: %q", text)
	}
	text, isErr = call(t, r, tiers.Plan, "lsp", map[string]any{"operation": "definition", "file": "cart.go", "line": 10, "symbol": "Cart"})
	if isErr || !strings.Contains(text, "cart.go:4") {
		t.Fatalf("definition: %q", text)
	}
	text, isErr = call(t, r, tiers.Plan, "lsp", map[string]any{"operation": "hover", "file": "cart.go", "line": 7})
	if !isErr || !strings.Contains(text, "needs line (1-based) and symbol") {
		t.Fatalf("hover without symbol: %q", text)
	}
	text, isErr = call(t, r, tiers.Plan, "lsp", map[string]any{"operation": "hover", "file": "cart.go", "line": 7, "symbol": "Nope"})
	if !isErr || !strings.Contains(text, "func (c *Cart) Total() int") {
		t.Fatalf("symbol not on the line should quote the line: %q", text)
	}
	text, isErr = call(t, r, tiers.Plan, "lsp", map[string]any{"operation": "definition", "file": "../x.go", "line": 1, "symbol": "x"})
	if !isErr || !strings.Contains(text, "outside the root") {
		t.Fatalf("escape: %q", text)
	}
	text, isErr = call(t, r, tiers.Plan, "lsp", map[string]any{"operation": "teleport"})
	if !isErr || !strings.Contains(text, "value must be one of 'diagnostics'") {
		t.Fatalf("unknown operation: %q", text)
	}
	text, _ = call(t, r, tiers.Plan, "lsp", map[string]any{"operation": "status"})
	if !strings.Contains(text, "gopls") || !strings.Contains(text, "running") {
		t.Fatalf("status after use: %q", text)
	}
}

// WRT-1..3: a write that breaks the build says so at once; a diagnostic
// that only moved is not repeated; one that went away and came back is new;
// a file no server owns is written with no wait, and one line that says it
// was not checked (WRT-4: silence means "checked, clean").
func TestDiagnosticsOnWrite(t *testing.T) {
	r := goRun(t)
	broken := strings.Replace(cartGo, "return len(c.Items)", "return len(c.Itemz)", 1)
	text, isErr := call(t, r, tiers.Normal, "write", map[string]any{"path": "cart.go", "content": broken})
	if isErr || !strings.Contains(text, "New diagnostics after this write") || !strings.Contains(text, "Itemz") || !strings.Contains(text, "cart.go:7") {
		t.Fatalf("first broken write: %q", text)
	}
	moved := strings.Replace(broken, "// Cart holds items.\n", "// Cart holds items.\n//\n//\n//\n//\n", 1)
	text, isErr = call(t, r, tiers.Normal, "write", map[string]any{"path": "cart.go", "content": moved})
	if isErr || strings.Contains(text, "New diagnostics") {
		t.Fatalf("a diagnostic that only moved was reported again: %q", text)
	}
	text, _ = call(t, r, tiers.Normal, "edit", map[string]any{"path": "cart.go", "old_string": "c.Itemz", "new_string": "c.Items"})
	if strings.Contains(text, "New diagnostics") {
		t.Fatalf("the fix reported diagnostics: %q", text)
	}
	text, _ = call(t, r, tiers.Normal, "edit", map[string]any{"path": "cart.go", "old_string": "return len(c.Items)", "new_string": "return len(c.Itemz)"})
	if !strings.Contains(text, "New diagnostics") || !strings.Contains(text, "Itemz") {
		t.Fatalf("a diagnostic that came back was not reported: %q", text)
	}
	text, _ = call(t, r, tiers.Normal, "write", map[string]any{"path": "notes.txt", "content": "no server owns me\n"})
	if text != "created notes.txt (1 lines, 18 bytes)\nNot checked for diagnostics: notes.txt (no language server handles .txt files)" {
		t.Fatalf("unowned file: %q", text)
	}
}

// REN-1 through the registry, and its tier: plan mode does not see it.
func TestRenameTool(t *testing.T) {
	r := goRun(t)
	text, isErr := call(t, r, tiers.Plan, "lsp_rename", map[string]any{"file": "cart.go", "line": 7, "symbol": "Total", "new_name": "Count"})
	if !isErr || !strings.Contains(text, "not available in plan mode") {
		t.Fatalf("plan-mode rename: %q", text)
	}
	text, isErr = call(t, r, tiers.Normal, "lsp_rename", map[string]any{"file": "cart.go", "line": 7, "symbol": "Total", "new_name": "Count"})
	if isErr || !strings.Contains(text, "cart.go") {
		t.Fatalf("rename: %q", text)
	}
	data, _ := os.ReadFile(filepath.Join(r.Root(), "cart.go"))
	if strings.Contains(string(data), "Total") || strings.Count(string(data), "Count()") != 3 {
		t.Fatalf("after rename:\n%s", data)
	}
}

// N6: Run.Close returns promptly while a server's start is stuck in its
// preparation (it blocks opening a named pipe nobody writes to, as the
// read of a compile_commands.json FIFO did), and the call waiting for it
// ends with the run.
func TestRunCloseDuringAHungPreparation(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"fake.toml": "", "a.fake": "hello world\n"})
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		testenv.Unavailable(t, "named pipes", err)
	}
	release := func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}
	defer release()
	entered := make(chan struct{})
	spec := langserver.Spec{ID: "stuck", Language: "Fake", Command: []string{"/bin/cat"}, Install: "a test server",
		RootMarkers: []string{"fake.toml"}, Extensions: map[string]string{".fake": "fake"},
		Prepare: func(*langserver.Launch) error {
			close(entered)
			_, err := os.ReadFile(fifo)
			return err
		}}
	r, err := registry.NewRun(registry.Config{Root: root, Families: []registry.Extension{lsptool.Family},
		Settings: map[string]any{"lsp": lsp.Config{Servers: []langserver.Spec{spec}}}})
	if err != nil {
		t.Fatal(err)
	}
	answered := make(chan string, 1)
	go func() {
		res, err := r.Call(context.Background(), tiers.ReadOnly, "lsp", []byte(`{"operation": "hover", "file": "a.fake", "line": 1, "symbol": "world"}`))
		if err != nil {
			answered <- err.Error()
			return
		}
		answered <- registry.ResultText(res)
	}()
	<-entered
	t0 := time.Now()
	closed := make(chan struct{})
	go func() { r.Close(); close(closed) }()
	select {
	case <-closed:
		t.Logf("Run.Close returned after %s", time.Since(t0).Round(time.Millisecond))
	case <-time.After(time.Minute):
		release()
		t.Fatal("Run.Close did not return within a minute of a start stuck in its preparation")
	}
	select {
	case text := <-answered:
		t.Logf("the call: %s", text)
	case <-time.After(time.Minute):
		t.Error("the call waiting for the start was not answered")
	}
}
