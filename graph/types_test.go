package graph

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// callers of an implementation lists a call through its interface as an
// implementation site, never as an exact one, and a declared receiver's
// call as exact with its evidence; counts.unresolved counts the calls of
// the name that lead nowhere.
func TestCallersThroughDeclaredTypes(t *testing.T) {
	ar, err := txtar.ParseFile(filepath.Join("testdata", "fixtures", "go_types.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	x := buildFixture(t, ar)
	a, err := x.Callers(Spec{Symbol: "store.Store.Save"}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var iface, handle bool
	for _, s := range a.Sites {
		switch s.In {
		case "api.Iface":
			iface = s.Class == Implementation && strings.Contains(s.Reason, "store.Saver.Save")
		case "api.Handle":
			handle = s.Class == Exact && s.Reason == "s is *store.Store: parameter, api/api.go:10"
		}
	}
	if !iface || !handle {
		t.Fatalf("callers of store.Store.Save:\n%s\n%+v", a.Text(), a.Sites)
	}
	if a.Counts.Implementation != 1 || a.Counts.Candidate != 2 {
		t.Errorf("counts %+v:\n%s", a.Counts, a.Text())
	}
	// cache.Cache.Save is not called through store.Store's sites.
	c, err := x.Callers(Spec{Symbol: "cache.Cache.Save"}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range c.Sites {
		if s.In == "api.Handle" || s.In == "api.Made" {
			t.Errorf("a call on a declared *store.Store is listed for cache.Cache.Save: %+v", s)
		}
	}
	// Calls of a name with no definition are counted.
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"a.go": "package m\n\nfunc Target() {}\n",
		"b.go": "package m\n\nimport \"ext.example/x\"\n\nfunc B(v x.T) { v.Target(); Target() }\n",
	})
	y := buildRoot(t, root)
	u, err := y.Callers(Spec{Symbol: "Target"}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if u.Counts.Exact != 1 || u.Counts.Unresolved != 1 {
		t.Errorf("counts %+v:\n%s", u.Counts, u.Text())
	}
}

// A declared type's text reduces to the type whose members a value has.
func TestNormType(t *testing.T) {
	l := &Language{wrappers: map[string]bool{"Optional": true}, elements: map[string]bool{"list": true}}
	for in, want := range map[string]string{
		"*store.Store":      "store Store",
		"(*Store, error)":   " Store",
		"(s *Store, e err)": " Store",
		"Optional[Foo]":     " Foo",
		": Foo":             "",
		"[]*Conn":           " ",
		"map[string]int":    " ",
		"Foo[]":             " ",
		"List[T]":           " List",
		"'Foo'":             " Foo",
		"Foo | None":        " Foo",
		"ns::Widget &":      "ns Widget",
	} {
		q, n := l.normType(in)
		if want == "" {
			continue
		}
		if got := q + " " + n; got != want {
			t.Errorf("normType(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"[]*Conn": "*Conn", "map[string]*C": "*C", "[4]T": "T", "Foo[]": "Foo", "list[Foo]": "Foo", "Set[Foo]": ""} {
		if got := l.elemType(in); got != want {
			t.Errorf("elemType(%q) = %q, want %q", in, got, want)
		}
	}
}

// new C(), super(...) and Python's C() are calls of the constructor;
// callers of a class lists its uses as a type apart from its calls.
func TestConstructorCallers(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"a.ts": "export class Base {\n  constructor(x: number) {}\n}\n\nexport class Kid extends Base {\n  constructor() {\n    super(1);\n  }\n}\n\nexport function make(): Kid {\n  const k: Kid = new Kid();\n  return k;\n}\n",
		"p.py": "class Shape:\n    def __init__(self, n):\n        self.n = n\n\n\ndef make(s: Shape):\n    return Shape(2)\n",
	})
	x := buildRoot(t, root)
	for _, c := range []struct{ sym, in string }{
		{"a.ts:Kid.constructor", "make"},
		{"a.ts:Base.constructor", "Kid.constructor"},
		{"p.py:Shape.__init__", "make"},
	} {
		a, err := x.Callers(Spec{Symbol: c.sym}, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Sites) != 1 || a.Sites[0].In != c.in || a.Sites[0].Class != Exact {
			t.Errorf("callers of %s: want one exact site in %s:\n%s", c.sym, c.in, a.Text())
		}
	}
	a, err := x.Callers(Spec{Symbol: "a.ts:Kid"}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if a.Counts.Exact != 1 || a.Counts.TypeUses != 2 || !strings.Contains(a.Text(), "used as a type at 2 places") {
		t.Errorf("callers of the class Kid: want 1 construction and 2 type uses (return type, annotation):\n%s", a.Text())
	}
}
