package scmmatch

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/astgrep/scmquery"
	"github.com/builtin-tools/builtin-tools/astgrep/tsnative"
)

// corpus is what the matcher is tested over, by language (a bundled
// grammar's name) and file extension: astgrep's cross-check fixtures and,
// for Go, a few packages of GOROOT/src.
func corpus(t *testing.T) map[string][]string {
	t.Helper()
	exts := map[string]string{"python": ".py", "javascript": ".js", "typescript": ".ts", "rust": ".rs", "go": ".go"}
	dirs := map[string][]string{}
	for lang := range exts {
		if lang != "go" {
			dirs[lang] = []string{filepath.Join("..", "testdata", "crosscheck", lang)}
		}
	}
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		src := filepath.Join(strings.TrimSpace(string(out)), "src")
		for _, d := range []string{"go/ast", "go/parser", "net/url", "strings", "sort"} {
			dirs["go"] = append(dirs["go"], filepath.Join(src, d))
		}
	}
	files := map[string][]string{}
	for lang, ds := range dirs {
		for _, d := range ds {
			err := filepath.WalkDir(d, func(p string, de fs.DirEntry, err error) error {
				if err == nil && !de.IsDir() && filepath.Ext(p) == exts[lang] {
					files[lang] = append(files[lang], p)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if len(files[lang]) == 0 {
			t.Fatalf("%s: no files under %v", lang, ds)
		}
	}
	return files
}

// grammar is the bundled grammar lang, its tables, and its names as a
// query is read against them.
func grammar(t *testing.T, lang string) (tsnative.Language, *tsnative.Grammar, scmquery.Grammar) {
	t.Helper()
	ts, ok := tsnative.Bundled(lang)
	if !ok {
		t.Fatalf("no bundled %s grammar", lang)
	}
	g := tsnative.NewGrammar(ts)
	names := scmquery.Grammar{Symbols: make([]string, ts.SymbolCount()), Named: make([]bool, ts.SymbolCount()), Fields: g.Fields}
	for i := range names.Symbols {
		names.Symbols[i] = ts.SymbolName(uint16(i))
		names.Named[i] = g.Named[i] == 1
	}
	return ts, g, names
}

// queries are what the matcher runs, by name: the query written for the
// tests (testdata, every construct the query language has) and the code
// graph's tags.scm for lang.
func queries(t *testing.T, lang string) map[string]string {
	t.Helper()
	out := map[string]string{}
	paths, _ := filepath.Glob(filepath.Join("..", "..", "graph", "languages", lang, "tags.scm"))
	for _, p := range append(paths, filepath.Join("testdata", lang+".scm")) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = string(b)
	}
	return out
}

// TestMatcherEqualsReference: Run gives exactly the matches of the
// reference matcher (the matcher as it was before its allocations were
// taken out, candidates found without the index), in the same order,
// and At at every node gives them again.
func TestMatcherEqualsReference(t *testing.T) {
	p := tsnative.NewParser()
	defer p.Close()
	total := 0
	for lang, files := range corpus(t) {
		ts, g, names := grammar(t, lang)
		type parsed struct {
			path  string
			nodes []tsnative.Node
		}
		var trees []parsed
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			nodes, err := p.Parse(context.Background(), g, src, nil, func(n int) []tsnative.Node { return make([]tsnative.Node, n) })
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			trees = append(trees, parsed{f, nodes})
		}
		for name, source := range queries(t, lang) {
			pats, _, err := scmquery.Parse(names, source)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			q := New(pats, ts.SymbolCount()+1)
			n := 0
			var m Matcher
			for _, tr := range trees {
				want := referenceRun(q, tr.nodes)
				var got, at []string
				m.Reset(tr.nodes)
				m.Run(q, func(pi int, caps []Cap) { got = append(got, matchKey(pi, caps)) })
				for i := range tr.nodes {
					m.At(q, i, func(pi int, caps []Cap) { at = append(at, matchKey(pi, caps)) })
				}
				m.Release()
				if !slices.Equal(got, want) {
					t.Errorf("%s over %s: Run gave %d matches, the reference %d; first difference %s", name, tr.path, len(got), len(want), firstDiff(got, want))
				}
				if !slices.Equal(at, want) {
					t.Errorf("%s over %s: At at every node gave %d matches, the reference %d; first difference %s", name, tr.path, len(at), len(want), firstDiff(at, want))
				}
				n += len(want)
			}
			if n == 0 {
				t.Errorf("%s: no matches over %d %s files", name, len(trees), lang)
			}
			total += n
		}
	}
	if total == 0 {
		t.Fatal("no matches at all")
	}
}

// A visitor's Stop ends the run at the match it was given.
func TestMatcherStops(t *testing.T) {
	ts, g, names := grammar(t, "go")
	pats, _, err := scmquery.Parse(names, "(identifier) @id")
	if err != nil {
		t.Fatal(err)
	}
	p := tsnative.NewParser()
	defer p.Close()
	nodes, err := p.Parse(context.Background(), g, []byte("package p\nvar a, b, c = d, e, f\n"), nil, func(n int) []tsnative.Node { return make([]tsnative.Node, n) })
	if err != nil {
		t.Fatal(err)
	}
	var m Matcher
	m.Reset(nodes)
	all := 0
	m.Run(New(pats, ts.SymbolCount()+1), func(int, []Cap) { all++ })
	m.Reset(nodes)
	seen := 0
	m.Run(New(pats, ts.SymbolCount()+1), func(int, []Cap) {
		if seen++; seen == 2 {
			m.Stop()
		}
	})
	if all != 6 || seen != 2 {
		t.Errorf("a full run saw %d identifiers (want 6), one stopped at the second saw %d", all, seen)
	}
}

// referenceRun is Run with the reference matcher and the candidates at
// each node worked out from the patterns, not the index.
func referenceRun(q *Query, nodes []tsnative.Node) []string {
	var out []string
	var anyRoot []int
	for pi, p := range q.pats {
		if _, ok := rootSet(p.Root); !ok {
			anyRoot = append(anyRoot, pi)
		}
	}
	m := &refMatcher{Matcher{nodes: nodes}}
	for i := range nodes {
		var cands []int
		for pi, p := range q.pats {
			syms, ok := rootSet(p.Root)
			if ok && slices.Contains(syms, nodes[i].Sym) {
				cands = append(cands, pi)
			}
		}
		cands = append(cands, anyRoot...)
		sort.Ints(cands)
		for _, pi := range cands {
			m.match(i, q.pats[pi].Root, nil, func(caps []Cap) { out = append(out, matchKey(pi, caps)) })
		}
	}
	return out
}

func matchKey(pi int, caps []Cap) string {
	var b strings.Builder
	fmt.Fprintf(&b, "p%d", pi)
	for _, c := range caps {
		fmt.Fprintf(&b, " %d@%d", c.Capture, c.Node)
	}
	return b.String()
}

func firstDiff(a, b []string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	at := func(s []string) string {
		if i < len(s) {
			return s[i]
		}
		return "(none)"
	}
	return fmt.Sprintf("at %d: %q vs %q", i, at(a), at(b))
}

// refMatcher is the capture query matcher as it was before its
// allocations were taken out, kept as the reference the matcher is held
// to: its own match, assign and children; the predicates, which never
// allocated, are the matcher's, and so are the end of assign and the walk
// over a quantified child's positions (assignEnd), run with the
// reference's matching.
type refMatcher struct {
	Matcher
}

func (m *refMatcher) children(i int) []int {
	end := int(m.nodes[i].Last)
	var out []int
	for c := i + 1; c < end; c = int(m.nodes[c].Last) {
		out = append(out, c)
	}
	return out
}

// match tries node i against q and calls k with the captures of each way
// it matches.
func (m *refMatcher) match(i int, q *scmquery.Node, caps []Cap, k func([]Cap)) {
	if q.Kind == scmquery.KindAlt {
		for _, a := range q.Alts {
			m.match(i, a, caps, func(c []Cap) {
				k(refWithCaps(c, q.Captures, i))
			})
		}
		return
	}
	if !m.kindOK(i, q) || m.cannot(i, q) {
		return
	}
	if len(q.NegFields) > 0 || len(q.Children) > 0 {
		kids := m.children(i)
		for _, f := range q.NegFields {
			for _, c := range kids {
				if m.nodes[c].Field == f {
					return
				}
			}
		}
		caps = refWithCaps(caps, q.Captures, i)
		if len(q.Children) == 0 {
			k(caps)
			return
		}
		m.assign(q, kids, 0, 0, -1, caps, k)
		return
	}
	k(refWithCaps(caps, q.Captures, i))
}

func refWithCaps(caps []Cap, ids []int, node int) []Cap {
	if len(ids) == 0 {
		return caps
	}
	out := make([]Cap, len(caps), len(caps)+len(ids))
	copy(out, caps)
	for _, id := range ids {
		out = append(out, Cap{id, node})
	}
	return out
}

// assign matches q's children from ci on against kids from j on; last is
// the position of the previous child matched (-1 before any).
func (m *refMatcher) assign(q *scmquery.Node, kids []int, ci, j, last int, caps []Cap, k func([]Cap)) {
	if m.assignEnd(q, kids, ci, j, last, caps, k, m.firstOf, m.assign) {
		return
	}
	ch := q.Children[ci]
	lo, hi := m.positions(ch, kids, j)
	for p := lo; p < hi; p++ {
		if m.fits(ch, kids[p]) {
			m.match(kids[p], ch.Node, caps, func(c []Cap) {
				m.assign(q, kids, ci+1, p+1, p, c, k)
			})
		}
	}
}

// firstOf is the captures of the first way node c matches q.
func (m *refMatcher) firstOf(c int, q *scmquery.Node, caps []Cap) ([]Cap, bool) {
	var got []Cap
	ok := false
	m.match(c, q, caps, func(c []Cap) {
		if !ok {
			got, ok = c, true
		}
	})
	return got, ok
}
