package astgrep

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/builtin-tools/builtin-tools/astgrep/scmmatch"
	"github.com/builtin-tools/builtin-tools/internal/walk"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// captureQueries is the query written for these tests for lang (in
// scmmatch's testdata, which its matcher is tested on too): every
// construct the query language has (fields, negated fields,
// alternations, quantifiers, anchors, wildcards at the root and inside,
// literal tokens, ERROR, predicates).
func captureQueries(t *testing.T, lang string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("scmmatch", "testdata", lang+".scm"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// captureCorpus is what the capture tests run over, by language: the
// cross-check fixtures and, for Go, a few packages of GOROOT/src.
func captureCorpus(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for lang, dir := range fixtureDirs {
		abs, err := filepath.Abs(filepath.Join("testdata", "crosscheck", dir))
		if err != nil {
			t.Fatal(err)
		}
		out[lang] = append(out[lang], abs)
	}
	src := filepath.Join(goroot(), "src")
	for _, d := range []string{"go/ast", "go/parser", "net/url", "strings", "sort"} {
		if _, err := os.Stat(filepath.Join(src, d)); err == nil {
			out["go"] = append(out["go"], filepath.Join(src, d))
		}
	}
	if len(out["go"]) == 0 {
		t.Fatalf("no Go sources under %s", src)
	}
	return out
}

// graphQueries are the code graph's own query files, when this checkout
// has them where they are today: more queries of the size real users run.
func graphQueries(lang string) map[string]string {
	out := map[string]string{}
	paths, _ := filepath.Glob(filepath.Join("..", "graph", "languages", lang, "tags.scm"))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			out[p] = string(b)
		}
	}
	return out
}

type captureCase struct {
	name  string
	query *CaptureQuery
	files []CaptureFile
	g     *pathguard.Guard
}

func captureCases(t *testing.T, e *Engine) []captureCase {
	t.Helper()
	var cases []captureCase
	for lang, dirs := range captureCorpus(t) {
		sources := map[string]string{"test query": captureQueries(t, lang)}
		for name, src := range graphQueries(lang) {
			sources[name] = src
		}
		for name, src := range sources {
			q, err := e.CompileCaptureQuery(lang, src)
			if err != nil {
				t.Fatalf("%s %s: %v", lang, name, err)
			}
			for _, dir := range dirs {
				g, err := pathguard.New(dir)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { g.Close() })
				entries, err := walk.Files(context.Background(), g, dir, walk.Options{Want: func(n string) bool { return e.LanguageForFile(n) == lang }})
				if err != nil {
					t.Fatal(err)
				}
				c := captureCase{name: fmt.Sprintf("%s %s over %s", lang, name, filepath.Base(dir)), query: q, g: g}
				for _, en := range entries {
					c.files = append(c.files, CaptureFile{Path: en.Abs, Query: q, Info: en.Info})
				}
				if len(c.files) == 0 {
					t.Fatalf("%s: no files", c.name)
				}
				cases = append(cases, c)
			}
		}
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].name < cases[j].name })
	return cases
}

// matchKey is a match as text, for comparing runs.
func matchKey(m *QueryMatch, rows bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "p%d", m.Pattern)
	for _, c := range m.Captures {
		fmt.Fprintf(&b, " %d@%d:%d-%d", c.Index, c.Node, c.Start, c.End)
		if rows {
			fmt.Fprintf(&b, "(%d.%d-%d)", c.StartRow, c.StartCol, c.EndRow)
		}
	}
	return b.String()
}

// referenceMatches is the capture run as it was before the visitor API
// (every match built, captures sorted with a stable sort, rows computed
// for each), kept here to hold the new code to the old results; the
// matcher is held to its own reference in package scmmatch.
func referenceMatches(q *CaptureQuery, t *tree) []QueryMatch {
	var out []QueryMatch
	starts := lineStarts(t.src)
	row := func(off int) int { return lineOf(starts, off) - 1 }
	var m scmmatch.Matcher
	m.Reset(t.nodes)
	m.Run(q.prog, func(pi int, caps []scmmatch.Cap) {
		qm := QueryMatch{Pattern: pi}
		for _, c := range caps {
			nd := &t.nodes[c.Node]
			sr := row(int(nd.Start))
			er := sr
			if nd.End > nd.Start {
				er = row(int(nd.End) - 1)
			}
			qm.Captures = append(qm.Captures, QueryCapture{Index: c.Capture, Node: int32(c.Node), Start: int(nd.Start), End: int(nd.End), StartRow: sr, StartCol: int(nd.Start) - starts[sr], EndRow: er})
		}
		sort.SliceStable(qm.Captures, func(a, b int) bool { return qm.Captures[a].Start < qm.Captures[b].Start })
		if q.holds(t.src, &qm) {
			out = append(out, qm)
		}
	})
	return out
}

// TestCaptureVisitorEqualsReference: Capture's matches, Each's visits and
// MatchAt at every node, in preorder, give exactly the matches of the
// capture run as it was before the visitor API, in the same order.
func TestCaptureVisitorEqualsReference(t *testing.T) {
	e := NewEngine(Options{CacheBytes: -1})
	defer e.Close()
	total := 0
	for _, c := range captureCases(t, e) {
		var mu sync.Mutex
		got := map[string][]string{} // by path: Capture's matches
		err := e.Capture(context.Background(), c.g, c.files, func(r *CaptureResult) {
			if r.Err != nil {
				t.Errorf("%s: %s: %v", c.name, r.File.Path, r.Err)
				return
			}
			var keys []string
			for i := range r.Matches {
				keys = append(keys, matchKey(&r.Matches[i], true))
			}
			mu.Lock()
			got[r.File.Path] = keys
			mu.Unlock()
		})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		err = e.CaptureTrees(context.Background(), c.g, c.files, func(r *CaptureResult) {
			if r.Matches != nil {
				t.Errorf("%s: CaptureTrees filled Matches", c.name)
			}
			x := r.Tree
			var want, each, at []string
			for _, m := range referenceMatches(c.query, x.t) {
				want = append(want, matchKey(&m, true))
			}
			c.query.Each(x, func(m *QueryMatch) bool {
				for _, cp := range m.Captures {
					if cp.StartRow != -1 || cp.EndRow != -1 || cp.StartCol != -1 {
						t.Fatalf("%s: Each filled rows", c.name)
					}
					if s, e := x.Span(cp.Node); s != cp.Start || e != cp.End {
						t.Fatalf("%s: capture node %d spans %d-%d, the capture %d-%d", c.name, cp.Node, s, e, cp.Start, cp.End)
					}
				}
				each = append(each, matchKey(withRows(x, m), true))
				return true
			})
			for n := range int32(x.Len()) {
				x.MatchAt(n, c.query, func(m *QueryMatch) bool {
					at = append(at, matchKey(withRows(x, m), true))
					return true
				})
			}
			mu.Lock()
			defer mu.Unlock()
			n += len(want)
			if !slices.Equal(got[r.File.Path], want) {
				t.Errorf("%s: %s: Capture gave %d matches, the reference %d; first difference %s", c.name, r.File.Path, len(got[r.File.Path]), len(want), firstDiff(got[r.File.Path], want))
			}
			if !slices.Equal(each, want) {
				t.Errorf("%s: %s: Each gave %d matches, the reference %d; first difference %s", c.name, r.File.Path, len(each), len(want), firstDiff(each, want))
			}
			if !slices.Equal(at, want) {
				t.Errorf("%s: %s: MatchAt at every node gave %d matches, the full run %d; first difference %s", c.name, r.File.Path, len(at), len(want), firstDiff(at, want))
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Errorf("%s: no matches; the query should say something about the corpus", c.name)
		}
		total += n
		t.Logf("%-60s %5d files %7d matches", c.name, len(c.files), n)
	}
	if total == 0 {
		t.Fatal("no matches at all")
	}
}

// withRows copies a visited match with its rows, as Capture fills them.
func withRows(x *Tree, m *QueryMatch) *QueryMatch {
	out := &QueryMatch{Pattern: m.Pattern}
	for _, c := range m.Captures {
		c.StartRow, c.StartCol, c.EndRow = x.Row(c.Start), x.Col(c.Start), x.Row(endOffset(c.Start, c.End))
		out.Captures = append(out.Captures, c)
	}
	return out
}

func firstDiff(a, b []string) string {
	for i := range max(len(a), len(b)) {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return fmt.Sprintf("at %d: %q vs %q", i, x, y)
		}
	}
	return "none"
}

// A visitor can stop a run, and MatchAt can run inside a visit (the
// extractor reads a type's shape while it reads the match naming it)
// without disturbing the match being visited.
func TestCaptureVisitorStopsAndNests(t *testing.T) {
	e := NewEngine(Options{})
	defer e.Close()
	q, err := e.CompileCaptureQuery("go", `(function_declaration name: (identifier) @name result: (_) @result) @def`)
	if err != nil {
		t.Fatal(err)
	}
	shapes, err := e.CompileCaptureQuery("go", `
(pointer_type (_) @elem) @pointer
(qualified_type package: (package_identifier) @pkg name: (type_identifier) @name) @qualified
(slice_type element: (_) @elem) @slice
(type_identifier) @name`)
	if err != nil {
		t.Fatal(err)
	}
	src := []byte("package p\n\nfunc A() *x.T { return nil }\nfunc B() []int { return nil }\nfunc C() y.U { return y.U{} }\n")
	r, err := e.CaptureSnippet(context.Background(), q, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Matches) != 3 || r.Errors != 0 || r.File.Path != SnippetFile {
		t.Fatalf("snippet: %d matches, %d errors, file %q", len(r.Matches), r.Errors, r.File.Path)
	}
	x := r.Tree
	var shown []string
	var shape func(n int32) string
	shape = func(n int32) string {
		out := ""
		x.MatchAt(n, shapes, func(m *QueryMatch) bool {
			var parts []string
			for _, c := range m.Captures[1:] {
				if x.Leaf(c.Node) {
					parts = append(parts, string(x.Text(c.Node)))
				} else {
					parts = append(parts, shape(c.Node))
				}
			}
			out = shapes.Names[m.Captures[0].Index] + "(" + strings.Join(parts, ",") + ")"
			if len(m.Captures) == 1 {
				out = shapes.Names[m.Captures[0].Index] + "=" + string(x.Text(n))
			}
			return false // the first pattern wins
		})
		return out
	}
	visits := 0
	q.Each(x, func(m *QueryMatch) bool {
		visits++
		before := matchKey(m, false)
		res := m.Captures[2]
		shown = append(shown, fmt.Sprintf("%s %s line %d", x.Text(m.Captures[1].Node), shape(res.Node), x.Row(res.Start)+1))
		if after := matchKey(m, false); after != before {
			t.Errorf("MatchAt inside a visit changed the match visited: %s became %s", before, after)
		}
		return visits < 2
	})
	want := []string{"A pointer(qualified(x,T)) line 3", "B slice(int) line 4"}
	if !slices.Equal(shown, want) {
		t.Errorf("got %q, want %q (the visit stops after two)", shown, want)
	}
	if k := x.Kind(0); k != "source_file" {
		t.Errorf("root kind %q", k)
	}
	if !x.Named(0) || x.Leaf(0) {
		t.Errorf("root: named %v leaf %v", x.Named(0), x.Leaf(0))
	}

	// A query of another grammar is refused loudly, not run on the wrong
	// symbols.
	py, err := e.CompileCaptureQuery("python", `(identifier) @x`)
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a Python query over a Go tree did not panic")
			}
		}()
		py.Each(x, func(*QueryMatch) bool { return true })
	}()
}

// goCaptureQuery is an engine without a parse cache, closed when t ends,
// and the Go capture query compiled on it.
func goCaptureQuery(t *testing.T) (*Engine, *CaptureQuery) {
	t.Helper()
	e := NewEngine(Options{CacheBytes: -1})
	t.Cleanup(func() { e.Close() })
	q, err := e.CompileCaptureQuery("go", captureQueries(t, "go"))
	if err != nil {
		t.Fatal(err)
	}
	return e, q
}

// CaptureSnippet gives what Capture gives for the same bytes in a file.
func TestCaptureSnippetEqualsFile(t *testing.T) {
	e, q := goCaptureQuery(t)
	path := filepath.Join(goroot(), "src", "strings", "strings.go")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the Go source this test reads: %v", err)
	}
	g, err := pathguard.New(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var fromFile []string
	err = e.Capture(context.Background(), g, []CaptureFile{{Path: path, Query: q}}, func(r *CaptureResult) {
		for i := range r.Matches {
			fromFile = append(fromFile, matchKey(&r.Matches[i], true))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.CaptureSnippet(context.Background(), q, src)
	if err != nil {
		t.Fatal(err)
	}
	var fromSnippet []string
	for i := range r.Matches {
		fromSnippet = append(fromSnippet, matchKey(&r.Matches[i], true))
	}
	if len(fromFile) == 0 || !slices.Equal(fromFile, fromSnippet) {
		t.Errorf("file %d matches, snippet %d; first difference %s", len(fromFile), len(fromSnippet), firstDiff(fromFile, fromSnippet))
	}
	// The snippet's tree is its own: valid after the call.
	if r.Tree.Kind(0) != "source_file" || r.Tree.Len() < 1000 {
		t.Errorf("snippet tree: root %q, %d nodes", r.Tree.Kind(0), r.Tree.Len())
	}
}

// A file Want declines is read, not parsed, and gets no result; the
// others are parsed as usual.
func TestCaptureWant(t *testing.T) {
	e, q := goCaptureQuery(t)
	root := t.TempDir()
	for _, n := range []string{"a.go", "b.go"} {
		os.WriteFile(filepath.Join(root, n), []byte("package p\n\nfunc "+n[:1]+"() {}\n"), 0o644)
	}
	g, err := pathguard.New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var seen []string
	skip := func(src []byte, info fs.FileInfo) bool {
		seen = append(seen, string(src[len(src)-7:])+info.Name())
		return false
	}
	var got []string
	err = e.Capture(context.Background(), g, []CaptureFile{{Path: filepath.Join(root, "a.go"), Query: q, Want: skip}, {Path: filepath.Join(root, "b.go"), Query: q}}, func(r *CaptureResult) {
		got = append(got, filepath.Base(r.File.Path))
		if r.Tree == nil || r.Err != nil {
			t.Errorf("%s: not parsed", r.File.Path)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"b.go"}) || !slices.Equal(seen, []string{"a() {}\na.go"}) {
		t.Fatalf("results for %v, Want saw %q", got, seen)
	}
}

// A grammar's fingerprint is the same in every engine that loads the same
// grammar, and differs between grammars and between library files.
func TestGrammarFingerprint(t *testing.T) {
	so := dartGrammar(t)
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	data, err := os.ReadFile(so)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range dirs {
		b := data
		if i == 2 {
			// The same code with bytes appended: another build as far as
			// a store key is concerned.
			b = append(slices.Clone(data), "another build"...)
		}
		if err := os.WriteFile(filepath.Join(d, "libtree-sitter-dart.so"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	print := func(e *Engine, lang string) string {
		t.Helper()
		f, err := e.GrammarFingerprint(lang)
		if err != nil {
			t.Fatalf("%s: %v", lang, err)
		}
		if len(f) != 32 {
			t.Fatalf("%s: fingerprint %q", lang, f)
		}
		return f
	}
	var e [3]*Engine
	for i, d := range dirs {
		e[i] = NewEngine(Options{GrammarDirs: []string{d}})
		defer e[i].Close()
	}
	seen := map[string]string{}
	for _, lang := range []string{"go", "python", "javascript", "typescript", "tsx", "rust", "c", "cpp", "dart"} {
		f := print(e[0], lang)
		if other, ok := seen[f]; ok {
			t.Errorf("%s and %s share fingerprint %s", lang, other, f)
		}
		seen[f] = lang
		if g := print(e[1], lang); g != f {
			t.Errorf("%s: two engines, two fingerprints: %s, %s", lang, f, g)
		}
		if print(e[0], lang) != f {
			t.Errorf("%s: asked twice, two fingerprints", lang)
		}
	}
	if print(e[0], "golang") != print(e[0], "go") {
		t.Error("an alias has another fingerprint than its id")
	}
	if print(e[2], "dart") == print(e[0], "dart") {
		t.Error("two different library files share a fingerprint")
	}
	if _, err := e[0].GrammarFingerprint("cobol"); err == nil {
		t.Error("an unknown language has a fingerprint")
	}
}
