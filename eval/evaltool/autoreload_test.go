package evaltool_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/builtin-tools/builtin-tools/eval"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// Issue 22 §2: with %load_ext autoreload and %autoreload 2, a module of
// the root edited on disk is reloaded before the next cell: calls through
// the module, through a name imported from it and through an instance made
// before the edit all run the new code. A module edited into a syntax
// error is reported and keeps the old code; %autoreload 0 stops it.
func TestAutoreload(t *testing.T) {
	r := newRun(t, eval.Config{})
	mod := filepath.Join(r.Root(), "shapes.py")
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(mod, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("def area(w, h):\n    return w * h\n\nclass Box:\n    def size(self):\n        return 'small'\n")
	_, text := cell(t, r, tiers.Normal, "%load_ext autoreload\n%autoreload 2\nimport shapes\nfrom shapes import area\nbox = shapes.Box()\n[shapes.area(2, 3), area(2, 3), box.size()]")
	want(t, text, "[6, 6, 'small']")
	// The same size and the same second as the first version: the
	// bytecode cache would not see the change.
	write("def area(w, h):\n    return w + h\n\nclass Box:\n    def size(self):\n        return 'large'\n")
	_, text = cell(t, r, tiers.Normal, "[shapes.area(2, 3), area(2, 3), box.size()]")
	want(t, text, "[5, 5, 'large']")
	write("def area(w, h):\n    return w +\n")
	_, text = cell(t, r, tiers.Normal, "area(2, 3)")
	want(t, text, "[autoreload of shapes failed: ", "SyntaxError", "\n5")
	_, text = cell(t, r, tiers.Normal, "%autoreload 0")
	write("def area(w, h):\n    return w - h\n")
	_, text = cell(t, r, tiers.Normal, "area(2, 3)")
	want(t, text, "\n5")
}

// Bad uses of the autoreload magics say what to do.
func TestAutoreloadErrors(t *testing.T) {
	r := newRun(t, eval.Config{})
	_, text := cell(t, r, tiers.Normal, "%autoreload 2")
	want(t, text, "%autoreload needs `%load_ext autoreload` first")
	_, text = cell(t, r, tiers.Normal, "%load_ext line_profiler")
	want(t, text, "%load_ext line_profiler: this kernel is not IPython; the one extension it has is autoreload")
	_, text = cell(t, r, tiers.Normal, "%load_ext autoreload\n%autoreload 1")
	want(t, text, "%autoreload 1: the modes are 0 (off), 2 (all")
}
