package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/graph/index"
	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// goroot is the GOROOT of the go command on PATH (runtime.GOROOT is where
// the test binary was built, which need not be here).
func goroot(tb testing.TB) string {
	tb.Helper()
	out, err := proc.Probe(context.Background(), testenv.LookPath(tb, "go"), "env", "GOROOT")
	if err != nil {
		tb.Fatalf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// copyGoroot copies GOROOT/src/<sub>'s Go files under root/<sub>, with
// GOROOT's go.mod: a real tree of a few hundred files.
func copyGoroot(t testing.TB, root, sub string) {
	t.Helper()
	src := filepath.Join(goroot(t), "src")
	if _, err := os.Stat(filepath.Join(src, sub)); err != nil {
		t.Skipf("no GOROOT source here: %v", err)
	}
	n := 0
	err := filepath.WalkDir(filepath.Join(src, sub), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		n++
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module std\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("copied %d files of GOROOT/src/%s", n, sub)
}

// coldIndex is an index over root whose build has not started.
func coldIndex(t testing.TB, root string) tq {
	t.Helper()
	return queries(newIndex(t, root, Options{}))
}

// comparable is an answer without what says how complete the index was.
func comparable(t *testing.T, a *Answer) string {
	t.Helper()
	b := *a
	b.Index, b.LowerBound = IndexState{}, false
	j, err := json.Marshal(&b)
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, l := range strings.Split(a.Text(), "\n") {
		if !strings.HasPrefix(l, "(computed from ") && !strings.HasPrefix(l, "(index still building") {
			text = append(text, l)
		}
	}
	return string(j) + "\n" + strings.Join(text, "\n")
}

// An answer computed ahead of the index, from the files that hold the
// name, equals the full index's answer on the same tree, and says how
// many files it came from.
func TestAheadEqualsFullIndex(t *testing.T) {
	root := t.TempDir()
	copyGoroot(t, root, "go")
	full := buildRoot(t, root)
	type q struct{ op, sym string }
	qs := []q{
		{"callers", "ast.Inspect"}, {"callers", "token.NewFileSet"}, {"callers", "parser.ParseFile"},
		{"callers", "Scanner.Scan"}, {"callers", "types.NewPackage"}, {"callers", "Fprint"},
		{"callers", "Pos"}, {"callers", "Checker.expr"}, {"callers", "NewIdent"},
		{"callees", "parser.ParseFile"}, {"callees", "Checker.expr"}, {"callees", "printer.Fprint"},
	}
	run := func(x tq, q q) (*Answer, error) {
		if q.op == "callers" {
			return x.Callers(Spec{Symbol: q.sym}, 0)
		}
		return x.Callees(Spec{Symbol: q.sym}, 0)
	}
	for _, q := range qs {
		cold := coldIndex(t, root)
		start := time.Now()
		sub, err := cold.Ahead(context.Background(), q.sym, q.op == "callees")
		if err != nil {
			t.Fatalf("%s %s: %v", q.op, q.sym, err)
		}
		got, gerr := run(sub, q)
		took := time.Since(start)
		want, werr := run(full, q)
		if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
			t.Fatalf("%s %s: ahead error %v, full index error %v", q.op, q.sym, gerr, werr)
		}
		if gerr != nil {
			continue
		}
		if got.Index.Ahead == 0 || got.Index.Ahead >= full.Snapshot().Len() || !strings.Contains(got.Text(), "files ahead of the index") {
			t.Errorf("%s %s: ahead of the index from %d of %d files; text %q", q.op, q.sym, got.Index.Ahead, full.Snapshot().Len(), firstLine(got.Text()))
		}
		if g, w := comparable(t, got), comparable(t, want); g != w {
			t.Errorf("%s %s: ahead answer differs from the full index's\nahead:\n%s\nfull:\n%s", q.op, q.sym, g, w)
		}
		t.Logf("%s %s: %d of %d files, %v, %d shown", q.op, q.sym, got.Index.Ahead, full.Snapshot().Len(), took.Round(time.Millisecond), got.Counts.Shown)
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func TestAheadName(t *testing.T) {
	for in, want := range map[string]string{"Save": "Save", "store.Store.Save": "Save", "a/b.go:F": "F", " x.y ": "y", "": ""} {
		if got := aheadName(in); got != want {
			t.Errorf("aheadName(%q) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkColdCallers measures the first callers answer on a cold
// GOROOT/src: ahead of the index, and as before (wait up to graphtool's
// 5 s for the build, then answer from what it indexed). Run with
// -benchtime=1x: each iteration is a new, cold index.
func BenchmarkColdCallers(b *testing.B) {
	root := filepath.Join(goroot(b), "src")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		b.Skipf("no GOROOT source here: %v", err)
	}
	const sym = "bufio.NewScanner"
	b.Run("ahead", func(b *testing.B) {
		for range b.N {
			cpu := cpuTime()
			x := coldIndex(b, root)
			if os.Getenv("AHEAD_ALONE") == "" {
				x.Start(nil)
			}
			sub, err := x.Ahead(context.Background(), sym, false)
			if err != nil {
				b.Fatal(err)
			}
			a, err := sub.Callers(Spec{Symbol: sym}, 0)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric((cpuTime() - cpu).Seconds(), "cpu-s")
			b.ReportMetric(float64(a.Index.Ahead), "files")
			b.ReportMetric(float64(a.Counts.Shown), "sites")
		}
	})
	b.Run("wait5s", func(b *testing.B) {
		for range b.N {
			x := coldIndex(b, root)
			x.Start(nil)
			x.Wait(context.Background(), 5*time.Second)
			a, err := x.Callers(Spec{Symbol: sym}, 0)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(a.Index.Files), "files")
			b.ReportMetric(float64(a.Counts.Shown), "sites")
		}
	})
}

// cpuTime is the process's user and system time so far: what a run costs
// whatever else shares the machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fill adds to files enough others that Ahead answers for the tree.
func fill(files map[string]string) map[string]string {
	for i := range index.AheadMinFiles {
		files[fmt.Sprintf("fill/f%d.go", i)] = fmt.Sprintf("package fill\n\nfunc Fill%d() {}\n", i)
	}
	return files
}

// What resolving a caller reads outside the files that hold the name is
// in the ahead index too: the function of another package whose result
// is the receiver, a type of the caller's package whose field is the
// receiver, the package name an import binds.
func TestAheadReadsTheCallersImports(t *testing.T) {
	root := t.TempDir()
	testenv.WriteTree(t, root, fill(map[string]string{
		"go.mod":             "module m\n",
		"store/store.go":     "package store\n\ntype Store struct{}\n\nfunc (s *Store) Save(n int) {}\n",
		"cache/cache.go":     "package cache\n\ntype Cache struct{}\n\nfunc (c *Cache) Save(n int) {}\n",
		"factory/factory.go": "package factory\n\nimport \"m/store\"\n\nfunc New() *store.Store { return &store.Store{} }\n",
		"factory/other.go":   "package factory\n\nfunc Other() {}\n",
		"app/app.go":         "package app\n\nimport \"m/factory\"\n\nfunc Run() {\n\ts := factory.New()\n\ts.Save(1)\n}\n",
		"app/conn.go":        "package app\n\nimport \"m/store\"\n\ntype S struct{ st *store.Store }\n",
		"app/run.go":         "package app\n\nfunc (a *S) Go() {\n\ta.st.Save(2)\n}\n",
		"lib/go-util/u.go":   "package util\n\nimport \"m/store\"\n\nfunc Get() *store.Store { return nil }\n",
		"use/use.go":         "package use\n\nimport \"m/lib/go-util\"\n\nfunc Use() {\n\tx := util.Get()\n\tx.Save(3)\n}\n",
	}))
	full := buildRoot(t, root)
	want, err := full.Callers(Spec{Symbol: "Store.Save"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The fixture means something only if the full index finds these
	// calls exact.
	if want.Counts.Exact < 3 {
		t.Fatalf("the full index finds %d exact calls of Store.Save, want 3:\n%s", want.Counts.Exact, want.Text())
	}
	sub, err := coldIndex(t, root).Ahead(context.Background(), "Store.Save", false)
	if err != nil {
		t.Fatal(err)
	}
	got, err := sub.Callers(Spec{Symbol: "Store.Save"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := comparable(t, got), comparable(t, want); g != w {
		t.Errorf("ahead answer differs from the full index's\nahead:\n%s\nfull:\n%s", g, w)
	}
	if got.Index.Ahead == 0 || got.Index.Ahead > 20 {
		t.Errorf("ahead of the index from %d files, want a few", got.Index.Ahead)
	}
}

// find ahead of the index lists what the full index lists, less the
// names that hold the query's letters only in order, and says so.
func TestAheadFindEqualsFullIndex(t *testing.T) {
	root := t.TempDir()
	copyGoroot(t, root, "go")
	full := buildRoot(t, root)
	for _, q := range []string{"NewFileSet", "Scanner.Scan", "parsefile", "Ident", "walk", "Checker.expr", "nosuchnamehere"} {
		sub, err := coldIndex(t, root).AheadFind(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		got, gerr := sub.Find(q, "", 20, 0)
		all, werr := full.Find(q, "", 1<<20, 0)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("find %s: ahead error %v, full index error %v", q, gerr, werr)
		}
		if gerr != nil {
			continue
		}
		name := aheadName(q)
		var want []Symbol
		for _, d := range all.Definitions {
			if nameScore(d.Name, name, strings.ToLower(name)) != scoreLettersInOrder {
				want = append(want, d)
			}
		}
		matches := len(want)
		want = want[:min(20, len(want))]
		gj, _ := json.Marshal(got.Definitions)
		wj, _ := json.Marshal(want)
		if string(gj) != string(wj) || got.Matches != matches {
			t.Errorf("find %s ahead (%d matches):\n%s\nwant %d matches:\n%s", q, got.Matches, got.Text(), matches, wj)
		}
		if !got.Index.NamesOnly {
			t.Errorf("find %s ahead does not say it leaves letters-in-order matches out: %s", q, got.Text())
		}
		t.Logf("find %s: %d of %d files", q, got.Index.Ahead, full.Snapshot().Len())
	}
}

// BenchmarkColdFind measures the first find answer on a cold GOROOT/src,
// ahead of the index. Run with -benchtime=1x.
func BenchmarkColdFind(b *testing.B) {
	root := filepath.Join(goroot(b), "src")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		b.Skipf("no GOROOT source here: %v", err)
	}
	const q = "NewScanner"
	for range b.N {
		cpu := cpuTime()
		sub, err := coldIndex(b, root).AheadFind(context.Background(), q)
		if err != nil {
			b.Fatal(err)
		}
		a, err := sub.Find(q, "", 0, 0)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric((cpuTime() - cpu).Seconds(), "cpu-s")
		b.ReportMetric(float64(a.Index.Ahead), "files")
		b.ReportMetric(float64(a.Counts.Shown), "shown")
	}
}

func TestIdentChains(t *testing.T) {
	for in, want := range map[string][][]string{
		"*store.Store":            {{"store", "Store"}},
		"map[string]*x.Y":         {{"map"}, {"string"}, {"x", "Y"}},
		"a.b.c":                   {{"a", "b", "c"}},
		"factory.New().Conn":      {{"factory", "New"}, {"Conn"}},
		"ns::T":                   {{"ns", "T"}},
		"[]int":                   {{"int"}},
		"":                        nil,
		"List[Optional[foo.Bar]]": {{"List"}, {"Optional"}, {"foo", "Bar"}},
	} {
		if got := identChains(in); !reflect.DeepEqual(got, want) {
			t.Errorf("identChains(%q) = %q, want %q", in, got, want)
		}
	}
}
