package astgrep

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

func TestCacheAdmissionKeepsFirstEntriesOfAScan(t *testing.T) {
	c := newParseCache(1000)
	u := c.user()
	st := fileStamp{size: 100, mtime: 1, ctime: 1}
	key := func(i int) cacheKey { return cacheKey{path: fmt.Sprint(i), lang: "go"} }
	cost := treeCost(100, 0)
	for i := 0; i < 20; i++ {
		r := u.lookup(key(i), st, 1)
		if r.claim == nil {
			t.Fatalf("file %d: no claim on a miss", i)
		}
		if c.admit(cost, 1) {
			u.fill(r.claim, &tree{src: make([]byte, 100)}, cost, 1, false)
		} else {
			c.abandon(r.claim)
		}
	}
	if c.used > c.limit {
		t.Fatalf("used %d over limit %d", c.used, c.limit)
	}
	if r := u.lookup(key(0), st, 2); r.t == nil {
		t.Fatal("the first entry of a scan was evicted by the same scan")
	}
	// A later query may evict entries it has not used.
	if !c.admit(cost, 2) {
		t.Fatal("a new query could not evict an old query's entries")
	}
}

// Every part of the stamp counts: a file that changed in any of them is
// parsed again.
func TestCacheStampMismatchMisses(t *testing.T) {
	c := newParseCache(1 << 20)
	u := c.user()
	key := cacheKey{path: "/x/a.go", lang: "go"}
	base := fileStamp{dev: 1, ino: 2, size: 3, mtime: 4, ctime: 5}
	put := func(st fileStamp) {
		r := u.lookup(key, st, 1)
		if r.claim == nil {
			t.Fatalf("%+v: no claim", st)
		}
		if !c.admit(10, 1) {
			t.Fatal("not admitted")
		}
		u.fill(r.claim, &tree{}, 10, 1, false)
	}
	put(base)
	for _, change := range []func(*fileStamp){
		func(s *fileStamp) { s.dev++ },
		func(s *fileStamp) { s.ino++ },
		func(s *fileStamp) { s.size++ },
		func(s *fileStamp) { s.mtime++ },
		func(s *fileStamp) { s.ctime++ },
	} {
		st := base
		change(&st)
		r := u.lookup(key, st, 2)
		if r.t != nil {
			t.Fatalf("stamp %+v served the tree of %+v", st, base)
		}
		c.abandon(r.claim)
		put(base)
	}
	if r := u.lookup(key, base, 3); r.t == nil {
		t.Fatal("the same stamp missed")
	}
	// Another grammar for the same id is another key.
	other := key
	other.grammar = 1
	if r := u.lookup(other, base, 3); r.t != nil {
		t.Fatal("another grammar's tree was served")
	}
}

// A search that finds a file being parsed by another waits for that
// parse instead of parsing again; an abandoned parse lets it claim.
func TestCachePendingParseIsWaitedFor(t *testing.T) {
	c := newParseCache(1 << 20)
	a, b := c.user(), c.user()
	key := cacheKey{path: "/x/a.go", lang: "go"}
	st := fileStamp{size: 1}
	ra := a.lookup(key, st, 1)
	rb := b.lookup(key, st, 2)
	if ra.claim == nil || rb.wait == nil {
		t.Fatalf("first %+v, second %+v: want a claim, then a wait", ra, rb)
	}
	// Another version of the file is not waited for.
	if r := b.lookup(key, fileStamp{size: 2}, 2); r.wait != nil || r.claim != nil || r.t != nil {
		t.Fatalf("another version: %+v, want nothing", r)
	}
	c.abandon(ra.claim)
	<-rb.wait
	rb = b.lookup(key, st, 2)
	if rb.claim == nil {
		t.Fatalf("after the abandon: %+v, want a claim", rb)
	}
	tr := &tree{}
	if !c.admit(10, 2) {
		t.Fatal("not admitted")
	}
	ra = a.lookup(key, st, 1)
	b.fill(rb.claim, tr, 10, 2, false)
	<-ra.wait
	if r := a.lookup(key, st, 1); r.t != tr {
		t.Fatal("the filled tree was not served to the waiter")
	}
}

// Closing an engine evicts the trees only it used and keeps those another
// open engine used.
func TestCacheCloseKeepsTreesOthersUse(t *testing.T) {
	c := newParseCache(1 << 20)
	a, b := c.user(), c.user()
	st := fileStamp{size: 1}
	add := func(u *cacheUser, path string) {
		r := u.lookup(cacheKey{path: path}, st, 1)
		if r.claim == nil {
			if r.t == nil {
				t.Fatalf("%s: %+v", path, r)
			}
			return
		}
		if !c.admit(10, 1) {
			t.Fatal("not admitted")
		}
		u.fill(r.claim, &tree{}, 10, 1, false)
	}
	add(a, "shared")
	add(b, "shared")
	add(a, "only-a")
	add(b, "only-b")
	a.release()
	if _, ok := c.byKey[cacheKey{path: "only-a"}]; ok {
		t.Error("a tree only the closed engine used is still cached")
	}
	for _, p := range []string{"shared", "only-b"} {
		if _, ok := c.byKey[cacheKey{path: p}]; !ok {
			t.Errorf("%s was evicted by another engine's Close", p)
		}
	}
	b.release()
	if len(c.byKey) != 0 || c.used != 0 || c.lru.Len() != 0 {
		t.Errorf("after both closed: %d entries, %d bytes", len(c.byKey), c.used)
	}
}

// saveBudget returns a function that puts the process cache's budget
// back as it was.
func saveBudget() func() {
	c := procCache
	c.mu.Lock()
	limit, fixed, asked := c.limit, c.fixed, c.asked
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		c.limit, c.fixed, c.asked = limit, fixed, asked
		c.mu.Unlock()
	}
}

func TestCacheBudget(t *testing.T) {
	c := newParseCache(1 << 20)
	c.ask(100)
	c.ask(200) // only the first engine that names a budget sets it
	if c.limit != 100 {
		t.Fatalf("limit %d, want 100", c.limit)
	}
	defer saveBudget()()
	SetProcessCacheBytes(0)
	if procCache.limit != DefaultCacheBytes {
		t.Fatalf("SetProcessCacheBytes(0): limit %d", procCache.limit)
	}
	procCache.ask(5) // ignored once set
	if procCache.limit != DefaultCacheBytes {
		t.Fatalf("an engine changed a budget SetProcessCacheBytes set: %d", procCache.limit)
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
	if procCache.lru.Len() != 0 {
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
	key := cacheKey{path: p, lang: "go", grammar: grammarAddr(l.ts)}
	procCache.mu.Lock()
	ent := procCache.byKey[key]
	if ent == nil || !ent.racy {
		procCache.mu.Unlock()
		t.Fatalf("entry %+v: want a racy entry for a file just written", ent)
	}
	stale := *ent.t
	stale.src = []byte("package p\n\nfunc f() { g(9) }\n")
	ent.t = &stale
	procCache.mu.Unlock()
	r, err := e.Search(context.Background(), q)
	if err != nil || r.Total != 1 || r.Matches[0].Captures["X"].Text != "1" || r.FilesCached != 0 {
		t.Fatalf("racy entry served: %v %+v", err, r)
	}
	// A file whose change time is older than the window is trusted.
	now := time.Now()
	if racy(fileStamp{ctime: now.Add(-3 * time.Second).UnixNano()}, now) || !racy(fileStamp{ctime: now.UnixNano()}, now) {
		t.Error("racy() misjudges the window")
	}
}

// A search whose trees would fill much of the cache caches a tree only
// when it parses the file a second time, so a cold unselective search
// peaks at what it parses at once; a selective search over the same tree
// caches at first sight.
func TestLargeSearchCachesOnSecondSight(t *testing.T) {
	defer saveBudget()()
	defer func(n int64) { admissionSample = n }(admissionSample)
	admissionSample = 1 << 10
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
	p := getParser()
	src := []byte(files["f00.go"])
	nodes, err := p.parse(context.Background(), l.g, src, nil, nil)
	putParser(p)
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
