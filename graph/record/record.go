package record

import (
	"slices"
	"sort"
	"strings"
)

// Record is what one file's bytes give, by one language's query files:
// its definitions, references, locals, fields and imports. It holds no
// path and nothing of the system it was read on (the same bytes give the
// same record anywhere), and it is immutable once made.
type Record struct {
	Package string
	// Exports is the name the module's whole value is set to (CommonJS
	// module.exports = X), or "".
	Exports string
	// Default is the definition a module's default export names (ES
	// export default function f), or "": what import D from './m' binds.
	Default string
	// BuildLine is a build constraint as the file writes it (a Go
	// //go:build line), read by the language's variants rule; "" for none.
	BuildLine string
	Defs      []Def    // by start, outer first
	Refs      []Ref    // by position
	ArgKeys   []ArgKey // by At: the keywords of values passed by one
	Imports   []Import // in source order
	Locals    []Local  // sorted by name, then position
	Fields    []Field  // in source order
	Errors    int      // ERROR and MISSING nodes
	ErrorAt   []int    // their first lines (1-based)
	// The string table (Strs) and the declared types' trees (Types,
	// Exprs, Steps), with their readings: see typetree.go.
	typeTrees
	// DefOrder and RefOrder are Defs and Refs sorted by name.
	DefOrder []int32 `codec:"index=Defs"`
	RefOrder []int32 `codec:"index=Refs"`
}

// Empty is a record with nothing in it: a file known to exist, not read.
func Empty() *Record { return &Record{typeTrees: typeTrees{Strs: []string{""}}} }

// Def is one definition.
type Def struct {
	Name      string
	Kind      string // function, method, class, interface, struct, type, enum, constant, variable, macro, module, ...
	Container string // receiver type or enclosing class; "" at top level
	Scope     string // enclosing namespaces or modules (C++, TypeScript, Rust mod), dotted
	// Self is the receiver's name inside a method (Go), if captured; "=>"
	// (LexicalSelf) for an arrow function, whose this is its outer one's.
	Self string
	// Type is what the source declares for it: a function's result type,
	// as written (@type in its pattern), or "".
	Type    string
	T       int32 `codec:"bound=Types"` // Type's tree (a type), 1-based; 0 none
	X       int32 `codec:"bound=Exprs"` // Type's steps (an expression: How TypeCall, TypeExpr), 1-based; 0 none
	Line    int32 `codec:"delta"`       // 1-based
	EndLine int32
	Col     int32 // 1-based, in bytes, of the name
	Start   int32 `codec:"delta"` // byte range of the whole definition
	End     int32
	NameAt  int32
	// Local: inside a function, a block or a value, so not a name of its
	// module (a def in a def, an object literal's method in a callback).
	Local bool
	// How is how a variable's Type is known: TypeCall when Type is the
	// callee whose result initializes it (var Stdout = NewFile(...)),
	// TypeNew for a literal or constructor; TypeNone or TypeDeclared: as
	// written.
	How uint8
}

// LexicalSelf is the Self of an arrow function: self (this) inside it is
// the one of the definition around it.
const LexicalSelf = "=>"

// Member says d is reached through an object: a method of a class, or of
// an object literal (kind method with no container), never by its bare
// name.
func (d *Def) Member() bool { return d.Container != "" || d.Kind == "method" || d.Kind == "getter" }

// Qualified is Scope.Container.Name, leaving out what is empty.
func (d *Def) Qualified() string {
	q := d.Name
	if d.Container != "" {
		q = d.Container + "." + q
	}
	if d.Scope != "" {
		q = d.Scope + "." + q
	}
	return q
}

// Reference kinds.
const (
	RefCall  uint8 = iota // a call site
	RefType               // a type used by name
	RefValue              // a function passed or stored as a value
	RefRead               // a property read (obj.x), which runs x if x is a getter
)

// RefKindNames name the reference kinds (as dumps write them).
var RefKindNames = [...]string{RefCall: "call", RefType: "type", RefValue: "value", RefRead: "read"}

// Ref is one reference by name. Its strings are indexes into its record's
// table (Record.Strs), so a record's references hold no pointers.
type Ref struct {
	Name uint32 `codec:"index=Strs"`
	Recv uint32 `codec:"index=Strs"`  // the text before the name (pkg in pkg.F(), x.y in x.y.M())
	X    int32  `codec:"bound=Exprs"` // Recv's steps, 1-based; 0 none
	Kind uint8
	// Arg is, for a value passed as an argument (G(F)), its 1-based place
	// among the call's arguments (ArgByName: passed by a keyword,
	// g(fn=F), which Record.ArgKey gives), and ArgBack how far before At the call's name (G) is: the
	// call's reference is found by it (ArgOf). 0 for anything else, and
	// for an argument more than 64 KiB after its call's name. Both sit in
	// what would be Kind's padding: a reference is 1.34 M of a GOROOT
	// index's records, and every byte of it is 1.3 MiB.
	Arg     uint8
	ArgBack uint16
	Line    int32 `codec:"delta"`
	Col     int32
	Encl    int32 `codec:"index=Defs,none=-1"` // index in the record's Defs of the definition it is in, or -1
	At      int32 `codec:"delta"`
}

// ArgKey is the keyword a value is passed by (g(fn=F)): kept beside the
// references, not in each (a few in a record; a field in every reference
// was 5 MiB of a GOROOT index).
type ArgKey struct {
	At  int32  `codec:"delta"` // the reference's At
	Key uint32 `codec:"index=Strs"`
}

// ArgKey is the keyword r is passed by (Arg ArgByName), or "".
func (r *Record) ArgKey(ref *Ref) string {
	i := sort.Search(len(r.ArgKeys), func(i int) bool { return r.ArgKeys[i].At >= ref.At })
	if i < len(r.ArgKeys) && r.ArgKeys[i].At == ref.At {
		return r.Strs[r.ArgKeys[i].Key]
	}
	return ""
}

// ArgOf is the At of the call's name r is passed to (Arg), 0 when r is
// not an argument.
func (r *Ref) ArgOf() int32 {
	if r.ArgBack == 0 {
		return 0
	}
	return r.At - int32(r.ArgBack)
}

// ArgByName is a Ref's Arg for a value passed by keyword (ArgKey); a
// place past it is not kept.
const ArgByName = 255

// Local is a name bound inside a definition (a parameter, a variable):
// a receiver or call with that name after it is not a package or a
// type.
type Local struct {
	Name uint32 `codec:"index=Strs"`         // in the record's table
	Encl int32  `codec:"index=Defs,none=-1"` // the enclosing definition's index in Defs
	At   int32
	End  int32 // the end of the innermost @local.scope around it (a block, a closure), or -1: the whole definition
	// Type is its declared type as written (How TypeDeclared, TypeParam,
	// TypeNew), the callee whose result it holds (TypeCall) or the
	// expression whose element it is (TypeElem); How is TypeNone when the
	// source says nothing.
	Type uint32 `codec:"index=Strs"`
	T    int32  `codec:"bound=Types"` // Type's tree (a type), 1-based; 0 none
	X    int32  `codec:"bound=Exprs"` // Type's steps (an expression), 1-based; 0 none
	How  uint8
	// Param is a parameter's 1-based place in its function's parameter
	// list (@parameters), 0 for any other local: a call of it is a call
	// of what callers pass there. (Beside How, in its padding.)
	Param uint8
	Line  int32
}

// How a local's or field's type is known.
const (
	TypeNone     uint8 = iota
	TypeDeclared       // var x T, x: T
	TypeParam          // a parameter's declared type
	TypeNew            // T{}, &T{}, new T(), new(T)
	TypeCall           // the declared result of the function called
	TypeElem           // an element of a slice or map of a declared type (range)
	TypeBranch         // a type switch case or an isinstance branch
	TypeExpr           // the type of the expression assigned (x := s.conn)
	TypeField          // the field of its own name of a declared type ({gen}: Cxt)
	TypeCall2          // the second result of the function called (ctx, span := Start())
	TypeCall3          // its third result
	// TypeTypeParam: a type parameter (a local of a generic function, a
	// field of a generic type, named like it), typed by its constraint.
	TypeTypeParam
	// TypeResult: a local bound to a function literal; Type is what a call
	// of it returns (setup := func() *DB {…}; db := setup()).
	TypeResult
	// TypeKey: what a one-variable range over the expression Type gives (a
	// map's key, a channel's element).
	TypeKey
)

// HowText says how a type is known, for a reason ("parameter", "result
// of"), by the Type* constants.
var HowText = [...]string{TypeNone: "", TypeDeclared: "declared", TypeParam: "parameter", TypeNew: "constructed", TypeCall: "result of", TypeElem: "element of", TypeBranch: "branch", TypeExpr: "assigned", TypeField: "field of", TypeCall2: "second result of", TypeCall3: "third result of", TypeTypeParam: "type parameter", TypeResult: "function literal", TypeKey: "ranged over"}

// Field is a field with a declared type, or (Name "") an embedded type or
// a base class, of the class-like definition Container.
type Field struct {
	Container string
	Name      string
	Type      string // as written; for How TypeCall, the callee
	T         int32  `codec:"bound=Types"` // Type's tree (a type), 1-based; 0 none
	X         int32  `codec:"bound=Exprs"` // Type's steps (an expression), 1-based; 0 none
	How       uint8
	Line      int32
	At        int32
	Module    bool // @field.module: a binding of the module's name (Container "")
	Global    bool // @field.global: a global statement naming it inside a function
	Attr      bool // @field.attr: self.x = ... in any method, typed or not
}

// Import is one name an import binds in its file: a module (Name "") or
// one name from a module.
type Import struct {
	Module string
	Name   string // DefaultImport for the module's default export
	Local  string // the name the file uses
	Line   int32
}

// DefaultImport is an Import's Name for an import of a module's default
// export (import D from './m'), whatever it is called there.
const DefaultImport = "default"

// classLike kinds contain methods; namespaceLike ones contain free
// definitions (a function in a namespace stays a function).
var (
	classLike     = map[string]bool{"class": true, "interface": true, "struct": true, "trait": true, "enum": true, "impl": true, "type": true, "union": true}
	namespaceLike = map[string]bool{"namespace": true, "module": true}
)

// functionLike kinds enclose call sites.
var functionLike = map[string]bool{"function": true, "method": true, "constructor": true, "macro": true, "getter": true}

// ClassLike says a definition of this kind holds members.
func ClassLike(kind string) bool { return classLike[kind] }

// FunctionLike says a definition of this kind runs code (and encloses
// call sites).
func FunctionLike(kind string) bool { return functionLike[kind] }

// NamespaceLike says a definition of this kind holds free definitions.
func NamespaceLike(kind string) bool { return namespaceLike[kind] }

// Cost estimates the bytes r holds in memory.
func (r *Record) Cost() int64 {
	return 200 + int64(len(r.Types))*20 + int64(len(r.Exprs))*8 + int64(len(r.Steps))*16 + int64(len(r.Defs))*120 + int64(len(r.Refs))*32 + int64(len(r.Imports))*72 + int64(len(r.Locals))*36 + int64(len(r.Fields))*72 + int64(len(r.Strs))*16 + int64(len(r.DefOrder)+len(r.RefOrder))*4
}

// RefName and RefReceiver are a reference's name and receiver text.
func (r *Record) RefName(ref *Ref) string { return r.Strs[ref.Name] }

func (r *Record) RefReceiver(ref *Ref) string { return r.Strs[ref.Recv] }

// DefsNamed returns the indexes of r's definitions called name.
func (r *Record) DefsNamed(name string) []int32 {
	return lookup(r.DefOrder, name, func(i int32) string { return r.Defs[i].Name })
}

// RefsNamed returns the indexes of r's references to name.
func (r *Record) RefsNamed(name string) []int32 {
	return lookup(r.RefOrder, name, func(i int32) string { return r.Strs[r.Refs[i].Name] })
}

func lookup(o []int32, name string, key func(int32) string) []int32 {
	lo := sort.Search(len(o), func(i int) bool { return key(o[i]) >= name })
	hi := lo
	for hi < len(o) && key(o[hi]) == name {
		hi++
	}
	return o[lo:hi]
}

// Order returns the indexes 0..n-1 sorted by key.
func Order(n int, key func(int) string) []int32 {
	o := make([]int32, n)
	for i := range o {
		o[i] = int32(i)
	}
	slices.SortStableFunc(o, func(a, b int32) int { return strings.Compare(key(int(a)), key(int(b))) })
	return o
}

// LocalsNamed returns the indexes of r's locals called name.
func (r *Record) LocalsNamed(name string) []int {
	lo, hi := 0, len(r.Locals)
	for lo < hi {
		m := (lo + hi) / 2
		if r.Strs[r.Locals[m].Name] < name {
			lo = m + 1
		} else {
			hi = m
		}
	}
	var out []int
	for i := lo; i < len(r.Locals) && r.Strs[r.Locals[i].Name] == name; i++ {
		out = append(out, i)
	}
	return out
}

// Bound says whether name is a local of definition encl bound before
// byte offset at.
func (r *Record) Bound(name string, encl, at int32) bool {
	if encl < 0 {
		return false
	}
	i := sort.Search(len(r.Locals), func(i int) bool { return r.Strs[r.Locals[i].Name] >= name })
	for ; i < len(r.Locals) && r.Strs[r.Locals[i].Name] == name; i++ {
		if l := &r.Locals[i]; l.Encl == encl && l.At <= at && (l.End < 0 || at < l.End) {
			return true
		}
	}
	return false
}

// funcParamAt says whether name at byte offset at in definition encl is
// a parameter (of encl or of a function it is nested in) that may hold a
// function: untyped, or of a type whose text says so (funcTypeWords). A
// parameter of another type handed on (ctx, w, a counter) is most of
// them, and its reference would only cost memory.
func (r *Record) FuncParamAt(name string, encl, at int32) bool {
	for e, n := encl, 0; e >= 0 && n < 16; e, n = r.Outer(e), n+1 {
		if r.Bound(name, e, at) {
			// The innermost binding, as InnermostLocals finds it, without
			// its slice: this runs for every local passed as an argument.
			var l *Local
			n, bestEnd := 0, int64(-1)
			i := sort.Search(len(r.Locals), func(i int) bool { return r.Strs[r.Locals[i].Name] >= name })
			for ; i < len(r.Locals) && r.Strs[r.Locals[i].Name] == name; i++ {
				c := &r.Locals[i]
				end, ok := c.scopeEnd(e, at)
				if !ok {
					continue
				}
				switch {
				case l == nil || end < bestEnd:
					l, n, bestEnd = c, 1, end
				case end == bestEnd:
					n++
				}
			}
			if n != 1 || l.Param == 0 {
				return false
			}
			if l.How == TypeNone {
				return true
			}
			t := strings.ToLower(r.Strs[l.Type])
			for _, w := range funcTypeWords {
				if strings.Contains(t, w) {
					return true
				}
			}
			return false
		}
	}
	return false
}

// funcTypeWords are what a declared type that may hold a function says,
// lower-cased: Go's func(…) and XFunc, TypeScript's (…) => T and
// Function, Rust's impl Fn, Python's Callable, C++'s std::function, and
// the names such types are usually given.
var funcTypeWords = []string{"func", "fn", "=>", "callable", "handler", "callback", "hook"}

// Outer returns the function-like definition around definition e when e
// is nested in one (a closure, a def in a def), else -1.
func (r *Record) Outer(e int32) int32 {
	if e < 0 || !r.Defs[e].Local {
		return -1
	}
	d := &r.Defs[e]
	for j := e - 1; j >= 0; j-- {
		if p := &r.Defs[j]; p.Start <= d.Start && d.End <= p.End {
			if functionLike[p.Kind] {
				return j
			}
			if !p.Local {
				return -1
			}
			d = p
		}
	}
	return -1
}

// BoundAround says whether name is a local of definition encl or of a
// function it is nested in (a closure sees its enclosing function's
// locals), before byte offset at.
func (r *Record) BoundAround(name string, encl, at int32) bool {
	for e, n := encl, 0; e >= 0 && n < 16; e, n = r.Outer(e), n+1 {
		if r.Bound(name, e, at) {
			return true
		}
	}
	return false
}

// Rebound says whether name is bound again inside a block or closure of
// definition encl around at: a Go method's receiver shadowed by
// switch v := v.(type).
func (r *Record) Rebound(name string, encl, at int32) bool {
	i := sort.Search(len(r.Locals), func(i int) bool { return r.Strs[r.Locals[i].Name] >= name })
	for ; i < len(r.Locals) && r.Strs[r.Locals[i].Name] == name; i++ {
		if l := &r.Locals[i]; l.Encl == encl && l.End >= 0 && l.At <= at && at < l.End {
			return true
		}
	}
	return false
}

// scopeEnd is where l's scope ends (past any offset when it runs to its
// definition's end), and whether l is a binding in definition encl that is
// visible at byte offset at: the innermost scope is the one ending first.
func (l *Local) scopeEnd(encl, at int32) (int64, bool) {
	if l.Encl != encl || l.At > at || (l.End >= 0 && at >= l.End) {
		return 0, false
	}
	if l.End < 0 {
		return 1 << 40, true
	}
	return int64(l.End), true
}

// InnermostLocals returns the bindings of name visible at byte offset at
// in definition encl that are in the innermost scope holding one: several
// where the name is bound again there (x := f(), then x = g()).
func (r *Record) InnermostLocals(name string, encl, at int32) []*Local {
	var ls []*Local
	bestEnd := int64(-1)
	for _, i := range r.LocalsNamed(name) {
		l := &r.Locals[i]
		end, ok := l.scopeEnd(encl, at)
		if !ok {
			continue
		}
		switch {
		case bestEnd < 0 || end < bestEnd:
			ls, bestEnd = append(ls[:0], l), end
		case end == bestEnd:
			ls = append(ls, l)
		}
	}
	return ls
}

// LocalDecl returns the typed binding of name visible at byte offset at
// in definition encl: the bindings of the innermost scope holding one
// must all say the same type (x = Foo() then x = Bar() says none).
func (r *Record) LocalDecl(name string, encl, at int32) *Local {
	if encl < 0 {
		return nil
	}
	ls := r.InnermostLocals(name, encl, at)
	if len(ls) == 0 {
		return nil
	}
	best := ls[0]
	for _, l := range ls[1:] {
		if l.Type != best.Type || l.How != best.How {
			return nil
		}
		if l.At > best.At {
			best = l
		}
	}
	if best.How == TypeNone {
		return nil
	}
	return best
}

// EnclosingAt is the innermost function-like definition around byte
// offset at, or -1.
func (r *Record) EnclosingAt(at int32) int32 {
	best := int32(-1)
	for i := range r.Defs {
		d := &r.Defs[i]
		if functionLike[d.Kind] && d.Start <= at && at < d.End && (best < 0 || d.Start >= r.Defs[best].Start) {
			best = int32(i)
		}
	}
	return best
}
