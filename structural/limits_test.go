package structural_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/internal/test/runtest"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// N5: an ast_edit rewrite that expands to gigabytes (a 6 MB template of
// "$A, " over 2,000 matches asked for 4 GB) killed serve with "out of
// memory". The template is capped as the pattern is, and a file's result
// is refused once it would pass 16 MiB, before it is built.
func TestRewriteOverLimitsRefusedBeforeItIsBuilt(t *testing.T) {
	var src strings.Builder
	src.WriteString("package p\n\nfunc f() {\n")
	arg := `"` + strings.Repeat("x", 10_000) + `"`
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&src, "\tg(%s)\n", arg)
	}
	src.WriteString("}\n\nfunc g(...string) {}\n")
	r := newRun(t, map[string]string{"p/f.go": src.String()}, builtintools.Options{})
	for _, tc := range []struct {
		rewrite string
		want    string
	}{
		{strings.Repeat("$A, ", 1_500_000), "over the limit of 8192 bytes"},
		{"g(" + strings.Repeat("$A, ", 300) + "$A)", "over the limit of 200"},
		// 200 copies of a 10 KB capture in each of 100 matches: 200 MB.
		{"g(" + strings.Repeat("$A, ", 199) + "$A)", "larger than 16 MiB"},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		text, isErr := runtest.Call(t, r, tiers.Normal, "ast_edit", map[string]any{"pattern": "g($A)", "rewrite": tc.rewrite, "language": "go"})
		runtime.ReadMemStats(&after)
		if !isErr || !strings.Contains(text, tc.want) || !strings.Contains(text, "nothing was staged") && !strings.Contains(text, "rewrite is too large") {
			t.Errorf("rewrite of %d bytes: (error=%v) %.300s", len(tc.rewrite), isErr, text)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 512<<20 {
			t.Errorf("rewrite of %d bytes: the refused ast_edit allocated %d MiB", len(tc.rewrite), n>>20)
		}
	}
}
