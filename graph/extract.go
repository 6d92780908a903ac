package graph

import (
	"crypto/sha256"
	"path"
	"slices"
	"sort"
	"strings"
	"unique"

	"github.com/builtin-tools/builtin-tools/astgrep"
)

// Def is one definition.
type Def struct {
	Name      string
	Kind      string // function, method, class, interface, struct, type, enum, constant, variable, macro, module, ...
	Container string // receiver type or enclosing class; "" at top level
	Scope     string // enclosing namespaces or modules (C++, TypeScript, Rust mod), dotted
	Self      string // the receiver's name inside a method (Go), if captured
	// Type is what the source declares for it: a function's result type,
	// as written (@type in its pattern), or "".
	Type    string
	Line    int32 // 1-based
	EndLine int32
	Col     int32 // 1-based, in bytes, of the name
	start   int32 // byte range of the whole definition
	end     int32
	nameAt  int32
	// local: inside a function, a block or a value, so not a name of its
	// module (a def in a def, an object literal's method in a callback).
	local bool
	// How is how a variable's Type is known: TypeCall when Type is the
	// callee whose result initializes it (var Stdout = NewFile(...)),
	// TypeNew for a literal or constructor; TypeNone or TypeDeclared: as
	// written.
	How uint8
}

// member says d is reached through an object: a method of a class, or of
// an object literal (kind method with no container), never by its bare
// name.
func (d *Def) member() bool { return d.Container != "" || d.Kind == "method" || d.Kind == "getter" }

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

var refKinds = map[string]uint8{"call": RefCall, "type": RefType, "value": RefValue, "read": RefRead}

// Ref is one reference by name. Its strings are indexes into its file's
// table (File.Str), so a file's references hold no pointers.
type Ref struct {
	name uint32
	recv uint32 // the text before the name (pkg in pkg.F(), x.y in x.y.M())
	Kind uint8
	Line int32
	Col  int32
	Encl int32 // index in the file's Defs of the definition it is in, or -1
	at   int32
}

// Local is a name bound inside a definition (a parameter, a variable):
// a receiver or call with that name after it is not a package or a
// type.
type Local struct {
	name uint32 // in the file's table
	Encl int32  // the enclosing definition's index in Defs
	at   int32
	end  int32 // the end of the innermost @local.scope around it (a block, a closure), or -1: the whole definition
	// typ is its declared type as written (how TypeDeclared, TypeParam,
	// TypeNew), the callee whose result it holds (TypeCall) or the
	// expression whose element it is (TypeElem); how is TypeNone when the
	// source says nothing.
	typ      uint32
	how      uint8
	conflict bool // (while extracting) two patterns gave it different types
	line     int32
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
	// TypeResult: a local bound to a function literal; typ is what a call
	// of it returns (setup := func() *DB {…}; db := setup()).
	TypeResult
	// TypeKey: what a one-variable range over the expression typ gives (a
	// map's key, a channel's element).
	TypeKey
)

var typeHow = [...]string{TypeNone: "", TypeDeclared: "declared", TypeParam: "parameter", TypeNew: "constructed", TypeCall: "result of", TypeElem: "element of", TypeBranch: "branch", TypeExpr: "assigned", TypeField: "field of", TypeCall2: "second result of", TypeCall3: "third result of", TypeTypeParam: "type parameter", TypeResult: "function literal", TypeKey: "ranged over"}

// Field is a field with a declared type, or (Name "") an embedded type or
// a base class, of the class-like definition Container.
type Field struct {
	Container string
	Name      string
	Type      string // as written; for How TypeCall, the callee
	How       uint8
	Line      int32
	at        int32
	module    bool // @field.module: a binding of the module's name (Container "")
	global    bool // @field.global: a global statement naming it inside a function
	attr      bool // @field.attr: self.x = ... in any method, typed or not
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

// File is what the index knows of one file.
type File struct {
	Rel     string // slash-separated, relative to the root
	Dir     string // path.Dir(Rel)
	Lang    *Language
	Size    int64
	ModTime int64 // Unix nanoseconds
	Inode   uint64
	// CTime is the inode's change time, which no program can set back: a
	// rewrite in place that restores the size and mtime still changes it
	// (N21).
	CTime   int64
	Hash    [32]byte
	Package string
	// Exports is the name the module's whole value is set to (CommonJS
	// module.exports = X), or "".
	Exports string
	// Default is the definition a module's default export names (ES
	// export default function f), or "": what import D from './m' binds.
	Default string
	// Host says whether the file is built on this system by what it says
	// inside (a Go //go:build line): HostAny without a say, HostYes or
	// HostNo. Names (x_linux.go) are read apart, as variants.
	Host     uint8
	Defs     []Def
	Refs     []Ref
	Imports  []Import
	Locals   []Local  // sorted by name, then position
	Fields   []Field  // in source order
	strs     []string // the strings of Refs and Locals; 0 is ""
	Errors   int      // ERROR and MISSING nodes
	ErrorAt  []int    // their first lines (1-based)
	defOrder []int32
	refOrder []int32
}

// cost estimates the bytes f holds in memory.
func (f *File) cost() int64 {
	return 200 + int64(len(f.Rel)) + int64(len(f.Defs))*112 + int64(len(f.Refs))*28 + int64(len(f.Imports))*72 + int64(len(f.Locals))*28 + int64(len(f.Fields))*64 + int64(len(f.strs))*16 + int64(len(f.defOrder)+len(f.refOrder))*4
}

func intern(s string) string { return unique.Make(s).Value() }

// Str returns a string of the file's table.
func (f *File) Str(i uint32) string { return f.strs[i] }

// RefName and RefReceiver are a reference's name and receiver text.
func (f *File) RefName(r *Ref) string     { return f.strs[r.name] }
func (f *File) RefReceiver(r *Ref) string { return f.strs[r.recv] }

// table builds a file's string table.
type table struct {
	ids  map[string]uint32
	strs []string
}

func (t *table) id(s string) uint32 {
	if s == "" {
		return 0
	}
	if i, ok := t.ids[s]; ok {
		return i
	}
	i := uint32(len(t.strs))
	t.ids[s] = i
	t.strs = append(t.strs, intern(s))
	return i
}

// extract turns one file's query matches into a File.
func extract(rel string, l *Language, src []byte, r *astgrep.CaptureResult) *File {
	f := &File{Rel: rel, Dir: path.Dir(rel), Lang: l, Size: int64(len(src)), Hash: sha256.Sum256(src), Errors: r.Errors, Host: l.hostBuilt(src)}
	for _, row := range r.ErrorRows {
		f.ErrorAt = append(f.ErrorAt, row+1)
	}
	type defAt struct {
		d       Def
		pattern int
	}
	var defs []defAt
	type refAt struct {
		r       Ref
		pattern int
		end     int32
	}
	var refs []refAt
	var locals []Local
	var fields []Field
	var scopes [][2]int32
	tab := &table{ids: map[string]uint32{}, strs: []string{""}}
	exportsSet := false
	var docs []docAt
	for _, m := range r.Matches {
		var rl *role
		var name, recv, cont, self, mod, iname, idef, alias, typ, scope *astgrep.QueryCapture
		how := TypeNone
		member := false
		for i := range m.Captures {
			c := &m.Captures[i]
			switch c.Index {
			case l.capName:
				name = c
			case l.capRecv:
				recv = c
			case l.capCont:
				cont = c
			case l.capSelf:
				self = c
			case l.capMod:
				mod = c
			case l.capINm:
				iname = c
			case l.capIDef:
				idef = c
			case l.capAlias:
				alias = c
			case l.capType:
				typ, how = c, TypeDeclared
			case l.capTypeNew:
				typ, how = c, TypeNew
			case l.capTypeCall:
				typ, how = c, TypeCall
			case l.capTypeElem:
				typ, how = c, TypeElem
			case l.capTypeExpr:
				typ, how = c, TypeExpr
			case l.capTypeMember:
				typ, how, member = c, TypeExpr, true
			case l.capTypeField:
				typ, how = c, TypeField
			case l.capTypeCall2:
				typ, how = c, TypeCall2
			case l.capTypeCall3:
				typ, how = c, TypeCall3
			case l.capTypeParam:
				typ, how = c, TypeTypeParam
			case l.capTypeResult:
				typ, how = c, TypeResult
			case l.capTypeKey:
				typ, how = c, TypeKey
			case l.capScope:
				scope = c
			}
			if ro := &l.roles[c.Index]; ro.capture >= 0 && rl == nil {
				rl = ro
			}
		}
		if rl == nil {
			continue
		}
		var whole *astgrep.QueryCapture
		for i := range m.Captures {
			if m.Captures[i].Index == rl.capture {
				whole = &m.Captures[i]
			}
		}
		switch rl.what {
		case "package":
			if name != nil {
				f.Package = intern(name.Text(src))
			}
		case "doc":
			for i := range m.Captures {
				if c := &m.Captures[i]; c.Index == l.capDocText {
					docs = append(docs, docAt{int32(whole.Start), int32(whole.End), c.Text(src)})
				}
			}
		case "export":
			if rl.kind == "default" {
				if name != nil && f.Default == "" {
					f.Default = intern(name.Text(src))
				}
				continue
			}
			// Two different values (if/else) name none.
			if e := name; e != nil && exportsSet && f.Exports != e.Text(src) {
				f.Exports = ""
			} else if e != nil && !exportsSet {
				f.Exports, exportsSet = intern(e.Text(src)), true
			}
		case "import":
			if mod == nil {
				continue
			}
			im := Import{Module: intern(unquote(mod.Text(src))), Line: int32(mod.StartRow + 1)}
			if iname != nil {
				im.Name = intern(iname.Text(src))
				im.Local = im.Name
			}
			if idef != nil {
				im.Name, im.Local = DefaultImport, intern(idef.Text(src))
			}
			if alias != nil {
				im.Local = intern(alias.Text(src))
			}
			f.Imports = append(f.Imports, im)
		case "definition":
			if name == nil {
				continue
			}
			d := Def{Name: intern(name.Text(src)), Kind: intern(rl.kind),
				Line: int32(whole.StartRow + 1), EndLine: int32(whole.EndRow + 1), Col: int32(name.StartCol + 1),
				start: int32(whole.Start), end: int32(whole.End), nameAt: int32(name.Start)}
			if cont != nil {
				d.Container = intern(cont.Text(src))
			}
			if self != nil {
				d.Self = intern(self.Text(src))
			}
			if typ != nil {
				d.Type = intern(typeText(typ.Text(src)))
				d.How = how
			}
			defs = append(defs, defAt{d, m.Pattern})
		case "field":
			// A @field.module binding without a type still counts: it
			// rebinds the module's name.
			if typ == nil && (rl.kind != "module" && rl.kind != "global" && rl.kind != "attr" || name == nil) {
				continue
			}
			var fd Field
			if typ != nil {
				fd = Field{Type: intern(clipLiteral(l, typeText(typ.Text(src)))), How: how, Line: int32(typ.StartRow + 1), at: int32(typ.Start)}
			} else {
				fd.Line = int32(name.StartRow + 1)
			}
			fd.module = rl.kind == "module" || rl.kind == "global"
			fd.global = rl.kind == "global"
			fd.attr = rl.kind == "attr"
			if name != nil {
				// (A module or attribute binding's name is interned once
				// kept: most are dropped.)
				fd.Name = name.Text(src)
				if !fd.module && !fd.attr {
					fd.Name = intern(fd.Name)
				}
				fd.at = int32(name.Start)
			}
			if cont != nil {
				fd.Container = intern(cont.Text(src))
			}
			fields = append(fields, fd)
		case "local":
			if kind := rl.kind; kind == "scope" {
				scopes = append(scopes, [2]int32{int32(whole.Start), int32(whole.End)})
			} else if name != nil {
				lc := Local{name: tab.id(name.Text(src)), at: int32(name.Start), Encl: -1, end: -1, line: int32(name.StartRow + 1)}
				if typ != nil {
					lc.typ, lc.how = tab.id(clipLiteral(l, typeText(typ.Text(src)))), how
					if member {
						lc.typ = tab.id(typeText(typ.Text(src)) + "." + name.Text(src))
					}
					if how == TypeDeclared && rl.kind == "param" {
						lc.how = TypeParam
					}
					if scope != nil {
						lc.how = TypeBranch
					}
				}
				if scope != nil {
					lc.at, lc.end = int32(scope.Start), int32(scope.End)
				}
				locals = append(locals, lc)
			}
		case "reference":
			if name == nil {
				continue
			}
			k, ok := refKinds[rl.kind]
			if !ok {
				continue
			}
			rf := Ref{name: tab.id(name.Text(src)), Kind: k, Line: int32(name.StartRow + 1), Col: int32(name.StartCol + 1), at: int32(name.Start), Encl: -1}
			if recv != nil {
				rf.recv = tab.id(strings.Join(strings.Fields(recv.Text(src)), ""))
			}
			refs = append(refs, refAt{rf, m.Pattern, int32(name.End)})
		}
	}
	// One definition per name node: the first pattern that matched it wins,
	// so a specific pattern listed before a general one decides the kind.
	sort.SliceStable(defs, func(i, j int) bool {
		if defs[i].d.nameAt != defs[j].d.nameAt {
			return defs[i].d.nameAt < defs[j].d.nameAt
		}
		return defs[i].pattern < defs[j].pattern
	})
	names := make(map[int32]bool, len(defs))
	f.Defs = make([]Def, 0, len(defs))
	for _, d := range defs {
		if names[d.d.nameAt] {
			// A later pattern may only add the declared type (a return
			// type) to the kind the first one decided.
			if k := len(f.Defs) - 1; d.d.Type != "" && f.Defs[k].nameAt == d.d.nameAt && f.Defs[k].Type == "" {
				f.Defs[k].Type, f.Defs[k].How = d.d.Type, d.d.How
			}
			continue
		}
		names[d.d.nameAt] = true
		f.Defs = append(f.Defs, d.d)
	}
	// Definitions by start, outer first, for nesting.
	sort.SliceStable(f.Defs, func(i, j int) bool {
		if f.Defs[i].start != f.Defs[j].start {
			return f.Defs[i].start < f.Defs[j].start
		}
		return f.Defs[i].end > f.Defs[j].end
	})
	parent := nest(f.Defs)
	// One reference per name node, and none on a definition's own name.
	sort.SliceStable(refs, func(i, j int) bool {
		if refs[i].r.at != refs[j].r.at {
			return refs[i].r.at < refs[j].r.at
		}
		return refs[i].pattern < refs[j].pattern
	})
	last := int32(-1)
	f.Refs = make([]Ref, 0, len(refs))
	for _, r := range refs {
		if r.r.at == last || names[r.r.at] {
			continue
		}
		last = r.r.at
		f.Refs = append(f.Refs, r.r)
	}
	if cap(f.Refs)-len(f.Refs) > 16 {
		f.Refs = slices.Clone(f.Refs)
	}
	enclose(f.Defs, f.Refs)
	f.strs = slices.Clip(tab.strs)
	markLocal(f.Defs, parent, scopes)
	if l.moduleFields {
		// The @local bindings outside every function and class are the
		// module's own.
		tops := outermost(f.Defs)
		for _, lc := range locals {
			if !within(tops, lc.at) {
				fields = append(fields, Field{Name: tab.strs[lc.name], Type: tab.strs[lc.typ], How: lc.how, Line: lc.line, at: lc.at, module: true})
			}
		}
	}
	f.Locals = f.localsIn(locals, scopes, names)
	f.docTypes(docs, tab)
	f.Fields = fieldsIn(f.Defs, fields)
	// A value use of a local or a builtin (err, nil) passes no function of
	// the index on: keeping it would only cost memory.
	kept := f.Refs[:0]
	for _, r := range f.Refs {
		if r.Kind == RefValue && r.recv == 0 && (l.builtins[f.strs[r.name]] || f.bound(f.strs[r.name], r.Encl, r.at)) {
			continue
		}
		kept = append(kept, r)
	}
	if len(kept) < len(f.Refs) {
		f.Refs = slices.Clone(kept)
	}
	f.defOrder = order(len(f.Defs), func(i int) string { return f.Defs[i].Name })
	f.refOrder = order(len(f.Refs), func(i int) string { return f.strs[f.Refs[i].name] })
	return f
}

// classLike kinds contain methods; namespaceLike ones contain free
// definitions (a function in a namespace stays a function).
var (
	classLike     = map[string]bool{"class": true, "interface": true, "struct": true, "trait": true, "enum": true, "impl": true, "type": true, "union": true}
	namespaceLike = map[string]bool{"namespace": true, "module": true}
)

// functionLike kinds enclose call sites.
var functionLike = map[string]bool{"function": true, "method": true, "constructor": true, "macro": true, "getter": true}

// nest sets the container of definitions nested in a class-like one,
// makes functions inside classes methods, and marks local those whose
// innermost enclosing definition is neither a class nor a namespace. It
// returns each definition's innermost enclosing one (-1 for none). defs
// is sorted by start, outer first.
func nest(defs []Def) []int {
	parent := make([]int, len(defs))
	var stack []int
	for i := range defs {
		d := &defs[i]
		for len(stack) > 0 && defs[stack[len(stack)-1]].end <= d.start {
			stack = stack[:len(stack)-1]
		}
		parent[i] = -1
		if len(stack) > 0 {
			parent[i] = stack[len(stack)-1]
			p := &defs[parent[i]]
			d.local = !classLike[p.Kind] && !namespaceLike[p.Kind]
			switch {
			case d.Container == "" && classLike[p.Kind]:
				d.Container = p.Name
				d.Scope = p.Scope
			case namespaceLike[p.Kind]:
				d.Scope = p.Name
				if p.Scope != "" {
					d.Scope = p.Scope + "." + p.Name
				}
			default:
				d.Scope = p.Scope
			}
		}
		if d.Kind == "function" && d.Container != "" {
			d.Kind = "method"
		}
		stack = append(stack, i)
	}
	return parent
}

// markLocal also marks local the definitions whose name lies in a scope
// (a block, an arrow function) other than their own node and a
// namespace's body. parent is what nest returned.
func markLocal(defs []Def, parent []int, scopes [][2]int32) {
	if len(scopes) == 0 {
		return
	}
	sortScopes(scopes)
	order := make([]int, len(defs))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return defs[order[a]].nameAt < defs[order[b]].nameAt })
	sw := scopeSweep{scopes: scopes}
	for _, i := range order {
		d := &defs[i]
		open := sw.at(d.nameAt)
		k := len(open) - 1
		if k >= 0 && open[k] == [2]int32{d.start, d.end} {
			k--
		}
		if d.local || k < 0 {
			continue
		}
		s := open[k]
		if p := parent[i]; p >= 0 && namespaceLike[defs[p].Kind] && defs[p].start <= s[0] && s[1] <= defs[p].end {
			continue // the namespace's own body
		}
		d.local = true
	}
}

// enclose sets each reference's enclosing definition: the innermost
// function-like one around it, else the innermost of any kind. refs is
// sorted by position.
func enclose(defs []Def, refs []Ref) {
	var stack []int
	next := 0
	for ri := range refs {
		r := &refs[ri]
		for len(stack) > 0 && defs[stack[len(stack)-1]].end <= r.at {
			stack = stack[:len(stack)-1]
		}
		for next < len(defs) && defs[next].start <= r.at {
			for len(stack) > 0 && defs[stack[len(stack)-1]].end <= defs[next].start {
				stack = stack[:len(stack)-1]
			}
			if defs[next].end > r.at {
				stack = append(stack, next)
			}
			next++
		}
		for len(stack) > 0 && defs[stack[len(stack)-1]].end <= r.at {
			stack = stack[:len(stack)-1]
		}
		r.Encl = -1
		for k := len(stack) - 1; k >= 0; k-- {
			if functionLike[defs[stack[k]].Kind] {
				r.Encl = int32(stack[k])
				break
			}
		}
		if r.Encl < 0 && len(stack) > 0 {
			r.Encl = int32(stack[len(stack)-1])
		}
	}
}

// sortScopes sorts byte ranges by start, outer first.
func sortScopes(scopes [][2]int32) {
	sort.Slice(scopes, func(i, j int) bool {
		if scopes[i][0] != scopes[j][0] {
			return scopes[i][0] < scopes[j][0]
		}
		return scopes[i][1] > scopes[j][1]
	})
}

// scopeSweep gives, for positions asked in increasing order, the scopes
// open there, innermost last; scopes are sorted by sortScopes.
type scopeSweep struct {
	scopes, open [][2]int32
	next         int
}

func (w *scopeSweep) at(pos int32) [][2]int32 {
	for w.next < len(w.scopes) && w.scopes[w.next][0] <= pos {
		for len(w.open) > 0 && w.open[len(w.open)-1][1] <= w.scopes[w.next][0] {
			w.open = w.open[:len(w.open)-1]
		}
		if w.scopes[w.next][1] > pos {
			w.open = append(w.open, w.scopes[w.next])
		}
		w.next++
	}
	for len(w.open) > 0 && w.open[len(w.open)-1][1] <= pos {
		w.open = w.open[:len(w.open)-1]
	}
	return w.open
}

// localsIn keeps the locals inside a function-like definition (a
// top-level binding is a definition, not a local), with their enclosing
// definition, sorted by name and position.
func (f *File) localsIn(locals []Local, scopes [][2]int32, defNames map[int32]bool) []Local {
	defs := f.Defs
	if len(locals) == 0 {
		return nil
	}
	sort.Slice(locals, func(i, j int) bool { return locals[i].at < locals[j].at })
	// Each local's innermost scope.
	sortScopes(scopes)
	sw := scopeSweep{scopes: scopes}
	for i := range locals {
		if open := sw.at(locals[i].at); len(open) > 0 && locals[i].end < 0 {
			locals[i].end = open[len(open)-1][1]
		}
	}
	refs := make([]Ref, len(locals))
	for i, l := range locals {
		refs[i] = Ref{at: l.at}
	}
	enclose(defs, refs)
	out := make([]Local, 0, len(locals))
	for i, l := range locals {
		e := refs[i].Encl
		// (A variable's value may hold a function literal whose
		// parameters are its locals: var tests = []T{{f: func(r *R) {...}}}.)
		if e < 0 || defNames[l.at] || !functionLike[defs[e].Kind] && !(defs[e].Kind == "variable" && l.end >= 0) {
			continue
		}
		l.Encl = e
		// Several patterns bind the same name at one place: one record,
		// typed when a pattern says the type, untyped when two disagree
		// (case A, B: in a type switch).
		if k := len(out) - 1; k >= 0 && out[k].at == l.at && out[k].name == l.name && out[k].end == l.end {
			// A declared type wins over an initializer's (Base b = new
			// Kid(): b is a Base).
			declared := func(h uint8) bool { return h == TypeDeclared || h == TypeParam }
			switch p := &out[k]; {
			case l.how == TypeNone, p.conflict:
			case p.how == TypeNone:
				p.typ, p.how = l.typ, l.how
			case declared(p.how) && !declared(l.how):
			case declared(l.how) && !declared(p.how):
				p.typ, p.how = l.typ, l.how
			case p.typ != l.typ || p.how != l.how:
				p.typ, p.how, p.conflict = 0, TypeNone, true
			}
			continue
		}
		out = append(out, l)
	}
	sort.SliceStable(out, func(i, j int) bool { return f.strs[out[i].name] < f.strs[out[j].name] })
	return slices.Clip(out)
}

// bound says whether name is a local of definition encl bound before
// byte offset at.
func (f *File) bound(name string, encl, at int32) bool {
	if encl < 0 {
		return false
	}
	i := sort.Search(len(f.Locals), func(i int) bool { return f.strs[f.Locals[i].name] >= name })
	for ; i < len(f.Locals) && f.strs[f.Locals[i].name] == name; i++ {
		if l := &f.Locals[i]; l.Encl == encl && l.at <= at && (l.end < 0 || at < l.end) {
			return true
		}
	}
	return false
}

// outer returns the function-like definition around definition e when e
// is nested in one (a closure, a def in a def), else -1.
func (f *File) outer(e int32) int32 {
	if e < 0 || !f.Defs[e].local {
		return -1
	}
	d := &f.Defs[e]
	for j := e - 1; j >= 0; j-- {
		if p := &f.Defs[j]; p.start <= d.start && d.end <= p.end {
			if functionLike[p.Kind] {
				return j
			}
			if !p.local {
				return -1
			}
			d = p
		}
	}
	return -1
}

// boundAround says whether name is a local of definition encl or of a
// function it is nested in (a closure sees its enclosing function's
// locals), before byte offset at.
func (f *File) boundAround(name string, encl, at int32) bool {
	for e, n := encl, 0; e >= 0 && n < 16; e, n = f.outer(e), n+1 {
		if f.bound(name, e, at) {
			return true
		}
	}
	return false
}

// rebound says whether name is bound again inside a block or closure of
// definition encl around at: a Go method's receiver shadowed by
// switch v := v.(type).
func (f *File) rebound(name string, encl, at int32) bool {
	i := sort.Search(len(f.Locals), func(i int) bool { return f.strs[f.Locals[i].name] >= name })
	for ; i < len(f.Locals) && f.strs[f.Locals[i].name] == name; i++ {
		if l := &f.Locals[i]; l.Encl == encl && l.end >= 0 && l.at <= at && at < l.end {
			return true
		}
	}
	return false
}

// order returns the indexes 0..n-1 sorted by key.
func order(n int, key func(int) string) []int32 {
	o := make([]int32, n)
	for i := range o {
		o[i] = int32(i)
	}
	slices.SortStableFunc(o, func(a, b int32) int { return strings.Compare(key(int(a)), key(int(b))) })
	return o
}

// defsNamed returns the indexes of f's definitions called name.
func (f *File) defsNamed(name string) []int32 {
	return lookup(f.defOrder, name, func(i int32) string { return f.Defs[i].Name })
}

// refsNamed returns the indexes of f's references to name.
func (f *File) refsNamed(name string) []int32 {
	return lookup(f.refOrder, name, func(i int32) string { return f.strs[f.Refs[i].name] })
}

func lookup(o []int32, name string, key func(int32) string) []int32 {
	lo := sort.Search(len(o), func(i int) bool { return key(o[i]) >= name })
	hi := lo
	for hi < len(o) && key(o[hi]) == name {
		hi++
	}
	return o[lo:hi]
}

func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && strings.ContainsRune("\"'`<", rune(s[0])) {
		return s[1 : len(s)-1]
	}
	return s
}

// typeText is a declared type as the resolver reads it: one line, without
// a type annotation's colon.
func typeText(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimSpace(strings.TrimPrefix(s, ":"))
	if strings.Contains(s, "\n") && (strings.Contains(s, "struct") || strings.Contains(s, "interface")) && strings.Contains(s, "{") {
		s = strings.Join(strings.Fields(structLines(s)), " ")
	}
	if strings.ContainsAny(s, "\n\t") {
		s = strings.Join(strings.Fields(s), " ")
	}
	return s
}

// structLines keeps the field boundaries of a struct type written over
// lines (struct {\n a T\n b U\n}) as ";", where Go ends a statement at a
// line's end, and drops line comments.
func structLines(s string) string {
	lines := strings.Split(s, "\n")
	var b strings.Builder
	for i, l := range lines {
		if j := strings.Index(l, "//"); j >= 0 && !strings.ContainsAny(l[:j], "`\"") {
			l = l[:j]
		}
		l = strings.TrimSpace(l)
		b.WriteString(l)
		if i == len(lines)-1 || l == "" {
			b.WriteByte(' ')
			continue
		}
		switch c := l[len(l)-1]; {
		case c == ')' || c == ']' || c == '}' || c == '*' || c == '`' || c == '"' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			b.WriteString("; ")
		default:
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// fieldsIn gives each field without an explicit container the innermost
// class-like definition around it; fields outside any are dropped.
func fieldsIn(defs []Def, fields []Field) []Field {
	tops := outermost(defs)
	out := fields[:0]
	for _, fd := range fields {
		if fd.module {
			// A module's own binding: outside every definition, or a
			// global statement naming it from inside one.
			if !within(tops, fd.at) || fd.global {
				fd.Container = ""
				fd.Name = intern(fd.Name)
				out = append(out, fd)
			}
			continue
		}
		if fd.Container == "" {
			best := -1
			for i := range defs {
				d := &defs[i]
				if classLike[d.Kind] && d.start <= fd.at && fd.at < d.end && (best < 0 || d.start >= defs[best].start) {
					best = i
				}
			}
			if best < 0 {
				continue
			}
			fd.Container = defs[best].Name
		}
		out = append(out, fd)
	}
	// An untyped binding of a module's name or of an attribute matters
	// only beside a typed one (it makes the type unknown), and each place
	// binds once.
	typed := map[[2]string]map[int32]bool{}    // places a typed binding is at
	declared := map[[2]string]map[int32]bool{} // the same, by a pattern of a class's own fields
	mark := func(m map[[2]string]map[int32]bool, k [2]string, at int32) {
		if m[k] == nil {
			m[k] = map[int32]bool{}
		}
		m[k][at] = true
	}
	for _, fd := range out {
		k := [2]string{fd.Container, fd.Name}
		if fd.How != TypeNone {
			mark(typed, k, fd.at)
			if !fd.attr {
				mark(declared, k, fd.at)
			}
		}
	}
	kept := out[:0]
	for _, fd := range out {
		k := [2]string{fd.Container, fd.Name}
		if (fd.module || fd.attr) && fd.How == TypeNone && (typed[k] == nil || typed[k][fd.at]) {
			continue
		}
		if fd.attr && fd.How != TypeNone && declared[k][fd.at] {
			continue // an __init__ pattern has it already
		}
		if fd.attr {
			fd.Name = intern(fd.Name)
		}
		kept = append(kept, fd)
	}
	return slices.Clip(kept)
}

// clipLiteral keeps a long literal assigned (d = {...}) as its start: its
// type is all the index reads from it.
func clipLiteral(l *Language, text string) string {
	if p, t := l.literalType(text); t != "" && len(text) > 24 {
		return p + "…"
	}
	return text
}

// outermost lists the ranges of the functions and classes no other
// encloses, by start (defs is sorted by start, outer first).
func outermost(defs []Def) [][2]int32 {
	var tops [][2]int32
	for i := range defs {
		if d := &defs[i]; (functionLike[d.Kind] || classLike[d.Kind]) && (len(tops) == 0 || d.start >= tops[len(tops)-1][1]) {
			tops = append(tops, [2]int32{d.start, d.end})
		}
	}
	return tops
}

// within says whether byte offset at is inside one of the ranges.
func within(tops [][2]int32, at int32) bool {
	j := sort.Search(len(tops), func(i int) bool { return tops[i][0] > at }) - 1
	return j >= 0 && at < tops[j][1]
}
