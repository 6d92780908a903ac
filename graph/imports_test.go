package graph

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/languages"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// copyLanguages writes the bundled languages under a new folder with one
// language's language.json keys changed (a nil value drops the key), for
// Options.QueryDirs.
func copyLanguages(t *testing.T, id string, set map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	err := fs.WalkDir(languages.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := languages.FS.ReadFile(p)
		if err != nil {
			return err
		}
		rel := p
		if rel == id+"/language.json" {
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				return err
			}
			for k, v := range set {
				if v == nil {
					delete(m, k)
				} else {
					m[k] = v
				}
			}
			if data, err = json.Marshal(m); err != nil {
				return err
			}
		}
		out := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// The import rules read their data from language.json: the same Python
// tree resolves to __init__.py with the bundled settings and to
// __pkg__.py with a copy whose init_file and resolve name that file.
func TestImportRuleDataFromLanguageJSON(t *testing.T) {
	files := map[string]string{
		"pkg/__init__.py":     "def helper():\n    pass\n",
		"pkg/__pkg__.py":      "def helper():\n    pass\n",
		"pkg/sub/__init__.py": "def f():\n    pass\n",
		"pkg/sub/__pkg__.py":  "def f():\n    pass\n",
		"main.py":             "from pkg import helper\n\nhelper()\n",
		"pkg/m.py":            "from .sub import f\n\nf()\n",
	}
	dump := func(opts Options) string {
		root := t.TempDir()
		testenv.WriteTree(t, root, files)
		return buildRootOpts(t, root, opts).Dump()
	}
	check := func(dump string, want, not []string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(dump, w) {
				t.Errorf("no %q in:\n%s", w, dump)
			}
		}
		for _, w := range not {
			if strings.Contains(dump, w) {
				t.Errorf("%q in:\n%s", w, dump)
			}
		}
	}
	check(dump(Options{}),
		[]string{"-> import helper (pkg/__init__.py:1)", "-> import f (pkg/sub/__init__.py:1)"},
		[]string{"__pkg__.py:1)"})
	qd := copyLanguages(t, "python", map[string]any{"init_file": "__pkg__", "resolve": []string{".py", "/__pkg__.py"}})
	check(dump(Options{QueryDirs: []string{qd}}),
		[]string{"-> import helper (pkg/__pkg__.py:1)", "-> import f (pkg/sub/__pkg__.py:1)"},
		[]string{"__init__.py:1)"})

	// TypeScript's ./b.js names b.ts by replace_extensions; without the
	// key it names only b.js.
	files = map[string]string{
		"b.ts": "export function g() {}\n",
		"a.ts": "import { g } from './b.js';\n\ng();\n",
	}
	check(dump(Options{}), []string{"-> import g (b.ts:1)"}, nil)
	qd = copyLanguages(t, "typescript", map[string]any{"replace_extensions": nil})
	check(dump(Options{QueryDirs: []string{qd}}), []string{"g in (top level) -> unresolved"}, []string{"-> import g (b.ts:1)"})
}

// language.json's import settings are checked: an unknown rule is an error
// naming the registered ones, and a rule's data must be what it reads.
func TestImportRuleValidation(t *testing.T) {
	e := astgrep.NewEngine(astgrep.Options{})
	defer e.Close()
	for _, c := range []struct {
		set  map[string]any
		want string
	}{
		{map[string]any{"imports": "dotty"}, `language python: imports "dotty" is not one of dotted, go, include, none, relative, rust`},
		{map[string]any{"module_separator": nil}, `language python: imports "dotted" needs "module_separator"`},
		{map[string]any{"imports": "go", "module_separator": nil, "init_file": nil}, `language python: imports "go" does not read "resolve"`},
		{map[string]any{"path_root": "crate"}, `language python: imports "dotted" does not read "path_root"`},
	} {
		_, err := lang.Load(e, copyLanguages(t, "python", c.set))
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: got %v, want %s", c.set, err, c.want)
		}
	}
	if _, err := lang.Load(e, copyLanguages(t, "python", nil)); err != nil {
		t.Fatalf("an unchanged copy: %v", err)
	}
}

// The go rule reads module paths from the manifest language.json names.
func TestImportRuleManifestFromLanguageJSON(t *testing.T) {
	files := map[string]string{
		"mod.txt":     "module example.com/m\n",
		"pkg/p.go":    "package pkg\n\nfunc F() {}\n",
		"cmd/main.go": "package main\n\nimport \"example.com/m/pkg\"\n\nfunc main() { pkg.F() }\n",
	}
	root := t.TempDir()
	testenv.WriteTree(t, root, files)
	if d := buildRoot(t, root).Dump(); strings.Contains(d, "-> exact pkg.F (pkg/p.go:3)") {
		t.Errorf("mod.txt read as a manifest by the bundled go rule:\n%s", d)
	}
	qd := copyLanguages(t, "go", map[string]any{"manifest": "mod.txt"})
	root = t.TempDir()
	testenv.WriteTree(t, root, files)
	if d := buildRootOpts(t, root, Options{QueryDirs: []string{qd}}).Dump(); !strings.Contains(d, "pkg.F in main.main -> exact pkg.F (pkg/p.go:3)") {
		t.Errorf("the manifest named in language.json was not read:\n%s", d)
	}
}

// An import without an alias binds the package name most of the folder's
// files declare, whatever order they were read in: a generator beside
// them (package main, //go:build ignore, as crypto/md5/gen.go) does not
// name the package.
func TestGoImportNameIgnoresGenerator(t *testing.T) {
	dumpHas(t, map[string]string{
		"go.mod":       "module m\n",
		"md5/a_gen.go": "//go:build ignore\n\npackage main\n\nfunc main() {}\n",
		"md5/md5.go":   "package md5\n\nfunc Sum() {}\n",
		"md5/x.go":     "package md5\n\nfunc helper() {}\n",
		"use/use.go":   "package use\n\nimport \"m/md5\"\n\nfunc F() { md5.Sum() }\n",
	}, []string{"call use/use.go:5 md5.Sum in use.F -> exact md5.Sum (md5/md5.go:3)"})
}

// from . import f names f in the package's own init file (it was
// "external: ." for any package below the root).
func TestDottedImportOfOwnPackage(t *testing.T) {
	dumpHas(t, map[string]string{
		"pkg/__init__.py": "def helper():\n    pass\n",
		"pkg/m.py":        "from . import helper\n\nhelper()\n",
		"pkg/sub/n.py":    "from .. import helper\n\nhelper()\n",
	}, []string{"call pkg/m.py:3 helper in (top level) -> import helper (pkg/__init__.py:1)", "call pkg/sub/n.py:3 helper in (top level) -> import helper (pkg/__init__.py:1)"})
}
