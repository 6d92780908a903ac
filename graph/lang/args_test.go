package lang

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/builtin-tools/builtin-tools/graph/record"
)

// A function passed to a call is recorded with its place among the call's
// arguments and the call it is passed to; a parameter with its place in
// its function's list (Go's a, b int are two; a receiver is none; a
// destructured parameter takes a place).
func TestArgumentsAndParameters(t *testing.T) {
	e, s := bundled(t)
	for _, c := range []struct {
		lang, src    string
		args, params []string
	}{
		{"go", "package p\n\nfunc (s *S) Run(a, b int, f func(), g func()) { f(); g() }\n\nfunc x() { s.Run(1, 2, F, pkg.G); H(Run(F)) }\n",
			[]string{"F arg 3 of Run", "G arg 4 of Run", "F arg 1 of Run"}, []string{"a 1", "b 2", "f 3", "g 4"}},
		{"python", "def run(self, f, *, key=None):\n    f()\n\nrun(None, g)\nobj.run(mod.h)\nobj.run(key=k)\n",
			[]string{"g arg 2 of run", "h arg 1 of run", "k arg key of run"}, []string{"f 2", "key 4", "self 1"}},
		{"typescript", "function run({a}: T, f: () => void, g?: X) { f() }\nrun(x, h, this.m)\n",
			[]string{"x arg 1 of run", "h arg 2 of run", "m arg 3 of run"}, []string{"f 2", "g 3"}},
		{"javascript", "function run(a, f = null) { f() }\nrun(a, h); obj.run(this.m)\n",
			[]string{"a arg 1 of run", "h arg 2 of run", "m arg 1 of run"}, []string{"a 1", "f 2"}},
		// A parameter handed on is kept when it may hold a function.
		{"go", "package p\n\nfunc Run(n int, f func(), h Handler) { Next(n, f, h) }\n",
			[]string{"f arg 2 of Next", "h arg 3 of Next"}, []string{"f 2", "h 3", "n 1"}},
		{"c", "void run(int n, void (*f)(int), handler g) { f(n); (*g)(n); }\nvoid x(void) { run(1, h, &k); }\n",
			[]string{"h arg 2 of run", "k arg 3 of run"}, []string{"f 2", "g 3", "n 1"}},
		{"cpp", "void run(int n, std::function<void(int)> f) { f(n); }\nvoid x() { run(1, h); s.run(2, ns::k); }\n",
			[]string{"h arg 2 of run", "k arg 2 of run"}, []string{"f 2", "n 1"}},
		{"rust", "impl S { fn run(&self, n: i32, f: impl Fn(i32)) { f(n) } }\nfn x(s: S) { s.run(1, h); S::run(&s, 2, m::k); }\n",
			[]string{"h arg 2 of run", "k arg 3 of run"}, []string{"f 3", "n 2", "s 1", "self 1"}},
	} {
		t.Run(c.lang, func(t *testing.T) {
			l := s.Lookup(c.lang)
			r, err := e.CaptureSnippet(context.Background(), l.Query(), []byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			rec := l.Extractor().Extract([]byte(c.src), r)
			var args, params []string
			for _, rf := range rec.Refs {
				if rf.Arg == 0 {
					continue
				}
				call := "?"
				for _, o := range rec.Refs {
					if o.At == rf.ArgOf() && o.Kind == record.RefCall {
						call = rec.Strs[o.Name]
					}
				}
				place := fmt.Sprint(rf.Arg)
				if rf.Arg == record.ArgByName {
					place = rec.ArgKey(&rf)
				}
				args = append(args, fmt.Sprintf("%s arg %s of %s", rec.Strs[rf.Name], place, call))
			}
			for _, lc := range rec.Locals {
				if lc.Param > 0 {
					params = append(params, fmt.Sprintf("%s %d", rec.Strs[lc.Name], lc.Param))
				}
			}
			slices.Sort(params)
			if !slices.Equal(args, c.args) {
				t.Errorf("arguments: got %q, want %q", args, c.args)
			}
			if !slices.Equal(params, c.params) {
				t.Errorf("parameters: got %q, want %q", params, c.params)
			}
		})
	}
}
