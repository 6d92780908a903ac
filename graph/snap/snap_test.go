package snap

import (
	"fmt"
	"path"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/graph/lang"
)

func langs(t testing.TB) *lang.Set {
	t.Helper()
	e := astgrep.NewEngine(astgrep.Options{})
	t.Cleanup(func() { e.Close() })
	s, err := lang.Load(e)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// entry is a Go file defining defs and referencing refs.
func entry(s *lang.Set, rel string, defs, refs []string) *Entry {
	r := lang.Empty()
	for _, d := range defs {
		r.Defs = append(r.Defs, lang.Def{Name: d, Kind: "function"})
	}
	for _, n := range refs {
		r.Strs = append(r.Strs, n)
		r.Refs = append(r.Refs, lang.Ref{Name: uint32(len(r.Strs) - 1), Encl: -1})
	}
	r.DefOrder = lang.Order(len(r.Defs), func(i int) string { return r.Defs[i].Name })
	r.RefOrder = lang.Order(len(r.Refs), func(i int) string { return r.Strs[r.Refs[i].Name] })
	return &Entry{Rel: rel, Dir: path.Dir(rel), Lang: s.Lookup("go"), Record: r}
}

// dump writes everything a snapshot holds that a reader can see.
func dump(s *Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "gen %d modgen %d len %d bytes %d mods %v\n", s.Gen, s.ModGen, s.Len(), s.Bytes(), s.Mods())
	for e := range s.Files() {
		fmt.Fprintf(&b, "file %d %s defs %d refs %d\n", e.ID, e.Rel, len(e.Defs), len(e.Refs))
	}
	for _, l := range s.Langs.All() {
		t := s.Tables(l)
		for _, tab := range []struct {
			name string
			n    Names
		}{{"defs", t.Defs}, {"refs", t.Refs}, {"dirs", t.Dirs}, {"modules", t.Modules}, {"base", t.Base}} {
			name, n := tab.name, tab.n
			for _, k := range n.Keys() {
				var rels []string
				for _, id := range n.Get(k) {
					rels = append(rels, s.ByID(id).Rel)
				}
				fmt.Fprintf(&b, "%s %s %s %v\n", l.ID, name, k, rels)
			}
		}
		fmt.Fprintf(&b, "%s gens %d %d\n", l.ID, t.ImportsGen, t.BasesGen)
	}
	return b.String()
}

// A published snapshot never changes: the builder copies what it
// changes next, whatever it adds, replaces or removes.
func TestOldSnapshotUnchanged(t *testing.T) {
	ls := langs(t)
	b := New(ls)
	b.Put(entry(ls, "a/a.go", []string{"F", "G"}, []string{"H"}))
	b.Put(entry(ls, "b/b.go", []string{"H"}, []string{"F", "F"}))
	b.Put(entry(ls, "a/c.go", []string{"F"}, nil))
	old := b.Snapshot()
	want := dump(old)
	b.Put(entry(ls, "a/a.go", []string{"F", "K"}, []string{"F"})) // replaced
	b.Put(entry(ls, "a/0.go", []string{"F"}, []string{"H"}))      // added first in path order
	b.Remove("b/b.go")
	b.SetModules([]lang.Module{{Path: "m", Dir: "."}})
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
