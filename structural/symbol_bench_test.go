package structural_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// BenchmarkEditSymbol times edit_symbol's replace_body (graph lookup,
// parse, parse check, commit) beside edit making the same change by its
// text, on a 200-function Go file, without a language server:
//
//	go test -run XXX -bench EditSymbol -benchtime 20x ./structural/
func BenchmarkEditSymbol(b *testing.B) {
	var src strings.Builder
	src.WriteString("package big\n")
	for i := range 200 {
		fmt.Fprintf(&src, "\n// F%d returns %d.\nfunc F%d(x int) int {\n\treturn x + %d\n}\n", i, i, i, i)
	}
	for _, tool := range []string{"edit_symbol", "edit"} {
		b.Run(tool, func(b *testing.B) {
			r := benchRun(b, src.String())
			ctx := context.Background()
			warm, _ := json.Marshal(map[string]any{"operation": "outline", "file": "big.go"})
			if res, err := r.Call(ctx, tiers.Plan, "code_graph", warm); err != nil || res.IsError {
				b.Fatalf("warming the graph: %v %s", err, registry.ResultText(res))
			}
			times := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				old := fmt.Sprintf("\treturn x + %d\n", 100)
				if i > 0 {
					old = fmt.Sprintf("\treturn x * %d\n", i-1)
				}
				body := fmt.Sprintf("return x * %d", i)
				var args []byte
				if tool == "edit" {
					args, _ = json.Marshal(map[string]any{"path": "big.go", "old_string": old, "new_string": "\t" + body + "\n"})
				} else {
					args, _ = json.Marshal(map[string]any{"symbol": "F100", "operation": "replace_body", "new_text": body})
				}
				start := time.Now()
				res, err := r.Call(ctx, tiers.Normal, tool, args)
				times = append(times, time.Since(start))
				if err != nil || res.IsError {
					b.Fatalf("%s %d: %v %s", tool, i, err, registry.ResultText(res))
				}
			}
			b.StopTimer()
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
			b.ReportMetric(float64(times[len(times)*9/10].Microseconds())/1000, "p90-ms")
		})
	}
}

func benchRun(b *testing.B, src string) *registry.Run {
	root := b.TempDir()
	for name, content := range map[string]string{"go.mod": "module big\n", "big.go": src} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	r, err := builtintools.NewRun(builtintools.Options{Root: root, Without: []string{"lsp"}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	return r
}
