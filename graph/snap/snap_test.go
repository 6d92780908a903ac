package snap

import (
	"fmt"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/graph/imports"
	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/lang/langtest"
	"github.com/builtin-tools/builtin-tools/graph/record"
)

// entry is a Go file defining defs and referencing refs.
func entry(s *lang.Set, rel string, defs, refs []string) *Entry {
	r := record.Empty()
	for _, d := range defs {
		r.Defs = append(r.Defs, record.Def{Name: d, Kind: "function"})
	}
	for _, n := range refs {
		r.Strs = append(r.Strs, n)
		r.Refs = append(r.Refs, record.Ref{Name: uint32(len(r.Strs) - 1), Encl: -1})
	}
	r.DefOrder = record.Order(len(r.Defs), func(i int) string { return r.Defs[i].Name })
	r.RefOrder = record.Order(len(r.Refs), func(i int) string { return r.Strs[r.Refs[i].Name] })
	return &Entry{Rel: rel, Dir: path.Dir(rel), Lang: s.Lookup("go"), Record: r}
}

// dump writes everything a snapshot holds that a reader can see.
func dump(s *Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "gen %d modgen %d len %d bytes %d mods %v\n", s.Gen, s.ModGen, s.Len(), s.Bytes(), s.Mods())
	for e := range s.Files() {
		fmt.Fprintf(&b, "file %d %s defs %d refs %d\n", e.ID, e.Rel, len(e.Defs), len(e.Refs))
	}
	writeTables(&b, s, false)
	return b.String()
}

// writeTables writes every language's tables, each key with the paths of
// its posting list. For content (what two builds of the same files share)
// it leaves out the generations, which differ, and names a table whose
// Len is not its number of keys.
func writeTables(b *strings.Builder, s *Snapshot, content bool) {
	for _, l := range s.Langs.All() {
		t := s.Tables(l)
		for _, tab := range []struct {
			name string
			n    Names
		}{{"defs", t.Defs}, {"refs", t.Refs}, {"dirs", t.Dirs}, {"modules", t.Modules}, {"base", t.Base}} {
			if got := len(tab.n.Keys()); content && got != tab.n.Len() {
				fmt.Fprintf(b, "%s %s counts %d keys, has %d\n", l.ID, tab.name, tab.n.Len(), got)
			}
			for _, k := range tab.n.Keys() {
				var rels []string
				for _, id := range tab.n.Get(k) {
					rels = append(rels, s.ByID(id).Rel)
				}
				fmt.Fprintf(b, "%s %s %s %v\n", l.ID, tab.name, k, rels)
			}
		}
		if !content {
			fmt.Fprintf(b, "%s gens %d %d\n", l.ID, t.ImportsGen, t.BasesGen)
		}
	}
}

// A published snapshot never changes: the builder copies what it
// changes next, whatever it adds, replaces or removes.
func TestOldSnapshotUnchanged(t *testing.T) {
	ls := langtest.Bundled(t)
	b := New(ls)
	b.Put(entry(ls, "a/a.go", []string{"F", "G"}, []string{"H"}))
	b.Put(entry(ls, "b/b.go", []string{"H"}, []string{"F", "F"}))
	b.Put(entry(ls, "a/c.go", []string{"F"}, nil))
	old := b.Snapshot()
	want := dump(old)
	b.Put(entry(ls, "a/a.go", []string{"F", "K"}, []string{"F"})) // replaced
	b.Put(entry(ls, "a/0.go", []string{"F"}, []string{"H"}))      // added first in path order
	b.Remove("b/b.go")
	b.SetModules([]imports.Module{{Path: "m", Dir: "."}})
	b.Skip("x.go", "too large")
	next := b.Snapshot()
	if got := dump(old); got != want {
		t.Fatalf("the published snapshot changed:\nbefore:\n%s\nafter:\n%s", want, got)
	}
	if _, ok := old.Skipped("x.go"); ok {
		t.Fatal("a skip reached the published snapshot")
	}
	if dump(next) == want || next.Len() != 3 || next.Entry("b/b.go") != nil {
		t.Fatalf("the next snapshot is not the edited one:\n%s", dump(next))
	}
	// Lists stay in path order.
	var rels []string
	for _, id := range next.Tables(ls.Lookup("go")).Defs.Get("F") {
		rels = append(rels, next.ByID(id).Rel)
	}
	if strings.Join(rels, " ") != "a/0.go a/a.go a/c.go" {
		t.Errorf("F is defined in %v, want path order", rels)
	}
	// Several publishes in a row: each keeps what it had.
	snaps := []*Snapshot{next}
	dumps := []string{dump(next)}
	for i := range 20 {
		b.Put(entry(ls, fmt.Sprintf("c/%02d.go", i%7), []string{"F", fmt.Sprint("N", i)}, []string{"F"}))
		if i%3 == 0 {
			b.Remove(fmt.Sprintf("c/%02d.go", (i+2)%7))
		}
		snaps = append(snaps, b.Snapshot())
		dumps = append(dumps, dump(snaps[len(snaps)-1]))
	}
	for i, s := range snaps {
		if dump(s) != dumps[i] {
			t.Errorf("snapshot %d changed after later publishes", i)
		}
	}
}

// content is what a snapshot holds by path, ids aside: every file, the
// order of files, and every table's posting lists as paths.
func content(s *Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "len %d bytes %d mods %v\n", s.Len(), s.Bytes(), s.Mods())
	for e := range s.Files() {
		fmt.Fprintf(&b, "file %s host %d defs %d refs %d\n", e.Rel, e.Host, len(e.Defs), len(e.Refs))
		if s.Entry(e.Rel) != e || s.ByID(e.ID) != e {
			fmt.Fprintf(&b, "  lookup of %s is lost\n", e.Rel)
		}
	}
	var skipped []string
	s.EachSkipped(func(rel, why string) { skipped = append(skipped, rel+": "+why) })
	slices.Sort(skipped)
	fmt.Fprintf(&b, "skipped %v\n", skipped)
	writeTables(&b, s, true)
	return b.String()
}

// Incremental = fresh: after any sequence of puts and removes (and
// publishes between them), every table equals a fresh build's of the same
// files, and every list is in path order — the order tied candidates come
// out in does not depend on the order files were read or edited.
func TestIncrementalEqualsFresh(t *testing.T) {
	ls := langtest.Bundled(t)
	rnd := rand.New(rand.NewPCG(3, 4))
	names := []string{"F", "G", "H", "New", "Save", "Close", "run", "main", "x1", "x2", "x3"}
	pick := func(n int) []string {
		var out []string
		for range n {
			out = append(out, names[rnd.IntN(len(names))])
		}
		return out
	}
	var rels []string
	for i := range 300 { // enough ids for two chunks of the files table, and shards that grow
		rels = append(rels, fmt.Sprintf("d%d/%c%d.go", i%13, 'a'+rune(i%26), i))
	}
	rels = append(rels, "p/a.py", "p/b/c.py", "p/b/__init__.py")
	b := New(ls)
	live := map[string]*Entry{}
	for step := range 3000 {
		rel := rels[rnd.IntN(len(rels))]
		switch {
		case rnd.IntN(5) == 0:
			b.Remove(rel)
			delete(live, rel)
		case rnd.IntN(20) == 0:
			b.Skip(rel, "too large")
			b.Remove(rel)
			delete(live, rel)
		default:
			e := entry(ls, rel, pick(rnd.IntN(5)), pick(rnd.IntN(8)))
			if strings.HasSuffix(rel, ".py") {
				e.Lang = ls.Lookup("python")
			}
			b.Put(e)
			live[rel] = e
		}
		if rnd.IntN(7) == 0 || step == 2999 {
			b.Snapshot()
		}
	}
	got := b.Snapshot()
	fresh := New(ls)
	var keys []string
	for rel := range live {
		keys = append(keys, rel)
	}
	// A fresh build in another order (reverse path order).
	slices.Sort(keys)
	slices.Reverse(keys)
	for _, rel := range keys {
		e := *live[rel]
		fresh.Put(&e)
	}
	// The same skips: those never put again after.
	got.EachSkipped(func(rel, why string) { fresh.Skip(rel, why) })
	want := fresh.Snapshot()
	if g, w := content(got), content(want); g != w {
		t.Fatalf("incremental build differs from a fresh one:\n%s", diff(w, g))
	}
}

func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}

// A file re-read with the same facts (a comment added) keeps its record
// and FactsGen; other facts, a file coming or going, move it.
func TestFactsGen(t *testing.T) {
	ls := langtest.Bundled(t)
	b := New(ls)
	b.Put(entry(ls, "a/a.go", []string{"F"}, []string{"G"}))
	b.Put(entry(ls, "a/b.go", []string{"G"}, nil))
	s := b.Snapshot()
	same := entry(ls, "a/a.go", []string{"F"}, []string{"G"})
	same.Content[0] = 1
	b.Put(same)
	s2 := b.Snapshot()
	if s2.FactsGen != s.FactsGen || s2.Entry("a/a.go").Record != s.Entry("a/a.go").Record || s2.Gen == s.Gen {
		t.Fatalf("the same facts: FactsGen %d → %d, record kept %v, Gen %d → %d", s.FactsGen, s2.FactsGen,
			s2.Entry("a/a.go").Record == s.Entry("a/a.go").Record, s.Gen, s2.Gen)
	}
	if s2.Entry("a/a.go") == s.Entry("a/a.go") || s2.Entry("a/a.go").Content[0] != 1 {
		t.Fatal("the entry is not the new one")
	}
	for _, step := range []func(){
		func() { b.Put(entry(ls, "a/a.go", []string{"F"}, []string{"G", "H"})) },
		func() { b.Put(entry(ls, "a/c.go", nil, nil)) },
		func() { b.Remove("a/c.go") },
		func() { b.SetModules([]imports.Module{{Path: "m", Dir: "."}}) },
	} {
		before := b.Snapshot().FactsGen
		step()
		if b.Snapshot().FactsGen == before {
			t.Fatalf("a change of facts left FactsGen at %d", before)
		}
	}
}
