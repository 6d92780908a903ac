package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/graph/snap"
	"github.com/builtin-tools/builtin-tools/graph/store"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// coldIndex is an index over root whose build has not started.
func coldIndex(t testing.TB, root string, opts Options) *Index {
	t.Helper()
	g, err := pathguard.New(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	e := astgrep.NewEngine(astgrep.Options{})
	t.Cleanup(func() { e.Close() })
	x, err := New(g, e, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Close)
	return x
}

func buildRootOpts(t testing.TB, root string, opts Options) *Index {
	t.Helper()
	x := coldIndex(t, root, opts)
	x.Start(nil)
	if !x.Wait(context.Background(), time.Minute) {
		t.Fatal("index not built in a minute")
	}
	return x
}

// defs lists the snapshot's definitions as path:name, in path order.
func defs(s *snap.Snapshot) string {
	var out []string
	for f := range s.Files() {
		for i := range f.Defs {
			out = append(out, f.Rel+":"+f.Defs[i].Name)
		}
	}
	return strings.Join(out, " ")
}

// refsTo lists the references to name as path:enclosing definition.
func refsTo(s *snap.Snapshot, name string) []string {
	var out []string
	for f := range s.Files() {
		for i := range f.Refs {
			if r := &f.Refs[i]; f.RefName(r) == name {
				in := "(top level)"
				if r.Encl >= 0 {
					in = f.Defs[r.Encl].Name
				}
				out = append(out, f.Rel+":"+in)
			}
		}
	}
	return out
}

// Files changed on disk by something other than the registry are noticed
// when the index syncs (before every answer): an edited file, a new file
// in a new folder, a deleted one — by file events, and by stamps where
// there are none.
func TestSyncSeesOutsideChanges(t *testing.T) {
	t.Run("watched", func(t *testing.T) { testOutsideChanges(t, false) })
	t.Run("stamps", func(t *testing.T) { testOutsideChanges(t, true) })
}

// stopWatching closes x's file watcher: changes are then seen by their
// stamps only.
func stopWatching(x *Index) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.watch != nil {
		x.watch.Close()
		x.watch = nil
	}
}

func testOutsideChanges(t *testing.T, noWatcher bool) {
	root := testenv.Tree(t, map[string]string{
		"go.mod": "module m\n",
		"a.go":   "package m\n\nfunc Target() {}\n",
		"b.go":   "package m\n\nfunc B() { Target() }\n",
	})
	x := buildRootOpts(t, root, Options{})
	if noWatcher {
		stopWatching(x)
	} else if x.watch == nil {
		t.Logf("no watcher here (%s): the stamp check is what is tested", x.watchNote)
	}
	sync := func() *snap.Snapshot {
		t.Helper()
		if _, err := x.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		return x.Snapshot()
	}
	if got := refsTo(sync(), "Target"); !slices.Equal(got, []string{"b.go:B"}) {
		t.Fatalf("before: %v", got)
	}
	// Same size, so only the modification time tells.
	time.Sleep(10 * time.Millisecond)
	testenv.WriteTree(t, root, map[string]string{"b.go": "package m\n\nfunc C() { Target() }\n"})
	if got := refsTo(sync(), "Target"); !slices.Equal(got, []string{"b.go:C"}) {
		t.Fatalf("an edit outside the registry was not seen: %v", got)
	}
	testenv.WriteTree(t, root, map[string]string{"sub/deep/c.go": "package deep\n\nimport \"m\"\n\nfunc D() { m.Target() }\n"})
	if got := refsTo(sync(), "Target"); !slices.Equal(got, []string{"b.go:C", "sub/deep/c.go:D"}) {
		t.Fatalf("a new file in a new folder was not seen: %v", got)
	}
	if err := os.Remove(filepath.Join(root, "b.go")); err != nil {
		t.Fatal(err)
	}
	if got := refsTo(sync(), "Target"); !slices.Equal(got, []string{"sub/deep/c.go:D"}) {
		t.Fatalf("a deleted file is still in the index: %v", got)
	}
}

// N21: a file rewritten in place with its size and modification time
// restored is read again, by a warm start from the snapshot and by a
// stamp sweep: its change time moved.
func TestRewriteKeepingMtime(t *testing.T) {
	root, cache := t.TempDir(), t.TempDir()
	testenv.WriteTree(t, root, map[string]string{"go.mod": "module p\n", "a.go": "package p\n\nfunc Alpha() {}\n"})
	cold := buildRootOpts(t, root, Options{StoreDir: cache})
	cold.Flush(context.Background())
	abs := filepath.Join(root, "a.go")
	before, err := os.Stat(abs)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // a change time the clock can tell apart
	f, err := os.OpenFile(abs, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("package p\n\nfunc Omega() {}\n"), 0) // same size
	f.Close()
	if err := os.Chtimes(abs, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
	warm := buildRootOpts(t, root, Options{StoreDir: cache})
	warm.Flush(context.Background())
	if d := defs(warm.Snapshot()); d != "a.go:Omega" {
		t.Fatalf("a warm start served the stale record: %s", d)
	}
	// The first index, checking stamps (no watcher), sees it too.
	if _, err := cold.sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := defs(cold.Snapshot()); d != "a.go:Omega" {
		t.Fatalf("a stamp sweep missed the rewrite: %s", d)
	}
}

// A partial snapshot holds every file of the tree, unparsed, and parses
// only what it is asked to; the index's own snapshot is untouched by it.
func TestPartial(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{"go.mod": "module m\n"}
	for i := range AheadMinFiles {
		files[fmt.Sprintf("p%d/f%d.go", i%7, i)] = fmt.Sprintf("package p%d\n\nfunc F%d() {}\n", i%7, i)
	}
	testenv.WriteTree(t, root, files)
	x := coldIndex(t, root, Options{})
	p, err := x.NewPartial(context.Background())
	if err != nil || p == nil {
		t.Fatalf("partial: %v %v", p, err)
	}
	if s := p.Snapshot(); s.Len() != AheadMinFiles || len(s.Mods()) != 1 || defs(s) != "" {
		t.Fatalf("a new partial snapshot: %d files, modules %v, definitions %q", s.Len(), s.Mods(), defs(s))
	}
	hit := p.Scan(context.Background(), p.Files(), [][]byte{[]byte("F17()")}, false)
	var want []string
	for i, e := range p.Files() {
		if hit[i] {
			want = append(want, e.Rel)
		}
	}
	var es = p.Files()[:0:0]
	for i, e := range p.Files() {
		if hit[i] {
			es = append(es, e)
		}
	}
	if err := p.Parse(context.Background(), es); err != nil {
		t.Fatal(err)
	}
	if d := defs(p.Snapshot()); d != "p3/f17.go:F17" || !slices.Equal(want, []string{"p3/f17.go"}) {
		t.Fatalf("after parsing %v: %q", want, d)
	}
	if len(p.Unparsed(p.Files())) != AheadMinFiles-1 || x.Snapshot().Len() != 0 {
		t.Fatalf("%d unparsed, the index holds %d files", len(p.Unparsed(p.Files())), x.Snapshot().Len())
	}
	// A small tree is not worth one.
	small := t.TempDir()
	testenv.WriteTree(t, small, map[string]string{"a.go": "package a\n"})
	if p, err := coldIndex(t, small, Options{}).NewPartial(context.Background()); p != nil || err != nil {
		t.Fatalf("a partial of a small tree: %v %v", p, err)
	}
}

// After files are re-read, the root's manifest is written again soon, not
// only at Close: a process that is killed leaves a manifest naming the
// files as they were a moment ago.
func TestManifestWrittenAfterRefresh(t *testing.T) {
	defer func(d time.Duration) { manifestDelay = d }(manifestDelay)
	manifestDelay = 20 * time.Millisecond
	root, cache := t.TempDir(), t.TempDir()
	testenv.WriteTree(t, root, map[string]string{"go.mod": "module m\n", "a.go": "package m\n\nfunc A() {}\n", "b.go": "package m\n\nfunc B() { A() }\n"})
	x := buildRootOpts(t, root, Options{StoreDir: cache})
	x.Flush(context.Background())
	testenv.WriteTree(t, root, map[string]string{"a.go": "package m\n\nfunc A() {}\n\nfunc A2() {}\n"})
	if err := x.Refresh(context.Background(), filepath.Join(root, "a.go")); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(root, "a.go"))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if m, ok := x.st.Manifest(x.root, x.setKey); ok {
			i := slices.IndexFunc(m.Files, func(f store.File) bool { return f.Path == "a.go" })
			if i >= 0 && m.Files[i].Size == info.Size() && m.Files[i].ModTime == info.ModTime().UnixNano() {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the manifest still names a.go as it was before the refresh")
		}
		// The write is the index's own timer's: polled on the real clock.
		time.Sleep(10 * time.Millisecond)
	}
}

// A change made outside the tools to more files than Sync reads at once:
// Sync re-reads syncNow of them and returns, the rest are pending, and the
// background refresher reads them; by file events and by stamps.
func TestSyncLeavesALargeChangeToTheRefresher(t *testing.T) {
	t.Run("watched", func(t *testing.T) { testLargeChange(t, false) })
	t.Run("stamps", func(t *testing.T) { testLargeChange(t, true) })
}

func testLargeChange(t *testing.T, noWatcher bool) {
	const n = 40
	root := t.TempDir()
	files := map[string]string{"go.mod": "module m\n", "a.go": "package m\n\nfunc Target() {}\n"}
	for i := range n {
		files[fmt.Sprintf("b%02d.go", i)] = fmt.Sprintf("package m\n\nfunc B%02d() {}\n", i)
	}
	testenv.WriteTree(t, root, files)
	release, held := make(chan struct{}), make(chan struct{}, n)
	BeforeBackgroundReadForTest = func(string) {
		held <- struct{}{}
		<-release
	}
	t.Cleanup(func() { BeforeBackgroundReadForTest = nil })
	x := buildRootOpts(t, root, Options{})
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release) // before the index closes: its workers wait on it
		}
	})
	if noWatcher {
		stopWatching(x)
	}
	if _, err := x.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // modification times the stamps tell apart
	changed := map[string]string{}
	for i := range n {
		changed[fmt.Sprintf("b%02d.go", i)] = fmt.Sprintf("package m\n\nfunc B%02d() { Target() }\n", i)
	}
	testenv.WriteTree(t, root, changed)
	got, err := x.Sync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got != syncNow {
		t.Fatalf("Sync re-read %d files before returning, want %d", got, syncNow)
	}
	<-held // a worker has taken a file and waits
	if x.State().Pending != n-syncNow || len(refsTo(x.Snapshot(), "Target")) != syncNow {
		t.Fatalf("Sync re-read %d files, %d pending, %d callers; want %d, %d, %d",
			got, x.State().Pending, len(refsTo(x.Snapshot(), "Target")), syncNow, n-syncNow, syncNow)
	}
	if st := x.State(); st.Pending != n-syncNow {
		t.Fatalf("state: %+v", st)
	}
	// A second Sync does not queue them twice, nor read them now.
	if got, err := x.Sync(context.Background()); err != nil || got != 0 || x.State().Pending != n-syncNow {
		t.Fatalf("a second Sync: %d re-read, %v, %d pending", got, err, x.State().Pending)
	}
	close(release)
	deadline := time.Now().Add(time.Minute)
	for x.State().Pending > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d files still pending after a minute", x.State().Pending)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if c := refsTo(x.Snapshot(), "Target"); len(c) != n {
		t.Fatalf("after the refresher: %d callers, want %d: %v", len(c), n, c)
	}
	if st := x.Stats(); st.Refreshed != n {
		t.Fatalf("refreshed %d, want %d", st.Refreshed, n)
	}
}

// A file read again with its package, imports and embedded types as they
// were is replaced in place: the generations the resolver keeps its file
// scopes, renames and subclasses by do not move, so a body edited outside
// the tools costs queries none of those caches.
func TestRefreshInPlaceKeepsGenerations(t *testing.T) {
	root := testenv.Tree(t, map[string]string{
		"go.mod": "module m\n",
		"a.go":   "package m\n\nimport \"fmt\"\n\ntype T struct{ fmt.Stringer }\n\nfunc F() { fmt.Println(1) }\n",
		"b.go":   "package m\n\nfunc G() { F() }\n",
	})
	write := func(rel, body string) { testenv.WriteTree(t, root, map[string]string{rel: body}) }
	x := buildRootOpts(t, root, Options{})
	gens := func() string {
		s := x.Snapshot()
		var b strings.Builder
		fmt.Fprintf(&b, "mod %d", s.ModGen)
		for _, l := range s.Langs.All() {
			fmt.Fprintf(&b, " %s %d %d", l.ID, s.Tables(l).ImportsGen, s.Tables(l).BasesGen)
		}
		return b.String()
	}
	before, gen := gens(), x.Snapshot().Gen
	write("a.go", "package m\n\nimport \"fmt\"\n\ntype T struct{ fmt.Stringer }\n\nfunc F() { fmt.Println(2); H() }\n\nfunc H() {}\n")
	if err := x.Refresh(context.Background(), filepath.Join(root, "a.go")); err != nil {
		t.Fatal(err)
	}
	if x.Snapshot().Gen == gen || !strings.Contains(defs(x.Snapshot()), "a.go:H") {
		t.Fatalf("the edit is not in the snapshot: %s", defs(x.Snapshot()))
	}
	if after := gens(); after != before {
		t.Errorf("a body edit moved the generations: %s, then %s", before, after)
	}
	// An import added does move them.
	write("a.go", "package m\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\ntype T struct{ fmt.Stringer }\n\nfunc F() { fmt.Println(os.Args) }\n")
	if err := x.Refresh(context.Background(), filepath.Join(root, "a.go")); err != nil {
		t.Fatal(err)
	}
	if after := gens(); after == before {
		t.Errorf("an import added moved no generation: %s", after)
	}
}
