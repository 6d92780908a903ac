//go:build cgo

package lsptool_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// R17: a rename preview that would make a file larger than the 16 MiB a
// staged edit may write was refused as "the template's captures repeat
// too much text", ast_edit's words for its rewrite template; the refusal
// says it is this rename, and nothing is staged or written.
func TestRenamePreviewOverTheSizeLimit(t *testing.T) {
	r, root := previewRun(t, builtintools.Options{})
	var b strings.Builder
	b.WriteString("package shop\n\nfunc F() {}\n\nfunc useMany() {\n")
	for range 1000 {
		b.WriteString("\tF()\n")
	}
	b.WriteString("}\n")
	line := "// " + strings.Repeat("x", 1000) + "\n"
	for b.Len() < 16<<20-600_000 {
		b.WriteString(line)
	}
	big := b.String()
	if err := os.WriteFile(filepath.Join(root, "big.go"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	long := "G" + strings.Repeat("g", 999)
	text, isErr := call(t, r, tiers.Normal, "lsp_rename", map[string]any{"file": "big.go", "line": 3, "symbol": "F", "new_name": long, "preview": true})
	want := fmt.Sprintf("nothing was staged: renaming %q to %q would make big.go ", "F", long[:79]+"…")
	if !isErr || !strings.HasPrefix(text, want) || !strings.HasSuffix(text, "bytes long, over the limit of 16 MiB for one file an edit writes") {
		t.Fatalf("(error=%v) %.600s", isErr, text)
	}
	if readRoot(t, root, "big.go") != big {
		t.Fatal("written")
	}
}
