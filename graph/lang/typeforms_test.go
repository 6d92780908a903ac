package lang

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// typedPlaces lists every captured type and expression of a record: the
// tree ids (1-based) with the text the resolver reads, by how it is known.
func typedPlaces(r *record.Record) (types, exprs []int32, texts map[int32]string, xtexts map[int32]string) {
	texts, xtexts = map[int32]string{}, map[int32]string{}
	add := func(t, x int32, text string) {
		if t > 0 {
			types = append(types, t)
			texts[t] = text
		}
		if x > 0 {
			exprs = append(exprs, x)
			xtexts[x] = text
		}
	}
	for _, d := range r.Defs {
		add(d.T, d.X, d.Type)
	}
	for _, fd := range r.Fields {
		add(fd.T, fd.X, fd.Type)
	}
	for _, lc := range r.Locals {
		add(lc.T, lc.X, r.Strs[lc.Type])
	}
	for _, rf := range r.Refs {
		add(0, rf.X, r.Strs[rf.Recv])
	}
	return
}

// Every type position the query of a language with typeforms.scm
// captures, in the fixtures and the GOROOT samples, has a tree with no
// opaque node, and every receiver and expression is read as steps, but an
// operator's value in parentheses ((dx*dx+dy*dy).sqrt() in Rust): no step
// names its type, and its text named none either.
func TestNoOpaqueTypes(t *testing.T) {
	recs, ls := extractWith(t, systemHeaders)
	nt, nx := 0, 0
	var bad []string
	per := map[string][3]int{} // types, expressions, not read
	for i, r := range recs {
		if !ls[i].x.ReadsTypes() {
			continue
		}
		types, exprs, texts, xtexts := typedPlaces(r)
		nt += len(types)
		nx += len(exprs)
		c := per[ls[i].ID]
		c[0], c[1] = c[0]+len(types), c[1]+len(exprs)
		for _, id := range types {
			if r.Opaque(id) {
				bad = append(bad, "type "+texts[id]+": "+r.DumpType(id))
				c[2]++
			}
		}
		for _, x := range exprs {
			if len(r.ExprSteps(x)) == 0 {
				if s := xtexts[x]; strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") && strings.ContainsAny(s, "+-*/%") {
					continue
				}
				bad = append(bad, "expression "+xtexts[x])
				c[2]++
			}
		}
		per[ls[i].ID] = c
	}
	for id, c := range per {
		t.Logf("%s: %d types, %d expressions, %d not read", id, c[0], c[1], c[2])
	}
	slices.Sort(bad)
	bad = slices.Compact(bad)
	if len(bad) > 0 {
		t.Errorf("%d of %d types and %d expressions not read, e.g.:\n%s", len(bad), nt, nx, strings.Join(bad[:min(len(bad), 60)], "\n"))
	}
	if nt < 1000 || nx < 1000 {
		t.Errorf("only %d types and %d expressions captured", nt, nx)
	}
}

// systemHeaders are the C headers of /usr/include and the C++ library's
// (libstdc++'s bits/*.h, read as C++), when the machine has them: C and
// C++ as written in the wild, beside the fixtures and GOROOT's cgo.
func systemHeaders(s *Set) []sample {
	var out []sample
	add := func(pattern, id string) {
		names, _ := filepath.Glob(pattern)
		for _, name := range names {
			if data, err := os.ReadFile(name); err == nil {
				out = append(out, sample{name, s.Lookup(id), data})
			}
		}
	}
	add("/usr/include/*.h", "c")
	add("/usr/include/c++/*/bits/*.h", "cpp")
	return out
}

// Go's typeforms.scm reads types and receivers into the trees and steps
// the resolver follows.
func TestTypeForms(t *testing.T) {
	_, _, got, _ := typeForms(t, "go", `package p

func f(m map[string][]*x.T, g func(int) (a, b *y.U, err error), c chan<- Box[int], s struct {
	conn *Conn
	io.Reader
}) {
	s.conn.buf[i].(W).Close()
	(&T{}).M()
	v := []*T{}
	for _, w := range v {
		w.M()
	}
}
`, true)
	wantForms(t, got, map[string]string{
		"m":                      "map(key string, elem slice(elem pointer(elem path x(seg x, seg T))))",
		"g":                      "func(result tuple(item a:pointer(elem path y(seg y, seg U)), item b:pointer(elem path y(seg y, seg U)), item err:error))",
		"c":                      "chan(elem generic(base Box, arg int))",
		"s":                      "struct(field conn:pointer(elem Conn), field path io(seg io, seg Reader))",
		"v":                      "slice(elem pointer(elem T))",
		"w":                      "name v",
		"recv s.conn.buf[i].(W)": "name s, field conn, field buf, index, assert W",
		"recv (&T{})":            "literal T, addr, same",
	})
}

// typeForms extracts src in the bundled language id and returns each
// captured place's tree or steps dumped: a local's or a definition's
// ("def f") type, a receiver's steps ("recv a.b"), and with localExprs a
// local's assigned expression where it has one. ts keeps the locals' type
// ids.
func typeForms(t *testing.T, id, src string, localExprs bool) (l *Language, rec *record.Record, got map[string]string, ts map[string]int32) {
	t.Helper()
	e, s := bundled(t)
	l = s.Lookup(id)
	r, err := e.CaptureSnippet(context.Background(), l.Query(), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	rec = l.Extractor().Extract([]byte(src), r)
	got, ts = map[string]string{}, map[string]int32{}
	for _, lc := range rec.Locals {
		if lc.T > 0 {
			got[rec.Strs[lc.Name]] = rec.DumpType(lc.T)
			ts[rec.Strs[lc.Name]] = lc.T
		}
		if localExprs && lc.X > 0 {
			got[rec.Strs[lc.Name]] = rec.DumpExpr(lc.X)
		}
	}
	for _, d := range rec.Defs {
		if d.T > 0 {
			got["def "+d.Name] = rec.DumpType(d.T)
		}
	}
	for _, rf := range rec.Refs {
		if rf.X > 0 {
			got["recv "+rec.Strs[rf.Recv]] = rec.DumpExpr(rf.X)
		}
	}
	return l, rec, got, ts
}

// wantForms compares typeForms' dumps with want, listing all on a failure.
func wantForms(t *testing.T, got, want map[string]string) {
	t.Helper()
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %s, want %s", k, got[k], w)
		}
	}
	if t.Failed() {
		t.Logf("all: %q", got)
	}
}

// wantNames checks the qualifier and name each local's type gives
// ("q.n", ".n" with no qualifier).
func wantNames(t *testing.T, l *Language, rec *record.Record, ts map[string]int32, want map[string]string) {
	t.Helper()
	for k, w := range want {
		q, n, ok := rec.TypeName(l.Generics(), ts[k])
		if !ok || q+"."+n != w {
			t.Errorf("%s names %s.%s (%v), want %s", k, q, n, ok, w)
		}
	}
}

// TypeScript's typeforms.scm: an annotation, a union with null, a
// readonly collection, a wrapper, a type that names nothing; a receiver
// with an optional chain is not read (its text was not either).
func TestTypeFormsTypeScript(t *testing.T) {
	l, rec, got, _ := typeForms(t, "typescript", `function f(a: ns.Foo | undefined, b: readonly Bar[], c: Readonly<Baz>, d: A & B, e: Map<string, Foo>) {
  this.a.b[0].m();
  this.a?.b.m();
  f(x)!.m();
}
`, false)
	wantForms(t, got, map[string]string{
		"a":                "same(elem union(arm path ns(seg ns, seg Foo), arm null()))",
		"b":                "same(elem same(elem slice(elem Bar)))",
		"c":                "same(elem generic(base Readonly, arg Baz))",
		"d":                "same(elem other())",
		"e":                "same(elem generic(base Map, arg string, arg Foo))",
		"recv this.a.b[0]": "name this, field a, field b, index",
		"recv this.a?.b":   "-",
		"recv f(x)!":       "name f, call, same",
	})
	for _, k := range []string{"a", "b", "c"} {
		for _, lc := range rec.Locals {
			if rec.Strs[lc.Name] != k {
				continue
			}
			if q, n, _ := rec.TypeName(l.Generics(), lc.T); n != map[string]string{"a": "Foo", "b": "", "c": "Baz"}[k] || k == "a" && q != "ns" {
				t.Errorf("%s names %s.%s", k, q, n)
			}
			if k == "b" {
				if el, _ := rec.ElemOf(l.Generics(), lc.T); rec.TypeText(el) != "Bar" {
					t.Errorf("b's element is %q", rec.TypeText(el))
				}
			}
		}
	}
}

// A capture of typeforms.scm that names no form or part stops the load,
// saying which are.
func TestTypeFormsChecked(t *testing.T) {
	e := astgrep.NewEngine(astgrep.Options{})
	defer e.Close()
	qd := t.TempDir()
	testenv.WriteTree(t, qd, map[string]string{
		"lua/language.json": `{"grammar": "lua"}`,
		"lua/tags.scm":      "(function_statement name: (function_name (identifier) @name)) @definition.function\n",
		"lua/typeforms.scm": "(identifier) @type.nam\n",
	})
	_, err := Load(e, qd)
	if err == nil || !strings.Contains(err.Error(), "language lua: typeforms.scm: capture @type.nam is no @type.<form>") {
		t.Fatalf("got %v", err)
	}
}

// Python's typeforms.scm: annotations (a wrapper, a collection, a dotted
// name, a forward reference, a union with None), a result, receivers
// (fields, calls, an index, a literal); a dotted forward reference is left
// to the text reader (the grammar does not parse a string).
func TestTypeFormsPython(t *testing.T) {
	l, rec, got, ts := typeForms(t, "python", `def f(a: Optional[Foo], b: list[x.T], c: dict[str, Bar], d: Type[X], e: "Foo", g: Foo | None, h: typing.Optional["m.Foo"]) -> mod.T:
    a.b[0].c().d()
    "".join(b)
    (a).m()
`, false)
	wantForms(t, got, map[string]string{
		"a":               "same(elem generic(base Optional, arg same(elem Foo)))",
		"b":               "same(elem generic(base list, arg same(elem path x(seg x, seg T))))",
		"c":               "same(elem generic(base dict, arg same(elem str), arg same(elem Bar)))",
		"d":               "same(elem generic(base Type, arg same(elem X)))",
		"e":               "same(elem same(elem Foo))",
		"g":               "same(elem union(arm Foo, arm null()))",
		"h":               "same(elem generic(base path typing(seg typing, seg Optional), arg same(elem opaque m.Foo)))",
		"def f":           "same(elem path mod(seg mod, seg T))",
		"recv a.b[0].c()": "name a, field b, index, field c, call",
		"recv \"\"":       "literal",
		"recv (a)":        "name a, same",
	})
	wantNames(t, l, rec, ts, map[string]string{"a": ".Foo", "b": ".list", "c": ".dict", "d": ".X", "e": ".Foo", "g": ".Foo"})
	if el, _ := rec.ElemOf(l.Generics(), ts["b"]); rec.TypeText(el) != "x.T" {
		t.Errorf("b's element is %q", rec.TypeText(el))
	}
	if _, _, ok := rec.TypeName(l.Generics(), ts["h"]); ok {
		t.Errorf("h is read from its tree, not its text")
	}
}

// Rust's typeforms.scm: references, a wrapper, a collection, a path, a
// trait object, a tuple, a slice (other: its element was not read from
// the text either); receivers with fields, calls, an index, a
// dereference and a path; x? is left to the text reader (what it gives,
// T of a Result<T, E>, is no step).
func TestTypeFormsRust(t *testing.T) {
	l, rec, got, ts := typeForms(t, "rust", `fn f(a: &T, b: &mut Vec<a::b::T>, c: Box<dyn Tr>, d: Option<T>, g: &[T], h: (A, B), p: *const T) -> Result<T, E> {
    (*a.b)[0].c().d();
    crate::m::T::new();
    x.y()?.z();
}
`, false)
	wantForms(t, got, map[string]string{
		"a":                  "same(elem T)",
		"b":                  "same(elem generic(base Vec, arg path a::b(seg path a(seg a, seg b), seg T)))",
		"c":                  "generic(base Box, arg same(elem Tr))",
		"d":                  "generic(base Option, arg T)",
		"g":                  "same(elem other())",
		"h":                  "tuple(item A, item B)",
		"p":                  "pointer(elem T)",
		"def f":              "generic(base Result, arg T, arg E)",
		"recv (*a.b)[0].c()": "name a, field b, deref, same, index, field c, call",
		"recv crate::m::T":   "name crate, path m, path T",
		"recv x.y()?":        "-",
	})
	wantNames(t, l, rec, ts, map[string]string{"a": ".T", "b": ".Vec", "c": ".Tr", "d": ".Option", "g": ".", "h": ".A", "p": ".T"})
}

// Java's typeforms.scm: a name, a path, generics, an array (its element
// as the text reader read it), a primitive; receivers with fields,
// method calls (the field a.m, then its call), an index, this, a cast
// and parentheses.
func TestTypeFormsJava(t *testing.T) {
	l, rec, got, ts := typeForms(t, "java", `class C {
    java.util.List<T> f(T a, a.b.T b, List<T> c, Map<K, V> d, T[] g, int h, @A T k) {
        this.x.y(1)[0].z();
        ((T) a).m();
        (a).n();
        go().p();
        return null;
    }
}
`, false)
	wantForms(t, got, map[string]string{
		"a":                   "T",
		"b":                   "path a.b(seg path a(seg a, seg b), seg T)",
		"c":                   "generic(base List, arg T)",
		"d":                   "generic(base Map, arg K, arg V)",
		"g":                   "slice(elem T)",
		"h":                   "int",
		"k":                   "T",
		"def f":               "generic(base path java.util(seg path java(seg java, seg util), seg List), arg T)",
		"recv this.x.y(1)[0]": "name this, field x, field y, call, index",
		"recv ((T)a)":         "name a, assert T, same",
		"recv (a)":            "name a, same",
		"recv go()":           "name go, call",
		"recv a.b":            "name a, field b",
	})
	wantNames(t, l, rec, ts, map[string]string{"a": ".T", "b": "a.b.T", "c": ".List", "d": ".Map", "h": ".int", "k": ".T"})
}

// C's and C++'s typeforms.scm: the declared type is the specifier (the
// pointer is the declarator's), a qualified name nests to the right and
// reads as one path, a template in a path is a generic; a receiver reads
// through ->, (*p), an index, a call and a cast.
func TestTypeFormsC(t *testing.T) {
	_, _, got, _ := typeForms(t, "c", `struct ops { int (*write)(int); };
struct s { struct ops *ops; unsigned long n; };
void f(const struct s *s, struct s **pp, point_t pt) {
	struct s v = *s;
	s->ops->write(1);
	(*pp)->ops->write(2);
	((struct s *)pt.p)->ops->write(3);
	get()->ops->write(4);
	v.ops[0].write(5);
}
`, false)
	wantForms(t, got, map[string]string{
		"s":                          "same(elem s)",
		"pp":                         "same(elem s)",
		"pt":                         "point_t",
		"v":                          "same(elem s)",
		"recv s->ops":                "name s, field ops",
		"recv (*pp)->ops":            "name pp, deref, same, field ops",
		"recv ((structs*)pt.p)->ops": "name pt, field p, assert same(elem same(elem s)), same, field ops",
		"recv get()->ops":            "name get, call, field ops",
		"recv v.ops[0]":              "name v, field ops, index",
	})
}

func TestTypeFormsCpp(t *testing.T) {
	l, rec, got, ts := typeForms(t, "cpp", `namespace a { namespace b { struct T { void m(); }; } }
void f(a::b::T x, std::unique_ptr<Foo> p, std::vector<Foo> v, std::map<int, Baz> m, const Foo &r, ::ns::U u, typename X::Y y) {
	this->m();
	static_cast<Foo *>(q)->m();
	a::b::make().m();
	v.at(0).m();
}
`, false)
	wantForms(t, got, map[string]string{
		"x":                         "path a::b(seg a, seg b, seg T)",
		"p":                         "path std(seg std, seg generic(base unique_ptr, arg same(elem Foo)))",
		"m":                         "path std(seg std, seg generic(base map, arg same(elem int), arg same(elem Baz)))",
		"r":                         "Foo",
		"u":                         "same(elem path ns(seg ns, seg U))",
		"y":                         "same(elem path X(seg X, seg Y))",
		"recv this":                 "name this",
		"recv static_cast<Foo*>(q)": "name q, assert same(elem Foo)",
		"recv a::b::make()":         "name a, path b::make, call",
		"recv v.at(0)":              "name v, field at, call",
	})
	wantNames(t, l, rec, ts, map[string]string{"x": "a::b.T", "p": ".Foo", "v": "std.vector", "r": ".Foo", "u": "ns.U", "y": "X.Y"})
}

// What the resolver reads of every declared type and expression the
// fixtures capture, by language and text: the type's qualifier and name,
// element, key, fields, function result and first results, and an
// expression's steps. The golden was written while the text readers
// (NormType, ElemType, KeyType, StructFields, FuncTypeResult, ResultAt and
// the receiver's bracket scanners) were still there to agree with it, by
// TestTypeTreesAgreeWithText and TestStepsAgreeWithText; it keeps that
// agreement now they are gone (go test ./graph/lang -run TestTypeReads
// -update rewrites it: review the diff).
func TestTypeReads(t *testing.T) {
	e, s := bundled(t)
	seen := map[string]bool{}
	var lines []string
	add := func(l string) {
		if !seen[l] {
			seen[l] = true
			lines = append(lines, l)
		}
	}
	eachFixtureFile(t, func(_ string, f txtar.File) {
		l := s.ForFile(f.Name)
		if l == nil {
			return
		}
		res, err := e.CaptureSnippet(context.Background(), l.Query(), f.Data)
		if err != nil {
			t.Fatal(err)
		}
		r := l.Extractor().Extract(f.Data, res)
		types, exprs, _, xtexts := typedPlaces(r)
		for _, id := range types {
			add(l.ID + " type " + strconv.Quote(r.TypeText(id)) + ": " + typeReads(r, l, id))
		}
		for _, x := range exprs {
			add(l.ID + " expr " + strconv.Quote(xtexts[x]) + ": " + r.DumpExpr(x))
		}
	})
	slices.Sort(lines)
	got := strings.Join(lines, "\n") + "\n"
	testenv.Golden(t, "testdata/typereads.golden", got, *update)
}

var update = flag.Bool("update", false, "rewrite testdata/typereads.golden")

// typeReads is what the resolver reads of type id, on one line.
func typeReads(r *record.Record, l *Language, id int32) string {
	var out []string
	if q, n, ok := r.TypeName(l.Generics(), id); ok && n != "" {
		out = append(out, "name "+q+"."+n)
	}
	if e, ok := r.ElemOf(l.Generics(), id); ok && e != 0 {
		out = append(out, "elem "+r.TypeText(e))
	}
	if k, ok := r.KeyOf(id); ok && k != 0 {
		out = append(out, "key "+r.TypeText(k))
	}
	if fs, isLit, ok := r.FieldsOf(id); ok && isLit {
		var fl []string
		for _, f := range fs {
			fl = append(fl, f.Name+" "+f.Type)
		}
		out = append(out, "fields {"+strings.Join(fl, "; ")+"}")
	}
	if res, ok := r.FuncResultOf(id); ok && res != 0 {
		out = append(out, "result "+r.TypeText(res))
	}
	for k := range 3 {
		if it, _, ok := r.ItemOf(id, k); ok && it != 0 {
			out = append(out, "item "+strconv.Itoa(k)+" "+r.TypeText(it))
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}
