package lsptool_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/runtest"
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
	if text, isErr := runtest.Call(b, r, tiers.Normal, "lsp", map[string]any{"operation": "diagnostics", "file": "cart.go"}); isErr {
		b.Fatalf("warming gopls: %s", text)
	}
	name := func(i int) string { return fmt.Sprintf("Itemz%d", i) }
	runtest.Latencies(b, r, tiers.Normal, "write", func(i int) map[string]any {
		return map[string]any{"path": "cart.go", "content": strings.Replace(cartGo, "c.Items)", "c."+name(i)+")", 1)}
	}, func(i int, text string, _ bool) bool { return strings.Contains(text, name(i)) })
}
