package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/lsp/pool"
)

// LSP-8: --lsp-memory-budget sets the budget of the process's language
// servers, which lsp status reports; a size it cannot read is bad usage.
func TestLSPMemoryBudgetFlag(t *testing.T) {
	// The process pool is the test binary's: put its default back.
	t.Cleanup(func() { pool.Process().SetBudget(0) })
	code, out, errs := runCmd(t, "", "call", "--root", fixture(t), "--lsp-memory-budget", "3GiB", "--json", "lsp", `{"operation": "status"}`)
	if code != 0 {
		t.Fatalf("code %d, %q %q", code, out, errs)
	}
	var res struct {
		Status struct {
			Pool struct {
				BudgetKB int64 `json:"budget_kb"`
				Shared   bool  `json:"shared"`
			} `json:"pool"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Status.Pool.BudgetKB != 3<<20 || !res.Status.Pool.Shared {
		t.Fatalf("%v: %s", err, out)
	}
	code, _, errs = runCmd(t, "", "call", "--root", fixture(t), "--lsp-memory-budget", "lots", "lsp", `{"operation": "status"}`)
	if code != 2 || !strings.Contains(errs, "want a size such as 512MiB") {
		t.Fatalf("code %d, %q", code, errs)
	}
}
