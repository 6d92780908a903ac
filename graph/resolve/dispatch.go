package resolve

import (
	"strings"

	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// Calls through interfaces and base classes: which methods a dispatch may
// reach, and the implementations and overrides of a method.

// dispatch is a call through an interface the index cannot see into:
// the methods called name (of classes, not of interfaces) ranked as
// candidates, each reason ending with note; else, when the index has
// none, res (why it is unresolved).
func (rv *Resolver) dispatch(lazy bool, f *snap.Entry, r *lang.Ref, name string, hint []snap.Target, note string, res Resolution) Resolution {
	ok := func(d *lang.Def) bool { return d.Member() && lang.FunctionLike(d.Kind) }
	p := &Pending{f: f, r: r, ok: ok, hint: hint, note: note, noIface: true}
	found := false
	for _, id := range rv.s.Tables(f.Lang).Defs.Get(name) {
		g := rv.s.ByID(id)
		for _, i := range g.DefsNamed(name) {
			found = found || rv.Accepts(p, &g.Defs[i])
		}
	}
	if !found {
		return res
	}
	if lazy {
		return Resolution{Class: lang.Candidate, Pending: p}
	}
	return rv.rankAll(p)
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
func (rv *Resolver) anyInterface(types []snap.Target) snap.Target {
	for _, t := range types {
		if k := t.D().Kind; k == "interface" || k == "trait" {
			return t
		}
	}
	return snap.Target{Def: -1}
}

// declaredImplementers are the classes naming interface t as a base.
func (rv *Resolver) declaredImplementers(t snap.Target) []snap.Target {
	var out []snap.Target
	for _, fr := range rv.basesNamed(t.File.Lang, t.D().Name) {
		g := rv.s.ByID(fr.id)
		out = append(out, pick(g, fr.container, func(d *lang.Def) bool { return lang.ClassLike(d.Kind) })...)
	}
	return out
}

// interfaceNamed says whether every class-like definition called name in
// the language is an interface or trait (and there is one).
func (rv *Resolver) interfaceNamed(l *lang.Language, name string) bool {
	if name == "" {
		return false
	}
	found := false
	for _, id := range rv.s.Tables(l).Defs.Get(name) {
		g := rv.s.ByID(id)
		for _, i := range g.DefsNamed(name) {
			switch k := g.Defs[i].Kind; {
			case k == "interface" || k == "trait":
				found = true
			case lang.ClassLike(k):
				return false
			}
		}
	}
	return found
}

// InterfaceMethod says whether m is a method of an interface (or trait):
// a call of it is dispatch to whatever implements it.
func (rv *Resolver) InterfaceMethod(m snap.Target) bool {
	t, ok := rv.ContainerType(m)
	return ok && (t.D().Kind == "interface" || t.D().Kind == "trait")
}

// containerType is the class-like definition a member belongs to.
func (rv *Resolver) ContainerType(m snap.Target) (snap.Target, bool) {
	c := m.D().Container
	if c == "" {
		return snap.Target{}, false
	}
	for _, g := range rv.namedIn(m, c) {
		if ts := pick(g, c, func(d *lang.Def) bool { return lang.ClassLike(d.Kind) }); len(ts) > 0 {
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
func (rv *Resolver) Implementations(m snap.Target) []snap.Target {
	t, ok := rv.ContainerType(m)
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
	rv.c.mu.Lock()
	if ts, ok := rv.c.impls[m]; ok {
		rv.c.mu.Unlock()
		return ts
	}
	rv.c.mu.Unlock()
	var out []snap.Target
	if l.Implements == "method_set" {
		out = rv.byMethodSet(t, m)
	} else {
		out = rv.overrides(t, m)
	}
	rv.c.mu.Lock()
	if rv.c.impls == nil || len(rv.c.impls) > 10000 {
		rv.c.impls = map[snap.Target][]snap.Target{}
	}
	rv.c.impls[m] = out
	rv.c.mu.Unlock()
	return out
}

// byMethodSet lists the methods called like m of the types whose methods
// include every method of interface t.
func (rv *Resolver) byMethodSet(t, m snap.Target) []snap.Target {
	tn := t.D().Name
	var names []string
	for i := range t.File.Defs {
		if d := &t.File.Defs[i]; d.Container == tn && d.Kind == "method" && d.Name != m.D().Name {
			names = append(names, d.Name)
		}
	}
	var out []snap.Target
	for _, id := range rv.s.Tables(t.File.Lang).Defs.Get(m.D().Name) {
		g := rv.s.ByID(id)
		for _, i := range g.DefsNamed(m.D().Name) {
			d := &g.Defs[i]
			if d.Container == "" || !lang.FunctionLike(d.Kind) || (d.Container == tn && g.Dir == t.File.Dir) {
				continue
			}
			c := snap.Target{File: g, Def: i}
			if ct, ok := rv.ContainerType(c); ok && ct.D().Kind == "interface" {
				continue
			}
			all := true
			for _, n := range names {
				has := false
				for _, h := range rv.namedIn(c, n) {
					if len(pick(h, n, func(e *lang.Def) bool { return e.Container == d.Container && lang.FunctionLike(e.Kind) })) > 0 {
						has = true
						break
					}
				}
				if !has && !rv.promoted(c, n) {
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
func (rv *Resolver) overrides(t, m snap.Target) []snap.Target {
	var out []snap.Target
	seen := map[snap.Target]bool{t: true}
	level := []snap.Target{t}
	for depth := 0; depth < maxTypeDepth && len(level) > 0; depth++ {
		var next []snap.Target
		for _, base := range level {
			bn := base.D().Name
			for _, fr := range rv.basesNamed(t.File.Lang, bn) {
				g := rv.s.ByID(fr.id)
				sub := pick(g, fr.container, func(d *lang.Def) bool { return lang.ClassLike(d.Kind) })
				if len(sub) == 0 || seen[sub[0]] {
					continue
				}
				found := false
				for _, b := range rv.resolveDecl(declType{text: fr.typ, t: fr.t, in: g}).types {
					found = found || b == base
				}
				if !found {
					continue
				}
				seen[sub[0]] = true
				next = append(next, sub[0])
				out = append(out, pick(g, m.D().Name, func(d *lang.Def) bool { return d.Container == fr.container && lang.FunctionLike(d.Kind) })...)
			}
		}
		level = next
	}
	SortTargets(out)
	return out
}
