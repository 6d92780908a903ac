package resolve

import (
	"maps"
	"strings"
	"sync"

	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/graph/resolve/outcome"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// Calls through interfaces and base classes: which methods a dispatch may
// reach, and the implementations and overrides of a method.

// hierarchy finds what a call of a method may run instead: the
// implementations of an interface's method, the overrides in the classes
// that name its class as a base. It keeps both for the snapshot and
// reads declared types through ty.
type hierarchy struct {
	s  *snap.Snapshot
	ty *typeReader
	mu sync.Mutex
	// impls: implementations, for this snapshot only.
	impls map[snap.Target][]snap.Target
	// subs: base-class fields by the base's name per language, by file
	// id, valid while the language's BasesGen is.
	subs map[*lang.Language]subsAt
}

// inherit takes from prev, the hierarchy of an earlier snapshot, what is
// still valid for h's.
func (h *hierarchy) inherit(prev *hierarchy) {
	prev.mu.Lock()
	defer prev.mu.Unlock()
	if prev.s == h.s {
		h.impls = maps.Clone(prev.impls)
	}
	for l, e := range prev.subs {
		if e.gen == h.s.Tables(l).BasesGen {
			if h.subs == nil {
				h.subs = map[*lang.Language]subsAt{}
			}
			h.subs[l] = e
		}
	}
}

// dispatch is a call through an interface the index cannot see into:
// the methods called name (of classes, not of interfaces) ranked as
// candidates, each reason ending with note; else, when the index has
// none, res (why it is unresolved).
func (rk *ranking) dispatch(lazy bool, f *snap.Entry, r *record.Ref, name string, hint []snap.Target, note string, res outcome.Resolution) outcome.Resolution {
	ok := func(d *record.Def) bool { return d.Member() && record.FunctionLike(d.Kind) }
	p := &outcome.Pending{File: f, Ref: r, OK: ok, Hint: hint, Note: note, NoIface: true}
	found := false
	for _, id := range rk.s.Tables(f.Lang).Defs.Get(name) {
		g := rk.s.ByID(id)
		for _, i := range g.DefsNamed(name) {
			found = found || rk.Accepts(p, &g.Defs[i])
		}
	}
	if !found {
		return res
	}
	if lazy {
		return outcome.Resolution{Class: lang.Candidate, Pending: p}
	}
	return rk.rankAll(p)
}

// namedForMethod says whether a type's name is how Go names an interface
// with that method: the method itself (net.Error's Error), or an agent
// noun made of it (io.Writer, io.ReadWriteCloser's Write, fmt.Stringer),
// not any name holding it (sync.WaitGroup's Wait).
func namedForMethod(typ, method string) bool {
	return typ == method || strings.Contains(typ, method) && strings.HasSuffix(typ, "er")
}

// anyInterface is the first interface (or trait) among types, or a
// target whose Def is -1.
func (h *hierarchy) anyInterface(types []snap.Target) snap.Target {
	for _, t := range types {
		if k := t.D().Kind; k == "interface" || k == "trait" {
			return t
		}
	}
	return snap.Target{Def: -1}
}

// declaredImplementers are the classes naming interface t as a base.
func (h *hierarchy) declaredImplementers(t snap.Target) []snap.Target {
	var out []snap.Target
	for _, fr := range h.basesNamed(t.File.Lang, t.D().Name) {
		g := h.s.ByID(fr.id)
		out = append(out, outcome.Pick(g, fr.container, func(d *record.Def) bool { return record.ClassLike(d.Kind) })...)
	}
	return out
}

// interfaceNamed says whether every class-like definition called name in
// the language is an interface or trait (and there is one).
func (rk *ranking) interfaceNamed(l *lang.Language, name string) bool {
	if name == "" {
		return false
	}
	found := false
	for _, id := range rk.s.Tables(l).Defs.Get(name) {
		g := rk.s.ByID(id)
		for _, i := range g.DefsNamed(name) {
			switch k := g.Defs[i].Kind; {
			case k == "interface" || k == "trait":
				found = true
			case record.ClassLike(k):
				return false
			}
		}
	}
	return found
}

// InterfaceMethod says whether m is a method of an interface (or trait):
// a call of it is dispatch to whatever implements it.
func (h *hierarchy) InterfaceMethod(m snap.Target) bool {
	t, ok := h.ContainerType(m)
	return ok && (t.D().Kind == "interface" || t.D().Kind == "trait")
}

// containerType is the class-like definition a member belongs to.
func (h *hierarchy) ContainerType(m snap.Target) (snap.Target, bool) {
	c := m.D().Container
	if c == "" {
		return snap.Target{}, false
	}
	for _, g := range h.ty.namedIn(m, c) {
		if ts := outcome.Pick(g, c, func(d *record.Def) bool { return record.ClassLike(d.Kind) }); len(ts) > 0 {
			return ts[0], true
		}
	}
	return snap.Target{}, false
}

// implementations lists what a call of method m may run instead: for an
// interface's method, the methods of that name of the types implementing
// it (by method set for a language whose "implements" is "method_set",
// Go; else the classes declaring it as a base); for a class's method in a
// language with declared bases, its subclasses' overrides.
func (h *hierarchy) Implementations(m snap.Target) []snap.Target {
	t, ok := h.ContainerType(m)
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
	h.mu.Lock()
	if ts, ok := h.impls[m]; ok {
		h.mu.Unlock()
		return ts
	}
	h.mu.Unlock()
	var out []snap.Target
	if l.Implements == "method_set" {
		out = h.byMethodSet(t, m)
	} else {
		out = h.overrides(t, m)
	}
	h.mu.Lock()
	if h.impls == nil || len(h.impls) > 10000 {
		h.impls = map[snap.Target][]snap.Target{}
	}
	h.impls[m] = out
	h.mu.Unlock()
	return out
}

// byMethodSet lists the methods called like m of the types whose methods
// include every method of interface t.
func (h *hierarchy) byMethodSet(t, m snap.Target) []snap.Target {
	tn := t.D().Name
	var names []string
	for i := range t.File.Defs {
		if d := &t.File.Defs[i]; d.Container == tn && d.Kind == "method" && d.Name != m.D().Name {
			names = append(names, d.Name)
		}
	}
	var out []snap.Target
	for _, id := range h.s.Tables(t.File.Lang).Defs.Get(m.D().Name) {
		g := h.s.ByID(id)
		for _, i := range g.DefsNamed(m.D().Name) {
			d := &g.Defs[i]
			if d.Container == "" || !record.FunctionLike(d.Kind) || (d.Container == tn && g.Dir == t.File.Dir) {
				continue
			}
			c := snap.Target{File: g, Def: i}
			if ct, ok := h.ContainerType(c); ok && ct.D().Kind == "interface" {
				continue
			}
			all := true
			for _, n := range names {
				has := false
				for _, hf := range h.ty.namedIn(c, n) {
					if len(outcome.Pick(hf, n, func(e *record.Def) bool { return e.Container == d.Container && record.FunctionLike(e.Kind) })) > 0 {
						has = true
						break
					}
				}
				if !has && !h.promoted(c, n) {
					all = false
					break
				}
			}
			if all {
				out = append(out, c)
			}
		}
	}
	SortTargets(out)
	return out
}

// overrides lists the methods called like m of the classes that name t
// (or a class that does) as a base.
func (h *hierarchy) overrides(t, m snap.Target) []snap.Target {
	var out []snap.Target
	seen := map[snap.Target]bool{t: true}
	level := []snap.Target{t}
	for depth := 0; depth < maxTypeDepth && len(level) > 0; depth++ {
		var next []snap.Target
		for _, base := range level {
			bn := base.D().Name
			for _, fr := range h.basesNamed(t.File.Lang, bn) {
				g := h.s.ByID(fr.id)
				sub := outcome.Pick(g, fr.container, func(d *record.Def) bool { return record.ClassLike(d.Kind) })
				if len(sub) == 0 || seen[sub[0]] {
					continue
				}
				found := false
				for _, b := range h.ty.resolveDecl(declType{text: fr.typ, t: fr.t, in: g}).types {
					found = found || b == base
				}
				if !found {
					continue
				}
				seen[sub[0]] = true
				next = append(next, sub[0])
				out = append(out, outcome.Pick(g, m.D().Name, func(d *record.Def) bool { return d.Container == fr.container && record.FunctionLike(d.Kind) })...)
			}
		}
		level = next
	}
	SortTargets(out)
	return out
}

// fieldRef is a base-class field: its file and what it says. It names the
// file by id, so it stays true in a later snapshot whose bases are the
// same.
type fieldRef struct {
	id        snap.FileID
	container string
	typ       string
	t         int32 // typ's tree
}

// basesNamed lists the base-class fields of the language that name a type
// called name (one pass over the index, kept while the language's bases
// are the same).
func (h *hierarchy) basesNamed(l *lang.Language, name string) []fieldRef {
	gen := h.s.Tables(l).BasesGen
	h.mu.Lock()
	e, ok := h.subs[l]
	h.mu.Unlock()
	if !ok || e.gen != gen {
		m := map[string][]fieldRef{}
		for g := range h.s.Files() {
			if g.Lang != l {
				continue
			}
			for i := range g.Fields {
				fd := &g.Fields[i]
				if fd.Name != "" {
					continue
				}
				_, n := typeName(declType{text: fd.Type, t: fd.T, in: g})
				if n != "" {
					m[n] = append(m[n], fieldRef{g.ID, fd.Container, fd.Type, fd.T})
				}
			}
		}
		e = subsAt{gen, m}
		h.mu.Lock()
		if h.subs == nil {
			h.subs = map[*lang.Language]subsAt{}
		}
		h.subs[l] = e
		h.mu.Unlock()
	}
	return e.m[name]
}

// promoted says whether method m's type has a method called name through
// a struct it embeds (ir.ForStmt's Pos comes from miniNode).
func (h *hierarchy) promoted(m snap.Target, name string) bool {
	t, ok := h.ContainerType(m)
	if !ok {
		return false
	}
	bs, _ := h.ty.bases(t)
	if len(bs) == 0 {
		return false
	}
	ms, _ := h.ty.membersOf(bs, name, func(e *record.Def) bool { return record.FunctionLike(e.Kind) }, 1)
	return len(ms) > 0
}

type subsAt struct {
	gen uint64 // the language's BasesGen
	m   map[string][]fieldRef
}
