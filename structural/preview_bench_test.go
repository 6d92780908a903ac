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
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// BenchmarkPreview40 times an ast_edit whose rewrite touches 40 files of a
// Go module on a warm gopls — stage, preview (40 unsaved versions, their
// diagnostics, the disk's text back) — and discards it; every preview
// must find the 40 new errors (issue 31's target: ≤ 3 s):
//
//	go test -run XXX -bench Preview40 -benchtime 10x ./structural/
func BenchmarkPreview40(b *testing.B) {
	testenv.LookPath(b, "gopls")
	root := b.TempDir()
	files := map[string]string{
		"go.mod":    "module example.com/wide\n\ngo 1.22\n",
		"scale.go":  "package wide\n\n// Scale doubles x.\nfunc Scale(x int) int { return 2 * x }\n",
		"helper.go": "package wide\n\nfunc helper() int { return 1 }\n",
	}
	for i := range 40 {
		files[fmt.Sprintf("use%02d.go", i)] = fmt.Sprintf("package wide\n\n// Use%d scales %d.\nfunc Use%d() int {\n\treturn Scale(%d) + helper()\n}\n", i, i, i, i)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	r, err := builtintools.NewRun(builtintools.Options{Root: root})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	ctx := context.Background()
	call := func(tool string, args map[string]any) (string, map[string]any) {
		raw, _ := json.Marshal(args)
		res, err := r.Call(ctx, tiers.Normal, tool, raw)
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %s", tool, err, registry.ResultText(res))
		}
		var m map[string]any
		sc, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(sc, &m)
		return registry.ResultText(res), m
	}
	// Warm: gopls loads the module and every file once.
	call("lsp", map[string]any{"operation": "diagnostics", "file": "scale.go"})
	edit := map[string]any{"pattern": "Scale($X)", "rewrite": "Scale($X, 1)", "language": "go"}
	text, _ := call("ast_edit", edit)
	call("resolve", map[string]any{"edit_id": editID(b, text), "action": "discard"})
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		text, m := call("ast_edit", edit)
		times = append(times, time.Since(start))
		b.StopTimer()
		pv, _ := m["preview"].(map[string]any)
		fs, _ := pv["files"].([]any)
		broken := 0
		for _, f := range fs {
			if nw, _ := f.(map[string]any)["new"].([]any); len(nw) > 0 {
				broken++
			}
		}
		if len(fs) != 40 || broken != 40 {
			b.Fatalf("preview %d: want 40 files each with a new error; got %d files, %d with new errors:\n%s", i, len(fs), broken, text)
		}
		call("resolve", map[string]any{"edit_id": editID(b, text), "action": "discard"})
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2])/float64(time.Millisecond), "median-ms")
	b.ReportMetric(float64(times[len(times)-1])/float64(time.Millisecond), "max-ms")
}

func editID(b *testing.B, text string) string {
	i := strings.Index(text, `edit_id "`)
	if i < 0 {
		b.Fatalf("no edit id in:\n%s", text)
	}
	rest := text[i+len(`edit_id "`):]
	return rest[:strings.IndexByte(rest, '"')]
}
