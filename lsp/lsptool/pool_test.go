package lsptool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/builtin-tools/builtin-tools/files"
	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/pathguard"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

// Issue 19 §3: the diagnostics after a write started one goroutine per
// written file, all at once; a patch of 40 files checks at most
// four of them at a time (writeWorkers), and every one of them. The
// checks are held by the test in a synctest bubble: at each step every
// goroutine of the call is blocked, so the count of checks under way is
// exact, not what a sleep happened to let overlap.
func TestDiagnosticsOnWriteArePooled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var now, checked atomic.Int32
		release := make(chan struct{})
		checkWritten = func(s *lsp.Supervisor, ctx context.Context, at pathguard.Path, together bool) (diag.WriteCheck, error) {
			now.Add(1)
			<-release
			checked.Add(1)
			now.Add(-1)
			return diag.WriteCheck{}, nil
		}
		defer func() { checkWritten = (*lsp.Supervisor).CheckWritten }()

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
		type answer struct {
			res *mcp.CallToolResult
			err error
		}
		answered := make(chan answer, 1)
		go func() {
			res, err := r.Call(t.Context(), tiers.Normal, "apply_patch", args)
			answered <- answer{res, err}
		}()
		for left := 40; left > 0; left-- {
			synctest.Wait()
			if n := now.Load(); n != int32(min(left, 4)) {
				t.Fatalf("with %d files left to check, %d checks are under way; want %d", left, n, min(left, 4))
			}
			release <- struct{}{}
		}
		a := <-answered
		if a.err != nil || a.res.IsError {
			t.Fatalf("apply_patch: %v %s", a.err, registry.ResultText(a.res))
		}
		if checked.Load() != 40 {
			t.Errorf("checked %d of 40 files", checked.Load())
		}
	})
}
