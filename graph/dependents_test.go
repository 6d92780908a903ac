package graph

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// What a change breaks elsewhere (WRT-6): a body edit changes no
// signature; a new parameter, a new result, a changed struct field, a
// changed Python parameter list or class base, and a removed or renamed
// function do, and the files using them are named — callers by their
// edges, a removed function's by its name — the changed file never.
func TestDependents(t *testing.T) {
	root := t.TempDir()
	goLib := "package lib\n\n// T is a total.\ntype T struct {\n\tN int\n}\n\nfunc Total(xs []int) int {\n\tn := 0\n\tfor _, x := range xs {\n\t\tn += x\n\t}\n\treturn n\n}\n\nfunc Other() {}\n"
	pyLib := "class Base:\n    pass\n\n\nclass Cart(Base):\n    def add(self, x):\n        return x\n\n\ndef total(xs):\n    return sum(xs)\n"
	testenv.WriteTree(t, root, map[string]string{
		"go.mod":     "module example.com/m\n",
		"lib/lib.go": goLib,
		"app/a.go":   "package app\n\nimport \"example.com/m/lib\"\n\nfunc A() int { return lib.Total(nil) }\n",
		"app/b.go":   "package app\n\nimport \"example.com/m/lib\"\n\nvar B = lib.T{N: 1}\n",
		"app/c.go":   "package app\n\nimport \"example.com/m/lib\"\n\nfunc C() { lib.Other() }\n",
		"py/lib.py":  pyLib,
		"py/a.py":    "from lib import total, Cart\n\nX = total([1])\nCart().add(2)\n",
	})
	rg := guardOf(t, root)
	h, err := Acquire(rg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	h.Index().Start(nil)
	if !h.Index().Wait(context.Background(), time.Minute) {
		t.Fatal("the index was not built within a minute")
	}
	for _, tc := range []struct {
		name, file, before, after string
		changed, files            []string
	}{
		{"go body", "lib/lib.go", goLib, strings.Replace(goLib, "n += x", "n += 2 * x", 1), nil, nil},
		{"go comment and spacing", "lib/lib.go", goLib, strings.Replace(goLib, "func Total(xs []int) int {", "func Total(xs  []int)  int {", 1), nil, nil},
		{"go parameter", "lib/lib.go", goLib, strings.Replace(goLib, "func Total(xs []int) int {", "func Total(xs []int, k int) int {", 1), []string{"Total"}, []string{"app/a.go"}},
		{"go result", "lib/lib.go", goLib, strings.Replace(goLib, "func Total(xs []int) int {", "func Total(xs []int) (int, error) {", 1), []string{"Total"}, []string{"app/a.go"}},
		{"go field", "lib/lib.go", goLib, strings.Replace(goLib, "\tN int\n", "\tN int64\n", 1), []string{"T"}, []string{"app/b.go"}},
		{"go removed", "lib/lib.go", goLib, strings.Replace(goLib, "func Other() {}\n", "", 1), []string{"Other"}, []string{"app/c.go"}},
		{"go renamed", "lib/lib.go", goLib, strings.Replace(goLib, "func Other()", "func Another()", 1), []string{"Other"}, []string{"app/c.go"}},
		{"python body", "py/lib.py", pyLib, strings.Replace(pyLib, "return sum(xs)", "return sum(xs) + 0", 1), nil, nil},
		{"python parameter", "py/lib.py", pyLib, strings.Replace(pyLib, "def total(xs):", "def total(xs, k):", 1), []string{"total"}, []string{"py/a.py"}},
		{"python method", "py/lib.py", pyLib, strings.Replace(pyLib, "def add(self, x):", "def add(self, x, y):", 1), []string{"Cart.add"}, []string{"py/a.py"}},
		{"python base", "py/lib.py", pyLib, strings.Replace(pyLib, "class Cart(Base):", "class Cart:", 1), []string{"Cart"}, []string{"py/a.py"}},
		{"not indexed", "notes.txt", "a", "b", nil, nil},
	} {
		d, err := h.Dependents(context.Background(), tc.file, []byte(tc.before), []byte(tc.after), 20)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !slices.Equal(d.Changed, tc.changed) || !slices.Equal(d.Files, tc.files) || d.More != 0 {
			t.Errorf("%s: want changed %v in files %v; got %+v", tc.name, tc.changed, tc.files, d)
		}
	}
	// The bound: what is over it is counted.
	d, err := h.Dependents(context.Background(), "lib/lib.go", []byte(goLib), []byte(strings.NewReplacer("func Total(xs []int)", "func Total()", "func Other()", "func Other(x int)").Replace(goLib)), 1)
	if err != nil || len(d.Files) != 1 || d.More != 1 {
		t.Errorf("bound 1 of 2 files: want 1 file and 1 more; got %+v, %v", d, err)
	}
}
