package graph

import (
	"context"
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/graph/index"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

var update = flag.Bool("update", false, "rewrite the fixtures' golden files")

// eachArchive runs check in a subtest, named for the archive, on each txtar
// archive glob matches; at least one must.
func eachArchive(t *testing.T, glob string, check func(t *testing.T, path string, ar *txtar.Archive)) {
	t.Helper()
	paths, err := filepath.Glob(glob)
	if err != nil || len(paths) == 0 {
		t.Fatalf("no archives match %s: %v", glob, err)
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txtar"), func(t *testing.T) {
			check(t, p, readArchive(t, p))
		})
	}
}

func readArchive(t testing.TB, path string) *txtar.Archive {
	t.Helper()
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return ar
}

// fixture is testdata/fixtures/name.txtar, indexed.
func fixture(t *testing.T, name string) tq {
	t.Helper()
	return buildFixture(t, readArchive(t, filepath.Join("testdata", "fixtures", name+".txtar")))
}

// buildFixture writes a txtar archive's files (all but "expect") under a
// new root and indexes it.
func buildFixture(t *testing.T, ar *txtar.Archive) tq {
	t.Helper()
	return buildFixtureOpts(t, ar, Options{})
}

func buildFixtureOpts(t *testing.T, ar *txtar.Archive, opts Options) tq {
	t.Helper()
	root := t.TempDir()
	files := map[string][]byte{}
	for _, f := range ar.Files {
		if f.Name != "expect" {
			files[f.Name] = f.Data
		}
	}
	testenv.WriteTree(t, root, files)
	return buildRootOpts(t, root, opts)
}

func buildRoot(t testing.TB, root string) tq {
	t.Helper()
	return buildRootOpts(t, root, Options{})
}

func buildRootOpts(t testing.TB, root string, opts Options) tq {
	t.Helper()
	x := newIndex(t, root, opts)
	x.Start(nil)
	if !x.Wait(context.Background(), time.Minute) {
		t.Fatal("index not built in a minute")
	}
	return queries(x)
}

// guardOf is a guard of root, closed when the test ends.
func guardOf(t testing.TB, root string) *pathguard.Guard {
	t.Helper()
	g, err := pathguard.New(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// newIndex is an index over root, closed when the test ends; its build
// has not started.
func newIndex(t testing.TB, root string, opts Options) *index.Index {
	t.Helper()
	g := guardOf(t, root)
	e := astgrep.NewEngine(astgrep.Options{})
	t.Cleanup(func() { e.Close() })
	x, err := index.New(g, e, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Close)
	return x
}

// tq is an index and the queries on its views, or (Index nil) the queries
// on one view ahead of an index, for tests.
type tq struct {
	*index.Index
	view func(synced int) View
}

func queries(x *index.Index) tq {
	w := NewViewer(x)
	return tq{x, w.View}
}

func (x tq) Find(query, kind string, limit, synced int) (*Answer, error) {
	return Find(x.view(synced), query, kind, limit)
}
func (x tq) Callers(s Spec, synced int) (*Answer, error) { return Callers(x.view(synced), s) }
func (x tq) Callees(s Spec, synced int) (*Answer, error) { return Callees(x.view(synced), s) }
func (x tq) Impact(s Spec, depth, perDepth, synced int) (*Answer, error) {
	return Impact(x.view(synced), s, depth, perDepth)
}
func (x tq) StatusAnswer(synced int) *Answer { return StatusAnswer(x.view(synced), x.Stats()) }
func (x tq) Dump() string                    { return Dump(x.view(0)) }
func (x tq) TagOnly(rel string) string       { return TagOnly(x.view(0), rel) }

// Ahead is the queries on the view Ahead makes of x.
func (x tq) Ahead(ctx context.Context, sym string, callees bool) (tq, error) {
	v, err := Ahead(ctx, x.Index, sym, callees)
	if v == nil {
		return tq{}, err
	}
	return tq{view: func(int) View { return *v }}, err
}

func (x tq) AheadFind(ctx context.Context, q string) (tq, error) {
	v, err := AheadFind(ctx, x.Index, q)
	if v == nil {
		return tq{}, err
	}
	return tq{view: func(int) View { return *v }}, err
}

// TestFixtures checks each language's fixture project: the hand-written
// edges under "expect" must be in the index with the class given, and the
// whole dump must equal the golden file (go test -run TestFixtures -update
// rewrites it; review the diff).
func TestFixtures(t *testing.T) {
	eachArchive(t, "testdata/fixtures/*.txtar", func(t *testing.T, p string, ar *txtar.Archive) {
		checkDump(t, p, ar, buildFixture(t, ar).Dump())
	})
}

// checkExpect checks lines of the form
//
//	CALLER -> CALLEE CLASS
//
// (CLASS exact, import, interface, candidate, implementation, unresolved; CALLEE is a qualified name,
// or for unresolved the call's text), and "def KIND QUALIFIED".
func checkExpect(t *testing.T, dump, expect string) {
	t.Helper()
	lines := strings.Split(dump, "\n")
	for _, e := range strings.Split(expect, "\n") {
		e = strings.TrimSpace(e)
		if e == "" || strings.HasPrefix(e, "#") {
			continue
		}
		if rest, ok := strings.CutPrefix(e, "def "); ok {
			kind, q, _ := strings.Cut(rest, " ")
			found := false
			for _, l := range lines {
				if strings.HasPrefix(l, "def ") && strings.HasSuffix(l, " "+kind+" "+q) {
					found = true
				}
			}
			if !found {
				t.Errorf("expected definition %s %s; not in the index", kind, q)
			}
			continue
		}
		caller, rest, ok := strings.Cut(e, " -> ")
		f := strings.Fields(rest)
		if !ok || len(f) != 2 {
			t.Errorf("bad expect line %q", e)
			continue
		}
		callee, class := f[0], f[1]
		found := false
		var near []string
		for _, l := range lines {
			if !strings.HasPrefix(l, "call ") && !strings.HasPrefix(l, "value ") && !strings.HasPrefix(l, "type ") {
				continue
			}
			if !strings.Contains(l, " in "+caller+" -> ") {
				continue
			}
			near = append(near, l)
			_, res, _ := strings.Cut(l, " -> ")
			switch class {
			case "unresolved":
				call := strings.Fields(l)[2]
				found = found || strings.HasPrefix(res, "unresolved") && call == callee
			case "candidate":
				found = found || strings.HasPrefix(res, "candidate[") && strings.Contains(res, " "+callee+" (")
			case "implementation":
				_, impls, ok := strings.Cut(res, " implementation[")
				found = found || (strings.HasPrefix(res, "exact ") || strings.HasPrefix(res, "interface ")) && ok && strings.Contains(impls, " "+callee+" (")
			default:
				found = found || strings.HasPrefix(res, class+" "+callee+" (")
			}
		}
		if !found {
			t.Errorf("expected %s -> %s (%s); the index has:\n  %s", caller, callee, class, strings.Join(near, "\n  "))
		}
	}
}

// checkDump holds a fixture's dump to its expect section and to its
// golden file (written instead with -update).
func checkDump(t *testing.T, p string, ar *txtar.Archive, dump string) {
	t.Helper()
	for _, f := range ar.Files {
		if f.Name == "expect" {
			checkExpect(t, dump, string(f.Data))
		}
	}
	testenv.Golden(t, strings.TrimSuffix(p, ".txtar")+".golden", dump, *update)
}
