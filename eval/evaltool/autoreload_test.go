package evaltool_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/eval"
	"github.com/builtin-tools/builtin-tools/registry"
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
	if res, text := cell(t, r, tiers.Normal, "%autoreload 0"); res.IsError {
		t.Fatalf("%%autoreload 0: %s", text)
	}
	write("def area(w, h):\n    return w - h\n")
	_, text = cell(t, r, tiers.Normal, "area(2, 3)")
	want(t, text, "\n5")
}

// Bad uses of the autoreload magics say what to do.
func TestAutoreloadErrors(t *testing.T) {
	r := newRun(t, eval.Config{})
	cells(t, r, "",
		check{"%autoreload 2", []string{"%autoreload needs `%load_ext autoreload` first"}},
		check{"%load_ext line_profiler", []string{"%load_ext line_profiler: this kernel is not IPython; the one extension it has is autoreload"}},
		check{"%load_ext autoreload\n%autoreload 1", []string{"%autoreload 1: the modes are 0 (off), 2 (all"}},
	)
}

// R3 (M-1): after a reload that failed (a syntax error, an exception at
// import, an import interrupted by a cancel) and after more than one good
// reload, names imported with `from m import f` and instances made before
// all run the newest code, as IPython's autoreload gives them; before,
// they kept the code of the first version reloaded, silently.
func TestAutoreloadAfterFailure(t *testing.T) {
	version := func(v string) string {
		return "def f():\n    return 'f" + v + "'\n\nclass C:\n    def m(self):\n        return 'm" + v + "'\n"
	}
	bad := map[string]string{
		"syntax": "def f():\n    return 'broken'\n\nclass C(:\n    pass\n",
		"raise":  "def f():\n    return 'half'\n\nclass C:\n    def m(self):\n        return 'half'\n\nraise RuntimeError('not today')\n",
		"cancel": "def f():\n    return 'half'\n\nimport time\nopen('started', 'w').close()\nwhile True:\n    time.sleep(0.05)\n",
	}
	for _, kind := range []string{"syntax", "raise", "cancel"} {
		t.Run(kind, func(t *testing.T) {
			r := newRun(t, eval.Config{Inactivity: time.Hour})
			mod := filepath.Join(r.Root(), "m.py")
			write := func(body string) {
				t.Helper()
				if err := os.WriteFile(mod, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			const probe = "(f(), m.f(), c.m())"
			write(version("1"))
			_, text := cell(t, r, tiers.Normal, "%load_ext autoreload\n%autoreload 2\nimport m\nfrom m import f\nc = m.C()\n"+probe)
			want(t, text, "('f1', 'f1', 'm1')")
			write(version("2"))
			_, text = cell(t, r, tiers.Normal, probe)
			want(t, text, "('f2', 'f2', 'm2')")
			write(bad[kind])
			if kind == "cancel" {
				started := filepath.Join(r.Root(), "started")
				ctx, cancel := context.WithCancel(context.Background())
				go func() { appeared(started); cancel() }()
				res, err := r.Call(ctx, tiers.Normal, "eval", evalArgs("python", probe))
				if err != nil {
					t.Fatal(err)
				}
				want(t, registry.ResultText(res), "Interrupted: the call was cancelled.", "kernel state: preserved")
			} else {
				_, text = cell(t, r, tiers.Normal, probe)
				// The old code is kept whole: the module too.
				failed := map[string]string{"syntax": "[autoreload of m failed: SyntaxError: invalid syntax (m.py line 4); it keeps its old code]",
					"raise": "[autoreload of m failed: RuntimeError: not today (m.py line 8); it keeps its old code]"}[kind]
				want(t, text, failed, "('f2', 'f2', 'm2')")
				_, text = cell(t, r, tiers.Normal, probe)
				want(t, text, "m keeps its code from before cell 3", "('f2', 'f2', 'm2')")
			}
			write(version("3"))
			_, text = cell(t, r, tiers.Normal, probe)
			want(t, text, "('f3', 'f3', 'm3')")
			write(version("4"))
			_, text = cell(t, r, tiers.Normal, probe)
			want(t, text, "('f4', 'f4', 'm4')")
			wantNot(t, text, "autoreload", "a note after good reloads")
		})
	}
}

// R3: a name that still holds an earlier version the reload could not
// update (it changed kind), or an instance of such a class, is named in
// each cell's output until it is rebound.
func TestAutoreloadNamesStaleBindings(t *testing.T) {
	r := newRun(t, eval.Config{})
	mod := filepath.Join(r.Root(), "m.py")
	os.WriteFile(mod, []byte("def f():\n    return 1\n\ndef g():\n    return 2\n\nclass K:\n    pass\n"), 0o644)
	_, text := cell(t, r, tiers.Normal, "%load_ext autoreload\n%autoreload 2\nfrom m import f, g, K\nk = K()\nf() + g()")
	want(t, text, "\n3")
	os.WriteFile(mod, []byte("class f:\n    pass\n\ndef g():\n    return 20\n\nK = 5\n"), 0o644)
	_, text = cell(t, r, tiers.Normal, "g()")
	want(t, text, "[autoreload: f, K, k still hold what m defined before its reload in cell 2 (m.f is now a class; m.K is now an object of type int)]", "\n20")
	_, text = cell(t, r, tiers.Normal, "from m import f\ndel K, k\ng()")
	want(t, text, "[autoreload: f, K, k still hold")
	_, text = cell(t, r, tiers.Normal, "g()")
	wantNot(t, text, "autoreload", "a note after the names were rebound")
}
