package astgrep

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/builtin-tools/builtin-tools/astgrep/parsecache"
	"github.com/builtin-tools/builtin-tools/astgrep/procpool"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// freshProcessCache gives the test a process cache of its own, so the
// budget it sets does not outlive it.
func freshProcessCache(t *testing.T) {
	old := procCache
	procCache = parsecache.New[*tree](DefaultCacheBytes)
	t.Cleanup(func() { procCache = old })
}

func TestProcessCacheBudget(t *testing.T) {
	freshProcessCache(t)
	SetProcessCacheBytes(0)
	if n := procCache.Budget(); n != DefaultCacheBytes {
		t.Fatalf("SetProcessCacheBytes(0): limit %d", n)
	}
	NewEngine(Options{CacheBytes: 5}).Close() // ignored once set
	if n := procCache.Budget(); n != DefaultCacheBytes {
		t.Fatalf("an engine changed a budget SetProcessCacheBytes set: %d", n)
	}

	// Lowering the budget evicts; a negative one turns caching off.
	root := testenv.Tree(t, map[string]string{"a.go": "package p\n\nfunc f() { g(1) }\n"})
	e := NewEngine(Options{})
	defer e.Close()
	q := Query{Path: at(root), Pattern: "g($X)"}
	if _, err := e.Search(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	SetProcessCacheBytes(-1)
	if procCache.Len() != 0 {
		t.Fatal("a negative budget kept entries")
	}
	for i := 0; i < 2; i++ {
		r, err := e.Search(context.Background(), q)
		if err != nil || r.FilesCached != 0 || r.Total != 1 {
			t.Fatalf("caching off, run %d: %v %+v", i, err, r)
		}
	}
}

// The same query from two engines parses each file once.
func TestEnginesShareTheCache(t *testing.T) {
	root := testenv.Tree(t, map[string]string{
		"a.go": "package p\n\nfunc f() { g(1) }\n",
		"b.go": "package p\n\nfunc f() { g(2) }\n",
	})
	a, b := NewEngine(Options{}), NewEngine(Options{})
	defer b.Close()
	q := Query{Path: at(root), Pattern: "g($X)"}
	if r, err := a.Search(context.Background(), q); err != nil || r.FilesCached != 0 || r.Total != 2 {
		t.Fatalf("first engine: %v %+v", err, r)
	}
	if r, err := b.Search(context.Background(), q); err != nil || r.FilesCached != 2 || r.Total != 2 {
		t.Fatalf("second engine: %v %+v", err, r)
	}
	a.Close()
	if r, err := b.Search(context.Background(), q); err != nil || r.FilesCached != 2 {
		t.Fatalf("after the first engine closed: %v %+v", err, r)
	}
	// An engine out of the cache neither reads nor fills it.
	off := NewEngine(Options{CacheBytes: -1})
	defer off.Close()
	if r, err := off.Search(context.Background(), q); err != nil || r.FilesCached != 0 {
		t.Fatalf("engine with the cache off: %v %+v", err, r)
	}
}

// Concurrent searches from many engines over one tree agree, and each
// file is parsed about once.
func TestManyEnginesAtOnce(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 60; i++ {
		files[fmt.Sprintf("d%d/f%02d.go", i%3, i)] = fmt.Sprintf("package p\n\nfunc f%d() {\n\ty := %d\n\t_ = y\n}\n", i, i)
	}
	root := testenv.Tree(t, files)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	cached := make([]int, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			e := NewEngine(Options{})
			defer e.Close()
			res, err := e.Search(context.Background(), Query{Path: at(root), Pattern: "$A := $B"})
			if err == nil && res.Total != 60 {
				err = fmt.Errorf("total %d, want 60", res.Total)
			}
			if err != nil {
				errs <- err
				return
			}
			cached[i] = res.FilesCached
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	sum := 0
	for _, n := range cached {
		sum += n
	}
	// 8 searches of 60 files, each parsed once by whichever came first
	// (a file an engine closed before the next looked is parsed again).
	t.Logf("%d of %d file visits served from the cache", sum, 8*60)
}

// The edits that keep size and modification time (utimes set back, an
// atomic rename onto the file) are seen at once.
func TestCacheNoticesEditsThatKeepSizeAndMtime(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"a.go": "package p\n\nfunc f() { g(1) }\n"})
	p := filepath.Join(root, "a.go")
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	mtime := info.ModTime()
	e := NewEngine(Options{})
	defer e.Close()
	q := Query{Path: at(root), Pattern: "g($X)"}
	search := func(want string) *Result {
		t.Helper()
		r, err := e.Search(context.Background(), q)
		if err != nil || r.Total != 1 || r.Matches[0].Captures["X"].Text != want {
			t.Fatalf("want $X = %s: %v %+v", want, err, r)
		}
		return r
	}
	search("1")
	if r := search("1"); r.FilesCached != 1 {
		t.Fatalf("unchanged file not served from the cache: %+v", r)
	}
	// In place, same size, mtime set back.
	if err := os.WriteFile(p, []byte("package p\n\nfunc f() { g(2) }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	search("2")
	// Renamed over the file, same size, mtime set back.
	tmp := filepath.Join(root, ".a.go.tmp")
	if err := os.WriteFile(tmp, []byte("package p\n\nfunc f() { g(3) }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	search("3")
}

// A tree cached moments after its file was written is checked against
// the file's bytes: a second write within the same timestamp tick leaves
// the stamp as it was.
func TestRacyEntryIsChecked(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"a.go": "package p\n\nfunc f() { g(1) }\n"})
	p := filepath.Join(root, "a.go")
	e := NewEngine(Options{})
	defer e.Close()
	q := Query{Path: at(root), Pattern: "g($X)"}
	if _, err := e.Search(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	// Swap the cached tree's bytes for other ones under the file's stamp,
	// as if the file had changed without its stamp moving.
	l := e.langs.lookup("go")
	key := parsecache.Key{Path: p, Lang: "go", Grammar: l.ts.Addr()}
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := parsecache.StampOf(info)
	ent := e.cache.Lookup(key, st, procCache.NextGen())
	if !ent.Found || !ent.Racy {
		t.Fatalf("entry %+v: want a racy entry for a file just written", ent)
	}
	ent.Tree.src = []byte("package p\n\nfunc f() { g(9) }\n")
	r, err := e.Search(context.Background(), q)
	if err != nil || r.Total != 1 || r.Matches[0].Captures["X"].Text != "1" || r.FilesCached != 0 {
		t.Fatalf("racy entry served: %v %+v", err, r)
	}
}

// A search whose trees would fill much of the cache caches a tree only
// when it parses the file a second time, so a cold unselective search
// peaks at what it parses at once; a selective search over the same tree
// caches at first sight.
func TestLargeSearchCachesOnSecondSight(t *testing.T) {
	freshProcessCache(t)
	defer func(n int64) { parsecache.AdmissionSample = n }(parsecache.AdmissionSample)
	parsecache.AdmissionSample = 1 << 10
	files := map[string]string{}
	var body strings.Builder
	for i := range 200 {
		fmt.Fprintf(&body, "\tv%d := f(a, b%d) // a comment long enough that the tree costs about what real code costs\n", i, i)
	}
	const n = 40
	for i := range n {
		name := fmt.Sprintf("f%02d.go", i)
		files[name] = fmt.Sprintf("package p\n\nfunc F%d() {\n%s}\n", i, body.String())
		if i == 7 {
			files[name] += "\nfunc rare() { defer x.Close() }\n"
		}
	}
	root := testenv.Tree(t, files)
	// A budget twice what the search's trees take: they would fit, but
	// take more than the share a first sight may.
	e := NewEngine(Options{})
	defer e.Close()
	l := e.langs.lookup("go")
	l.load()
	p := procpool.Parser()
	src := []byte(files["f00.go"])
	nodes, err := p.Parse(context.Background(), l.g, src, nil, nil)
	procpool.PutParser(p)
	if err != nil {
		t.Fatal(err)
	}
	SetProcessCacheBytes(2 * n * treeCost(len(src), len(nodes)))

	q := Query{Path: at(root), Pattern: "$X := $Y"}
	first, err := e.Search(context.Background(), q)
	if err != nil || first.FilesParsed != n || first.FilesCached != 0 {
		t.Fatalf("first: %v %+v", err, first)
	}
	second, err := e.Search(context.Background(), q)
	if err != nil || second.FilesCached >= n/4 {
		t.Fatalf("second search: %v; %d of %d files from the cache, want only the few the first search's sample cached", err, second.FilesCached, n)
	}
	third, err := e.Search(context.Background(), q)
	if err != nil || third.FilesCached != n || third.Total != first.Total {
		t.Fatalf("third search: %v; %d of %d files from the cache (%d matches, first %d)", err, third.FilesCached, n, third.Total, first.Total)
	}

	// A selective search over a fresh copy: its one tree is cached at once.
	root2 := testenv.Tree(t, files)
	sel := Query{Path: at(root2), Pattern: "defer $X.Close()"}
	if r, err := e.Search(context.Background(), sel); err != nil || r.FilesParsed != 1 || r.Total != 1 {
		t.Fatalf("selective: %v %+v", err, r)
	}
	if r, err := e.Search(context.Background(), sel); err != nil || r.FilesCached != 1 {
		t.Fatalf("selective again: %v %+v", err, r)
	}
}
