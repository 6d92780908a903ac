package lsptool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// BenchmarkWriteWithDiagnostics times what an agent waits for: from the
// write call to its result carrying the new diagnostic, with gopls warm.
// Each write introduces a different undefined name, so each result must
// report one (WRT-1).
//
//	go test -run XXX -bench WriteWithDiagnostics -benchtime 30x ./lsp/lsptool/
func BenchmarkWriteWithDiagnostics(b *testing.B) {
	r := goRun(b)
	ctx := context.Background()
	warm, _ := json.Marshal(map[string]any{"operation": "diagnostics", "file": "cart.go"})
	if res, err := r.Call(ctx, tiers.Normal, "lsp", warm); err != nil || res.IsError {
		b.Fatalf("warming gopls: %v %s", err, registry.ResultText(res))
	}
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("Itemz%d", i)
		args, _ := json.Marshal(map[string]any{"path": "cart.go", "content": strings.Replace(cartGo, "c.Items)", "c."+name+")", 1)})
		start := time.Now()
		res, err := r.Call(ctx, tiers.Normal, "write", args)
		times = append(times, time.Since(start))
		if err != nil || !strings.Contains(registry.ResultText(res), name) {
			b.Fatalf("write %d: %v %q", i, err, registry.ResultText(res))
		}
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Milliseconds()), "median-ms")
	b.ReportMetric(float64(times[len(times)*9/10].Milliseconds()), "p90-ms")
}
