//go:build cgo

package lsptool_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/internal/test/asktest"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

const useGo = `package shop

func useTwice() int {
	c := &Cart{}
	return c.Total() + c.Total()
}
`

// previewRun is a run of every family but the background ones over a Go
// module with two files, on a real gopls; opts adds a policy and a port.
func previewRun(t *testing.T, opts builtintools.Options) (*registry.Run, string) {
	t.Helper()
	testenv.LookPath(t, "gopls")
	root := testenv.Tree(t, map[string]string{"go.mod": goMod, "cart.go": cartGo, "use.go": useGo})
	opts.Root = root
	opts.Without = []string{"code_graph", "debug", "eval", "vibe"}
	r, err := builtintools.NewRun(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, root
}

func readRoot(t *testing.T, root, name string) string {
	t.Helper()
	return testenv.ReadFile(t, filepath.Join(root, name))
}

var editID = regexp.MustCompile(`edit_[0-9]+`)

// lsp_rename with preview stages the server's edit like ast_edit's
// rewrites; resolve accepts it (all files, diagnostics after) or refuses it
// when a file changed since, writing nothing.
func TestRenamePreview(t *testing.T) {
	r, root := previewRun(t, builtintools.Options{})
	args := map[string]any{"file": "cart.go", "line": 7, "symbol": "Total", "new_name": "Len", "preview": true}
	text, isErr := call(t, r, tiers.Normal, "lsp_rename", args)
	if isErr {
		t.Fatalf("preview: %s", text)
	}
	expectHas(t, "preview", text,
		`(proposed) rename "Total" at cart.go:7 to "Len" (gopls): 6 edits in 2 files. Nothing is written yet: call resolve with edit_id "edit_1"`,
		"  cart.go: 4 edits at lines 6, 7, 11\n", "  use.go: 2 edits at line 5\n",
		"--- a/use.go\n+++ b/use.go\n", "-\treturn c.Total() + c.Total()\n+\treturn c.Len() + c.Len()")
	if readRoot(t, root, "cart.go") != cartGo || readRoot(t, root, "use.go") != useGo {
		t.Fatal("a preview wrote a file")
	}
	text, isErr = call(t, r, tiers.Normal, "resolve", map[string]any{"edit_id": "edit_1", "action": "accept"})
	if isErr || !strings.Contains(text, "accepted edit_1: 6 replacements in 2 files written: cart.go, use.go") {
		t.Fatalf("accept: %s", text)
	}
	if got := readRoot(t, root, "use.go"); !strings.Contains(got, "c.Len() + c.Len()") {
		t.Fatalf("use.go after accept:\n%s", got)
	}
	// The server sees the new text: the old name is gone, the new one found.
	text, _ = call(t, r, tiers.Plan, "lsp", map[string]any{"operation": "references", "file": "cart.go", "line": 7, "symbol": "Len"})
	expectHas(t, "references after accept", text, "use.go:5:11: return c.Len() + c.Len()")

	// Staged, then a file changes: accept writes nothing and says how to
	// stage it again.
	text, isErr = call(t, r, tiers.Normal, "lsp_rename", map[string]any{"file": "cart.go", "line": 7, "symbol": "Len", "new_name": "Count", "preview": true})
	id := editID.FindString(text)
	if isErr || id != "edit_2" {
		t.Fatalf("second preview: %s", text)
	}
	changed := strings.Replace(readRoot(t, root, "use.go"), "c := &Cart{}", "c := &Cart{Items: nil}", 1)
	os.WriteFile(filepath.Join(root, "use.go"), []byte(changed), 0o644)
	text, isErr = call(t, r, tiers.Normal, "resolve", map[string]any{"edit_id": id, "action": "accept"})
	if !isErr || !strings.Contains(text, "edit_2 was rejected and nothing was written: use.go changed since the edit was worked out") ||
		!strings.Contains(text, "call lsp_rename with preview again") {
		t.Fatalf("stale accept: %s", text)
	}
	if got := readRoot(t, root, "cart.go"); strings.Contains(got, "Count") {
		t.Fatalf("a stale accept wrote cart.go:\n%s", got)
	}
	// Discarded: nothing written.
	text, _ = call(t, r, tiers.Normal, "lsp_rename", map[string]any{"file": "cart.go", "line": 7, "symbol": "Len", "new_name": "Count", "preview": true})
	id = editID.FindString(text)
	text, isErr = call(t, r, tiers.Normal, "resolve", map[string]any{"edit_id": id, "action": "discard"})
	if isErr || !strings.Contains(readRoot(t, root, "cart.go"), "Len()") {
		t.Fatalf("discard: %s", text)
	}
	// Without preview it writes at once, as before.
	text, isErr = call(t, r, tiers.Normal, "lsp_rename", map[string]any{"file": "cart.go", "line": 7, "symbol": "Len", "new_name": "Size"})
	if isErr || !strings.Contains(text, `renamed "Len" to "Size" (gopls)`) || !strings.Contains(readRoot(t, root, "use.go"), "c.Size()") {
		t.Fatalf("rename without preview: %s", text)
	}
}

// Under write=ask a previewed rename is asked about once, at accept, with
// the rename and its diff on the card; the preview itself is not asked.
func TestRenamePreviewAskedOnceAtAccept(t *testing.T) {
	port := asktest.New("Allow")
	r, root := previewRun(t, builtintools.Options{Ask: port, Policy: registry.Policy{tiers.Write: registry.Ask}})
	text, isErr := call(t, r, tiers.Normal, "lsp_rename", map[string]any{"file": "cart.go", "line": 7, "symbol": "Total", "new_name": "Len", "preview": true})
	if isErr || len(port.Cards()) != 0 {
		t.Fatalf("preview asked %d times: %s", len(port.Cards()), text)
	}
	text, isErr = call(t, r, tiers.Normal, "resolve", map[string]any{"edit_id": editID.FindString(text), "action": "accept"})
	if isErr {
		t.Fatalf("accept: %s", text)
	}
	if len(port.Cards()) != 1 || !strings.Contains(port.Cards()[0], "Allow resolve") ||
		!strings.Contains(port.Cards()[0], `rename "Total" at cart.go:7 to "Len" (gopls): 6 edits in 2 files (cart.go, use.go)`) ||
		!strings.Contains(port.Cards()[0], "+\treturn c.Len() + c.Len()") {
		t.Fatalf("asked %d times: %q", len(port.Cards()), port.Cards())
	}
	if !strings.Contains(readRoot(t, root, "use.go"), "c.Len()") {
		t.Fatal("accepted rename not written")
	}
}

// expectHas fails t for each of wants not in got.
func expectHas(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s: want %q in:\n%s", what, w, got)
		}
	}
}
