package lsptool_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/files"
	"github.com/builtin-tools/builtin-tools/graph/graphtool"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/lsp/lsptool"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// othersCase is a project where one function has callers in three files
// of another package or folder, and an edit that adds a parameter to it.
type othersCase struct {
	server string
	tree   map[string]string
	file   string // the function's file
	old    string // the edit
	new    string
	users  []string // the files whose calls the edit breaks
	want   string   // in each new error's message
}

var othersCases = []othersCase{{
	server: "gopls",
	tree: map[string]string{
		"go.mod":     "module example.com/shop\n\ngo 1.22\n",
		"lib/lib.go": "package lib\n\n// Total adds prices.\nfunc Total(xs []int) int {\n\tn := 0\n\tfor _, x := range xs {\n\t\tn += x\n\t}\n\treturn n\n}\n",
		"app/a.go":   "package app\n\nimport \"example.com/shop/lib\"\n\nfunc A() int { return lib.Total([]int{1}) }\n",
		"app/b.go":   "package app\n\nimport \"example.com/shop/lib\"\n\nfunc B() int { return lib.Total(nil) + 1 }\n",
		"app/c.go":   "package app\n\nimport \"example.com/shop/lib\"\n\nfunc C() int {\n\treturn lib.Total([]int{2, 3})\n}\n",
		"app/d.go":   "package app\n\nfunc D() int { return 4 }\n",
	},
	file: "lib/lib.go", old: "func Total(xs []int) int {", new: "func Total(xs []int, scale int) int {",
	users: []string{"app/a.go", "app/b.go", "app/c.go"}, want: "not enough arguments in call to lib.Total",
}, {
	server: "pyright-langserver",
	tree: map[string]string{
		"pyproject.toml":   "[project]\nname = \"shop\"\nversion = \"0.1.0\"\n",
		"shop/__init__.py": "",
		"shop/lib.py":      "def total(xs):\n    n = 0\n    for x in xs:\n        n += x\n    return n\n",
		"app/__init__.py":  "",
		"app/a.py":         "from shop.lib import total\n\n\ndef a():\n    return total([1])\n",
		"app/b.py":         "from shop import lib\n\n\ndef b():\n    return lib.total([]) + 1\n",
		"app/c.py":         "from shop.lib import total\n\nX = total([2, 3])\n",
	},
	file: "shop/lib.py", old: "def total(xs):", new: "def total(xs, scale):",
	users: []string{"app/a.py", "app/b.py", "app/c.py"}, want: `"scale"`,
}, {
	server: "typescript-language-server",
	tree: map[string]string{
		"package.json":   `{"name": "shop", "version": "0.1.0", "private": true}`,
		"tsconfig.json":  `{"compilerOptions": {"target": "ES2020", "module": "commonjs", "strict": true, "noEmit": true}, "include": ["src"]}`,
		"src/lib/lib.ts": "export function total(xs: number[]): number {\n  let n = 0;\n  for (const x of xs) n += x;\n  return n;\n}\n",
		"src/app/a.ts":   "import { total } from \"../lib/lib\";\n\nexport function a(): number {\n  return total([1]);\n}\n",
		"src/app/b.ts":   "import * as lib from \"../lib/lib\";\n\nexport const b = lib.total([]) + 1;\n",
		"src/app/c.ts":   "import { total } from \"../lib/lib\";\n\nexport function c(): number {\n  return total([2, 3]);\n}\n",
	},
	file: "src/lib/lib.ts", old: "export function total(xs: number[]): number {", new: "export function total(xs: number[], scale: number): number {",
	users: []string{"src/app/a.ts", "src/app/b.ts", "src/app/c.ts"}, want: "Expected 2 arguments, but got 1",
}}

// othersData is a result's diagnostics report as a program reads it,
// with the other files.
type othersData struct {
	Preview struct {
		Others []diag.Verdict `json:"other_files"`
	} `json:"preview"`
	Reports []struct {
		Kind string `json:"kind"`
		Text string `json:"text"`
		Data struct {
			Files   []diag.Verdict      `json:"files"`
			Others  []diag.Verdict      `json:"other_files"`
			Changed map[string][]string `json:"changed"`
		} `json:"data"`
	} `json:"reports"`
}

// Issue 31 §3: an edit that changes a function's signature reports, in
// its own result, the new errors of the callers in other files of another
// package — files no tool had opened — each naming the write, with
// nothing claimed for the files the change does not touch; the edit that
// puts the signature back reports them fixed. Before, those errors were
// reported only when each caller was written later.
func TestSignatureChangeBreaksOtherFiles(t *testing.T) {
	for _, tc := range othersCases {
		t.Run(tc.server, func(t *testing.T) {
			t.Parallel()
			testenv.LookPath(t, tc.server)
			r := openRun(t, registry.Config{Root: testenv.Tree(t, tc.tree), Families: []registry.Extension{files.Family, lsptool.Family, graphtool.Family}})
			for _, d := range r.Degraded() {
				if d.Family == "lsp" && strings.Contains(d.Needs, "Dependents") {
					t.Fatalf("the lsp family is degraded with the code graph in the run: %s", d)
				}
			}

			// Checked first, nothing written: the preview names the
			// callers' new errors too.
			pv := callOthers(t, r, "edit", map[string]any{"path": tc.file, "old_string": tc.old, "new_string": tc.new, "check": true})
			previewed := map[string]diag.Verdict{}
			for _, v := range pv.preview {
				previewed[v.File] = v
			}
			for _, u := range tc.users {
				if v := previewed[u]; v.State != diag.Checked || len(v.New) == 0 || !strings.Contains(v.New[0].Message, tc.want) {
					t.Errorf("preview: %s: want a new error with %q; got %+v\n%s", u, tc.want, v, pv.text)
				}
				expectIn(t, "the preview's text", pv.text, u+":")
			}
			if len(pv.others) != 0 {
				t.Errorf("the check wrote something: %+v", pv.others)
			}

			res := callOthers(t, r, "edit", map[string]any{"path": tc.file, "old_string": tc.old, "new_string": tc.new})
			text, others, changed := res.text, res.others, res.changed
			if len(changed[tc.file]) != 1 {
				t.Errorf("changed: want the function in %s; got %v", tc.file, changed)
			}
			got := map[string]diag.Verdict{}
			for _, v := range others {
				got[v.File] = v
			}
			for _, u := range tc.users {
				v, ok := got[u]
				if !ok {
					t.Errorf("%s: not checked; other files: %+v\n%s", u, others, text)
					continue
				}
				if v.State != diag.Checked || len(v.New) == 0 || v.After == nil || v.After.File != tc.file || v.After.Tool != "edit" {
					t.Errorf("%s: want checked with a new error after the edit of %s; got %+v", u, tc.file, v)
					continue
				}
				if !strings.Contains(v.New[0].Message, tc.want) || v.New[0].Severity != "error" || v.New[0].LineText == "" {
					t.Errorf("%s: want an error with %q and its line quoted; got %+v", u, tc.want, v.New)
				}
				expectIn(t, "the edit's text", text, "In other files", u+":")
			}
			for f, v := range got {
				if len(v.New) > 0 && !slices.Contains(tc.users, f) {
					t.Errorf("%s: the change does not touch it, but it is reported with %+v", f, v.New)
				}
			}

			// Put it back: the callers' errors are reported fixed.
			res = callOthers(t, r, "edit", map[string]any{"path": tc.file, "old_string": tc.new, "new_string": tc.old})
			fixed := 0
			for _, v := range res.others {
				if len(v.New) > 0 {
					t.Errorf("%s: new diagnostics after the signature was put back: %+v", v.File, v.New)
				}
				if slices.Contains(tc.users, v.File) && len(v.Fixed) > 0 {
					fixed++
				}
			}
			if fixed != len(tc.users) {
				t.Errorf("after putting the signature back: want %d callers' files reported fixed; got %+v\n%s", len(tc.users), res.others, res.text)
			}

			// A body edit changes no signature: nothing else is checked.
			res = callOthers(t, r, "edit", map[string]any{"path": tc.file, "old_string": "n += x", "new_string": "n += x + 0"})
			if len(res.others) != 0 || len(res.changed) != 0 || strings.Contains(res.text, "In other files") {
				t.Errorf("a body edit checked other files: %+v %v\n%s", res.others, res.changed, res.text)
			}
		})
	}
}

type othersResult struct {
	text    string
	preview []diag.Verdict
	others  []diag.Verdict
	changed map[string][]string
}

func callOthers(t *testing.T, r *registry.Run, tool string, args map[string]any) othersResult {
	t.Helper()
	text, d := decodeCall[othersData](t, r, tiers.Normal, tool, args)
	out := othersResult{text: text, changed: map[string][]string{}, preview: d.Preview.Others}
	for _, rep := range d.Reports {
		if rep.Kind == "diagnostics" {
			out.others = append(out.others, rep.Data.Others...)
			for f, c := range rep.Data.Changed {
				out.changed[f] = c
			}
		}
	}
	return out
}
