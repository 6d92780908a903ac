package structural_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/internal/test/runtest"
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
			if text, isErr := runtest.Call(b, r, tiers.Plan, "code_graph", map[string]any{"operation": "outline", "file": "big.go"}); isErr {
				b.Fatalf("warming the graph: %s", text)
			}
			runtest.Latencies(b, r, tiers.Normal, tool, func(i int) map[string]any {
				old := fmt.Sprintf("\treturn x + %d\n", 100)
				if i > 0 {
					old = fmt.Sprintf("\treturn x * %d\n", i-1)
				}
				body := fmt.Sprintf("return x * %d", i)
				if tool == "edit" {
					return map[string]any{"path": "big.go", "old_string": old, "new_string": "\t" + body + "\n"}
				}
				return map[string]any{"symbol": "F100", "operation": "replace_body", "new_text": body}
			}, func(_ int, _ string, isErr bool) bool { return !isErr })
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
