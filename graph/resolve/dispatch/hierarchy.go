// Package dispatch follows a call of a method to what it may run instead,
// by the hierarchy the source declares: the implementations of an
// interface's method (by method set or by declared bases) and the
// overrides in subclasses. It reads declared types through
// graph/resolve/types and keeps what it finds for the snapshot.
package dispatch

import (
	"maps"
	"sync"

	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/graph/resolve/outcome"
	"github.com/builtin-tools/builtin-tools/graph/resolve/types"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// Hierarchy finds what a call of a method may run instead: the
// implementations of an interface's method, the overrides in the classes
// that name its class as a base. It keeps both for the snapshot and
// reads declared types through ty.
type Hierarchy struct {
	s  *snap.Snapshot
	ty *types.Reader
	mu sync.Mutex
	// impls: implementations, for this snapshot only.
	impls map[snap.Target][]snap.Target
	// subs: base-class fields by the base's name per language, by file
	// id, valid while the language's BasesGen is.
	subs map[*lang.Language]subsAt
}

// Init makes h the hierarchy of s, reading declared types through ty.
func (h *Hierarchy) Init(s *snap.Snapshot, ty *types.Reader) { h.s, h.ty = s, ty }

// Inherit takes from prev, the hierarchy of an earlier snapshot, what is
// still valid for h's.
func (h *Hierarchy) Inherit(prev *Hierarchy) {
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

// AnyInterface is the first interface (or trait) among ts, or a
// target whose Def is -1.
func (h *Hierarchy) AnyInterface(ts []snap.Target) snap.Target {
	for _, t := range ts {
		if k := t.D().Kind; k == "interface" || k == "trait" {
			return t
		}
	}
	return snap.Target{Def: -1}
}

// DeclaredImplementers are the classes naming interface t as a base.
func (h *Hierarchy) DeclaredImplementers(t snap.Target) []snap.Target {
	var out []snap.Target
	for _, fr := range h.basesNamed(t.File.Lang, t.D().Name) {
		g := h.s.ByID(fr.id)
		out = append(out, outcome.Pick(g, fr.container, func(d *record.Def) bool { return record.ClassLike(d.Kind) })...)
	}
	return out
}

// InterfaceMethod says whether m is a method of an interface (or trait):
// a call of it is dispatch to whatever implements it.
func (h *Hierarchy) InterfaceMethod(m snap.Target) bool {
	t, ok := h.ContainerType(m)
	return ok && (t.D().Kind == "interface" || t.D().Kind == "trait")
}

// ContainerType is the class-like definition a member belongs to.
func (h *Hierarchy) ContainerType(m snap.Target) (snap.Target, bool) {
	c := m.D().Container
	if c == "" {
		return snap.Target{}, false
	}
	for _, g := range h.ty.NamedIn(m, c) {
		if ts := outcome.Pick(g, c, func(d *record.Def) bool { return record.ClassLike(d.Kind) }); len(ts) > 0 {
			return ts[0], true
		}
	}
	return snap.Target{}, false
}

// Implementations lists what a call of method m may run instead: for an
// interface's method, the methods of that name of the types implementing
// it (by method set for a language whose "implements" is "method_set",
// Go; else the classes declaring it as a base); for a class's method in a
// language with declared bases, its subclasses' overrides.
func (h *Hierarchy) Implementations(m snap.Target) []snap.Target {
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
func (h *Hierarchy) byMethodSet(t, m snap.Target) []snap.Target {
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
				for _, hf := range h.ty.NamedIn(c, n) {
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
	outcome.SortTargets(out)
	return out
}

// overrides lists the methods called like m of the classes that name t
// (or a class that does) as a base.
func (h *Hierarchy) overrides(t, m snap.Target) []snap.Target {
	var out []snap.Target
	seen := map[snap.Target]bool{t: true}
	level := []snap.Target{t}
	for depth := 0; depth < types.MaxDepth && len(level) > 0; depth++ {
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
				for _, b := range h.ty.ResolveDecl(types.DeclIn(g, fr.typ, fr.t)).Types {
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
	outcome.SortTargets(out)
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
func (h *Hierarchy) basesNamed(l *lang.Language, name string) []fieldRef {
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
				_, n := types.TypeName(types.DeclIn(g, fd.Type, fd.T))
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
func (h *Hierarchy) promoted(m snap.Target, name string) bool {
	t, ok := h.ContainerType(m)
	if !ok {
		return false
	}
	bs, _ := h.ty.Bases(t)
	if len(bs) == 0 {
		return false
	}
	ms, _ := h.ty.MembersOf(bs, name, func(e *record.Def) bool { return record.FunctionLike(e.Kind) }, 1)
	return len(ms) > 0
}

type subsAt struct {
	gen uint64 // the language's BasesGen
	m   map[string][]fieldRef
}

// ConformsTo: res is a call of an interface's method in a
// structurally typed language ("implements": "structural") for which the
// index knows no implementation, and t is a member method of that name.
func (h *Hierarchy) ConformsTo(res outcome.Resolution, t snap.Target) bool {
	if res.Pending != nil || res.Class != lang.Interface || len(res.Targets) != 1 || len(res.Impls) > 0 {
		return false
	}
	m := res.Targets[0]
	if m.File.Lang.Implements != "structural" || m.D().Name != t.D().Name || t.D().Kind != "method" && t.D().Container == "" || !record.FunctionLike(t.D().Kind) {
		return false
	}
	it, ok := h.ContainerType(m)
	return ok && it.D().Kind == "interface"
}
