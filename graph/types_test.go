package graph

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// callers of an implementation lists a call through its interface as an
// implementation site, never as an exact one (and callers of the
// interface's method as an interface site), and a declared receiver's
// call as exact with its evidence; counts.unresolved counts the calls of
// the name that lead nowhere.
func TestCallersThroughDeclaredTypes(t *testing.T) {
	x := fixture(t, "go_types")
	a, err := x.Callers(Spec{Symbol: "store.Store.Save"}, 0)
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
	// The call through the interface is dispatch to the interface's
	// method, not an exact call of it.
	i, err := x.Callers(Spec{Symbol: "store.Saver.Save"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(i.Sites) == 0 || i.Sites[0].In != "api.Iface" || i.Sites[0].Class != Interface || i.Counts.Interface != 1 || i.Counts.Exact != 0 {
		t.Errorf("callers of store.Saver.Save: counts %+v\n%+v", i.Counts, i.Sites)
	}
	// cache.Cache.Save is not called through store.Store's sites.
	c, err := x.Callers(Spec{Symbol: "cache.Cache.Save"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range c.Sites {
		if s.In == "api.Handle" || s.In == "api.Made" {
			t.Errorf("a call on a declared *store.Store is listed for cache.Cache.Save: %+v", s)
		}
	}
	// Calls of a name with no definition are counted.
	root := testenv.Tree(t, map[string]string{
		"a.go": "package m\n\nfunc Target() {}\n",
		"b.go": "package m\n\nimport \"ext.example/x\"\n\nfunc B(v x.T) { v.Target(); Target() }\n",
	})
	y := buildRoot(t, root)
	u, err := y.Callers(Spec{Symbol: "Target"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if u.Counts.Exact != 1 || u.Counts.Unresolved != 1 {
		t.Errorf("counts %+v:\n%s", u.Counts, u.Text())
	}
}

// new C(), super(...) and Python's C() are calls of the constructor;
// callers of a class lists its uses as a type apart from its calls.
func TestConstructorCallers(t *testing.T) {
	root := testenv.Tree(t, map[string]string{
		"a.ts": "export class Base {\n  constructor(x: number) {}\n}\n\nexport class Kid extends Base {\n  constructor() {\n    super(1);\n  }\n}\n\nexport function make(): Kid {\n  const k: Kid = new Kid();\n  return k;\n}\n",
		"p.py": "class Shape:\n    def __init__(self, n):\n        self.n = n\n\n\ndef make(s: Shape):\n    return Shape(2)\n",
	})
	x := buildRoot(t, root)
	for _, c := range []struct{ sym, in string }{
		{"a.ts:Kid.constructor", "make"},
		{"a.ts:Base.constructor", "Kid.constructor"},
		{"p.py:Shape.__init__", "make"},
	} {
		a, err := x.Callers(Spec{Symbol: c.sym}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Sites) != 1 || a.Sites[0].In != c.in || a.Sites[0].Class != Exact {
			t.Errorf("callers of %s: want one exact site in %s:\n%s", c.sym, c.in, a.Text())
		}
	}
	a, err := x.Callers(Spec{Symbol: "a.ts:Kid"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if a.Counts.Exact != 1 || a.Counts.TypeUses != 2 || len(a.TypeUses) != 2 {
		t.Errorf("callers of the class Kid: want 1 construction and 2 type uses (return type, annotation):\n%s", a.Text())
	}
}

// A TypeScript overload signature, a C prototype in a header and a method
// declared in a C++ class are positions of the definition they declare.
func TestDeclarationPositions(t *testing.T) {
	root := testenv.Tree(t, map[string]string{
		"s.ts":      "export function concat(a: string): string;\nexport function concat(a: number): string;\nexport function concat(a: any): string {\n  return String(a);\n}\n",
		"lib.h":     "#ifndef LIB_H\n#define LIB_H\nint lib_add(int a, int b);\n#endif\n",
		"lib.c":     "#include \"lib.h\"\n\nint lib_add(int a, int b) { return a + b; }\n",
		"shape.hpp": "class Shape {\npublic:\n  int area();\n};\n",
		"shape.cpp": "#include \"shape.hpp\"\n\nint Shape::area() { return 0; }\n",
	})
	x := buildRoot(t, root)
	for _, c := range []struct {
		file string
		line int
		sym  string
		want string // file:line of the definition
	}{
		{"s.ts", 2, "concat", "s.ts:3"},
		{"lib.h", 3, "lib_add", "lib.c:3"},
		{"shape.hpp", 3, "area", "shape.cpp:3"},
	} {
		a, err := x.Callers(Spec{File: c.file, Line: c.line, Symbol: c.sym}, 0)
		if err != nil {
			t.Errorf("%s:%d %s: %v", c.file, c.line, c.sym, err)
			continue
		}
		if a.Symbol == nil || a.Symbol.File+":"+strconv.Itoa(a.Symbol.Line) != c.want {
			t.Errorf("%s:%d %s: want the definition at %s:\n%s", c.file, c.line, c.sym, c.want, a.Text())
		}
	}
	// A line that does not declare the name is still refused.
	if _, err := x.Callers(Spec{File: "lib.c", Line: 1, Symbol: "lib_add"}, 0); err == nil {
		t.Error("line 1 of lib.c (an #include) was taken as a position of lib_add")
	}
}

// A function invoking a macro makes impact a lower bound: the macro's
// expansion may call what the index cannot see.
func TestImpactMacroLowerBound(t *testing.T) {
	root := testenv.Tree(t, map[string]string{
		"m.c": "#define CHECK(x) do { if (!(x)) fail(); } while (0)\n\nstatic void fail(void) {}\n\nstatic int target(int v) { return v; }\n\nint user(int v) {\n  CHECK(v);\n  return target(v);\n}\n\nint plain(int v) { return target(v); }\n",
	})
	x := buildRoot(t, root)
	a, err := x.Impact(Spec{Symbol: "target"}, 2, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !a.LowerBound || a.Macro == nil || a.Macro.In != "user" || a.Macro.Macro != "CHECK" {
		t.Errorf("impact of target through a function invoking a macro:\n%s", a.Text())
	}
	b, err := x.Impact(Spec{Symbol: "plain"}, 2, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if b.LowerBound {
		t.Errorf("impact of plain (no macro on the way) is a lower bound:\n%s", b.Text())
	}
}

// A local of an enclosing function hides a builtin and a module's name
// inside a nested function (Python, TypeScript).
func TestClosureLocals(t *testing.T) {
	dumpHas(t, map[string]string{
		"c.py": "import os\n\ndef outer():\n    os = make()\n    len = pick()\n    def inner():\n        os.getcwd()\n        len(3)\n    return inner\n\ndef make():\n    pass\n\ndef pick():\n    pass\n",
		"c.ts": "import * as path from 'path';\n\nexport function outer() {\n  const path = { join() {} };\n  const parseInt = (s: string) => 1;\n  function inner() {\n    path.join();\n    parseInt('1');\n  }\n  return inner;\n}\n",
	}, []string{
		"call c.py:7 os.getcwd in inner -> unresolved (no definition named getcwd in the index)",
		"call c.py:8 len in inner -> unresolved (a function value: len holds what pick returns (len, c.py:5), not followed)",
		"call c.ts:7 path.join in inner -> candidate[1] join (c.ts:4)",
		"call c.ts:8 parseInt in inner -> exact parseInt (c.ts:5)",
	})
}

// TypeScript is structurally typed: a call through an interface no class
// names as a base may run any method of that name, such as an object
// literal's, so the call stays a candidate of it rather than vanishing
// behind the interface's method.
func TestStructuralInterfaceKeepsCandidates(t *testing.T) {
	root := testenv.Tree(t, map[string]string{
		"tsconfig.json": "{}",
		"a.ts":          "export interface Checker {\n  check(n: number): boolean;\n}\n\nexport const impl = {\n  check(n: number) { return n > 0; },\n};\n",
		"b.ts":          "import { Checker } from './a';\n\nexport function run(c: Checker) {\n  return c.check(1);\n}\n",
	})
	x := buildRoot(t, root)
	a, err := x.Callers(Spec{File: "a.ts", Line: 6, Symbol: "check"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range a.Sites {
		found = found || s.File == "b.ts" && s.Line == 4 && s.Class == Candidate && strings.Contains(s.Reason, "conforms")
	}
	if !found {
		t.Fatalf("the call through Checker is not a candidate of the object's check:\n%s", a.Text())
	}
}

// A method read without a call (for n in self.reader.resources) is a
// value use of it, never dropped.
func TestMethodReadIsValueUse(t *testing.T) {
	root := testenv.Tree(t, map[string]string{
		"r.py": "class Reader:\n    def resources(self):\n        return []\n\n\ndef walk(r: Reader, other):\n    for n in r.resources:\n        pass\n    return other.resources\n",
	})
	x := buildRoot(t, root)
	a, err := x.Callers(Spec{Symbol: "Reader.resources"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	lines := map[int]string{}
	for _, s := range a.Values {
		lines[s.Line] = s.Class
	}
	if lines[7] != Exact || lines[9] != Candidate || len(a.Sites) != 0 {
		t.Errorf("reads of Reader.resources: want an exact value use at line 7 and a candidate at 9:\n%s\n%+v", a.Text(), a.Values)
	}
}

// A call on a variable whose type is unknown, of a name only module-level
// functions have, lists them as candidates (the variable may hold a
// module), never "no definition named".
func TestModuleHeldInVariable(t *testing.T) {
	dumpHas(t, map[string]string{
		"b64.py": "def header_length(s):\n    return len(s)\n",
		"c.py":   "import b64\n\ndef use(flag):\n    m = b64 if flag else None\n    return m.header_length('x')\n",
	}, []string{
		"call c.py:5 m.header_length in use -> candidate[1] header_length (b64.py:1)",
	})
}

// A Go conversion T(x) uses the type T: callers of T lists it as a type
// use, never as a call site, and callees of the function converting
// leaves it out (no call is made). In x, err := x(...) the call is of the
// function x: the name is declared only after the statement.
func TestConversionsAndDeclaredAfter(t *testing.T) {
	x := fixture(t, "go_dispatch")
	for _, typ := range []string{"conv.MyInt", "conv.Path", "conv.Handler"} {
		a, err := x.Callers(Spec{Symbol: typ}, 0)
		if err != nil {
			t.Fatal(err)
		}
		used := false
		for _, s := range a.TypeUses {
			used = used || s.In == "conv.Use"
		}
		if len(a.Sites) != 0 || !used {
			t.Errorf("callers of %s: sites %+v, type uses %+v", typ, a.Sites, a.TypeUses)
		}
	}
	c, err := x.Callees(Spec{Symbol: "conv.Use"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range c.Sites {
		t.Errorf("callees of conv.Use lists %s (%s)", s.Call, s.Class)
	}
	for _, fn := range []string{"conv.parse", "conv.next", "conv.wrap"} {
		a, err := x.Callers(Spec{Symbol: fn}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if a.Counts.Exact != 1 {
			t.Errorf("callers of %s: %+v %+v", fn, a.Counts, a.Sites)
		}
	}
}

// A call through a type declared outside the index is never silent to
// callers of a method it may run: named like the method (io.Writer's
// Write) it is a candidate; else (net.Conn's Close) counted as dispatch,
// the answer a lower bound; a pointer (*strings.Builder) is neither.
func TestExternalDispatch(t *testing.T) {
	x := fixture(t, "go_dispatch")
	w, err := x.Callers(Spec{Symbol: "sink.File.Write"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Sites) != 1 || w.Sites[0].In != "sink.Emit" || w.Sites[0].Class != Candidate || !strings.Contains(w.Sites[0].Reason, "declared outside the index") {
		t.Errorf("callers of sink.File.Write: %+v", w.Sites)
	}
	c, err := x.Callers(Spec{Symbol: "sink.File.Close"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.Counts.Dispatch != 1 || c.Dispatched == nil || c.Dispatched.In != "sink.Hang" || !c.LowerBound {
		t.Errorf("callers of sink.File.Close: counts %+v, lower bound %v, sites %+v", c.Counts, c.LowerBound, c.Sites)
	}
	i, err := x.Impact(Spec{Symbol: "sink.File.Close"}, 2, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if i.Counts.Dispatch != 1 || !i.LowerBound {
		t.Errorf("impact of sink.File.Close: counts %+v, lower bound %v", i.Counts, i.LowerBound)
	}
	e, err := x.Callers(Spec{Symbol: "sink.Failure.Error"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if e.Counts.Dispatch != 1 || len(e.Sites) != 0 || !e.LowerBound {
		t.Errorf("callers of sink.Failure.Error (err.Error() through the builtin error): counts %+v, sites %+v", e.Counts, e.Sites)
	}
	b, err := x.Callers(Spec{Symbol: "sink.File.WriteString"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Sites) != 0 || b.Counts.Dispatch != 0 {
		t.Errorf("callers of sink.File.WriteString: counts %+v, sites %+v", b.Counts, b.Sites)
	}
}

// Types read as structure reach what their text hid from the text
// readers: an array whose length is a shift ([1 << 4]*Conn, the '<'
// taken for a bracket) and a receiver whose call has a bracket inside a
// string (regexp-like New("a(")).
func TestTypesReadAsStructure(t *testing.T) {
	ar := txtar.Parse([]byte(`-- go.mod --
module m
-- conn/conn.go --
package conn

type Conn struct{}

func (c *Conn) Send() {}

func New(pattern string) *Conn { return &Conn{} }
-- app/app.go --
package app

import "m/conn"

func Shift() {
	var pool [1 << 4]*conn.Conn
	pool[0].Send()
}

func Quoted() {
	conn.New("a(").Send()
}
`))
	x := buildFixture(t, ar)
	a, err := x.Callers(Spec{Symbol: "conn.Conn.Send"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"app.Shift":  "pool[0] is an element",
		"app.Quoted": "conn.New returns *Conn",
	}
	for _, s := range a.Sites {
		if w, ok := want[s.In]; ok && s.Class == Exact && strings.Contains(s.Reason, w) {
			delete(want, s.In)
		}
	}
	if len(want) > 0 {
		t.Errorf("not exact with their evidence: %v\n%s", want, a.Text())
	}
}
