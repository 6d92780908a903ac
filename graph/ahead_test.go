package graph

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// copyGoroot copies GOROOT/src/<sub>'s Go files under root/<sub>, with
// GOROOT's go.mod: a real tree of a few hundred files.
func copyGoroot(t testing.TB, root, sub string) {
	t.Helper()
	src := filepath.Join(runtime.GOROOT(), "src")
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
func coldIndex(t testing.TB, root string) *Index {
	t.Helper()
	g, err := pathguard.New(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	e := astgrep.NewEngine(astgrep.Options{})
	t.Cleanup(func() { e.Close() })
	x, err := New(g, e, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Close)
	return x
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
	run := func(x *Index, q q) (*Answer, error) {
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
		if got.Index.Ahead == 0 || got.Index.Ahead >= len(full.files) || !strings.Contains(got.Text(), "files ahead of the index") {
			t.Errorf("%s %s: ahead of the index from %d of %d files; text %q", q.op, q.sym, got.Index.Ahead, len(full.files), firstLine(got.Text()))
		}
		if g, w := comparable(t, got), comparable(t, want); g != w {
			t.Errorf("%s %s: ahead answer differs from the full index's\nahead:\n%s\nfull:\n%s", q.op, q.sym, g, w)
		}
		t.Logf("%s %s: %d of %d files, %v, %d shown", q.op, q.sym, got.Index.Ahead, len(full.files), took.Round(time.Millisecond), got.Counts.Shown)
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
	root := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		b.Skipf("no GOROOT source here: %v", err)
	}
	const sym = "bufio.NewScanner"
	b.Run("ahead", func(b *testing.B) {
		for range b.N {
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
