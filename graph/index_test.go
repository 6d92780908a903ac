package graph

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/graph/index"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

func callersText(t *testing.T, x tq, sym string) string {
	t.Helper()
	if _, err := x.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	a, err := x.Callers(Spec{Symbol: sym}, 0)
	if err != nil {
		t.Fatalf("callers %s: %v", sym, err)
	}
	return a.Text()
}

// Files changed on disk by something other than the registry are noticed
// at query time: an edited file, a new file in a new folder, a deleted one.
// (graph/index's TestSyncSeesOutsideChanges checks both ways of noticing:
// file events and stamps.)
func TestSyncSeesOutsideChanges(t *testing.T) {
	root := testenv.Tree(t, map[string]string{
		"go.mod": "module m\n",
		"a.go":   "package m\n\nfunc Target() {}\n",
		"b.go":   "package m\n\nfunc B() { Target() }\n",
	})
	x := buildRoot(t, root)
	if st := x.Stats(); !st.Watching {
		t.Logf("no watcher here (%s): the stamp check is what is tested", st.WatchNote)
	}
	if got := callersText(t, x, "Target"); !strings.Contains(got, "1 call sites") {
		t.Fatalf("before: %s", got)
	}
	// Same size, so only the modification time tells.
	time.Sleep(10 * time.Millisecond)
	testenv.WriteTree(t, root, map[string]string{"b.go": "package m\n\nfunc C() { Target() }\n"})
	if got := callersText(t, x, "Target"); !strings.Contains(got, "in m.C ") {
		t.Fatalf("an edit outside the registry was not seen: %s", got)
	}
	testenv.WriteTree(t, root, map[string]string{"sub/deep/c.go": "package deep\n\nimport \"m\"\n\nfunc D() { m.Target() }\n"})
	if got := callersText(t, x, "Target"); !strings.Contains(got, "sub/deep/c.go:5") {
		t.Fatalf("a new file in a new folder was not seen: %s", got)
	}
	if err := os.Remove(filepath.Join(root, "b.go")); err != nil {
		t.Fatal(err)
	}
	if got := callersText(t, x, "Target"); strings.Contains(got, "b.go") || !strings.Contains(got, "1 call sites") {
		t.Fatalf("a deleted file is still answered from: %s", got)
	}
}

// Refresh (what the registry calls after a write) makes the next query
// read the new text without a full re-index.
func TestRefreshAfterWrite(t *testing.T) {
	root := testenv.Tree(t, map[string]string{
		"a.go": "package m\n\nfunc target() {}\n",
		"b.go": "package m\n\nfunc b() {\n\ttarget()\n}\n",
	})
	x := buildRoot(t, root)
	before := x.Snapshot().Gen
	testenv.WriteTree(t, root, map[string]string{"b.go": "package m\n\nfunc b() {\n\ttarget()\n\ttarget()\n}\n"})
	if err := x.Refresh(context.Background(), filepath.Join(root, "b.go")); err != nil {
		t.Fatal(err)
	}
	a, err := x.Callers(Spec{Symbol: "target"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if a.Counts.Total() != 2 {
		t.Fatalf("after the write: %s", a.Text())
	}
	// One file was replaced: two generations (out, in), not a rebuild.
	if x.Snapshot().Gen-before != 2 {
		t.Errorf("a one-file refresh moved the generation by %d", x.Snapshot().Gen-before)
	}
}

// A tree larger than the memory bound is indexed as far as the bound
// allows, and the rest is named in status.
func TestMemoryBound(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := 0; i < 40; i++ {
		files[filepath.Join("p", string(rune('a'+i%26))+strings.Repeat("x", i/26)+".go")] = "package p\n\nfunc F" + strings.Repeat("x", i) + "() { g(); g(); g() }\n"
	}
	testenv.WriteTree(t, root, files)
	x := buildRootOpts(t, root, Options{MaxBytes: 8000})
	st := x.StatusAnswer(0)
	if st.Status.Files == 0 || st.Status.Files >= 40 {
		t.Fatalf("indexed %d of 40 files under an 8000-byte bound", st.Status.Files)
	}
	if !strings.Contains(st.Text(), "memory bound") || len(st.Status.SkipList) != 40-st.Status.Files {
		t.Fatalf("status does not name the files left out: %s", st.Text())
	}
}

// Runs in one process over one root share one index; the last release
// closes it.
func TestSharedAcrossRuns(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"a.go": "package a\n\nfunc A() {}\n"})
	rg := guardOf(t, root)
	h1, err := Acquire(rg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	h2, err := Acquire(rg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if h1.Index() != h2.Index() {
		t.Fatal("two runs over one root got two indexes")
	}
	h1.Index().Start(nil)
	h1.Close() // a run closing its handle releases it; the index lives on
	if !h2.Index().Wait(context.Background(), time.Minute) || h2.Index().Snapshot().Len() != 1 {
		t.Fatal("the second run's index stopped when the first run closed its handle")
	}
	h2.Release()
	h3, err := Acquire(rg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h3.Release()
	if h3.Index() == h1.Index() {
		t.Fatal("an index outlived its last run")
	}
}

// Queries read a snapshot while the build, refreshes and syncs make the
// next ones (run with -race): a query takes no lock of the index, and the
// snapshot it reads does not change under it.
func TestConcurrentQueriesAndWrites(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"go.mod": "module m\n",
		"a.go":   "package m\n\nfunc T() {}\n",
		"b.go":   "package m\n\nfunc B() { T() }\n",
	}
	for i := range 150 {
		files[fmt.Sprintf("p%d/f%d.go", i%10, i)] = fmt.Sprintf("package p%d\n\nimport \"m\"\n\nfunc F%d() { m.T(); F%d() }\n", i%10, i, (i+10)%150)
	}
	testenv.WriteTree(t, root, files)
	x := coldIndex(t, root)
	x.Start(nil) // the build runs beside what follows
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 30; i++ {
				switch (w + i) % 4 {
				case 0:
					x.Callers(Spec{Symbol: "T"}, 0)
					x.Impact(Spec{Symbol: "T"}, 3, 0, 0)
				case 1:
					body := "package m\n\nfunc B() { T(); T() }\n"
					if i%2 == 0 {
						body = "package m\n\nfunc B() { T() }\n"
					}
					p := filepath.Join(root, "b.go")
					os.WriteFile(p, []byte(body), 0o644)
					x.Refresh(context.Background(), p)
				case 2:
					// What a view reads stays as it was while others write.
					v := x.view(0)
					before := Dump(v)
					time.Sleep(time.Millisecond)
					if after := Dump(v); after != before {
						t.Errorf("a snapshot changed under its reader:\n%s", testenv.LineDiff(before, after))
					}
				default:
					x.Sync(context.Background())
					x.StatusAnswer(0)
				}
			}
		}(w)
	}
	wg.Wait()
	if !x.Wait(context.Background(), time.Minute) {
		t.Fatal("index not built in a minute")
	}
	if n := x.Snapshot().Len(); n != 152 {
		t.Errorf("%d files indexed, want 152", n)
	}
}

// storeTree is a small tree of Go files, one of them with a syntax error.
var storeTree = map[string]string{
	"go.mod":      "module m\n",
	"a.go":        "package m\n\nfunc T() {}\n",
	"b/b.go":      "package b\n\nimport \"m\"\n\nfunc B() { m.T() }\n",
	"c/c.go":      "package c\n\nfunc C() { broken( }\n",
	"d/x.go":      "package d\n\ntype X struct{}\n\nfunc (x *X) M() { x.N() }\n\nfunc (x *X) N() {}\n",
	"d/y_test.go": "package d\n\nfunc TestY() { new(X).M() }\n",
}

// counts is what a build took from the store and what it parsed.
func counts(x tq) string {
	x.Flush(context.Background())
	st := x.Stats()
	return fmt.Sprintf("from store %d, parsed %d", st.FromStore, st.Parsed)
}

// A new index over a tree whose records are in the store parses none of
// its files, and a changed file only, and answers as a cold build does; a
// lost manifest costs reading and hashing the files, not parsing them.
func TestStoreWarmStart(t *testing.T) {
	root, cache := t.TempDir(), t.TempDir()
	testenv.WriteTree(t, root, storeTree)
	cold := buildRootOpts(t, root, Options{StoreDir: cache})
	want := cold.Dump()
	if c := counts(cold); c != "from store 0, parsed 5" {
		t.Fatalf("cold build: %s", c)
	}
	warm := buildRootOpts(t, root, Options{StoreDir: cache})
	if c := counts(warm); c != "from store 5, parsed 0" {
		t.Fatalf("warm start: %s", c)
	}
	if got := warm.Dump(); got != want {
		t.Fatalf("a warm start answers differently:\n%s", testenv.LineDiff(want, got))
	}
	time.Sleep(10 * time.Millisecond)
	testenv.WriteTree(t, root, map[string]string{"a.go": "package m\n\nfunc T() {}\n\nfunc U() { T() }\n"})
	third := buildRootOpts(t, root, Options{StoreDir: cache})
	if c := counts(third); c != "from store 4, parsed 1" {
		t.Fatalf("after one edit: %s", c)
	}
	if !strings.Contains(third.Dump(), "call a.go:5 T in m.U -> exact m.T") {
		t.Fatalf("the edited file was not read again:\n%s", third.Dump())
	}
	// A damaged manifest is ignored; the records are found by content.
	paths, _ := filepath.Glob(filepath.Join(cache, "manifests", "*.m"))
	if len(paths) != 1 {
		t.Fatalf("the store holds manifests %v", paths)
	}
	data, _ := os.ReadFile(paths[0])
	os.WriteFile(paths[0], data[:len(data)/2], 0o600)
	fourth := buildRootOpts(t, root, Options{StoreDir: cache})
	if c := counts(fourth); c != "from store 5, parsed 0" || fourth.Snapshot().Len() != 5 {
		t.Fatalf("a cut manifest: %s, %d files", c, fourth.Snapshot().Len())
	}
}

// copyTree copies the folder src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// A second root over the same files (a copy, a worktree at another
// commit) parses only the files whose bytes differ, and answers as a cold
// build of it does.
func TestStoreSharedAcrossRoots(t *testing.T) {
	first, second, cache := t.TempDir(), t.TempDir(), t.TempDir()
	testenv.WriteTree(t, first, storeTree)
	counts(buildRootOpts(t, first, Options{StoreDir: cache}))
	copyTree(t, first, second)
	testenv.WriteTree(t, second, map[string]string{"b/b.go": "package b\n\nimport \"m\"\n\nfunc B() { m.T(); B() }\n"})
	x := buildRootOpts(t, second, Options{StoreDir: cache})
	if c := counts(x); c != "from store 4, parsed 1" {
		t.Fatalf("the second root: %s", c)
	}
	if want, got := buildRoot(t, second).Dump(), x.Dump(); got != want {
		t.Fatalf("the second root answers differently from a cold build:\n%s", testenv.LineDiff(want, got))
	}
	// The file written back as the first root has it is re-read, not parsed.
	testenv.WriteTree(t, second, map[string]string{"b/b.go": storeTree["b/b.go"]})
	if err := x.Refresh(context.Background(), filepath.Join(second, "b", "b.go")); err != nil {
		t.Fatal(err)
	}
	if c := counts(x); c != "from store 5, parsed 1" {
		t.Fatalf("after writing the file back: %s", c)
	}
}

// A store copied to another machine (here: another folder, under a tree
// copied to another root) serves its records there: nothing is parsed.
func TestStoreCopiedToAnotherRoot(t *testing.T) {
	root, cache := t.TempDir(), t.TempDir()
	testenv.WriteTree(t, root, storeTree)
	first := buildRootOpts(t, root, Options{StoreDir: cache})
	want := first.Dump()
	// The build's manifest is written after it answers: the copy is made
	// once it is (a copy taken meanwhile met a temporary file renamed
	// under it).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	first.Flush(ctx)
	cancel()
	root2, cache2 := t.TempDir(), t.TempDir()
	copyTree(t, root, root2)
	copyTree(t, cache, cache2)
	x := buildRootOpts(t, root2, Options{StoreDir: cache2})
	if c := counts(x); c != "from store 5, parsed 0" {
		t.Fatalf("with the copied store: %s", c)
	}
	if got := x.Dump(); got != want {
		t.Fatalf("the copy answers differently:\n%s", testenv.LineDiff(want, got))
	}
}

// A damaged record is a miss: its file is parsed again and the record
// written whole.
func TestStoreTornRecordIsRemade(t *testing.T) {
	root, cache := t.TempDir(), t.TempDir()
	testenv.WriteTree(t, root, storeTree)
	cold := buildRootOpts(t, root, Options{StoreDir: cache})
	want := cold.Dump()
	counts(cold)
	l := cold.Languages().Lookup("go")
	key := l.RecordKey(cold.Snapshot().Entry("d/x.go").Content)
	h := hex.EncodeToString(key[:])
	p := filepath.Join(cache, "records", h[:2], h)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data[:len(data)-3], 0o600); err != nil {
		t.Fatal(err)
	}
	x := buildRootOpts(t, root, Options{StoreDir: cache})
	if c := counts(x); c != "from store 4, parsed 1" {
		t.Fatalf("with a torn record: %s", c)
	}
	if got := x.Dump(); got != want {
		t.Fatalf("answers differ after a torn record:\n%s", testenv.LineDiff(want, got))
	}
	if again, err := os.ReadFile(p); err != nil || len(again) != len(data) {
		t.Fatalf("the record was not written again: %d bytes of %d, %v", len(again), len(data), err)
	}
	if c := counts(buildRootOpts(t, root, Options{StoreDir: cache})); c != "from store 5, parsed 0" {
		t.Fatalf("after the record was remade: %s", c)
	}
}

// A store that cannot be used leaves the index working in memory, and
// status says why.
func TestStoreUnusable(t *testing.T) {
	root := t.TempDir()
	testenv.WriteTree(t, root, storeTree)
	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, []byte("x"), 0o600)
	x := buildRootOpts(t, root, Options{StoreDir: notDir})
	if c := counts(x); c != "from store 0, parsed 5" || x.Snapshot().Len() != 5 {
		t.Fatalf("with no store: %s, %d files", c, x.Snapshot().Len())
	}
	st := StatusAnswer(x.view(0), x.Stats()).Status
	if !strings.Contains(st.StoreError, "cannot be used") {
		t.Fatalf("status does not say why the store is not used: %q", st.StoreError)
	}
}

// A language is added with a folder of data (Options.QueryDirs), no Go
// code: Lua here, which the bundled set does not index.
func TestQueryDirsAddALanguage(t *testing.T) {
	qd := t.TempDir()
	testenv.WriteTree(t, qd, map[string]string{
		"lua/language.json": `{"grammar": "lua", "scope": "file", "builtins": ["print"]}`,
		"lua/tags.scm": `(function_statement name: (function_name (identifier) @name)) @definition.function
(function_call prefix: (identifier) @name) @reference.call
`,
	})
	root := testenv.Tree(t, map[string]string{"m.lua": "function helper() end\nfunction main() helper() print(1) end\n"})
	x := buildRootOpts(t, root, Options{QueryDirs: []string{qd}})
	dump := x.Dump()
	for _, want := range []string{"def m.lua:1-1 function helper", "call m.lua:2 helper in main -> exact helper (m.lua:1)", "call m.lua:2 print in main -> unresolved (builtin)"} {
		if !strings.Contains(dump, want) {
			t.Errorf("no %q in:\n%s", want, dump)
		}
	}
	// A broken query file is an error that names the file and line.
	testenv.WriteTree(t, qd, map[string]string{"lua/tags.scm": "(function_statement nam: (identifier) @name) @definition.function\n"})
	g, _ := pathguard.New(root)
	defer g.Close()
	if _, err := index.New(g, astgrep.NewEngine(astgrep.Options{}), Options{QueryDirs: []string{qd}}); err == nil || !strings.Contains(err.Error(), "tags.scm") || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("a bad query file: %v", err)
	}
}

// A call from x_linux.go reaches the definition of x_linux.go, not the
// ones built for other systems; from a file for any system it is a
// candidate among them.
func TestBuildVariants(t *testing.T) {
	dumpHas(t, map[string]string{
		"go.mod":           "module m\n",
		"sys_linux.go":     "package m\n\nfunc open() {}\n",
		"sys_windows.go":   "package m\n\nfunc open() {}\n",
		"sys_darwin.go":    "package m\n\nfunc open() {}\n",
		"use_linux.go":     "package m\n\nfunc L() { open() }\n",
		"use.go":           "package m\n\nfunc A() { open() }\n",
		"x_linux_arm64.go": "package m\n\nfunc arch() {}\n",
		"x_linux_amd64.go": "package m\n\nfunc arch() {}\n",
		"y_arm64.go":       "package m\n\nfunc Y() { arch() }\n",
	}, []string{
		"call use_linux.go:3 open in m.L -> exact m.open (sys_linux.go:3)",
		"call use.go:3 open in m.A -> candidate[3]",
		"call y_arm64.go:3 arch in m.Y -> exact m.arch (x_linux_arm64.go:3)",
	})
}

// A name a module re-exports (a package's __init__.py, an index.ts of
// export-from lines, under its own name or another) resolves to where it
// is defined, and callers of the definition find the calls through every
// name it is imported by. A cycle of re-exports ends.
func TestReexports(t *testing.T) {
	x, _ := dumpHas(t, map[string]string{
		"pkg/__init__.py":  "from .impl import work\nfrom .impl import *\nfrom .impl import work as labour\n",
		"pkg/impl.py":      "def work():\n    pass\n\ndef other():\n    pass\n",
		"main.py":          "from pkg import work, other, labour\nimport pkg\n\ndef main():\n    work()\n    other()\n    pkg.work()\n    labour()\n",
		"ts/core/parse.ts": "export function decode(x: number): number {\n  return x;\n}\n",
		"ts/core/mid.ts":   "export * from \"./parse.js\";\n",
		"ts/core/kit.ts":   "export function make() {\n  return {\n    decode(s: string) {\n      return s;\n    },\n  };\n}\n",
		"ts/core/lazy.ts":  "export const Lazy = build((inst: any) => {\n  Object.assign(inst, {\n    decode(s: string) {\n      return s;\n    },\n  });\n});\n",
		"ts/core/index.ts": "export * from \"./kit.js\";\nexport * from \"./lazy.js\";\nexport * from \"./mid.js\";\nexport { decode as unpack } from \"./parse.js\";\n",
		"ts/use.ts":        "import * as core from \"./core/index.js\";\nimport { decode, unpack as u } from \"./core/index.js\";\n\nexport function run() {\n  core.decode(1);\n  decode(2);\n  u(3);\n}\n",
		"rs/src/lib.rs":    "mod inner;\npub use inner::work;\n",
		"rs/src/inner.rs":  "pub fn work() {}\n",
		"rs/src/user.rs":   "use crate::work;\n\npub fn run() {\n    work();\n    crate::work();\n}\n",
		"js/a.js":          "export * from './b.js';\n",
		"js/b.js":          "export * from './a.js';\n",
		"js/use.js":        "import { missing } from './a.js';\n\nexport function go() {\n  missing();\n}\n",
	}, []string{
		"call main.py:5 work in main -> import work (pkg/impl.py:1)",
		"call main.py:6 other in main -> import other (pkg/impl.py:4)",
		"call main.py:7 pkg.work in main -> exact work (pkg/impl.py:1)",
		"call main.py:8 labour in main -> import work (pkg/impl.py:1)",
		"call ts/use.ts:5 core.decode in run -> exact decode (ts/core/parse.ts:1)",
		"call ts/use.ts:6 decode in run -> import decode (ts/core/parse.ts:1)",
		"call ts/use.ts:7 u in run -> import decode (ts/core/parse.ts:1)",
		"call js/use.js:4 missing in go -> unresolved",
		"call rs/src/user.rs:4 work in run -> import work (rs/src/inner.rs:1)",
		"call rs/src/user.rs:5 crate.work in run -> exact work (rs/src/inner.rs:1)",
	})
	if got := callersText(t, x, "pkg/impl.py:work"); !strings.Contains(got, "3 call sites (1 exact, 2 import") || !strings.Contains(got, "labour()") {
		t.Errorf("callers of work:\n%s", got)
	}
	if got := callersText(t, x, "ts/core/parse.ts:decode"); !strings.Contains(got, "3 call sites (1 exact, 2 import") || !strings.Contains(got, "u(3)") {
		t.Errorf("callers of decode:\n%s", got)
	}
}

// A bare name inside a method is a member of its class only where the
// language says so (Java, C++), and there it hides the file's names; in
// Python, JavaScript and Rust it is the module's name or an import's.
// Python's super().m() is a parent's m (by the class's bases), not a
// builtin.
func TestImplicitSelf(t *testing.T) {
	dumpHas(t, map[string]string{
		"spawner.py":   "def spawn(cmd):\n    pass\n",
		"compiler.py":  "from spawner import spawn\n\nclass CCompiler:\n    def spawn(self, cmd):\n        spawn(cmd)\n",
		"js/h.js":      "export function render() {}\n",
		"js/view.js":   "import { render } from './h.js';\n\nclass View {\n  render() {\n    render();\n  }\n}\n",
		"j/Shape.java": "class Shape {\n  int area() { return 0; }\n  int twice() { return area() * 2; }\n}\n",
		"c/shape.cpp":  "int area() { return 1; }\n\nclass Shape {\npublic:\n  int area();\n  int twice();\n};\n\nint Shape::area() { return 0; }\nint Shape::twice() { return area() * 2; }\nint free_user() { return area(); }\n",
		"loops.py":     "class Base:\n    def __init__(self):\n        pass\n\nclass Loop(Base):\n    def __init__(self):\n        super().__init__()\n        str(self).join([])\n",
	}, []string{
		"call compiler.py:5 spawn in CCompiler.spawn -> import spawn (spawner.py:1)",
		"call js/view.js:5 render in View.render -> import render (js/h.js:1)",
		"call j/Shape.java:3 area in Shape.twice -> exact Shape.area (j/Shape.java:2)",
		"call c/shape.cpp:10 area in Shape.twice -> exact Shape.area (c/shape.cpp:9)",
		"call c/shape.cpp:11 area in free_user -> exact area (c/shape.cpp:1)",
		"call loops.py:7 super().__init__ in Loop.__init__ -> exact Base.__init__ (loops.py:2) — super() is a base of Loop",
		"call loops.py:8 str(self).join in Loop.__init__ -> unresolved (builtin",
	})
}

// A method of an object literal is reached through the object: a call on
// a receiver has it among its candidates, a bare call of its name never
// leads to it.
func TestObjectLiteralMethods(t *testing.T) {
	dumpHas(t, map[string]string{
		"num.js": "export const Num = build((inst) => {\n  Object.assign(inst, {\n    gt(v) {\n      return v;\n    },\n  });\n});\n\nexport function use(n) {\n  n.gt(1);\n  gt(2);\n}\n",
	}, []string{
		"def num.js:3-5 method gt",
		"call num.js:10 n.gt in use -> candidate[1] gt (num.js:3)",
		"call num.js:11 gt in use -> unresolved",
	})
}

// CommonJS modules: exports.f = function, module.exports.f = arrow, and
// module.exports = {...}, reached through require() by a binding or by
// destructuring.
func TestCommonJS(t *testing.T) {
	dumpHas(t, map[string]string{
		"m.js":   "exports.foo = function () {};\nmodule.exports.bar = () => 1;\nfunction baz() {}\nmodule.exports = { baz, qux() {} };\n",
		"use.js": "const m = require('./m');\nconst { foo, baz } = require('./m');\nm.foo();\nm.bar();\nfoo();\nbaz();\nm.qux();\n",
	}, []string{
		"call use.js:3 m.foo in (top level) -> exact foo (m.js:1)",
		"call use.js:4 m.bar in (top level) -> exact bar (m.js:2)",
		"call use.js:5 foo in (top level) -> import foo (m.js:1)",
		"call use.js:6 baz in (top level) -> import baz (m.js:3)",
		"call use.js:7 m.qux in (top level) -> exact qux (m.js:4)",
	})
}

// A getter (get x() {}, @property) runs where it is read: its callers
// list the reads; a read of a name no getter has is in no answer.
func TestGetters(t *testing.T) {
	x, dump := dumpHas(t, map[string]string{
		"deflate.js": "class PerMessageDeflate {\n  static get extensionName() {\n    return 'x';\n  }\n  get names() {\n    return this.plain;\n  }\n  use() {\n    return this.names;\n  }\n}\nmodule.exports = PerMessageDeflate;\n",
		"user.js":    "const PerMessageDeflate = require('./deflate');\n\nfunction pick(ext) {\n  return ext[PerMessageDeflate.extensionName] || ext.names;\n}\n",
		"meta.py":    "class Meta:\n    @property\n    def name(self):\n        return self._name\n\n    def show(self):\n        return self.name\n\ndef outside(m):\n    value = m.name\n    return value\n",
	}, []string{
		"def deflate.js:2-4 getter PerMessageDeflate.extensionName",
		"read deflate.js:9 this.names in PerMessageDeflate.use -> exact PerMessageDeflate.names (deflate.js:5)",
		"def meta.py:3-4 getter Meta.name",
		"value meta.py:7 self.name in Meta.show -> exact Meta.name (meta.py:3)",
	})
	if strings.Contains(dump, "plain") {
		t.Errorf("a read of a name no getter has is in the dump:\n%s", dump)
	}
	if got := callersText(t, x, "extensionName"); !strings.Contains(got, "1 call sites") || !strings.Contains(got, "user.js:4") {
		t.Errorf("callers of the static getter:\n%s", got)
	}
	if got := callersText(t, x, "names"); !strings.Contains(got, "2 call sites") {
		t.Errorf("callers of names:\n%s", got)
	}
	if got := callersText(t, x, "Meta.name"); !strings.Contains(got, "2 call sites") || !strings.Contains(got, "meta.py:10") {
		t.Errorf("callers of the property:\n%s", got)
	}
}

// dumpHas builds files into a new root and checks that its dump holds
// every line of want; it returns the index and the dump.
func dumpHas(t *testing.T, files map[string]string, want []string) (tq, string) {
	t.Helper()
	root := t.TempDir()
	testenv.WriteTree(t, root, files)
	x := buildRoot(t, root)
	dump := x.Dump()
	for _, w := range want {
		if !strings.Contains(dump, w) {
			t.Errorf("no %q in:\n%s", w, dump)
		}
	}
	return x, dump
}

// Incremental = fresh, through the index: after random writes, deletes
// and restores of a tree's files, each read again by Refresh (and a
// sync), the dump equals that of an index built fresh on the final tree.
func TestIncrementalDumpEqualsFresh(t *testing.T) {
	root := t.TempDir()
	var files []txtar.File
	for _, name := range []string{"go_types", "python_types", "typescript", "cpp"} {
		ar, err := txtar.ParseFile(filepath.Join("testdata", "fixtures", name+".txtar"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ar.Files {
			if f.Name != "expect" {
				f.Name = name + "/" + f.Name
				files = append(files, f)
			}
		}
	}
	for _, f := range files {
		testenv.WriteTree(t, root, map[string]string{f.Name: string(f.Data)})
	}
	x := buildRoot(t, root)
	rnd := rand.New(rand.NewPCG(5, 6))
	for step := range 40 {
		f := files[rnd.IntN(len(files))]
		abs := filepath.Join(root, filepath.FromSlash(f.Name))
		switch rnd.IntN(4) {
		case 0:
			os.Remove(abs)
		case 1:
			// Another file's text of the same language at this path.
			o := files[rnd.IntN(len(files))]
			if filepath.Ext(o.Name) == filepath.Ext(f.Name) {
				testenv.WriteTree(t, root, map[string]string{f.Name: string(o.Data)})
			}
		default:
			testenv.WriteTree(t, root, map[string]string{f.Name: string(f.Data)})
		}
		if err := x.Refresh(context.Background(), abs); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
	if _, err := x.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := x.Dump()
	if want := buildRoot(t, root).Dump(); got != want {
		t.Fatalf("after edits the index answers otherwise than a fresh one:\n%s", testenv.LineDiff(want, got))
	}
}
