package lsptool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/files"
	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/pathguard"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// Issue 19 §3: the diagnostics after a write started one goroutine per
// written file, all at once; a patch of 40 files checks at most
// four of them at a time (writeWorkers), and every one of them.
func TestDiagnosticsOnWriteArePooled(t *testing.T) {
	var now, most, checked atomic.Int32
	checkWritten = func(s *lsp.Supervisor, ctx context.Context, at pathguard.Path) ([]lsp.Diagnostic, error) {
		n := now.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(10 * time.Millisecond)
		checked.Add(1)
		now.Add(-1)
		return nil, nil
	}
	defer func() { checkWritten = (*lsp.Supervisor).AfterWrite }()

	r, err := registry.NewRun(registry.Config{Root: t.TempDir(), Families: []registry.Extension{files.Family, Family}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var patch strings.Builder
	for i := range 40 {
		fmt.Fprintf(&patch, "--- /dev/null\n+++ b/f%d.txt\n@@ -0,0 +1 @@\n+file %d\n", i, i)
	}
	args, _ := json.Marshal(map[string]any{"patch": patch.String()})
	res, err := r.Call(t.Context(), tiers.Normal, "apply_patch", args)
	if err != nil || res.IsError {
		t.Fatalf("apply_patch: %v %s", err, registry.ResultText(res))
	}
	if checked.Load() != 40 || most.Load() > 4 {
		t.Errorf("checked %d of 40 files, at most %d at once; want all, at most 4", checked.Load(), most.Load())
	}
}
