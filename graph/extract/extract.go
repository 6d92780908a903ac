package extract

import (
	"bytes"
	"cmp"
	"go/build/constraint"
	"slices"
	"sort"
	"strings"
	"sync"
	"unique"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/graph/record"
)

func intern(s string) string { return unique.Make(s).Value() }

// table builds a file's string table.
type table struct {
	ids  map[string]uint32
	strs []string
	sc   *scratch // its interned strings, when set
}

// idOf is id for a node's text, copied only when the table has no such
// string.
func (t *table) idOf(b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	if i, ok := t.ids[string(b)]; ok {
		return i
	}
	return t.id(string(b))
}

// raw is id for a string of the record's trees: not interned (most are
// only this file's).
func (t *table) raw(s string) uint32 { return t.put(s, false) }

// id is the id for s, interned when it is new to the table.
func (t *table) id(s string) uint32 { return t.put(s, true) }

func (t *table) put(s string, share bool) uint32 {
	if s == "" {
		return 0
	}
	if i, ok := t.ids[s]; ok {
		return i
	}
	i := uint32(len(t.strs))
	t.ids[s] = i
	switch {
	case !share:
	case t.sc != nil:
		s = t.sc.internString(s)
	default:
		s = intern(s)
	}
	t.strs = append(t.strs, s)
	return i
}

// defAt is a definition found, with the pattern that found it.
type defAt struct {
	d       record.Def
	pattern int
}

// refAt is a reference found, with its pattern and its name's end; for
// a call, node is the node of its pattern (the call), and for an argument
// (Arg set), the call it is passed to.
type refAt struct {
	r       record.Ref
	pattern int32 // (a query's patterns are a few hundred)
	end     int32
	node    int32
	key     uint32 // the keyword it is passed by (Arg ArgByName)
}

// paramAt is a parameter found: its list's node, the list's child it is
// in (argPlace) and its name's start; and the local it places, by its
// At and name (kept here, not in every Local, while extracting).
type paramAt struct {
	list, child, at int32
	localAt         int32
	localName       uint32
}

// paramLocal is a parameter's local by its At and name.
type paramLocal struct {
	at   int32
	name uint32
}

// placeParams gives each parameter local its place in its list: the
// count of parameters before the child of the list its name is in (a
// child no name was found in, as a destructured one, counts one), plus
// the names before it in that child (Go's a, b int are two).
func placeParams(locals []record.Local, params []paramAt, of map[paramLocal]int) {
	if len(params) == 0 {
		return
	}
	type key struct{ list, child int32 }
	names := map[key][]int32{}
	for _, p := range params {
		k := key{p.list, p.child}
		if at := names[k]; !slices.Contains(at, p.at) {
			names[k] = append(at, p.at)
		}
	}
	for _, at := range names {
		slices.Sort(at)
	}
	clear(of)
	for k, p := range params {
		of[paramLocal{p.localAt, p.localName}] = k + 1
	}
	for i := range locals {
		k := of[paramLocal{locals[i].At, locals[i].Name}]
		if k <= 0 {
			continue
		}
		p := params[k-1]
		if p.child <= 0 {
			continue
		}
		n := 0
		for c := int32(1); c < p.child; c++ {
			n += max(1, len(names[key{p.list, c}]))
		}
		j, _ := slices.BinarySearch(names[key{p.list, p.child}], p.at)
		if n += j + 1; n <= 255 {
			locals[i].Param = uint8(n)
		}
	}
}

// argPlace is the 1-based place, among the named children of list (a
// call's argument list, a function's parameters), of the one holding
// byte offset at; 0 when none does.
func argPlace(x *astgrep.Tree, list int32, at int) int32 {
	n := int32(0)
	for c, end := list+1, x.Last(list); c < end; c = x.Last(c) {
		if !x.Named(c) || x.Extra(c) {
			continue
		}
		n++
		if s, e := x.Span(c); s <= at && at < e {
			return n
		}
	}
	return 0
}

// scratch is one extraction's working lists. They are kept between files
// (scratchPool), so a file's extraction allocates little more than its
// record: an index's build runs it once per file.
type scratch struct {
	defs   []defAt
	refs   []refAt
	kept   []record.Ref
	locals []record.Local
	fields []record.Field
	scopes [][2]int32
	params []paramAt
	of     map[paramLocal]int // placeParams': each parameter's local, 1 + its index in params
	out    []record.Local
	at     []record.Ref
	ids    map[string]uint32
	// interned: strings interned lately, by text. A name most files
	// share (String, err, Reader) is looked up here without a copy of
	// its bytes and without unique's own table, which costs more.
	interned map[string]string
}

// intern is intern(string(b)), from s.interned when it has it.
func (s *scratch) intern(b []byte) string {
	if v, ok := s.interned[string(b)]; ok {
		return v
	}
	return s.add(intern(string(b)))
}

// internString is intern(v), from s.interned when it has it.
func (s *scratch) internString(v string) string {
	if w, ok := s.interned[v]; ok {
		return w
	}
	return s.add(intern(v))
}

func (s *scratch) add(v string) string {
	if len(s.interned) >= 1<<13 {
		clear(s.interned)
	}
	s.interned[v] = v
	return v
}

var scratchPool = sync.Pool{New: func() any { return &scratch{ids: map[string]uint32{}, interned: map[string]string{}} }}

// put returns s to the pool, unless a rare huge file grew its lists.
func (s *scratch) put() {
	if cap(s.refs) > 1<<16 || cap(s.kept) > 1<<16 || cap(s.locals) > 1<<16 || cap(s.out) > 1<<16 || cap(s.at) > 1<<16 || len(s.ids) > 1<<14 {
		return
	}
	clear(s.ids)
	clear(s.defs[:cap(s.defs)]) // (their strings are the record's)
	clear(s.fields[:cap(s.fields)])
	scratchPool.Put(s)
}

// eachMatch visits r's matches: those r holds (Capture), else those of
// its file's query over r.Tree, in the same order, without collecting
// them (CaptureTrees): m is valid only during visit.
func eachMatch(r *astgrep.CaptureResult, visit func(m *astgrep.QueryMatch)) {
	if r.Matches != nil || r.Tree == nil {
		for i := range r.Matches {
			visit(&r.Matches[i])
		}
		return
	}
	x, src := r.Tree, r.Src
	r.File.Query.Each(x, func(m *astgrep.QueryMatch) bool {
		for i := range m.Captures {
			c := &m.Captures[i]
			c.StartRow, c.StartCol = x.RowCol(c.Start)
			c.EndRow = c.StartRow
			if c.End-c.Start > 64 || bytes.IndexByte(src[c.Start:c.End], '\n') >= 0 {
				c.EndRow = x.Row(c.End - 1)
			}
		}
		visit(m)
		return true
	})
}

// Extract turns one file's query matches (r, of the language's query over src) into
// its record. r's matches are those it holds (astgrep's Capture) or, when
// it holds none, those of r.File.Query over r.Tree (CaptureTrees), which
// builds no list of them.
func (ex *Extractor) Extract(src []byte, r *astgrep.CaptureResult) *record.Record {
	f := &record.Record{Errors: r.Errors}
	if ex.buildLines {
		f.BuildLine = goBuildLine(src)
	}
	for _, row := range r.ErrorRows {
		f.ErrorAt = append(f.ErrorAt, row+1)
	}
	sc := scratchPool.Get().(*scratch)
	defer sc.put()
	defs, refs, locals, fields, scopes := sc.defs[:0], sc.refs[:0], sc.locals[:0], sc.fields[:0], sc.scopes[:0]
	sc.params = sc.params[:0]
	defer func() { sc.defs, sc.refs, sc.locals, sc.fields, sc.scopes = defs, refs, locals, fields, scopes }()
	tab := &table{ids: sc.ids, strs: []string{""}, sc: sc}
	text := func(c *astgrep.QueryCapture) []byte { return src[c.Start:c.End] }
	exportsSet := false
	var docs []docAt
	var docFields []docField
	var tb *treeBuilder
	if ex.types != nil && r.Tree != nil {
		tb = &treeBuilder{tq: ex.types, x: r.Tree, src: src, tab: tab}
	}
	// shape gives a captured type or expression its tree (t, x) when the
	// language has typeforms.scm.
	shape := func(c *astgrep.QueryCapture, how uint8, shown string, norm uint8) (t, x int32) {
		if tb == nil {
			return 0, 0
		}
		if typeNode(how) {
			return tb.typeOf(ex, c.Node, shown), 0
		}
		return 0, tb.exprOf(ex, c.Node, shown, norm)
	}
	eachMatch(r, func(m *astgrep.QueryMatch) {
		var rl *role
		var name, recv, cont, self, mod, iname, idef, alias, typ, scope, doc, args, params, key *astgrep.QueryCapture
		how := record.TypeNone
		member := false
		for i := range m.Captures {
			c := &m.Captures[i]
			if h := ex.typeHow[c.Index]; h != record.TypeNone {
				typ, how = c, h
				member = member || c.Index == ex.capTypeMember
			}
			switch c.Index {
			case ex.capName:
				name = c
			case ex.capRecv:
				recv = c
			case ex.capCont:
				cont = c
			case ex.capSelf:
				self = c
			case ex.capMod:
				mod = c
			case ex.capINm:
				iname = c
			case ex.capIDef:
				idef = c
			case ex.capAlias:
				alias = c
			case ex.capScope:
				scope = c
			case ex.capTypeDoc:
				doc = c
			case ex.capArgs:
				args = c
			case ex.capParams:
				params = c
			case ex.capArgName:
				key = c
			}
			if ro := &ex.roles[c.Index]; ro.capture >= 0 && rl == nil {
				rl = ro
			}
		}
		if rl == nil {
			return
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
				if c := &m.Captures[i]; c.Index == ex.capDocText {
					// A comment that is its own @doc is read for imports only.
					docs = append(docs, docAt{int32(whole.Start), int32(whole.End), int32(c.StartRow + 1), c.Start == whole.Start && c.End == whole.End, c.Text(src)})
				}
			}
		case "export":
			if rl.kind == "default" {
				if name != nil && f.Default == "" {
					f.Default = intern(name.Text(src))
				}
				return
			}
			// Two different values (if/else) name none.
			if e := name; e != nil && exportsSet && f.Exports != e.Text(src) {
				f.Exports = ""
			} else if e != nil && !exportsSet {
				f.Exports, exportsSet = intern(e.Text(src)), true
			}
		case "import":
			if mod == nil {
				return
			}
			im := record.Import{Module: intern(unquote(mod.Text(src))), Line: int32(mod.StartRow + 1)}
			if iname != nil {
				im.Name = intern(iname.Text(src))
				im.Local = im.Name
			}
			if idef != nil {
				im.Name, im.Local = record.DefaultImport, intern(idef.Text(src))
			}
			if alias != nil {
				im.Local = intern(alias.Text(src))
			}
			f.Imports = append(f.Imports, im)
		case "definition":
			if name == nil {
				return
			}
			d := record.Def{Name: sc.intern(text(name)), Kind: rl.kind,
				Line: int32(whole.StartRow + 1), EndLine: int32(whole.EndRow + 1), Col: int32(name.StartCol + 1),
				Start: int32(whole.Start), End: int32(whole.End), NameAt: int32(name.Start)}
			if cont != nil {
				d.Container = sc.intern(text(cont))
			}
			if self != nil {
				d.Self = sc.intern(text(self))
			}
			if typ != nil {
				d.Type = sc.internString(typeText(typ.Text(src)))
				d.How = how
				d.T, d.X = shape(typ, how, d.Type, normType)
			}
			defs = append(defs, defAt{d, m.Pattern})
		case "field":
			if typ == nil && doc != nil && name != nil {
				// /** @type {Option[]} */ this.options = []: the
				// comment's type, read once the trees are built.
				if ex.docType != nil {
					if m := ex.docType.FindStringSubmatch(doc.Text(src)); m != nil {
						docFields = append(docFields, docField{record.Field{Name: intern(name.Text(src)), Line: int32(doc.StartRow + 1), At: int32(name.Start)}, m[1]})
					}
				}
				return
			}
			// A @field.module binding without a type still counts: it
			// rebinds the module's name.
			if typ == nil && (rl.kind != "module" && rl.kind != "global" && rl.kind != "attr" || name == nil) {
				return
			}
			var fd record.Field
			if typ != nil {
				fd = record.Field{Type: sc.internString(clipLiteral(ex, typeText(typ.Text(src)))), How: how, Line: int32(typ.StartRow + 1), At: int32(typ.Start)}
				fd.T, fd.X = shape(typ, how, fd.Type, normClipped)
			} else {
				fd.Line = int32(name.StartRow + 1)
			}
			fd.Module = rl.kind == "module" || rl.kind == "global"
			fd.Global = rl.kind == "global"
			fd.Attr = rl.kind == "attr"
			if name != nil {
				// (A module or attribute binding's name is interned once
				// kept: most are dropped.)
				fd.Name = name.Text(src)
				if !fd.Module && !fd.Attr {
					fd.Name = intern(fd.Name)
				}
				fd.At = int32(name.Start)
			}
			if cont != nil {
				fd.Container = sc.intern(text(cont))
			}
			fields = append(fields, fd)
		case "local":
			if kind := rl.kind; kind == "scope" {
				scopes = append(scopes, [2]int32{int32(whole.Start), int32(whole.End)})
			} else if name != nil {
				lc := record.Local{Name: tab.idOf(text(name)), At: int32(name.Start), Encl: -1, End: -1, Line: int32(name.StartRow + 1)}
				if typ != nil {
					shown := clipLiteral(ex, typeText(typ.Text(src)))
					lc.Type, lc.How = tab.id(shown), how
					if member {
						lc.Type = tab.id(typeText(typ.Text(src)) + "." + name.Text(src))
						if tb != nil {
							lc.X = tb.memberOf(ex, typ.Node, name.Text(src), tab.strs[lc.Type])
						}
					} else {
						lc.T, lc.X = shape(typ, how, shown, normClipped)
					}
					if how == record.TypeDeclared && rl.kind == "param" {
						lc.How = record.TypeParam
					}
					if scope != nil {
						lc.How = record.TypeBranch
					}
				}
				if scope != nil {
					lc.At, lc.End = int32(scope.Start), int32(scope.End)
				} else if ex.declaredAfter && how != record.TypeTypeParam {
					// In scope after its declaration: x, err := x()
					// calls the function x. (Every pattern binding a name
					// at one place moves it alike: they stay one record.
					// A type parameter is in scope in its own list.)
					lc.At = int32(whole.End)
				}
				if params != nil && r.Tree != nil {
					// (placed below)
					sc.params = append(sc.params, paramAt{params.Node, argPlace(r.Tree, params.Node, name.Start), int32(name.Start), lc.At, lc.Name})
				}
				locals = append(locals, lc)
			}
		case "reference":
			if name == nil {
				return
			}
			k, ok := refKinds[rl.kind]
			if !ok {
				return
			}
			rf := record.Ref{Name: tab.idOf(text(name)), Kind: k, Line: int32(name.StartRow + 1), Col: int32(name.StartCol + 1), At: int32(name.Start), Encl: -1}
			if recv != nil {
				shown := strings.Join(strings.Fields(recv.Text(src)), "")
				rf.Recv = tab.id(shown)
				_, rf.X = shape(recv, record.TypeExpr, shown, normRecv)
			}
			ra := refAt{r: rf, pattern: int32(m.Pattern), end: int32(name.End), node: whole.Node}
			if args != nil && r.Tree != nil && k == record.RefValue {
				if key != nil {
					ra.r.Arg, ra.key = record.ArgByName, tab.idOf(text(key))
				} else if n := argPlace(r.Tree, args.Node, name.Start); n < record.ArgByName {
					ra.r.Arg = uint8(n)
				}
			}
			refs = append(refs, ra)
		}
	})
	// One definition per name node: the first pattern that matched it wins,
	// so a specific pattern listed before a general one decides the kind.
	slices.SortStableFunc(defs, func(a, b defAt) int {
		if a.d.NameAt != b.d.NameAt {
			return cmp.Compare(a.d.NameAt, b.d.NameAt)
		}
		return cmp.Compare(a.pattern, b.pattern)
	})
	n := 0
	for i := range defs {
		if i == 0 || defs[i].d.NameAt != defs[i-1].d.NameAt {
			n++
		}
	}
	names := make(map[int32]bool, n)
	f.Defs = make([]record.Def, 0, n)
	for _, d := range defs {
		if names[d.d.NameAt] {
			// A later pattern may only add the declared type (a return
			// type) to the kind the first one decided.
			if k := len(f.Defs) - 1; d.d.Type != "" && f.Defs[k].NameAt == d.d.NameAt && f.Defs[k].Type == "" {
				f.Defs[k].Type, f.Defs[k].How, f.Defs[k].T, f.Defs[k].X = d.d.Type, d.d.How, d.d.T, d.d.X
			}
			continue
		}
		names[d.d.NameAt] = true
		f.Defs = append(f.Defs, d.d)
	}
	// Definitions by start, outer first, for nesting.
	slices.SortStableFunc(f.Defs, func(a, b record.Def) int {
		if a.Start != b.Start {
			return cmp.Compare(a.Start, b.Start)
		}
		return cmp.Compare(b.End, a.End)
	})
	parent := nest(f.Defs)
	// One reference per name node, and none on a definition's own name.
	slices.SortStableFunc(refs, func(a, b refAt) int {
		if a.r.At != b.r.At {
			return cmp.Compare(a.r.At, b.r.At)
		}
		return cmp.Compare(a.pattern, b.pattern)
	})
	last := int32(-1)
	all := sc.kept[:0]        // the record's references before the last cut below
	var calls map[int32]int32 // a call's node: its name's At
	for _, r := range refs {
		if r.r.At == last || names[r.r.At] {
			continue
		}
		last = r.r.At
		if r.r.Kind == record.RefCall && r.r.Arg == 0 {
			if calls == nil {
				calls = map[int32]int32{}
			}
			if _, ok := calls[r.node]; !ok {
				calls[r.node] = r.r.At
			}
		}
		all = append(all, r.r)
	}
	// An argument's call: the call reference of the node its pattern
	// matched (the call around the argument list).
	if calls != nil {
		j := 0
		for _, r := range refs {
			if r.r.Arg == 0 {
				continue
			}
			for j < len(all) && all[j].At < r.r.At {
				j++
			}
			if j < len(all) && all[j].At == r.r.At && all[j].Arg != 0 {
				if at, ok := calls[r.node]; ok && r.r.At-at > 0 && r.r.At-at <= 0xFFFF {
					all[j].ArgBack = uint16(r.r.At - at)
				} else {
					all[j].Arg = 0
				}
			}
		}
	}
	for i := range all {
		if all[i].ArgBack == 0 {
			all[i].Arg = 0
		}
	}
	sc.kept = all
	enclose(f.Defs, all)
	f.Strs = slices.Clip(tab.strs)
	markLocal(f.Defs, parent, scopes)
	if ex.moduleFields {
		// The @local bindings outside every function and class are the
		// module's own.
		tops := outermost(f.Defs)
		for _, lc := range locals {
			if !within(tops, lc.At) {
				fields = append(fields, record.Field{Name: tab.strs[lc.Name], Type: tab.strs[lc.Type], T: lc.T, X: lc.X, How: lc.How, Line: lc.Line, At: lc.At, Module: true})
			}
		}
	}
	if sc.of == nil {
		sc.of = map[paramLocal]int{}
	}
	placeParams(locals, sc.params, sc.of)
	var untyped map[localAt]bool
	f.Locals, untyped = localsIn(f, locals, scopes, names, sc)
	docImports(f, ex, docs)
	docTypes(f, ex, docs, tab, tb, untyped)
	fields = append(fields, typedDocFields(f, ex, docFields, tab, tb)...)
	if len(fields) > 0 {
		// (fieldsIn keeps them in fields' array, which is the scratch's.)
		in := fieldsIn(f.Defs, fields)
		f.Fields = append(make([]record.Field, 0, len(in)), in...)
	}
	// A value use of a local or a builtin (err, nil) passes no function of
	// the index on: keeping it would only cost memory. A parameter passed
	// that may hold a function, passed as an argument, may hand a function
	// passed in on to another callee.
	kept := all[:0]
	for _, r := range all {
		if r.Kind == record.RefValue && r.Recv == 0 && (ex.names.IsBuiltin(f.Strs[r.Name]) || f.Bound(f.Strs[r.Name], r.Encl, r.At) && (r.Arg == 0 || !f.FuncParamAt(f.Strs[r.Name], r.Encl, r.At))) {
			continue
		}
		kept = append(kept, r)
	}
	f.Refs = append(make([]record.Ref, 0, len(kept)), kept...)
	for _, r := range refs {
		if r.key == 0 {
			continue
		}
		// (refs is by At too; the one kept at that At must be this one.)
		i := sort.Search(len(f.Refs), func(i int) bool { return f.Refs[i].At >= r.r.At })
		if i < len(f.Refs) && f.Refs[i].At == r.r.At && f.Refs[i].Arg == record.ArgByName && (len(f.ArgKeys) == 0 || f.ArgKeys[len(f.ArgKeys)-1].At != r.r.At) {
			f.ArgKeys = append(f.ArgKeys, record.ArgKey{At: r.r.At, Key: r.key})
		}
	}
	if tb != nil {
		f.Types, f.Exprs, f.Steps = slices.Clip(tb.types), slices.Clip(tb.exprs), slices.Clip(tb.steps)
	}
	f.DefOrder = record.Order(len(f.Defs), func(i int) string { return f.Defs[i].Name })
	f.RefOrder = record.Order(len(f.Refs), func(i int) string { return f.Strs[f.Refs[i].Name] })
	return f
}

// nest sets the container of definitions nested in a class-like one,
// makes functions inside classes methods, and marks local those whose
// innermost enclosing definition is neither a class nor a namespace. It
// returns each definition's innermost enclosing one (-1 for none). defs
// is sorted by start, outer first.
func nest(defs []record.Def) []int {
	parent := make([]int, len(defs))
	var stack []int
	for i := range defs {
		d := &defs[i]
		for len(stack) > 0 && defs[stack[len(stack)-1]].End <= d.Start {
			stack = stack[:len(stack)-1]
		}
		parent[i] = -1
		if len(stack) > 0 {
			parent[i] = stack[len(stack)-1]
			p := &defs[parent[i]]
			d.Local = !record.ClassLike(p.Kind) && !record.NamespaceLike(p.Kind)
			switch {
			case d.Container == "" && record.ClassLike(p.Kind):
				d.Container = p.Name
				d.Scope = p.Scope
			case record.NamespaceLike(p.Kind):
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
func markLocal(defs []record.Def, parent []int, scopes [][2]int32) {
	if len(scopes) == 0 {
		return
	}
	sortScopes(scopes)
	order := make([]int, len(defs))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return defs[order[a]].NameAt < defs[order[b]].NameAt })
	sw := scopeSweep{scopes: scopes}
	for _, i := range order {
		d := &defs[i]
		open := sw.at(d.NameAt)
		k := len(open) - 1
		if k >= 0 && open[k] == [2]int32{d.Start, d.End} {
			k--
		}
		if d.Local || k < 0 {
			continue
		}
		s := open[k]
		if p := parent[i]; p >= 0 && record.NamespaceLike(defs[p].Kind) && defs[p].Start <= s[0] && s[1] <= defs[p].End {
			continue // the namespace's own body
		}
		d.Local = true
	}
}

// enclose sets each reference's enclosing definition: the innermost
// function-like one around it, else the innermost of any kind. refs is
// sorted by position.
func enclose(defs []record.Def, refs []record.Ref) {
	var stack []int
	next := 0
	for ri := range refs {
		r := &refs[ri]
		for len(stack) > 0 && defs[stack[len(stack)-1]].End <= r.At {
			stack = stack[:len(stack)-1]
		}
		for next < len(defs) && defs[next].Start <= r.At {
			for len(stack) > 0 && defs[stack[len(stack)-1]].End <= defs[next].Start {
				stack = stack[:len(stack)-1]
			}
			if defs[next].End > r.At {
				stack = append(stack, next)
			}
			next++
		}
		for len(stack) > 0 && defs[stack[len(stack)-1]].End <= r.At {
			stack = stack[:len(stack)-1]
		}
		r.Encl = -1
		for k := len(stack) - 1; k >= 0; k-- {
			if record.FunctionLike(defs[stack[k]].Kind) {
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
// sc's lists are worked in. Untyped are the locals two patterns gave
// different types, which no other reading types either.
func localsIn(f *record.Record, locals []record.Local, scopes [][2]int32, defNames map[int32]bool, sc *scratch) (_ []record.Local, untyped map[localAt]bool) {
	defs := f.Defs
	if len(locals) == 0 {
		return nil, nil
	}
	// (By name too: the names of one statement may share a place.)
	slices.SortStableFunc(locals, func(a, b record.Local) int {
		if a.At != b.At {
			return cmp.Compare(a.At, b.At)
		}
		return cmp.Compare(a.Name, b.Name)
	})
	// Each local's innermost scope.
	sortScopes(scopes)
	sw := scopeSweep{scopes: scopes}
	for i := range locals {
		if open := sw.at(locals[i].At); len(open) > 0 && locals[i].End < 0 {
			locals[i].End = open[len(open)-1][1]
		}
	}
	refs := slices.Grow(sc.at[:0], len(locals))
	for _, l := range locals {
		refs = append(refs, record.Ref{At: l.At})
	}
	sc.at = refs
	enclose(defs, refs)
	out := sc.out[:0]
	defer func() { sc.out = out }()
	for i, l := range locals {
		e := refs[i].Encl
		// (A variable's value may hold a function literal whose
		// parameters are its locals: var tests = []T{{f: func(r *R) {...}}}.)
		if e < 0 || defNames[l.At] || !record.FunctionLike(defs[e].Kind) && !(defs[e].Kind == "variable" && l.End >= 0) {
			continue
		}
		l.Encl = e
		// Several patterns bind the same name at one place: one record,
		// typed when a pattern says the type, untyped when two disagree
		// (case A, B: in a type switch).
		if k := len(out) - 1; k >= 0 && out[k].At == l.At && out[k].Name == l.Name && out[k].End == l.End {
			out[k].Param = max(out[k].Param, l.Param)
			// A declared type wins over an initializer's (Base b = new
			// Kid(): b is a Base).
			declared := func(h uint8) bool { return h == record.TypeDeclared || h == record.TypeParam }
			switch p := &out[k]; {
			case l.How == record.TypeNone, untyped[localAt{p.At, p.End, p.Name}]:
			case p.How == record.TypeNone:
				p.Type, p.How, p.T, p.X = l.Type, l.How, l.T, l.X
			case declared(p.How) && !declared(l.How):
			case declared(l.How) && !declared(p.How):
				p.Type, p.How, p.T, p.X = l.Type, l.How, l.T, l.X
			case p.Type != l.Type || p.How != l.How:
				p.Type, p.How, p.T, p.X = 0, record.TypeNone, 0, 0
				if untyped == nil {
					untyped = map[localAt]bool{}
				}
				untyped[localAt{p.At, p.End, p.Name}] = true
			}
			continue
		}
		out = append(out, l)
	}
	slices.SortStableFunc(out, func(a, b record.Local) int { return strings.Compare(f.Strs[a.Name], f.Strs[b.Name]) })
	return append(make([]record.Local, 0, len(out)), out...), untyped
}

// localAt names a local while it is extracted: its place, scope's end and
// name.
type localAt struct {
	at, end int32
	name    uint32
}

// refKinds are the reference kinds by the name tags.scm captures them by.
var refKinds = map[string]uint8{"call": record.RefCall, "type": record.RefType, "value": record.RefValue, "read": record.RefRead}

func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && strings.ContainsRune("\"'`<", rune(s[0])) {
		return s[1 : len(s)-1]
	}
	return s
}

// typeNode says a capture of this How holds a type (else an expression:
// a callee, a value assigned, a collection ranged over).
func typeNode(how uint8) bool {
	switch how {
	case record.TypeCall, record.TypeCall2, record.TypeCall3, record.TypeElem, record.TypeExpr, record.TypeKey:
		return false
	}
	return true
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
func fieldsIn(defs []record.Def, fields []record.Field) []record.Field {
	tops := outermost(defs)
	out := fields[:0]
	for _, fd := range fields {
		if fd.Module {
			// A module's own binding: outside every definition, or a
			// global statement naming it from inside one.
			if !within(tops, fd.At) || fd.Global {
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
				if record.ClassLike(d.Kind) && d.Start <= fd.At && fd.At < d.End && (best < 0 || d.Start >= defs[best].Start) {
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
		if fd.How != record.TypeNone {
			mark(typed, k, fd.At)
			if !fd.Attr {
				mark(declared, k, fd.At)
			}
		}
	}
	kept := out[:0]
	for _, fd := range out {
		k := [2]string{fd.Container, fd.Name}
		if (fd.Module || fd.Attr) && fd.How == record.TypeNone && (typed[k] == nil || typed[k][fd.At]) {
			continue
		}
		if fd.Attr && fd.How != record.TypeNone && declared[k][fd.At] {
			continue // an __init__ pattern has it already
		}
		if fd.Attr {
			fd.Name = intern(fd.Name)
		}
		kept = append(kept, fd)
	}
	return slices.Clip(kept)
}

// clipLiteral keeps a long literal assigned (d = {...}) as its start: its
// type is all the index reads from it.
func clipLiteral(ex *Extractor, text string) string {
	if p, t := ex.names.LiteralType(text); t != "" && len(text) > 24 {
		return p + "…"
	}
	return text
}

// outermost lists the ranges of the functions and classes no other
// encloses, by start (defs is sorted by start, outer first).
func outermost(defs []record.Def) [][2]int32 {
	var tops [][2]int32
	for i := range defs {
		if d := &defs[i]; (record.FunctionLike(d.Kind) || record.ClassLike(d.Kind)) && (len(tops) == 0 || d.Start >= tops[len(tops)-1][1]) {
			tops = append(tops, [2]int32{d.Start, d.End})
		}
	}
	return tops
}

// within says whether byte offset at is inside one of the ranges.
func within(tops [][2]int32, at int32) bool {
	j := sort.Search(len(tops), func(i int) bool { return tops[i][0] > at }) - 1
	return j >= 0 && at < tops[j][1]
}

// goBuildLine is a Go file's //go:build line (before its package clause),
// or "".
func goBuildLine(src []byte) string {
	for line := range bytes.Lines(src) {
		t := strings.TrimSpace(string(line))
		switch {
		case t == "" || strings.HasPrefix(t, "//") && !constraint.IsGoBuild(t):
			continue
		case constraint.IsGoBuild(t):
			return t
		}
		return "" // the package clause, or a block comment: no constraint read
	}
	return ""
}
