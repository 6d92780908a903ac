package resolve_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/graph/imports"
	"github.com/builtin-tools/builtin-tools/graph/lang/langtest"
	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/graph/resolve"
	"github.com/builtin-tools/builtin-tools/graph/resolve/outcome"
	"github.com/builtin-tools/builtin-tools/graph/snap"
	"github.com/builtin-tools/builtin-tools/graph/snap/snaptest"
)

// text is a resolution as one line: class, targets, implementations and
// the reason or why.
func text(res outcome.Resolution) string {
	var ts []string
	for _, t := range res.Targets {
		ts = append(ts, fmt.Sprintf("%s@%s:%d", t.Qualified(), t.File.Rel, t.D().Line))
	}
	out := res.Class + " " + strings.Join(ts, ",")
	if len(res.Impls) > 0 {
		var is []string
		for _, t := range res.Impls {
			is = append(is, t.Qualified())
		}
		out += " impls " + strings.Join(is, ",")
	}
	if res.Reason != "" {
		out += " — " + res.Reason
	}
	if res.Why != "" {
		out += " (" + res.Why + ")"
	}
	return out
}

// all resolves every reference of s, a line each, in path order, and
// lists the names imports give each definition.
func all(rv *resolve.Resolver) string {
	var b strings.Builder
	for f := range rv.Snapshot().Files() {
		for i := range f.Defs {
			if as := rv.Aliases(f.Lang, f.Defs[i].Name); len(as) > 0 {
				fmt.Fprintf(&b, "%s %s is also %v\n", f.Rel, f.Defs[i].Name, as)
			}
		}
		for i := range f.Refs {
			r := &f.Refs[i]
			fmt.Fprintf(&b, "%s:%d %s.%s -> %s\n", f.Rel, r.Line, f.RefReceiver(r), f.RefName(r), text(rv.Resolve(f, r)))
		}
	}
	return b.String()
}

// lazily resolves every reference of s as callers does (SiteLazy, kept
// per snapshot), and for a name-only one places each definition of the
// name among its candidates (RankOf over Scores, drawn from the lists of
// definitions by name the caches share along the snapshots).
func lazily(rv *resolve.Resolver) string {
	var b strings.Builder
	for f := range rv.Snapshot().Files() {
		for i := range f.Refs {
			r := &f.Refs[i]
			res := rv.SiteLazy(f, int32(i), r.Kind)
			for _, t := range slices.Concat(res.Targets, res.Impls) {
				if rv.Snapshot().ByID(t.File.ID) != t.File {
					fmt.Fprintf(&b, "%s:%d %s -> an entry of another snapshot: %s\n", f.Rel, r.Line, f.RefName(r), t.File.Rel)
				}
			}
			if res.Pending == nil {
				fmt.Fprintf(&b, "%s:%d %s -> %s\n", f.Rel, r.Line, f.RefName(r), text(res))
				continue
			}
			cands := rv.Scores(res.Pending)
			if n := rv.SiteCandidates(f, int32(i), r.Kind, res.Pending); n != len(cands) {
				fmt.Fprintf(&b, "%s:%d %s: %d candidates, kept %d\n", f.Rel, r.Line, f.RefName(r), len(cands), n)
			}
			for g := range rv.Snapshot().Files() {
				for d := range g.Defs {
					t := snap.Target{File: g, Def: int32(d)}
					if t.D().Name != f.RefName(r) || !rv.Accepts(res.Pending, t.D()) {
						continue
					}
					rank, of, why := rv.RankOf(res.Pending, t, cands)
					fmt.Fprintf(&b, "%s:%d %s -> %s %d of %d: %s\n", f.Rel, r.Line, f.RefName(r), t.Qualified(), rank, of, why)
					// The same, kept with the site.
					if r2, of2, why2 := rv.SiteRank(f, int32(i), r.Kind, res.Pending, t); r2 != rank || of2 != of || why2 != why {
						fmt.Fprintf(&b, "  but kept: %d of %d: %s\n", r2, of2, why2)
					}
				}
			}
		}
	}
	return b.String()
}

// goTree is a small Go module written as records: a store and a cache
// type with a Save method each, an interface they both satisfy, and an
// api package calling them every way the resolver tells apart.
func goTree() map[string]*record.Record {
	return map[string]*record.Record{
		"store/store.go": snaptest.Rec().Package("store").
			Def("Store", "struct").End().
			Def("Save", "method", snaptest.In("Store"), snaptest.Self("s")).End().
			Def("Saver", "interface").Def("Save", "method").End().End().
			Def("New", "function", snaptest.Returns("*Store")).End().
			Done(),
		"cache/cache.go": snaptest.Rec().Package("cache").
			Def("Cache", "struct").End().
			Def("Save", "method", snaptest.In("Cache")).End().
			Done(),
		"api/helper.go": snaptest.Rec().Package("api").Def("helper", "function").End().Done(),
		"api/api.go": snaptest.Rec().Package("api").
			Import("m/store", "", "").Import("fmt", "", "").
			Def("Server", "struct").End().
			Field("Server", "st", record.TypeDeclared, "*store.Store").
			Def("Handle", "function").Local("s", record.TypeParam, "*store.Store").Ref("Save", record.RefCall, "s").End().
			Def("Iface", "function").Local("sv", record.TypeParam, "store.Saver").Ref("Save", record.RefCall, "sv").End().
			Def("Bare", "function").Ref("helper", record.RefCall, "").End().
			Def("Qual", "function").Ref("New", record.RefCall, "store").End().
			Def("Made", "function").Local("n", record.TypeCall, "store.New").Ref("Save", record.RefCall, "n").End().
			Def("Run", "method", snaptest.In("Server"), snaptest.Self("srv")).Ref("Save", record.RefCall, "srv.st").End().
			Def("Shadow", "function").Local("helper", record.TypeNone, "").Ref("helper", record.RefCall, "").End().
			Def("Named", "function").Ref("Save", record.RefCall, "x").End().
			Def("Builtin", "function").Ref("len", record.RefCall, "").End().
			Def("Ext", "function").Ref("Println", record.RefCall, "fmt").End().
			Done(),
	}
}

// Each rule of the resolution order, on a snapshot built by hand: no
// index, no files, no parse.
func TestResolutionOrder(t *testing.T) {
	ls := langtest.Bundled(t)
	s := snaptest.Build(ls, goTree(), imports.Module{Path: "m", Dir: "."})
	got := all(resolve.New(s, nil))
	hasLines(t, got,
		"api/api.go:8 s.Save -> exact store.Store.Save@store/store.go:3 — s is *store.Store: parameter, api/api.go:7",
		"api/api.go:12 sv.Save -> interface store.Saver.Save@store/store.go:6 impls cache.Cache.Save,store.Store.Save — sv is store.Saver: parameter, api/api.go:11",
		"api/api.go:15 .helper -> exact api.helper@api/helper.go:1",
		"api/api.go:18 store.New -> exact store.New@store/store.go:9",
		"api/api.go:22 n.Save -> exact store.Store.Save@store/store.go:3 — n is *Store: result of store.New, api/api.go:21; store.New returns *Store, store/store.go:9",
		"api/api.go:25 srv.st.Save -> exact store.Store.Save@store/store.go:3 — srv is Server: the method's receiver; st is *store.Store: field of Server, api/api.go:5",
		"api/api.go:29 .helper -> unresolved  (a local variable or parameter holding a function value (helper, api/api.go:28): what it holds is not followed (a function literal's calls are listed as made by what encloses it))",
		// By name: the files of a module this file imports first.
		"api/api.go:32 x.Save -> candidate store.Store.Save@store/store.go:3,store.Saver.Save@store/store.go:6,cache.Cache.Save@cache/cache.go:3",
		"api/api.go:35 .len -> unresolved  (builtin)",
		"api/api.go:38 fmt.Println -> unresolved  (external: fmt)",
	)
}

// A name a file defines itself wins over the same name elsewhere, where a
// module is a file (Python); a name nothing defines is said so.
func TestSameFileAndNoDefinition(t *testing.T) {
	ls := langtest.Bundled(t)
	s := snaptest.Build(ls, map[string]*record.Record{
		"a.py": snaptest.Rec().Def("work", "function").End().Def("main", "function").Ref("work", record.RefCall, "").Ref("gone", record.RefCall, "").End().Done(),
		"b.py": snaptest.Rec().Def("work", "function").End().Done(),
	})
	got := all(resolve.New(s, nil))
	hasLines(t, got,
		"a.py:4 .work -> exact work@a.py:1",
		"a.py:5 .gone -> unresolved  (no definition named gone in the index)",
	)
}

// A cache made from an earlier snapshot's (NewCache(s, prev)) keeps only
// what is still valid: after any sequence of edits, a resolver with the
// inherited cache answers every reference as one with a fresh cache.
func TestInheritedCacheEqualsFresh(t *testing.T) {
	ls := langtest.Bundled(t)
	base := goTree()
	// Other versions of some files: bodies edited, imports changed, a
	// base added, a package renamed.
	alt := map[string][]*record.Record{
		"store/store.go": {
			snaptest.Rec().Package("store").Def("Store", "struct").End().Def("Save", "method", snaptest.In("Store")).End().Def("New", "function", snaptest.Returns("*Store")).End().Done(),
			snaptest.Rec().Package("store").Def("Store", "struct").End().Field("Store", "", record.TypeDeclared, "cache.Cache").Def("Saver", "interface").Def("Save", "method").End().End().Done(),
			// Renamed: an import of its folder binds another name.
			snaptest.Rec().Package("depot").Def("Store", "struct").End().Def("Save", "method", snaptest.In("Store")).End().Def("New", "function", snaptest.Returns("*Store")).End().Done(),
		},
		"api/helper.go": {
			snaptest.Rec().Package("api").Import("m/cache", "", "").Def("helper", "function").Local("c", record.TypeParam, "*cache.Cache").Ref("Save", record.RefCall, "c").End().Done(),
			snaptest.Rec().Package("other").Def("helper", "function").End().Done(),
		},
		"cache/cache.go": {
			snaptest.Rec().Package("cache").Def("Cache", "struct").End().Done(),
		},
		"extra/extra.go": {
			snaptest.Rec().Package("extra").Import("m/store", "", "").Def("Use", "function").Local("s", record.TypeParam, "store.Saver").Ref("Save", record.RefCall, "s").End().Done(),
		},
	}
	// Python: a class and its subclass (implementations by declared
	// bases), and a name imported under another.
	base["py/shapes.py"] = snaptest.Rec().Def("Base", "class").Def("run", "method").End().End().
		Def("Kid", "class").Def("run", "method").End().End().Field("Kid", "", record.TypeDeclared, "Base").Done()
	base["py/m.py"] = snaptest.Rec().Def("f", "function").End().Done()
	base["py/use.py"] = snaptest.Rec().Import("shapes", "Base", "Base").Import("m", "f", "g").
		Def("main", "function").Local("b", record.TypeParam, "Base").Ref("run", record.RefCall, "b").Ref("g", record.RefCall, "").End().Done()
	alt["py/shapes.py"] = []*record.Record{
		snaptest.Rec().Def("Base", "class").Def("run", "method").End().End().Def("Kid", "class").Def("run", "method").End().End().Done(),
		snaptest.Rec().Def("Base", "class").Def("run", "method").End().End().Def("Kid", "class").Def("run", "method").End().End().
			Def("Grand", "class").Def("run", "method").End().End().Field("Kid", "", record.TypeDeclared, "Base").Field("Grand", "", record.TypeDeclared, "Kid").Done(),
	}
	alt["py/use.py"] = []*record.Record{
		snaptest.Rec().Import("shapes", "Base", "Base").Import("m", "f", "h").
			Def("main", "function").Local("b", record.TypeParam, "Base").Ref("run", record.RefCall, "b").Ref("h", record.RefCall, "").End().Done(),
	}
	rels := []string{"store/store.go", "api/helper.go", "cache/cache.go", "extra/extra.go", "py/shapes.py", "py/use.py"}
	b := snap.New(ls)
	snaptest.Put(b, base)
	b.SetModules([]imports.Module{{Path: "m", Dir: "."}})
	s := b.Snapshot()
	c := resolve.NewCache(s, nil)
	all(resolve.New(s, c)) // fill it
	rnd := rand.New(rand.NewPCG(1, 2))
	for step := range 200 {
		rel := rels[rnd.IntN(len(rels))]
		switch k := rnd.IntN(len(alt[rel]) + 3); {
		case k == len(alt[rel])+2:
			// New bytes, the same facts (a comment): the sites resolved
			// before hold, with the new entry.
			if e := s.Entry(rel); e != nil {
				facts := s.FactsGen
				snaptest.Put(b, map[string]*record.Record{rel: clone(t, e.Record)})
				if b.Snapshot().FactsGen != facts {
					t.Fatalf("step %d: a record with the same facts moved FactsGen", step)
				}
			}
		case k < len(alt[rel]):
			snaptest.Put(b, map[string]*record.Record{rel: alt[rel][k]})
		case k == len(alt[rel]) && base[rel] != nil:
			snaptest.Put(b, map[string]*record.Record{rel: base[rel]})
		default:
			b.Remove(rel)
		}
		s = b.Snapshot()
		c = resolve.NewCache(s, c)
		rv := resolve.New(s, c)
		inherited := all(rv) + lazily(rv) + lazily(rv) // the second from the sites kept
		fresh := all(resolve.New(s, nil)) + lazily(resolve.New(s, nil)) + lazily(resolve.New(s, nil))
		if inherited != fresh {
			t.Fatalf("step %d (%s): the inherited cache answers otherwise\ninherited:\n%s\nfresh:\n%s", step, rel, inherited, fresh)
		}
	}
}

// clone is a copy of rec that shares no memory with it.
func clone(t *testing.T, rec *record.Record) *record.Record {
	t.Helper()
	data, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var c record.Record
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

// hasLines wants each of want in got, ending a line.
func hasLines(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w+"\n") {
			t.Errorf("no %q in:\n%s", w, got)
		}
	}
}
