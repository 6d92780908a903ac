package graph

import (
	"slices"
	"strings"
)

// Declared types. The index has no type checker, but the source often
// says what a receiver is: a parameter's or variable's declared type, a
// composite literal or constructor, the declared result of the function
// that made it, a field's declared type, an element of a declared slice,
// a type switch's case. The query files capture that text (@type,
// @type.new, @type.call, @type.elem on a @local, a @field or a
// definition); the functions here follow it to the class-like definition
// it names, and a method found on that type (or, nearest first, on what it
// embeds or extends) is an exact edge whose reason quotes the evidence.

// declType is a type as the source writes it, and where.
type declType struct {
	text string // as written: *store.Store, []*Conn, Optional[Foo]
	in   *File  // the file whose names it is written in
	ev   string // the evidence, for the edge's reason
	// bases: the type's bases, not the type (super.m()).
	bases bool
	ctor  bool // a constructor call made it (Foo())
}

// typeRef is what a declared type names.
type typeRef struct {
	types    []Target // the class-like definitions (several: variants, duplicates)
	external string   // a module outside the index it comes from
	builtin  string   // a type the language defines
}

// maxTypeDepth bounds chains (a.b.c), result types followed and base
// classes walked.
const maxTypeDepth = 12

// normType reduces a declared type to the qualifier and name of the type
// whose members a value of it has: *pkg.T is (pkg, T), Optional[Foo] is
// Foo for a language listing Optional among its type_wrappers. A slice, a
// map, a function type or a union names no such type: ("", "").
func (l *Language) normType(text string) (qual, name string) {
	s := text
	for range 8 {
		old := s
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
			// A result list: (*X, error), (x *X, err error).
			first := topSplit(s[1:len(s)-1], ',')[0]
			if fs := strings.Fields(first); len(fs) > 1 && isIdent(fs[0]) {
				first = strings.Join(fs[1:], " ")
			}
			s = first
			continue
		}
		for _, p := range []string{"*", "&mut ", "&", "mut ", "const ", "struct ", "class ", "union ", "enum ", "typename ", "readonly ", "dyn ", "impl ", "volatile "} {
			s = strings.TrimPrefix(s, p)
		}
		for _, suf := range []string{"*", "&", "?", "| None", "| null", "| undefined", " const"} {
			s = strings.TrimSpace(strings.TrimSuffix(s, suf))
		}
		if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
			s = s[1 : len(s)-1]
		}
		if strings.HasSuffix(s, "[]") {
			return "", ""
		}
		if i := strings.IndexAny(s, "[<"); i > 0 && (s[len(s)-1] == ']' || s[len(s)-1] == '>') {
			base := s[:i]
			if l.wrappers[lastSegment(base)] {
				s = topSplit(s[i+1:len(s)-1], ',')[0]
			} else {
				s = base
			}
		}
		if s == old {
			break
		}
	}
	if s == "" || strings.ContainsAny(s, "[]{}()<> ,|\"'=") {
		return "", ""
	}
	qual, name = "", s
	if i := strings.LastIndex(s, "::"); i >= 0 {
		qual, name = s[:i], s[i+2:]
	} else if i := strings.LastIndex(s, "."); i >= 0 {
		qual, name = s[:i], s[i+1:]
	}
	if !isIdent(name) {
		return "", ""
	}
	return qual, name
}

// elemType is the element type of a collection type as written: []E,
// [N]E and map[K]V (V), E[], and Name[E] / Name<E> for a name listed in
// the language's element_types.
func (l *Language) elemType(text string) string {
	s, el, isChan := collection(text)
	if isChan {
		return el // what a receive gives
	}
	switch {
	case strings.HasPrefix(s, "map["):
		if end := closing(s, 3); end > 0 {
			return s[end+1:]
		}
	case strings.HasPrefix(s, "["):
		if end := closing(s, 0); end > 0 {
			return s[end+1:]
		}
	case strings.HasSuffix(s, "[]"):
		return strings.TrimSuffix(s, "[]")
	}
	if i := strings.IndexAny(s, "[<"); i > 0 && (s[len(s)-1] == ']' || s[len(s)-1] == '>') && l.elements[lastSegment(s[:i])] {
		return topSplit(s[i+1:len(s)-1], ',')[0]
	}
	return ""
}

// structField is one field of a struct type written in place; Name is ""
// for an embedded type (or an interface's embedded interface).
type structField struct{ Name, Type string }

// structFields reads the fields of a struct or interface type written in
// place, as the language writes it ("struct { a, b int; *bytes.Buffer }",
// "interface { io.Reader; Close() error }": a method written there is no
// definition, and reads as a type that resolves to none); ok is false for
// any other text.
func (l *Language) structFields(text string) ([]structField, bool) {
	s := strings.TrimSpace(text)
	for strings.HasPrefix(s, "*") {
		s = strings.TrimSpace(s[1:])
	}
	kw := ""
	for _, k := range l.TypeLiterals {
		if strings.HasPrefix(s, k) {
			kw = k
		}
	}
	if kw == "" {
		return nil, false
	}
	s = strings.TrimSpace(s[len(kw):])
	if !strings.HasPrefix(s, "{") || closing(s, 0) != len(s)-1 {
		return nil, false
	}
	var out []structField
	for _, fd := range topSplit(s[1:len(s)-1], ';') {
		if i := strings.IndexAny(fd, "`\""); i >= 0 { // a tag
			fd = fd[:i]
		}
		fd = strings.TrimSpace(fd)
		if fd == "" {
			continue
		}
		// names, then the type: "a, b int"; one word alone is embedded.
		rest, names := fd, []string(nil)
		for {
			j := strings.IndexAny(rest, " \t,")
			if j <= 0 || !isIdent(rest[:j]) {
				break
			}
			names = append(names, rest[:j])
			rest = strings.TrimSpace(rest[j:])
			if !strings.HasPrefix(rest, ",") {
				break
			}
			rest = strings.TrimSpace(rest[1:])
		}
		if len(names) == 0 || rest == "" {
			out = append(out, structField{Type: fd})
			continue
		}
		for _, n := range names {
			out = append(out, structField{Name: n, Type: rest})
		}
	}
	return out, true
}

// literalField is the type of field name of a value of a struct type
// written in place (cur), or of a type it embeds.
func (x *Index) literalField(cur declType, fields []structField, name string, depth int) (declType, bool) {
	for _, fd := range fields {
		if fd.Name == name || fd.Name == "" && lastSegment(strings.TrimLeft(fd.Type, "*")) == name {
			return declType{text: fd.Type, in: cur.in, ev: cur.ev + "; " + name + " is " + shortType(fd.Type) + ": a field of its struct"}, true
		}
	}
	if ts := x.embeddedTypes(cur, fields); len(ts) > 0 {
		next, ok := x.fieldOf(ts, name, depth)
		if ok {
			next.ev = cur.ev + "; " + next.ev
		}
		return next, ok
	}
	return declType{}, false
}

// embeddedTypes are the types a struct written in place embeds.
func (x *Index) embeddedTypes(cur declType, fields []structField) []Target {
	var out []Target
	for _, fd := range fields {
		if fd.Name == "" {
			out = append(out, x.resolveDecl(declType{text: fd.Type, in: cur.in}).types...)
		}
	}
	return out
}

// collection is a collection type's text without pointers, and for a
// channel type its element.
func collection(text string) (s, chanElem string, isChan bool) {
	s = strings.TrimSpace(text)
	for strings.HasPrefix(s, "*") {
		s = s[1:]
	}
	for _, c := range []string{"<-chan ", "chan<- ", "chan "} {
		if strings.HasPrefix(s, c) {
			return s, strings.TrimSpace(s[len(c):]), true
		}
	}
	return s, "", false
}

// keyType is what a one-variable range over a value of the collection
// type text gives when that has methods: map[K]V's K, a channel's element
// ("" for a slice's or string's int index).
func keyType(text string) string {
	s, el, isChan := collection(text)
	if isChan {
		return el
	}
	if strings.HasPrefix(s, "map[") {
		if end := closing(s, 3); end > 0 {
			return strings.TrimSpace(s[4:end])
		}
	}
	return ""
}

// closing returns the index of the bracket closing the one at open.
func closing(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '[', '(', '<', '{':
			depth++
		case ']', ')', '>', '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// topSplit splits s at sep outside brackets.
func topSplit(s string, sep byte) []string {
	var out []string
	depth, from := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '(', '<', '{':
			depth++
		case ']', ')', '>', '}':
			depth--
		case sep:
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[from:i]))
				from = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[from:]))
}

func lastSegment(s string) string {
	if i := strings.LastIndexAny(s, ".:"); i >= 0 {
		return s[i+1:]
	}
	return s
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// localDecl returns the typed binding of name visible at byte offset at
// in definition encl: the bindings of the innermost scope holding one
// must all say the same type (x = Foo() then x = Bar() says none).
func (f *File) localDecl(name string, encl, at int32) *Local {
	if encl < 0 {
		return nil
	}
	var best *Local
	bestEnd := int64(-1)
	agree := true
	for _, i := range f.localsNamed(name) {
		l := &f.Locals[i]
		if l.Encl != encl || l.at > at || (l.end >= 0 && at >= l.end) {
			continue
		}
		end := int64(l.end)
		if end < 0 {
			end = 1 << 40
		}
		switch {
		case best == nil || end < bestEnd:
			best, bestEnd, agree = l, end, true
		case end == bestEnd:
			if l.typ != best.typ || l.how != best.how {
				agree = false
			}
			if l.at > best.at {
				best = l
			}
		}
	}
	if best == nil || !agree || best.how == TypeNone {
		return nil
	}
	return best
}

// localsNamed returns the indexes of f's locals called name.
func (f *File) localsNamed(name string) []int {
	lo, hi := 0, len(f.Locals)
	for lo < hi {
		m := (lo + hi) / 2
		if f.strs[f.Locals[m].name] < name {
			lo = m + 1
		} else {
			hi = m
		}
	}
	var out []int
	for i := lo; i < len(f.Locals) && f.strs[f.Locals[i].name] == name; i++ {
		out = append(out, i)
	}
	return out
}

func evidence(expr, text, how string, f *File, line int32) string {
	return expr + " is " + shortType(text) + ": " + how + ", " + f.Rel + ":" + itoa(int(line))
}

// shortType is a type's text for a reason: a long one (a struct written
// in place) cut at a word, with an ellipsis.
func shortType(text string) string {
	const max = 40
	if len(text) <= max {
		return text
	}
	cut := strings.LastIndexByte(text[:max], ' ')
	if cut <= 0 {
		cut = max
	}
	return strings.TrimRight(text[:cut], ";,") + " …"
}

// exprDecl is the declared type of a receiver expression (x, self.x,
// s.conn.buf, s.Conn(), xs[i]) at byte offset at inside definition encl.
func (x *Index) exprDecl(f *File, encl, at int32, expr string, depth int) (declType, bool) {
	if depth > maxTypeDepth || expr == "" {
		return declType{}, false
	}
	if p, t := f.Lang.literalType(expr); t != "" {
		// "".join(xs), {}.get(k): a method of the language's own type.
		lit := expr
		if len(lit) > 24 {
			lit = p + "…"
		}
		return declType{text: t, in: f, ev: lit + " is a " + t + " literal"}, true
	}
	if strings.Contains(expr, "->") { // C++: p->conn is (*p).conn
		expr = strings.ReplaceAll(expr, "->", ".")
	}
	if d, ok := literalDecl(f, expr); ok {
		return d, true
	}
	switch expr[len(expr)-1] {
	case ')':
		if ed := encl; ed >= 0 && f.Defs[ed].Container != "" && slices.Contains(f.Lang.Super, expr) {
			return declType{text: f.Defs[ed].Container, in: f, ev: expr + " is a base of " + f.Defs[ed].Container, bases: true}, true
		}
		// A call: what its callee returns.
		open := opening(expr)
		if open <= 0 {
			return declType{}, false
		}
		if expr[open-1] == '.' {
			// A type assertion, x.(T): the value is a T.
			text := expr[open+1 : len(expr)-1]
			return declType{text: text, in: f, ev: expr + " is " + text + ": asserted"}, true
		}
		return x.calleeResult(f, encl, at, expr[:open], depth+1)
	case ']':
		// An index: an element of the collection.
		open := opening(expr)
		if open <= 0 {
			return declType{}, false
		}
		inner, ok := x.exprDecl(f, encl, at, expr[:open], depth+1)
		if !ok {
			return declType{}, false
		}
		el := f.Lang.elemType(inner.text)
		if el == "" {
			return declType{}, false
		}
		return declType{text: el, in: inner.in, ev: inner.ev + "; " + expr + " is an element"}, true
	}
	if i := lastTopDot(expr); i >= 0 {
		// pkg.Var: a package-level variable with a declared type.
		if files, _, bound := x.moduleBinding(f, expr[:i]); bound && files != nil && !f.boundAround(firstSegment(expr), encl, at) {
			if d, ok := x.varType(expr, x.exportedBy(files, expr[i+1:], isTypedVar), depth); ok {
				return d, true
			}
			return x.instanceDecl(expr, x.exportedBy(files, expr[i+1:], isVar), depth)
		}
		cur, ok := x.exprDecl(f, encl, at, expr[:i], depth+1)
		if !ok {
			return declType{}, false
		}
		tr := x.resolveDecl(cur)
		if len(tr.types) == 0 {
			fields, ok := f.Lang.structFields(cur.text)
			if !ok {
				return declType{}, false
			}
			return x.literalField(cur, fields, expr[i+1:], depth+1)
		}
		next, ok := x.fieldOf(tr.types, expr[i+1:], depth+1)
		if !ok {
			return declType{}, false
		}
		next.ev = cur.ev + "; " + next.ev
		return next, true
	}
	if !isIdent(expr) {
		return declType{}, false
	}
	var ed *Def
	if encl >= 0 {
		ed = &f.Defs[encl]
	}
	if ed != nil && ed.Container != "" && slices.Contains(f.Lang.Super, expr) {
		return declType{text: ed.Container, in: f, ev: expr + " is a base of " + ed.Container, bases: true}, true
	}
	if ed != nil && ed.Container != "" && (f.Lang.self[expr] || ed.Self == expr) && !f.rebound(expr, encl, at) && !f.boundLocal(expr, encl, at, ed) {
		return declType{text: ed.Container, in: f, ev: expr + " is " + ed.Container + ": the method's receiver"}, true
	}
	if ed != nil && ed.Container == "" && f.Lang.self[expr] {
		// A closure inside a method sees the method's self (unless it
		// binds the name itself).
		inner := encl
		for e, n := f.outer(encl), 0; e >= 0 && n < 16 && !f.bound(expr, inner, at); e, n = f.outer(e), n+1 {
			if od := &f.Defs[e]; od.Container != "" && od.Kind == "method" {
				if f.rebound(expr, e, at) {
					break
				}
				return declType{text: od.Container, in: f, ev: expr + " is " + od.Container + ": the receiver of " + od.Name + ", around this closure"}, true
			}
			inner = e
		}
	}
	// The innermost function binding it: a closure sees its enclosing
	// function's locals.
	for e, n := encl, 0; e >= 0 && n < 16; e, n = f.outer(e), n+1 {
		if lc := f.localDecl(expr, e, at); lc != nil {
			d, ok := x.localType(f, e, lc, expr, depth)
			if ok {
				return x.typeParamIn(f, e, at, d)
			}
			return d, ok
		}
		if d, ok := x.agreedLocal(f, e, at, expr, depth); ok {
			return d, true
		}
		if f.bound(expr, e, at) {
			return declType{}, false
		}
	}
	// A variable of the module or package with a declared type, else one
	// its module constructs.
	ts, _ := x.bareTargets(f, expr, isTypedVar)
	if d, ok := x.varType(expr, ts, depth); ok {
		return d, true
	}
	ts, _ = x.bareTargets(f, expr, isVar)
	return x.instanceDecl(expr, ts, depth)
}

// opening returns the index of the bracket opening the one that ends s.
func opening(s string) int {
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')', ']':
			depth++
		case '(', '[':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// lastTopDot is the index of the last "." outside brackets, or -1.
func lastTopDot(s string) int {
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')', ']':
			depth++
		case '(', '[':
			depth--
		case '.':
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// boundLocal says whether a self name is a plain local here (a Go method
// whose receiver is unnamed, a parameter called like it) — never for the
// method's own receiver.
func (f *File) boundLocal(name string, encl, at int32, ed *Def) bool {
	return ed.Self != name && !f.Lang.self[name] && f.bound(name, encl, at)
}

// localType is the declared type of a typed local.
func (x *Index) localType(f *File, encl int32, lc *Local, name string, depth int) (declType, bool) {
	text := f.strs[lc.typ]
	// What it is bound to is read before the binding: o := o, b :=
	// b.Next() name the earlier o and b.
	before := lc.at - 1
	switch lc.how {
	case TypeCall2, TypeCall3:
		return x.laterResult(f, encl, before, text, int(lc.how-TypeCall2)+1, name, f.Rel, lc.line, depth)
	case TypeCall:
		d, ok := x.calleeResult(f, encl, before, text, depth+1)
		if !ok {
			return declType{}, false
		}
		if s := strings.TrimSpace(d.text); strings.HasPrefix(s, "(") && len(topSplit(s[1:len(s)-1], ',')) > 1 {
			// x, err := f() with f() (path []dlist, ok bool): the first.
			if first, ok := resultAt(s, 0); ok {
				d.text = first
			}
		}
		if d.ctor && !strings.Contains(text, ".") {
			d.ev = evidence(name, d.text, "constructed", f, lc.line)
		} else {
			d.ev = name + " is " + d.text + ": result of " + text + ", " + f.Rel + ":" + itoa(int(lc.line)) + "; " + d.ev
		}
		d.ctor = false
		return d, true
	case TypeExpr:
		inner, ok := x.exprDecl(f, encl, before, text, depth+1)
		if !ok {
			return declType{}, false
		}
		inner.ev = name + " = " + text + ", " + f.Rel + ":" + itoa(int(lc.line)) + "; " + inner.ev
		return inner, true
	case TypeElem:
		inner, ok := x.exprDecl(f, encl, before, text, depth+1)
		if !ok {
			return declType{}, false
		}
		el := f.Lang.elemType(inner.text)
		if el == "" {
			return declType{}, false
		}
		return declType{text: el, in: inner.in, ev: evidence(name, el, "element of "+text, f, lc.line) + "; " + inner.ev}, true
	case TypeKey:
		inner, ok := x.exprDecl(f, encl, before, text, depth+1)
		if !ok {
			return declType{}, false
		}
		k := keyType(inner.text)
		if k == "" {
			return declType{}, false
		}
		return declType{text: k, in: inner.in, ev: evidence(name, k, "ranged over "+text, f, lc.line) + "; " + inner.ev}, true
	case TypeField:
		return x.destructuredField(f, lc, name, text)
	case TypeResult:
		// A function value: what calling it returns is no type of its own.
		return declType{}, false
	}
	return declType{text: text, in: f, ev: evidence(name, text, typeHow[lc.how], f, lc.line)}, true
}

// destructuredField is the type of a parameter destructured from a
// declared type ({gen}: Cxt): Cxt's field gen.
func (x *Index) destructuredField(f *File, lc *Local, name, text string) (declType, bool) {
	tr := x.resolveDecl(declType{text: text, in: f})
	if len(tr.types) == 0 {
		return declType{}, false
	}
	d, ok := x.fieldOf(tr.types, name, 1)
	if !ok {
		return declType{}, false
	}
	d.ev = evidence(name, d.text, "destructured from "+text, f, lc.line) + "; " + d.ev
	return d, true
}

// calleeResult is the type a call of callee (f, pkg.New, x.Make) yields:
// the class it constructs, or the function's declared result type.
func (x *Index) calleeResult(f *File, encl, at int32, callee string, depth int) (declType, bool) {
	if depth > maxTypeDepth {
		return declType{}, false
	}
	callee = strings.TrimSpace(callee)
	recv, name := "", callee
	if i := strings.LastIndex(callee, "."); i >= 0 {
		recv, name = callee[:i], callee[i+1:]
	}
	if !isIdent(name) {
		return declType{}, false
	}
	fnOrType := func(d *Def) bool { return functionLike[d.Kind] || classLike[d.Kind] }
	var ts []Target
	via := "" // the receiver's evidence
	switch {
	case recv == "":
		if cs := x.classSelf(f, encl, at, name); len(cs) > 0 {
			ts = cs
			break
		}
		if f.bound(name, encl, at) {
			return x.localFuncResult(f, encl, at, name, depth)
		}
		ts, _ = x.bareTargets(f, name, fnOrType)
		if len(ts) == 0 {
			// var testHook = context.WithTimeout: a call of it calls that.
			if vs, _ := x.bareTargets(f, name, isVar); len(vs) == 1 && vs[0].D().How == TypeExpr {
				v := vs[0]
				return x.heldFuncResult(v.File, -1, v.D().start, name, v.D().Type, v.D().Line, depth)
			}
		}
	default:
		if files, _, bound := x.moduleBinding(f, recv); bound && !f.bound(firstSegment(recv), encl, at) {
			ts = x.exportedBy(files, name, fnOrType)
			break
		}
		d, ok := x.exprDecl(f, encl, at, recv, depth+1)
		if !ok {
			if tr := x.resolveDecl(declType{text: recv, in: f}); len(tr.types) > 0 && !f.bound(firstSegment(recv), encl, at) {
				ts, _ = x.membersOf(tr.types, name, fnOrType, depth+1)
			}
			break
		}
		if tr := x.resolveDecl(d); len(tr.types) > 0 {
			ts, _ = x.membersOf(tr.types, name, fnOrType, depth+1)
			via = d.ev + "; "
		}
	}
	ts = inVariant(f, ts)
	if len(ts) == 0 && recv == "" && f.Lang.builtins[name] && !f.bound(name, encl, at) {
		// str(x), open(p): a value of a type the language defines.
		return declType{text: name, in: f, ev: callee + "() is builtin"}, true
	}
	if len(ts) > 1 && sameResult(ts) {
		// NewFile in file_unix.go and file_windows.go: variants that say
		// the same.
		ts = ts[:1]
	}
	if len(ts) != 1 {
		return declType{}, false
	}
	t := ts[0]
	d := t.D()
	if classLike[d.Kind] {
		return declType{text: d.Name, in: t.File, ev: via + callee + " constructs " + d.Name, ctor: true}, true
	}
	if d.Type == "" {
		r, ok := x.inferredResult(t, depth+1)
		if !ok {
			return declType{}, false
		}
		r.ev = via + qualified(t) + " returns " + r.text + " (all its return statements), " + t.File.Rel + ":" + itoa(int(d.Line)) + "; " + r.ev
		r.ctor = false
		return r, true
	}
	if t.File.typeParamNamed(t.Def, d.Type) {
		// func Id[T I](x T) T: the result is the caller's T.
		return declType{}, false
	}
	return declType{text: d.Type, in: t.File, ev: via + qualified(t) + " returns " + d.Type + ", " + t.File.Rel + ":" + itoa(int(d.Line))}, true
}

// localFuncResult is what a call of the local function value name
// returns: the result of the literal it is bound to, of its declared
// function type (a parameter f func() *T), or of the function it was
// set to (f := strings.ToUpper).
func (x *Index) localFuncResult(f *File, encl, at int32, name string, depth int) (declType, bool) {
	for e, n := encl, 0; e >= 0 && n < 16; e, n = f.outer(e), n+1 {
		lc := f.localDecl(name, e, at)
		if lc == nil {
			if f.bound(name, e, at) {
				return declType{}, false
			}
			continue
		}
		text := f.strs[lc.typ]
		switch lc.how {
		case TypeResult:
		case TypeDeclared, TypeParam:
			if text = funcTypeResult(text); text == "" {
				return declType{}, false
			}
		case TypeExpr:
			// f := strings.ToUpper: a call of f is a call of what it holds.
			return x.heldFuncResult(f, e, lc.at-1, name, text, lc.line, depth)
		default:
			return declType{}, false
		}
		return declType{text: text, in: f, ev: name + " returns " + text + ": " + typeHow[lc.how] + ", " + f.Rel + ":" + itoa(int(lc.line))}, true
	}
	return declType{}, false
}

// heldFuncResult is what a call of name returns when name was set to the
// expression held (in g, before at): a call of that.
func (x *Index) heldFuncResult(g *File, encl, at int32, name, held string, line int32, depth int) (declType, bool) {
	d, ok := x.calleeResult(g, encl, at, held, depth+1)
	if !ok || d.bases {
		return declType{}, false
	}
	d.ev = name + " = " + held + ", " + g.Rel + ":" + itoa(int(line)) + "; " + d.ev
	return d, true
}

// funcTypeResult is the result of a function type as written, "func(a
// int) *T" → "*T", or "" when it is none or has none.
func funcTypeResult(text string) string {
	s := strings.TrimSpace(text)
	if !strings.HasPrefix(s, "func(") {
		return ""
	}
	end := closing(s, 4)
	if end < 0 {
		return ""
	}
	return strings.TrimSpace(s[end+1:])
}

// The locals a language's query binds at each return statement and each
// yield of a function (the keyword is the name: no identifier clashes).
const (
	returnLocal = "return"
	yieldLocal  = "yield"
)

// inferredResult is the type a function without a declared result
// returns when each of its return statements says the same one (return
// Foo(), return a local constructed); a generator returns none of them.
func (x *Index) inferredResult(t Target, depth int) (declType, bool) {
	g, d := t.File, t.D()
	if depth > maxTypeDepth || !functionLike[d.Kind] || g.bound(yieldLocal, t.Def, d.end) {
		return declType{}, false
	}
	lc := g.localDecl(returnLocal, t.Def, d.end)
	if lc == nil {
		return declType{}, false
	}
	return x.localType(g, t.Def, lc, "the value returned", depth)
}

// bareTargets finds a bare name as a file sees it outside any function:
// its own definitions, its imports, its package, its included headers;
// external names the module outside the index an import takes it from.
func (x *Index) bareTargets(f *File, name string, ok func(*Def) bool) ([]Target, string) {
	if ts := pick(f, name, func(d *Def) bool { return ok(d) && !d.member() && !d.local }); len(ts) > 0 {
		return ts, ""
	}
	if res, found := x.viaNameImport(f, name, ok); found {
		if res.Class == Unresolved && strings.HasPrefix(res.Why, "external: ") {
			return nil, strings.TrimPrefix(res.Why, "external: ")
		}
		return res.Targets, ""
	}
	if res, found := x.viaModuleValue(f, name, ok); found {
		return res.Targets, ""
	}
	if res, found := x.viaStarImport(f, name, ok); found {
		return res.Targets, ""
	}
	if f.Lang.Scope == "directory" {
		if ts := x.inScope(f, name, func(d *Def) bool { return ok(d) && !d.member() }); len(ts) > 0 {
			return ts, ""
		}
	}
	if res, found := x.viaIncludes(f, name, ok); found {
		return res.Targets, ""
	}
	return nil, ""
}

// resolveDecl finds the class-like definitions a declared type names.
func (x *Index) resolveDecl(d declType) typeRef {
	tr := x.resolveDeclAll(d)
	if d.in != nil {
		// x_windows.go's T, not x_js.go's.
		tr.types = inVariant(d.in, tr.types)
	}
	return tr
}

func (x *Index) resolveDeclAll(d declType) typeRef {
	if d.in == nil {
		return typeRef{}
	}
	if d.bases {
		d.bases = false
		var out []Target
		ext := ""
		for _, t := range x.resolveDecl(d).types {
			bs, e := x.bases(t)
			out = append(out, bs...)
			if ext == "" {
				ext = e
			}
		}
		if len(out) == 0 && ext != "" {
			return typeRef{external: ext}
		}
		return typeRef{types: out}
	}
	l := d.in.Lang
	qual, name := l.normType(d.text)
	if name == "" {
		return typeRef{}
	}
	isType := func(d *Def) bool { return classLike[d.Kind] }
	if qual == "" {
		if l.builtins[name] {
			return typeRef{builtin: name}
		}
		ts, ext := x.bareTargets(d.in, name, isType)
		if len(ts) == 0 && ext == "" {
			// A class defined inside a function (self in its methods):
			// the file's one class of that name.
			ts = pick(d.in, name, func(e *Def) bool { return isType(e) && e.local })
			if len(ts) != 1 {
				ts = nil
			}
		}
		return typeRef{types: ts, external: ext}
	}
	if files, module, bound := x.moduleBinding(d.in, qual); bound {
		if files == nil {
			return typeRef{external: module}
		}
		return typeRef{types: x.topLevelOf(files, name, isType)}
	}
	// Outer.Inner, ns::T: a type nested in a named one.
	if outer := x.resolveDecl(declType{text: qual, in: d.in}); len(outer.types) > 0 {
		var out []Target
		for _, t := range outer.types {
			out = append(out, pick(t.File, name, func(e *Def) bool { return isType(e) && e.Container == t.D().Name })...)
		}
		return typeRef{types: out}
	}
	if res, ok := x.namespaceMember(d.in, qual, name, isType); ok {
		return typeRef{types: res.Targets}
	}
	return typeRef{}
}

// namedIn lists the files that may hold t's members (its own, or Go's
// package) and define name.
func (x *Index) namedIn(t Target, name string) []*File {
	if t.File.Lang.Scope != "directory" {
		return []*File{t.File}
	}
	var out []*File
	for _, g := range x.langIx[t.File.Lang].defs[name] {
		if g.Dir == t.File.Dir && g.Package == t.File.Package {
			out = append(out, g)
		}
	}
	return out
}

// bases lists what a type embeds or extends, resolved; ext names one
// that is outside the index (a module's or the language's own). Fields
// and bases are declared with the type, in its file.
func (x *Index) bases(t Target) (out []Target, ext string) {
	name := t.D().Name
	for _, g := range []*File{t.File} {
		for i := range g.Fields {
			fd := &g.Fields[i]
			if fd.Name != "" || fd.Container != name {
				continue
			}
			tr := x.resolveDecl(declType{text: fd.Type, in: g})
			out = append(out, tr.types...)
			if len(tr.types) == 0 && ext == "" {
				ext = tr.external + tr.builtin
			}
		}
	}
	return out, ext
}

// membersOf finds members called name of the types, walking what they
// embed or extend nearest first; the second result is the type they were
// found on.
func (x *Index) membersOf(types []Target, name string, ok func(*Def) bool, depth int) ([]Target, []Target) {
	ms, on, _ := x.membersExt(types, name, ok, depth)
	return ms, on
}

// membersExt is membersOf that also names a base outside the index met on
// the way (where a member not found may come from).
func (x *Index) membersExt(types []Target, name string, ok func(*Def) bool, depth int) ([]Target, []Target, string) {
	level := types
	seen := map[Target]bool{}
	ext := ""
	for d := depth; d <= maxTypeDepth && len(level) > 0; d++ {
		var found, on, next []Target
		for _, t := range level {
			if seen[t] {
				continue
			}
			seen[t] = true
			tn := t.D().Name
			for _, g := range x.namedIn(t, name) {
				ms := pick(g, name, func(e *Def) bool { return ok(e) && e.Container == tn && !classLike[e.Kind] })
				found = append(found, ms...)
				for range ms {
					on = append(on, t)
				}
			}
			bs, e := x.bases(t)
			next = append(next, bs...)
			if ext == "" {
				ext = e
			}
		}
		if len(found) > 0 {
			return found, on, ""
		}
		level = next
	}
	return nil, nil, ext
}

// fieldOf is the declared type of field name of the types (or of what
// they embed or extend, nearest first).
func (x *Index) fieldOf(types []Target, name string, depth int) (declType, bool) {
	level := types
	seen := map[Target]bool{}
	for d := depth; d <= maxTypeDepth && len(level) > 0; d++ {
		var next []Target
		var found []declType
		for _, t := range level {
			if seen[t] {
				continue
			}
			seen[t] = true
			tn := t.D().Name
			g := t.File
			var assigned []*Field
			for i := range g.Fields {
				fd := &g.Fields[i]
				if fd.Container != tn || fd.Name != name && !g.embeddedAs(fd, name) {
					continue
				}
				switch fd.How {
				case TypeExpr, TypeCall, TypeNone:
					assigned = append(assigned, fd)
				case TypeTypeParam:
					// A field of a type parameter's type: its constraint says nothing here.
				default:
					ft, ok := x.fieldTypeParam(g, tn, declType{text: fd.Type, in: g, ev: evidence(name, fd.Type, "field of "+tn, g, fd.Line)})
					if !ok {
						return declType{}, false
					}
					found = append(found, ft)
				}
			}
			if len(found) == 0 && len(assigned) > 0 {
				// Set, not declared: what every assignment agrees on.
				return x.assignedField(g, name, assigned, d)
			}
			bs, _ := x.bases(t)
			next = append(next, bs...)
		}
		if len(found) > 0 {
			// Variants or duplicates of the type must agree.
			for _, o := range found[1:] {
				if o.text != found[0].text {
					return declType{}, false
				}
			}
			return found[0], true
		}
		level = next
	}
	return declType{}, false
}

// hasField says whether the types (or their bases) have a field name.
func (x *Index) hasField(types []Target, name string) bool {
	_, ok := x.fieldOf(types, name, 0)
	return ok
}

// viaType resolves recv.name when recv's type is declared. ok is false
// when the declaration leads nowhere the index can follow; hint is then
// the declared type's definitions, which rank first among candidates.
func (x *Index) viaType(f *File, r *Ref, recv, name string, want func(*Def) bool) (res Resolution, hint []Target, ok bool) {
	d, found := x.exprDecl(f, r.Encl, r.at, recv, 0)
	if !found {
		return Resolution{}, nil, false
	}
	tr := x.resolveDecl(d)
	if len(tr.types) == 0 {
		if fields, ok := f.Lang.structFields(d.text); ok {
			// A struct written in place: the members of what it embeds.
			if tr.types = x.embeddedTypes(d, fields); len(tr.types) > 0 {
				d.ev += "; it embeds " + qualified(tr.types[0])
			}
		}
	}
	switch {
	case len(tr.types) > 0:
	case tr.builtin != "":
		return Resolution{Class: Unresolved, Why: "builtin (" + d.ev + ")"}, nil, true
	case tr.external != "":
		return Resolution{Class: Unresolved, Why: "external: " + tr.external + " (" + d.ev + ")"}, nil, true
	case len(tr.types) == 0:
		return Resolution{}, nil, false
	}
	ms, _, ext := x.membersExt(tr.types, name, func(e *Def) bool { return want(e) && e.member() }, 0)
	if len(ms) == 0 {
		switch {
		case r.Kind == RefCall && x.hasField(tr.types, name):
			return Resolution{Class: Unresolved, Why: "a field holding a function value (" + d.ev + ")"}, nil, true
		case ext != "":
			return Resolution{Class: Unresolved, Why: "inherited from " + ext + ", outside the index (" + d.ev + ")"}, nil, true
		}
		return Resolution{}, tr.types, false
	}
	ms = inVariant(f, ms)
	reason := d.ev
	if len(ms) != 1 {
		reasons := make([]string, len(ms))
		for i := range reasons {
			reasons[i] = reason + "; one of " + itoa(len(ms)) + " with this name"
		}
		return Resolution{Class: Candidate, Targets: ms, Reasons: reasons}, nil, true
	}
	res = Resolution{Class: Exact, Targets: ms, Reason: reason}
	if !d.bases { // super.m() runs the base's m, not an override
		res.Impls = x.implementations(ms[0])
	}
	return res, nil, true
}

// containerType is the class-like definition a member belongs to.
func (x *Index) containerType(m Target) (Target, bool) {
	c := m.D().Container
	if c == "" {
		return Target{}, false
	}
	for _, g := range x.namedIn(m, c) {
		if ts := pick(g, c, func(d *Def) bool { return classLike[d.Kind] }); len(ts) > 0 {
			return ts[0], true
		}
	}
	return Target{}, false
}

type implKey struct {
	m   Target
	gen uint64
}

// implementations lists what a call of method m may run instead: for an
// interface's method, the methods of that name of the types implementing
// it (by method set for a language whose "implements" is "method_set",
// Go; else the classes declaring it as a base); for a class's method in a
// language with declared bases, its subclasses' overrides.
func (x *Index) implementations(m Target) []Target {
	t, ok := x.containerType(m)
	if !ok {
		return nil
	}
	l := m.File.Lang
	isIface := t.D().Kind == "interface" || t.D().Kind == "trait"
	if l.Implements == "method_set" && !isIface {
		return nil
	}
	if l.Implements == "none" {
		return nil
	}
	key := implKey{m, x.gen}
	x.impMu.Lock()
	if ts, ok := x.impls[key]; ok {
		x.impMu.Unlock()
		return ts
	}
	x.impMu.Unlock()
	var out []Target
	if l.Implements == "method_set" {
		out = x.byMethodSet(t, m)
	} else {
		out = x.overrides(t, m)
	}
	x.impMu.Lock()
	if x.impls == nil || len(x.impls) > 10000 {
		x.impls = map[implKey][]Target{}
	}
	x.impls[key] = out
	x.impMu.Unlock()
	return out
}

// byMethodSet lists the methods called like m of the types whose methods
// include every method of interface t.
func (x *Index) byMethodSet(t, m Target) []Target {
	tn := t.D().Name
	var names []string
	for i := range t.File.Defs {
		if d := &t.File.Defs[i]; d.Container == tn && d.Kind == "method" && d.Name != m.D().Name {
			names = append(names, d.Name)
		}
	}
	ix := x.langIx[t.File.Lang]
	var out []Target
	for _, g := range ix.defs[m.D().Name] {
		for _, i := range g.defsNamed(m.D().Name) {
			d := &g.Defs[i]
			if d.Container == "" || !functionLike[d.Kind] || (d.Container == tn && g.Dir == t.File.Dir) {
				continue
			}
			c := Target{g, i}
			if ct, ok := x.containerType(c); ok && ct.D().Kind == "interface" {
				continue
			}
			all := true
			for _, n := range names {
				has := false
				for _, h := range x.namedIn(c, n) {
					if len(pick(h, n, func(e *Def) bool { return e.Container == d.Container && functionLike[e.Kind] })) > 0 {
						has = true
						break
					}
				}
				if !has && !x.promoted(c, n) {
					all = false
					break
				}
			}
			if all {
				out = append(out, c)
			}
		}
	}
	sortTargets(out)
	return out
}

// overrides lists the methods called like m of the classes that name t
// (or a class that does) as a base.
func (x *Index) overrides(t, m Target) []Target {
	ix := x.langIx[t.File.Lang]
	var out []Target
	seen := map[Target]bool{t: true}
	level := []Target{t}
	for depth := 0; depth < maxTypeDepth && len(level) > 0; depth++ {
		var next []Target
		for _, base := range level {
			bn := base.D().Name
			for _, fr := range x.basesNamed(ix, t.File.Lang, bn) {
				g, fd := fr.g, fr.fd
				sub := pick(g, fd.Container, func(d *Def) bool { return classLike[d.Kind] })
				if len(sub) == 0 || seen[sub[0]] {
					continue
				}
				found := false
				for _, b := range x.resolveDecl(declType{text: fd.Type, in: g}).types {
					found = found || b == base
				}
				if !found {
					continue
				}
				seen[sub[0]] = true
				next = append(next, sub[0])
				out = append(out, pick(g, m.D().Name, func(d *Def) bool { return d.Container == fd.Container && functionLike[d.Kind] })...)
			}
		}
		level = next
	}
	sortTargets(out)
	return out
}

// enclosingAt is the innermost function-like definition around byte
// offset at, or -1.
func (f *File) enclosingAt(at int32) int32 {
	best := int32(-1)
	for i := range f.Defs {
		d := &f.Defs[i]
		if functionLike[d.Kind] && d.start <= at && at < d.end && (best < 0 || d.start >= f.Defs[best].start) {
			best = int32(i)
		}
	}
	return best
}

// superCall resolves super(...) inside a method of encl's class: the
// nearest base's constructor, else the base class itself.
func (x *Index) superCall(f *File, r *Ref, encl *Def) (Resolution, bool) {
	d := declType{text: encl.Container, in: f, ev: "super is a base of " + encl.Container, bases: true}
	tr := x.resolveDecl(d)
	if len(tr.types) == 0 {
		if tr.external != "" {
			return Resolution{Class: Unresolved, Why: "external: " + tr.external + " (" + d.ev + ")"}, true
		}
		return Resolution{}, false
	}
	isCtor := func(e *Def) bool { return e.Kind == "constructor" || e.Name == f.Lang.Constructor && e.member() }
	for _, b := range tr.types {
		ms, _ := x.membersOf([]Target{b}, f.Lang.Constructor, isCtor, 0)
		if len(ms) == 1 {
			return Resolution{Class: Exact, Targets: ms, Reason: d.ev}, true
		}
	}
	if len(tr.types) == 1 {
		return Resolution{Class: Exact, Targets: tr.types, Reason: d.ev}, true
	}
	return Resolution{}, false
}

type fieldRef struct {
	g  *File
	fd *Field
}

type subclassesAt struct {
	gen uint64
	m   map[string][]fieldRef
}

// basesNamed lists the base-class fields of the language that name a type
// called name (one pass over the index, kept until it changes).
func (x *Index) basesNamed(ix *langIndex, l *Language, name string) []fieldRef {
	x.impMu.Lock()
	e, ok := x.subs[l]
	x.impMu.Unlock()
	if !ok || e.gen != x.gen {
		m := map[string][]fieldRef{}
		for _, fs := range ix.dirs {
			for _, g := range fs {
				for i := range g.Fields {
					fd := &g.Fields[i]
					if fd.Name != "" {
						continue
					}
					_, n := g.Lang.normType(fd.Type)
					if n != "" {
						m[n] = append(m[n], fieldRef{g, fd})
					}
				}
			}
		}
		e = subclassesAt{x.gen, m}
		x.impMu.Lock()
		if x.subs == nil {
			x.subs = map[*Language]subclassesAt{}
		}
		x.subs[l] = e
		x.impMu.Unlock()
	}
	return e.m[name]
}

func isTypedVar(d *Def) bool {
	return (d.Kind == "variable" || d.Kind == "constant") && d.Type != "" && !d.member()
}

// varDecl is the declared type of the one variable ts holds.
func varDecl(expr string, ts []Target) (declType, bool) {
	if len(ts) != 1 {
		return declType{}, false
	}
	d := ts[0].D()
	return declType{text: d.Type, in: ts[0].File, ev: evidence(expr, d.Type, "variable", ts[0].File, d.Line)}, true
}

// moduleTypeMembers finds members called name of the class recv names
// as mod.Type (import pkg.widgets as W; W.Widget.__init__(self)), nearest
// first through its bases.
func (x *Index) moduleTypeMembers(f *File, r *Ref, recv, name string, want func(*Def) bool) []Target {
	i := lastTopDot(recv)
	if i <= 0 || strings.ContainsAny(recv, "()[]") || f.bound(firstSegment(recv), r.Encl, r.at) {
		return nil
	}
	files, _, bound := x.moduleBinding(f, recv[:i])
	if !bound || files == nil {
		return nil
	}
	types := inVariant(f, x.exportedBy(files, recv[i+1:], func(d *Def) bool { return classLike[d.Kind] && !d.member() }))
	if len(types) != 1 {
		return nil
	}
	ms, _ := x.membersOf(types, name, func(e *Def) bool { return want(e) && e.member() }, 0)
	return ms
}

func isVar(d *Def) bool {
	return (d.Kind == "variable" || d.Kind == "constant") && !d.member()
}

// instanceDecl is the type of the module variable ts hold when none is
// declared: what every binding of it in its module (@field.module,
// @field.global) agrees it was set to, a construction or a call whose
// result is known (_inst = Random()). Any other binding, an import or a
// definition of the name makes it unknown.
func (x *Index) instanceDecl(expr string, ts []Target, depth int) (declType, bool) {
	if len(ts) == 0 || depth > maxTypeDepth {
		return declType{}, false
	}
	g, name := ts[0].File, ts[0].D().Name
	for _, t := range ts {
		if t.File != g || t.D().Type != "" {
			return declType{}, false
		}
	}
	if len(pick(g, name, func(d *Def) bool { return !isVar(d) && !d.local })) > 0 {
		return declType{}, false
	}
	for _, im := range g.Imports {
		if im.Local == name {
			return declType{}, false
		}
	}
	var set *Field
	typedAt := map[int32]bool{}
	for i := range g.Fields {
		fd := &g.Fields[i]
		if fd.Container != "" || fd.Name != name || fd.How == TypeNone {
			continue
		}
		if fd.How != TypeCall || set != nil && set.Type != fd.Type {
			return declType{}, false
		}
		set = fd
		typedAt[fd.at] = true
	}
	if set == nil {
		return declType{}, false
	}
	for i := range g.Fields {
		fd := &g.Fields[i]
		if fd.Container == "" && fd.Name == name && fd.How == TypeNone && !typedAt[fd.at] {
			return declType{}, false
		}
	}
	r, ok := x.calleeResult(g, -1, set.at, set.Type, depth+1)
	if !ok {
		return declType{}, false
	}
	if r.ctor {
		r.ev = evidence(expr, r.text, "module variable set to "+set.Type+"()", g, set.Line)
	} else {
		r.ev = evidence(expr, r.text, "module variable set to "+set.Type+"()", g, set.Line) + "; " + r.ev
	}
	r.ctor = false
	return r, true
}

// varType is varDecl that also follows a variable initialized by a call
// (var Stdout = NewFile(...)) to the callee's declared result.
func (x *Index) varType(expr string, ts []Target, depth int) (declType, bool) {
	if len(ts) == 1 && ts[0].D().How == TypeExpr {
		// var std = defaultLogger: the type of what it is set to.
		t := ts[0]
		d, ok := x.exprDecl(t.File, -1, t.D().start, t.D().Type, depth+1)
		if ok {
			d.ev = evidence(expr, d.text, "variable set to "+t.D().Type, t.File, t.D().Line) + "; " + d.ev
		}
		return d, ok
	}
	if len(ts) != 1 || ts[0].D().How != TypeCall && ts[0].D().How != TypeCall2 && ts[0].D().How != TypeCall3 {
		return varDecl(expr, ts)
	}
	t := ts[0]
	d := t.D()
	if d.How != TypeCall {
		return x.laterResult(t.File, -1, d.start, d.Type, int(d.How-TypeCall2)+1, expr, t.File.Rel, d.Line, depth)
	}
	r, ok := x.calleeResult(t.File, -1, d.start, d.Type, depth+1)
	if !ok {
		return declType{}, false
	}
	r.ev = evidence(expr, r.text, "variable set to "+d.Type+"()", t.File, d.Line) + "; " + r.ev
	r.ctor = false
	return r, true
}

// classSelf is the class a name like cls (language.json class_self) holds
// in a method of it: bound once there (its parameter), in a class that is
// no metaclass (whose cls would be another class).
func (x *Index) classSelf(f *File, encl, at int32, name string) []Target {
	if encl < 0 || !slices.Contains(f.Lang.ClassSelf, name) {
		return nil
	}
	ed := &f.Defs[encl]
	if ed.Container == "" || ed.Kind != "method" {
		return nil
	}
	n := 0
	for _, i := range f.localsNamed(name) {
		if f.Locals[i].Encl == encl {
			n++
		}
	}
	if n != 1 {
		return nil
	}
	ts := inVariant(f, pick(f, ed.Container, func(d *Def) bool {
		return classLike[d.Kind] && d.start <= f.Defs[encl].start && f.Defs[encl].end <= d.end
	}))
	if len(ts) != 1 || x.isMetaclass(ts[0]) {
		return nil
	}
	return ts
}

// isMetaclass says whether t extends the language's type (Python's type),
// directly or through its bases.
func (x *Index) isMetaclass(t Target) bool {
	level := []Target{t}
	seen := map[Target]bool{}
	for d := 0; d <= maxTypeDepth && len(level) > 0; d++ {
		var next []Target
		for _, c := range level {
			if seen[c] {
				continue
			}
			seen[c] = true
			for i := range c.File.Fields {
				fd := &c.File.Fields[i]
				if fd.Name == "" && fd.Container == c.D().Name {
					if _, n := c.File.Lang.normType(fd.Type); n == "type" {
						return true
					}
				}
			}
			bs, _ := x.bases(c)
			next = append(next, bs...)
		}
		level = next
	}
	return false
}

// assignedField is the type of a field no declaration types, from its
// assignments (self.conn = conn, self.buf = Buffer()): each place that
// binds it must be typed and all must name the one same type.
func (x *Index) assignedField(g *File, name string, binds []*Field, depth int) (declType, bool) {
	typedAt := map[int32]bool{}
	for _, fd := range binds {
		if fd.How != TypeNone {
			typedAt[fd.at] = true
		}
	}
	var out declType
	var outType Target
	have := false
	for _, fd := range binds {
		if fd.How == TypeNone {
			if !typedAt[fd.at] {
				return declType{}, false
			}
			continue
		}
		var r declType
		var ok bool
		if fd.How == TypeExpr {
			// self.conn = conn: the type of what was assigned, where it was.
			r, ok = x.exprDecl(g, g.enclosingAt(fd.at), fd.at, fd.Type, depth+1)
			if ok {
				r.ev = evidence(name, r.text, "field set from "+fd.Type, g, fd.Line) + "; " + r.ev
			}
		} else {
			r, ok = x.calleeResult(g, g.enclosingAt(fd.at), fd.at, fd.Type, depth+1)
			if ok && r.ctor {
				r.ev = evidence(name, r.text, "field set to "+fd.Type+"()", g, fd.Line)
			} else if ok {
				r.ev = evidence(name, r.text, "field set to "+fd.Type+"()", g, fd.Line) + "; " + r.ev
			}
			r.ctor = false
		}
		if !ok {
			return declType{}, false
		}
		if len(binds) == 1 {
			return r, true
		}
		tr := x.resolveDecl(r)
		var t Target
		switch {
		case len(tr.types) == 1:
			t = tr.types[0]
		case len(tr.types) > 0 || tr.builtin == "":
			return declType{}, false
		}
		if have && (t != outType || tr.builtin != out.text && t.File == nil) {
			return declType{}, false
		}
		if !have {
			out, outType, have = r, t, true
			if t.File == nil {
				out.text = tr.builtin
			}
		}
	}
	return out, have
}

// assignedHint lists the classes a field receiver (self.h) is assigned
// when its assignments do not agree on one type (self.h = Handler() in
// one method, self.h = h in another): a hint for ranking, never an edge.
func (x *Index) assignedHint(f *File, r *Ref, recv string) []Target {
	i := lastTopDot(recv)
	if i <= 0 || !isIdent(recv[i+1:]) {
		return nil
	}
	cur, ok := x.exprDecl(f, r.Encl, r.at, recv[:i], 0)
	if !ok {
		return nil
	}
	name := recv[i+1:]
	level := x.resolveDecl(cur).types
	seen := map[Target]bool{}
	var out []Target
	for d := 0; d <= maxTypeDepth && len(level) > 0 && len(out) == 0; d++ {
		var next []Target
		for _, t := range level {
			if seen[t] {
				continue
			}
			seen[t] = true
			g := t.File
			for j := range g.Fields {
				fd := &g.Fields[j]
				if fd.Container != t.D().Name || fd.Name != name || fd.How != TypeCall && fd.How != TypeExpr {
					continue
				}
				var v declType
				var ok bool
				if fd.How == TypeExpr {
					v, ok = x.exprDecl(g, g.enclosingAt(fd.at), fd.at, fd.Type, 1)
				} else {
					v, ok = x.calleeResult(g, g.enclosingAt(fd.at), fd.at, fd.Type, 1)
				}
				if ok {
					out = append(out, x.resolveDecl(v).types...)
				}
			}
			bs, _ := x.bases(t)
			next = append(next, bs...)
		}
		level = next
	}
	return out
}

// sameResult says the functions ts are variants of one (one package's
// files) declaring the same result type.
func sameResult(ts []Target) bool {
	for _, t := range ts {
		d, d0 := t.D(), ts[0].D()
		if !functionLike[d.Kind] || d.Type == "" || d.Type != d0.Type || d.Container != d0.Container || t.File.Dir != ts[0].File.Dir || t.File.Package != ts[0].File.Package {
			return false
		}
	}
	return true
}

// promoted says whether method m's type has a method called name through
// a struct it embeds (ir.ForStmt's Pos comes from miniNode).
func (x *Index) promoted(m Target, name string) bool {
	t, ok := x.containerType(m)
	if !ok {
		return false
	}
	bs, _ := x.bases(t)
	if len(bs) == 0 {
		return false
	}
	ms, _ := x.membersOf(bs, name, func(e *Def) bool { return functionLike[e.Kind] }, 1)
	return len(ms) > 0
}

// embeddedAs says fd is a type embedded under the field name name (an
// embedded *pkg.T is field T).
func (f *File) embeddedAs(fd *Field, name string) bool {
	if fd.Name != "" || !f.Lang.EmbeddedNamed {
		return false
	}
	_, n := f.Lang.normType(fd.Type)
	return n == name
}

// laterResult is the type of result n (0-based, n > 0) of calling callee:
// ctx, span := trace.StartSpan(...) makes span the second result.
func (x *Index) laterResult(f *File, encl, at int32, callee string, n int, name, rel string, line int32, depth int) (declType, bool) {
	d, ok := x.calleeResult(f, encl, at, callee, depth+1)
	if !ok || d.ctor || d.bases {
		return declType{}, false
	}
	text, ok := resultAt(d.text, n)
	if !ok {
		return declType{}, false
	}
	d.text = text
	d.ev = name + " is " + text + ": result " + itoa(n+1) + " of " + callee + ", " + rel + ":" + itoa(int(line)) + "; " + d.ev
	return d, true
}

// resultAt is result n of a Go-style result list as written: "(*X,
// error)", "(ctx Context, cancel CancelFunc)", "(a, b int)" (a is an
// int).
func resultAt(list string, n int) (string, bool) {
	s := strings.TrimSpace(list)
	if !strings.HasPrefix(s, "(") || !strings.HasSuffix(s, ")") {
		return "", false
	}
	parts := topSplit(s[1:len(s)-1], ',')
	if n >= len(parts) {
		return "", false
	}
	named := false
	for _, p := range parts {
		if fs := strings.Fields(p); len(fs) > 1 && isIdent(fs[0]) && !strings.HasPrefix(p, "func") && !strings.HasPrefix(p, "chan") && !strings.HasPrefix(p, "map") && !strings.HasPrefix(p, "interface") && !strings.HasPrefix(p, "struct") {
			named = true
		}
	}
	if !named {
		return parts[n], parts[n] != ""
	}
	// Named results: a name alone takes the type of the next one written.
	for i := n; i < len(parts); i++ {
		if fs := strings.Fields(parts[i]); len(fs) > 1 {
			return strings.TrimSpace(strings.TrimPrefix(parts[i], fs[0])), true
		}
	}
	return "", false
}

// literalDecl is the type of a receiver written as a composite literal,
// maybe parenthesized: (&Reader{}).ReadByte(), T{}.M().
func literalDecl(f *File, expr string) (declType, bool) {
	s := expr
	for len(s) > 2 && s[0] == '(' && opening(s) == 0 {
		s = s[1 : len(s)-1]
	}
	s = strings.TrimPrefix(s, "&")
	if !strings.HasSuffix(s, "}") {
		return declType{}, false
	}
	i := strings.IndexByte(s, '{')
	if i <= 0 || closing(s, i) != len(s)-1 {
		return declType{}, false
	}
	text := s[:i]
	if (strings.HasPrefix(text, "[") || strings.HasPrefix(text, "map[")) && f.Lang.elemType(text) != "" {
		// []Context{a, b}: a collection of a declared element type.
		return declType{text: text, in: f, ev: "a " + text + " literal"}, true
	}
	if q, n := f.Lang.normType(text); n == "" || q+"."+n != text && n != text {
		return declType{}, false
	}
	return declType{text: text, in: f, ev: expr + " is " + text + ": a literal"}, true
}

// agreedLocal is the type of a local bound several times in its
// innermost scope (ctx := req.Context(), then ctx, cancel :=
// context.WithCancel(ctx)) when every binding's type, followed, names the
// same definitions.
func (x *Index) agreedLocal(f *File, encl, at int32, name string, depth int) (declType, bool) {
	var ls []*Local
	bestEnd := int64(-1)
	for _, i := range f.localsNamed(name) {
		l := &f.Locals[i]
		if l.Encl != encl || l.at > at || (l.end >= 0 && at >= l.end) {
			continue
		}
		end := int64(l.end)
		if end < 0 {
			end = 1 << 40
		}
		switch {
		case bestEnd < 0 || end < bestEnd:
			ls, bestEnd = []*Local{l}, end
		case end == bestEnd:
			ls = append(ls, l)
		}
	}
	if len(ls) < 2 {
		return declType{}, false
	}
	var first declType
	var want []Target
	for k, l := range ls {
		if l.how == TypeNone {
			return declType{}, false
		}
		d, ok := x.localType(f, encl, l, name, depth+1)
		if !ok {
			return declType{}, false
		}
		ts := slices.Clone(x.resolveDecl(d).types)
		if len(ts) == 0 {
			return declType{}, false
		}
		sortTargets(ts)
		if k == 0 {
			first, want = d, ts
			continue
		}
		if !slices.Equal(ts, want) {
			return declType{}, false
		}
	}
	first.ev += "; every binding of " + name + " in its scope says so"
	return first, true
}

// typeParamIn is d, or, when d names a type parameter of the function
// encl (or of one around it) in f, the interface constraining it; ok is
// false for a type parameter constrained otherwise (T ~int | ~string,
// or a method's T, whose constraint is the type's).
func (x *Index) typeParamIn(f *File, encl, at int32, d declType) (declType, bool) {
	if d.in != f {
		return d, true
	}
	q, n := f.Lang.normType(d.text)
	if q != "" || n == "" {
		return d, true
	}
	for e, k := encl, 0; e >= 0 && k < 16; e, k = f.outer(e), k+1 {
		for _, i := range f.localsNamed(n) {
			l := &f.Locals[i]
			if l.Encl != e || l.at > at {
				continue
			}
			if l.how != TypeTypeParam {
				return declType{}, false
			}
			return x.constraint(f, d, n, f.strs[l.typ])
		}
	}
	return d, true
}

// fieldTypeParam is fieldOf's d for a field of type tn, or the constraint
// of tn's type parameter it names (type Box[T I] struct{ v T }).
func (x *Index) fieldTypeParam(g *File, tn string, d declType) (declType, bool) {
	q, n := g.Lang.normType(d.text)
	if q != "" || n == "" {
		return d, true
	}
	for i := range g.Fields {
		if fd := &g.Fields[i]; fd.How == TypeTypeParam && fd.Container == tn && fd.Name == n {
			return x.constraint(g, d, n, fd.Type)
		}
	}
	return d, true
}

// constraint types a value of type parameter n by its constraint, when
// that names interfaces only: a call on it runs the interface's method.
func (x *Index) constraint(f *File, d declType, n, text string) (declType, bool) {
	c := declType{text: text, in: f, ev: d.ev + "; " + n + " is a type parameter constrained by " + text}
	ts := x.resolveDecl(c).types
	if len(ts) == 0 {
		return declType{}, false
	}
	for _, t := range ts {
		if t.D().Kind != "interface" {
			return declType{}, false
		}
	}
	return c, true
}

// typeParamNamed says whether type text (as written) names a type
// parameter bound in definition e: its own, or one its receiver's type
// arguments bind.
func (f *File) typeParamNamed(e int32, text string) bool {
	q, n := f.Lang.normType(text)
	if q != "" || n == "" {
		return false
	}
	for _, i := range f.localsNamed(n) {
		if f.Locals[i].Encl == e && f.Locals[i].how == TypeTypeParam {
			return true
		}
	}
	return false
}
