package checkout

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// tempRoot is a fresh folder, links resolved, as a run's root is.
func tempRoot(t *testing.T) string {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// open is the checkout at root through a guard of its own.
func open(t *testing.T, root string) *Checkout {
	g, err := pathguard.New(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return New([]string{root}, g)
}

// The marker scan walks as every tool does: a root marker inside a folder
// .gitignore leaves out, or in vendored code, names no server root.
func TestMarkerScanUsesTheWalkPolicy(t *testing.T) {
	root := tempRoot(t)
	for name, text := range map[string]string{
		".gitignore":          "generated/\n",
		"app/go.mod":          "module app\n",
		"generated/x/go.mod":  "module x\n",
		"vendor/dep/go.mod":   "module dep\n",
		"tools/deep/a/go.mod": "module a\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := open(t, root).ScanMarkers(context.Background(), langserver.Table())["gopls"]
	if !slices.Equal(got, []string{"app", "tools/deep/a"}) {
		t.Fatalf("gopls marker folders %v, want app and tools/deep/a", got)
	}
}

// Issue 19 §3: every path a result names is relative to the root —
// pyright's checker output, a server's message — and one outside it stays
// as it is.
func TestRelText(t *testing.T) {
	root := tempRoot(t)
	co := open(t, root)
	for in, want := range map[string]string{
		root + "/main.py:3:26 - error: x":                             "main.py:3:26 - error: x",
		"  " + root + "/pkg/a.py:1:1 - error":                         "  pkg/a.py:1:1 - error",
		"file of " + protocol.FileURI(root) + "/src/a.ts (the index)": "file of src/a.ts (the index)",
		"paths are relative to " + root:                               "paths are relative to " + root,
		"/elsewhere" + root + "/a.go and " + root + "2/b.go":          "/elsewhere" + root + "/a.go and " + root + "2/b.go",
		"/usr/lib/go/src/fmt/print.go and \"" + root + "/x.go\"":      "/usr/lib/go/src/fmt/print.go and \"x.go\"",
	} {
		if got := co.RelText(in); got != want {
			t.Errorf("RelText(%q) = %q, want %q", in, got, want)
		}
	}
	// Paths a server gives from another folder: the root's parent (gopls
	// names a file by its folder and name), or a folder of a file asked
	// about; one under the root, a missing one and a package path stay.
	for _, f := range []string{"shapes.go", "pkg/sub/s.go", "sub/x.go"} {
		os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755)
		os.WriteFile(filepath.Join(root, f), nil, 0o644)
	}
	co.NoteDir(filepath.Join(root, "pkg/sub/s.go"))
	base := filepath.Base(root)
	for in, want := range map[string]string{
		base + "/shapes.go:7:6: renaming this func":       "shapes.go:7:6: renaming this func",
		"sub/s.go:5:6:\tconflicts with sub/s.go:3:6":      "pkg/sub/s.go:5:6:\tconflicts with pkg/sub/s.go:3:6",
		"sub/x.go:1:1 is the root's own":                  "sub/x.go:1:1 is the root's own",
		"(see " + base + "/missing.go) and example.com/m": "(see " + base + "/missing.go) and example.com/m",
		"a/b/c" + base + "/shapes.go":                     "a/b/c" + base + "/shapes.go",
	} {
		if got := co.RelText(in); got != want {
			t.Errorf("RelText(%q) = %q, want %q", in, got, want)
		}
	}
}
