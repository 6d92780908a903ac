package lsptool_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/files"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/lsptool"
	"github.com/builtin-tools/builtin-tools/lsp/pool"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/registry/toolschema"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// poolRun opens a run over root with the files and lsp families and the
// lsp setting cfg.
func poolRun(t testing.TB, root string, cfg lsp.Config) *registry.Run {
	t.Helper()
	r, err := registry.NewRun(registry.Config{Root: root, Families: []registry.Extension{files.Family, lsptool.Family},
		Settings: map[string]any{"lsp": cfg}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// poolStatus is a run's `lsp status`: its text and structured status,
// checked against the tool's output schema as a strict client does.
func poolStatus(t *testing.T, r *registry.Run) (string, *answer.Status) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := r.Call(ctx, tiers.Plan, "lsp", []byte(`{"operation": "status"}`))
	if err != nil || res.IsError {
		t.Fatalf("status: %v %s", err, registry.ResultText(res))
	}
	for _, tool := range r.Visible(tiers.Normal) {
		if tool.Name == "lsp" {
			if err := toolschema.CheckResult(tool, res); err != nil {
				t.Errorf("status: a strict client would throw this result away: %v", err)
			}
		}
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out struct {
		Status *answer.Status `json:"status"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Status == nil || out.Status.Pool == nil {
		t.Fatalf("status: %v in %s", err, raw)
	}
	return registry.ResultText(res), out.Status
}

// goModule writes a one-package Go module into a new folder.
func goModule(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if resolved, err := filepath.EvalSymlinks(root); err == nil {
		root = resolved
	}
	testenv.WriteTree(t, root, map[string]string{"go.mod": goMod, "cart.go": cartGo})
	return root
}

// LSP-8 through the tool: two runs over two Go modules in one pool whose
// budget every gopls exceeds. The second run's start stops the first
// run's idle gopls; the first run's status says so (which server, its
// memory, for which start) and names the second's folder only as another
// folder; the second's status names its gopls over the budget with its
// memory. The first run's next call starts its server again.
func TestBudgetStopTold(t *testing.T) {
	testenv.LookPath(t, "gopls")
	pl := pool.New()
	cfg := lsp.Config{Pool: pl, MemoryBudget: 1 << 10}
	rootA, rootB := goModule(t), goModule(t)
	a, b := poolRun(t, rootA, cfg), poolRun(t, rootB, cfg)
	refs := func(r *registry.Run, who string) {
		t.Helper()
		text, isErr := call(t, r, tiers.Plan, "lsp", map[string]any{"operation": "references", "file": "cart.go", "line": 7, "symbol": "Total"})
		if isErr || !strings.Contains(text, "cart.go:11") {
			t.Fatalf("%s: references: %q", who, text)
		}
	}
	refs(a, "a")
	_, st := poolStatus(t, a)
	if len(st.Pool.Servers) != 1 || !st.Pool.Servers[0].ThisRun || st.Pool.Servers[0].Root != "." || st.Pool.BudgetKB != 1 {
		t.Fatalf("a's pool: %+v", st.Pool)
	}
	pidA := st.Pool.Servers[0].PID
	refs(b, "b")
	deadline := time.Now().Add(time.Minute)
	for len(goplsIn(rootA)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if pids := goplsIn(rootA); len(pids) != 0 {
		t.Fatalf("a's idle gopls was not stopped for b's start: %v", pids)
	}

	text, st := poolStatus(t, a)
	t.Logf("a's status:\n%s", text)
	if len(st.Pool.Stopped) != 1 || st.Pool.Stopped[0].Root != "." || st.Pool.Stopped[0].For != "gopls for another folder" {
		t.Fatalf("a's status does not tell the stop: %+v", st.Pool.Stopped)
	}
	expectIn(t, "a's status", text, "stopped for the memory budget at ", ": gopls for . (", "to start gopls for another folder",
		"gopls for another folder (untrusted): idle, held by 1 run, ")
	if strings.Contains(text, rootB) {
		t.Errorf("a's status names b's folder: %s", text)
	}
	text, st = poolStatus(t, b)
	t.Logf("b's status:\n%s", text)
	if len(st.Pool.Servers) != 1 || !st.Pool.Servers[0].OverBudget || st.Pool.Servers[0].MemoryKB <= 0 || st.Pool.Servers[0].State != pool.Idle {
		t.Fatalf("b's pool: %+v", st.Pool)
	}
	expectIn(t, "b's status", text, "over the memory budget of 1 KiB on its own", "gopls for . (untrusted): idle, held by this run, ",
		"memory budget 1 KiB")

	refs(a, "a after the stop")
	_, st = poolStatus(t, a)
	for _, s := range st.Pool.Servers {
		if s.ThisRun && (s.PID == pidA || s.PID == 0) {
			t.Fatalf("a's server after the stop: %+v", s)
		}
	}
}
