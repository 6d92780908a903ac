package lsptool_test

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/lsp/pool"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// goplsIn lists the gopls processes working in root (their folder).
func goplsIn(root string) []int { return proc.Working("gopls", root) }

// serversIn lists the live processes whose command line holds name and
// that work in root (their folder) or, for a server that changes its
// folder (pyright), descend from this process.
func serversIn(root, name string) []int {
	if root != "" {
		return proc.Working(name, root)
	}
	var pids []int
	for _, pid := range proc.Working(name, "") {
		if descends(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// descends reports whether pid is a descendant of this process.
func descends(pid int) bool {
	for range 64 {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		_, rest, _ := strings.Cut(string(stat), ") ")
		f := strings.Fields(rest)
		if len(f) < 2 {
			return false
		}
		if pid, _ = strconv.Atoi(f[1]); pid == os.Getpid() {
			return true
		} else if pid <= 1 {
			return false
		}
	}
	return false
}

// sharedRun opens a run over root with the files and lsp families, its
// servers in pool.
func sharedRun(t testing.TB, root string, pl *pool.Pool, trusted bool) *registry.Run {
	t.Helper()
	return openRun(t, registry.Config{Root: root, Trusted: trusted, Settings: map[string]any{"lsp": lsp.Config{Pool: pl}}})
}

// status is a run's `lsp status`, structured.
func status(t *testing.T, r *registry.Run) *answer.Status {
	t.Helper()
	text, out := decodeCall[struct {
		Status *answer.Status `json:"status"`
	}](t, r, tiers.Plan, "lsp", map[string]any{"operation": "status"})
	if out.Status == nil {
		t.Fatalf("status: no status in %s", text)
	}
	return out.Status
}

// goplsRow is status's running gopls, if any.
func goplsRow(st *answer.Status) *answer.RunningServer {
	for _, s := range st.Servers {
		if s.ID == "gopls" && len(s.Running) > 0 {
			return &s.Running[0]
		}
	}
	return nil
}

// LSP-7: four runs of one process over one Go module share one gopls; each
// keeps its own ledger and status; an untrusted run beside trusted ones
// gets its own; the server stops with the last run that holds it.
func TestRunsShareOneServer(t *testing.T) {
	testenv.LookPath(t, "gopls")
	root := goRoot(t)
	pl := pool.New()
	var runs []*registry.Run
	var firsts []time.Duration
	for i := range 4 {
		r := sharedRun(t, root, pl, true)
		runs = append(runs, r)
		t0 := time.Now()
		text, isErr := call(t, r, tiers.Plan, "lsp", map[string]any{"operation": "references", "file": "cart.go", "line": 7, "symbol": "Total"})
		firsts = append(firsts, time.Since(t0))
		if isErr || !strings.Contains(text, "cart.go:11") {
			t.Fatalf("run %d: references: %q", i+1, text)
		}
	}
	for i, r := range runs {
		name := "f" + string(rune('1'+i)) + ".go"
		text, isErr := call(t, r, tiers.Normal, "write", map[string]any{"path": name, "content": "package shop\n\nfunc f" + string(rune('1'+i)) + "() int { return (&Cart{}).Total() }\n"})
		if isErr || strings.Contains(text, "New diagnostics") || strings.Contains(text, "Not checked") {
			t.Fatalf("run %d: write: %q", i+1, text)
		}
	}
	t.Logf("first answer (references) of each run: %v (the 2nd–4th on the warm shared server)", firsts)
	if pids := goplsIn(root); len(pids) != 1 {
		t.Fatalf("4 runs over one module: want 1 gopls, got %d (%v)", len(pids), pids)
	}
	pid := 0
	for i, r := range runs {
		row := goplsRow(status(t, r))
		if row == nil || row.Clients != 4 || (pid != 0 && row.PID != pid) || row.MemoryKB <= 0 {
			t.Fatalf("run %d: status: %+v", i+1, row)
		}
		pid = row.PID
		if i == 0 {
			t.Logf("the shared gopls: pid %d, %d runs, %d KiB resident", row.PID, row.Clients, row.MemoryKB)
		}
	}

	// Each run's ledger is its own: a break written by run 1 is new to it;
	// run 2 writing the same break is told too, as it was never shown it;
	// run 1 writing it again is not.
	broken := strings.Replace(cartGo, "return len(c.Items)", "return len(c.Itemz)", 1)
	text, _ := call(t, runs[0], tiers.Normal, "write", map[string]any{"path": "cart.go", "content": broken})
	if !strings.Contains(text, "New diagnostics") || !strings.Contains(text, "Itemz") {
		t.Fatalf("run 1's break: %q", text)
	}
	text, vs, _ := callChecked(t, runs[1], "write", map[string]any{"path": "cart.go", "content": broken + "\n"})
	switch {
	case len(vs) == 1 && vs[0].State == diag.TimedOut:
		// A loaded machine: the ledger's part is not told by this write.
		t.Logf("run 2's write timed out: %+v", vs[0])
	case !strings.Contains(text, "New diagnostics") || !strings.Contains(text, "Itemz"):
		t.Fatalf("run 2 was not told of a break its ledger never held: %q %+v", text, vs)
	}
	text, _ = call(t, runs[0], tiers.Normal, "write", map[string]any{"path": "cart.go", "content": broken})
	if strings.Contains(text, "New diagnostics") {
		t.Fatalf("run 1 was told again of a break it had been shown: %q", text)
	}

	// An untrusted run beside the trusted ones gets a gopls of its own.
	untrusted := sharedRun(t, root, pl, false)
	if text, isErr := call(t, untrusted, tiers.Plan, "lsp", map[string]any{"operation": "hover", "file": "cart.go", "line": 7, "symbol": "Total"}); isErr {
		t.Fatalf("untrusted hover: %q", text)
	}
	row := goplsRow(status(t, untrusted))
	if row == nil || row.PID == pid || row.Clients != 1 {
		t.Fatalf("untrusted run's gopls: %+v beside the trusted runs' pid %d", row, pid)
	}
	if pids := goplsIn(root); len(pids) != 2 {
		t.Fatalf("trusted and untrusted runs: want 2 gopls, got %v", pids)
	}
	untrusted.Close()

	// Closing 3 of the 4 keeps the server; closing the 4th stops it.
	for _, r := range runs[:3] {
		r.Close()
	}
	if row := goplsRow(status(t, runs[3])); row == nil || row.PID != pid || row.Clients != 1 {
		t.Fatalf("after 3 of 4 runs closed: %+v", row)
	}
	if text, isErr := call(t, runs[3], tiers.Plan, "lsp", map[string]any{"operation": "hover", "file": "cart.go", "line": 7, "symbol": "Total"}); isErr {
		t.Fatalf("the 4th run after the others closed: %q", text)
	}
	runs[3].Close()
	if pids := goplsIn(root); len(pids) != 0 {
		t.Fatalf("after the last run closed: gopls %v still runs", pids)
	}
	if got := pl.Servers(); len(got) != 0 {
		t.Fatalf("after the last run closed the pool holds %+v", got)
	}
}

// A harness that asks for private servers gets one per run.
func TestPrivateRunsDoNotShare(t *testing.T) {
	testenv.LookPath(t, "gopls")
	root := goRoot(t)
	for range 2 {
		r := openRun(t, registry.Config{Root: root, Settings: map[string]any{"lsp": lsp.Config{Private: true}}})
		if text, isErr := call(t, r, tiers.Plan, "lsp", map[string]any{"operation": "hover", "file": "cart.go", "line": 7, "symbol": "Total"}); isErr {
			t.Fatalf("hover: %q", text)
		}
		if row := goplsRow(status(t, r)); row == nil || row.Clients != 1 {
			t.Fatalf("private run: %+v", row)
		}
	}
	if pids := goplsIn(root); len(pids) != 2 {
		t.Fatalf("two private runs: want 2 gopls, got %v", pids)
	}
}

// Four runs opened at once, each asking references and writing a file
// before any server runs, start one gopls between them.
func TestConcurrentRunsStartOneServer(t *testing.T) {
	testenv.LookPath(t, "gopls")
	root := goRoot(t)
	pl := pool.New()
	errs := make(chan string, 4)
	for i := range 4 {
		r := sharedRun(t, root, pl, false)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := r.Call(ctx, tiers.Normal, "lsp", []byte(`{"operation": "references", "file": "cart.go", "line": 7, "symbol": "Total"}`))
			if err != nil || res.IsError || !strings.Contains(registry.ResultText(res), "cart.go:11") {
				errs <- "references: " + registry.ResultText(res)
				return
			}
			name := "g" + strconv.Itoa(i)
			args, _ := json.Marshal(map[string]any{"path": name + ".go", "content": "package shop\n\nfunc " + name + "() int { return (&Cart{}).Total() }\n"})
			res, err = r.Call(ctx, tiers.Normal, "write", args)
			if err != nil || res.IsError || strings.Contains(registry.ResultText(res), "New diagnostics") {
				errs <- "write: " + registry.ResultText(res)
				return
			}
			errs <- ""
		}()
	}
	for range 4 {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
	if pids := goplsIn(root); len(pids) != 1 {
		t.Fatalf("4 runs at once: want 1 gopls, got %v", pids)
	}
	if got := pl.Servers(); len(got) != 1 || got[0].Clients != 4 {
		t.Fatalf("the pool: %+v", got)
	}
}

// Three runs over one Python project share one pyright, and the last to
// close stops it.
func TestRunsShareOnePyright(t *testing.T) {
	testenv.LookPath(t, "pyright-langserver")
	root := testenv.Tree(t, map[string]string{"pyproject.toml": "[project]\nname = \"shop\"\n",
		"cart.py": "def total(items: list[int]) -> int:\n    return sum(items)\n\n\nprint(total([1, 2]))\n"})
	pl := pool.New()
	var runs []*registry.Run
	for i := range 3 {
		r := sharedRun(t, root, pl, false)
		runs = append(runs, r)
		text, isErr := call(t, r, tiers.Plan, "lsp", map[string]any{"operation": "references", "file": "cart.py", "line": 1, "symbol": "total"})
		if isErr || !strings.Contains(text, "cart.py:5") {
			t.Fatalf("run %d: references: %q", i+1, text)
		}
	}
	if pids := serversIn("", "pyright-langserver"); len(pids) != 1 {
		t.Fatalf("3 runs over one project: want 1 pyright, got %v", pids)
	}
	text, _ := call(t, runs[2], tiers.Normal, "write", map[string]any{"path": "cart.py", "content": "def total(items: list[int]) -> int:\n    return sum(itemz)\n"})
	if !strings.Contains(text, "New diagnostics") || !strings.Contains(text, "itemz") {
		t.Fatalf("run 3's break: %q", text)
	}
	for _, r := range runs {
		r.Close()
	}
	if pids := serversIn("", "pyright-langserver"); len(pids) != 0 {
		t.Fatalf("after the last run closed: pyright %v still runs", pids)
	}
}
