package resolve

import (
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// Resolution is where a reference leads and how that was decided.
type Resolution struct {
	Class   string
	Targets []snap.Target // exact and import: the definition (or overloads); candidate: ranked, best first
	Reasons []string      // for candidates: why each is ranked where it is
	Why     string        // for unresolved: builtin, external module, no definition
	Reason  string        // for exact: the evidence when it is more than scope (a declared type)
	Impls   []snap.Target // for exact on an interface's (or a class's) method: what the call may run instead
	Pending *Pending      // a name-only resolution not ranked yet (callers)
	// Conversion: a call of a type in a language where that converts
	// (Go's MyInt(3)): a use of the type, not a call.
	Conversion bool
	// Dispatch, for an unresolved call on a value of a type declared
	// outside the index that may be an interface (net.Conn): that type.
	// A method of the index of this name may be what runs.
	Dispatch string
	// DispatchBuiltin: Dispatch's type is the language's own (Go's error),
	// an interface whose only method is the one called, so any method of
	// this name satisfies it and may run.
	DispatchBuiltin bool
}

// Resolve decides one reference of f (r may be a copy of one of f.Refs
// with another Kind).
func (rv *Resolver) Resolve(f *snap.Entry, r *lang.Ref) Resolution {
	return rv.throughVariable(f, r, conversion(f, r, rv.resolveAt(f, r, false)))
}

// ResolveLazy decides one reference, leaving a name-only resolution's
// candidates unranked (Resolution.Pending): callers ranks only the one it
// asks about.
func (rv *Resolver) ResolveLazy(f *snap.Entry, r *lang.Ref) Resolution {
	return rv.throughVariable(f, r, conversion(f, r, rv.resolveAt(f, r, true)))
}

// conversion marks a call that leads only to types, in a language where
// calling a type converts to it.
func conversion(f *snap.Entry, r *lang.Ref, res Resolution) Resolution {
	if r.Kind != lang.RefCall || !f.Lang.Conversions || len(res.Targets) == 0 {
		return res
	}
	for _, t := range res.Targets {
		if !lang.ClassLike(t.D().Kind) {
			return res
		}
	}
	res.Conversion = true
	return res
}

// resolveAt decides one reference; lazy leaves a name-only resolution's
// candidates unranked (Resolution.Pending).
func (rv *Resolver) resolveAt(f *snap.Entry, r *lang.Ref, lazy bool) Resolution {
	name := f.RefName(r)
	l := f.Lang
	want := func(d *lang.Def) bool {
		switch r.Kind {
		case lang.RefType:
			return lang.ClassLike(d.Kind)
		case lang.RefValue:
			return lang.FunctionLike(d.Kind)
		case lang.RefRead:
			return d.Kind == "getter"
		}
		return true
	}
	var encl *lang.Def
	if r.Encl >= 0 {
		encl = &f.Defs[r.Encl]
	}
	if res, ok := valueCall(l, r, name); ok {
		return res
	}
	if r.Recv == 0 {
		// cls(): the class method's own class, constructed.
		if ts := rv.classSelf(f, r.Encl, r.At, name); len(ts) > 0 && r.Kind == lang.RefCall {
			return settle(f, lang.Exact, ts, "the method's class")
		}
		// A local of the enclosing function hides every other definition.
		if f.BoundAround(name, r.Encl, r.At) {
			return rv.localCall(f, r, name)
		}
		// An implicit this: a member of the enclosing class hides the
		// file's names (C++'s class scope comes before its namespace's).
		if encl != nil && encl.Container != "" && l.ImplicitSelf {
			// (new C() names the class, not its constructor.)
			if ts := rv.inScope(f, name, func(d *lang.Def) bool { return want(d) && d.Container == encl.Container && d.Kind != "constructor" }); len(ts) > 0 {
				return settle(f, lang.Exact, ts, "same class")
			}
		}
		// super(...): the constructor of the enclosing class's base.
		if slices.Contains(l.Super, name) && encl != nil && encl.Container != "" {
			if res, ok := rv.superCall(f, r, encl); ok {
				return res
			}
		}
		// The file's own top-level definitions.
		if ts := pick(f, name, func(d *lang.Def) bool { return want(d) && !d.Member() }); len(ts) > 0 {
			return settle(f, lang.Exact, ts, "same file")
		}
		if res, ok := rv.viaNameImport(f, name, want); ok {
			return res
		}
		if res, ok := rv.viaModuleValue(f, name, want); ok {
			return res
		}
		if res, ok := rv.viaStarImport(f, name, want); ok {
			return res
		}
		if l.Scope == "directory" {
			if ts := rv.inScope(f, name, func(d *lang.Def) bool { return want(d) && !d.Member() }); len(ts) > 0 {
				return settle(f, lang.Exact, ts, "same package")
			}
		}
		if res, ok := rv.viaIncludes(f, name, want); ok {
			return res
		}
		if l.IsBuiltin(name) {
			return Resolution{Class: lang.Unresolved, Why: "builtin"}
		}
		return rv.byName(lazy, f, r, func(d *lang.Def) bool { return want(d) && !d.Member() })
	}
	recv := f.RefReceiver(r)
	// self.m(), this.m(), or a Go method's own receiver; an arrow
	// function's this is the one of the method around it.
	self := encl
	if encl != nil && encl.Self == lang.LexicalSelf && l.IsSelf(recv) && !f.Rebound(recv, r.Encl, r.At) {
		if o := f.Outer(r.Encl); o >= 0 && f.Defs[o].Container != "" && lang.FunctionLike(f.Defs[o].Kind) {
			self = &f.Defs[o]
		}
	}
	if self != nil && self.Container != "" && (l.IsSelf(recv) || (self.Self != "" && recv == self.Self)) && !f.Rebound(recv, r.Encl, r.At) {
		if ts := rv.inScope(f, name, func(d *lang.Def) bool { return want(d) && d.Container == self.Container }); len(ts) > 0 {
			return settle(f, lang.Exact, ts, "same class")
		}
	}
	// this.m() in an object literal's own method: this is the literal.
	// Which literal is told by position only (the records hold no
	// literal's extent: two literals passed to two calls in a row look
	// like one), so the edge is a candidate ranked alone, never exact.
	if encl != nil && encl.Container == "" && encl.Kind == "method" && l.IsSelf(recv) && !f.Rebound(recv, r.Encl, r.At) {
		if ts := literalMethods(f, r.Encl, name, want); len(ts) == 1 {
			return Resolution{Class: lang.Candidate, Targets: ts, Reasons: []string{"this is the object literal the method is in, told by the method's position (same column, nothing declared between)"}}
		}
	}
	// A receiver whose type the source declares: a method of that type
	// (or of what it embeds or extends).
	res, hint, typed := rv.viaType(f, r, recv, name, want, lazy)
	if typed {
		return res
	}
	// A receiver that is a local variable or parameter names a value whose
	// type the index does not know, whatever package or type shares its
	// name.
	if hint != nil || f.BoundAround(FirstSegment(recv), r.Encl, r.At) {
		// self.h set to a Handler() in one method and to a parameter in
		// another: Handler's methods rank first, the call staying a
		// candidate.
		if hint == nil {
			if soft := rv.assignedHint(f, r, recv); len(soft) > 0 {
				return rv.byNameHow(lazy, f, r, rv.membersElseModules(l, name, want), soft, "the receiver is assigned a ")
			}
		}
		return rv.byNameHint(lazy, f, r, rv.membersElseModules(l, name, want), hint)
	}
	// exports.f() inside its own module.
	if slices.Contains(l.ModuleSelf, recv) && !f.Bound(FirstSegment(recv), r.Encl, r.At) {
		if ts := pick(f, name, func(d *lang.Def) bool { return want(d) && !d.Member() && !d.Local }); len(ts) > 0 {
			return settle(f, lang.Exact, ts, "this module's own")
		}
	}
	// pkg.F() through an import of a module.
	if files, module, bound := rv.moduleBinding(f, recv); bound {
		if files == nil {
			return Resolution{Class: lang.Unresolved, Why: "external: " + module}
		}
		if ts := rv.exportedBy(files, name, want); len(ts) > 0 {
			return settle(f, lang.Exact, ts, "qualified import")
		}
		return Resolution{Class: lang.Unresolved, Why: "no " + name + " in " + module}
	}
	// ns::f(), Geo.area(): a namespace or module named by the receiver.
	if res, ok := rv.namespaceMember(f, recv, name, want); ok {
		return res
	}
	// Type.M(): a class named by the receiver.
	if ts := rv.typeMembers(f, recv, name, want); len(ts) > 0 {
		return settle(f, lang.Exact, ts, "member of "+recv)
	}
	// mod.Type.M(): a class of an imported module, and what it extends.
	if ts := rv.moduleTypeMembers(f, r, recv, name, want); len(ts) > 0 {
		return settle(f, lang.Exact, ts, "member of "+recv)
	}
	// console.log(), Math.max(), Vec::new(): an object the language
	// defines, unless the file defines that name itself.
	// super().m() (Python's super is a builtin) is a parent class's m: by
	// name, below.
	if first := FirstSegment(recv); l.IsBuiltin(first) && !strings.HasPrefix(recv, "super(") && len(pick(f, first, func(*lang.Def) bool { return true })) == 0 {
		return Resolution{Class: lang.Unresolved, Why: "builtin"}
	}
	return rv.byName(lazy, f, r, rv.membersElseModules(l, name, want))
}

// membersElseModules is the filter of a receiver call's candidates: the
// members of that name, or, when the language has none, its module-level
// functions, where a variable may hold a module (m = mod; m.f()).
func (rv *Resolver) membersElseModules(l *lang.Language, name string, want func(*lang.Def) bool) func(*lang.Def) bool {
	member := func(d *lang.Def) bool { return want(d) && d.Member() }
	if !l.ModuleValues {
		return member
	}
	for _, id := range rv.s.Tables(l).Defs.Get(name) {
		g := rv.s.ByID(id)
		if len(pick(g, name, member)) > 0 {
			return member
		}
	}
	return func(d *lang.Def) bool { return want(d) && lang.FunctionLike(d.Kind) && !d.Member() && !d.Local }
}

// namespaceMember resolves ns::name when the receiver is a namespace (or
// inline module) some definition lives in: top-level definitions first
// (a class, not its constructor), the file's own before others.
func (rv *Resolver) namespaceMember(f *snap.Entry, recv, name string, ok func(*lang.Def) bool) (Resolution, bool) {
	scope := strings.ReplaceAll(recv, "::", ".")
	if strings.ContainsAny(scope, "()[]{}") {
		return Resolution{}, false
	}
	var all []snap.Target
	for _, id := range rv.s.Tables(f.Lang).Defs.Get(name) {
		g := rv.s.ByID(id)
		for _, i := range g.DefsNamed(name) {
			d := &g.Defs[i]
			if ok(d) && (d.Scope == scope || strings.HasSuffix(d.Scope, "."+scope)) {
				all = append(all, snap.Target{File: g, Def: i})
			}
		}
	}
	if len(all) == 0 {
		return Resolution{}, false
	}
	top := all[:0:0]
	for _, t := range all {
		if !t.D().Member() {
			top = append(top, t)
		}
	}
	if len(top) > 0 {
		all = top
	}
	return settle(f, lang.Exact, all, "in "+recv), true
}

// firstSegment is the receiver's first name: console in console.log, std
// in std::mem.
func FirstSegment(recv string) string {
	if i := strings.IndexAny(recv, ".:([{"); i >= 0 {
		return recv[:i]
	}
	return recv
}

// inVariant keeps the definitions a file of f's variant can reach, when
// there are several and some are built for other variants.
func inVariant(f *snap.Entry, ts []snap.Target) []snap.Target {
	if len(ts) < 2 || f.Lang.Variants == "" {
		return ts
	}
	mine := f.Lang.Variant(f.Rel)
	out := ts[:0:0]
	for _, t := range ts {
		if mine.Compatible(t.File.Lang.Variant(t.File.Rel)) {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return ts
	}
	return out
}

// settle returns an exact (or import) resolution, or candidates when there
// are several definitions (overloads, duplicates).
//
// Definitions built only for other variants than f's (x_windows.go from
// x_linux.go) are left out first.
func settle(f *snap.Entry, class string, ts []snap.Target, reason string) Resolution {
	ts = inVariant(f, ts)
	if len(ts) == 1 {
		return Resolution{Class: class, Targets: ts}
	}
	if branches(f.Lang, ts) {
		return Resolution{Class: class, Targets: ts, Reason: "one function, defined once in each of " + itoa(len(ts)) + " preprocessor branches of " + ts[0].File.Rel}
	}
	if f.Lang.Variants != "" {
		// The one built on this system first (syscall_unix.go's, by its
		// //go:build line, before net_js.go's).
		ts = slices.Clone(ts)
		slices.SortStableFunc(ts, func(a, b snap.Target) int { return hostRank(a.File) - hostRank(b.File) })
	}
	reasons := make([]string, len(ts))
	for i, t := range ts {
		reasons[i] = reason + ", one of " + itoa(len(ts)) + " with this name"
		if t.File.Host == lang.HostYes {
			reasons[i] += "; built on this system"
		}
	}
	return Resolution{Class: lang.Candidate, Targets: ts, Reasons: reasons}
}

// branches says ts are one function written once per preprocessor
// branch: functions of one name in one file of a language with no
// overloads (language.json's one_definition).
func branches(l *lang.Language, ts []snap.Target) bool {
	if !l.OneDefinition {
		return false
	}
	for _, t := range ts {
		if d := t.D(); t.File != ts[0].File || d.Kind != "function" || d.Local {
			return false
		}
	}
	return true
}

// hostRank orders variants: built on this system by name or //go:build
// line first, then files that say nothing, then files built elsewhere.
func hostRank(g *snap.Entry) int {
	v := g.Lang.Variant(g.Rel)
	switch {
	case g.Host == lang.HostNo || !v.Compatible(lang.Host):
		return 2
	case g.Host == lang.HostYes || !v.Any():
		return 0
	}
	return 1
}

func pick(f *snap.Entry, name string, ok func(*lang.Def) bool) []snap.Target {
	var out []snap.Target
	for _, i := range f.DefsNamed(name) {
		if ok(&f.Defs[i]) {
			out = append(out, snap.Target{File: f, Def: i})
		}
	}
	return out
}

func defsIn(files []*snap.Entry, name string, ok func(*lang.Def) bool) []snap.Target {
	var out []snap.Target
	for _, g := range files {
		out = append(out, pick(g, name, ok)...)
	}
	return out
}

// inScope looks name up in the files that share f's scope: f alone, or
// its folder (and package, when the language names one).
func (rv *Resolver) inScope(f *snap.Entry, name string, ok func(*lang.Def) bool) []snap.Target {
	if f.Lang.Scope != "directory" {
		return pick(f, name, ok)
	}
	var out []snap.Target
	for _, id := range rv.s.Tables(f.Lang).Defs.Get(name) {
		g := rv.s.ByID(id)
		if g.Dir == f.Dir && g.Package == f.Package {
			out = append(out, pick(g, name, ok)...)
		}
	}
	return out
}

// importedName is the name an import binds in the module's files: the
// definition the module's default export names for a default import
// (else, as the usual export default class D, the local name itself).
func importedName(files []*snap.Entry, im lang.Import) string {
	if im.Name != lang.DefaultImport {
		return im.Name
	}
	for _, g := range files {
		if g.Default != "" {
			return g.Default
		}
	}
	return im.Local
}

// viaNameImport resolves a bare name bound by a `from m import name`-style
// import.
func (rv *Resolver) viaNameImport(f *snap.Entry, name string, ok func(*lang.Def) bool) (Resolution, bool) {
	for _, im := range f.Imports {
		if im.Name == "" || im.Local != name {
			continue
		}
		files, known := rv.ModuleFiles(f, im.Module)
		if !known {
			return Resolution{Class: lang.Unresolved, Why: "external: " + im.Module}, true
		}
		if ts := rv.exportedBy(files, importedName(files, im), ok); len(ts) > 0 {
			return settle(f, lang.ViaImport, ts, "imported"), true
		}
		return Resolution{Class: lang.Unresolved, Why: "imported from " + im.Module + ", not defined there in the index"}, true
	}
	return Resolution{}, false
}

// viaStarImport resolves a bare name through imports of every name of a
// module: Go's import . "m", Python's from m import *, Java's a.b.*.
func (rv *Resolver) viaStarImport(f *snap.Entry, name string, ok func(*lang.Def) bool) (Resolution, bool) {
	var files []*snap.Entry
	for _, im := range f.Imports {
		if im.Local != "." && im.Local != "*" {
			continue
		}
		if fs, known := rv.ModuleFiles(f, im.Module); known {
			files = append(files, fs...)
		}
	}
	if ts := rv.topLevelOf(files, name, ok); len(ts) > 0 {
		return settle(f, lang.ViaImport, ts, "imported with all of its module"), true
	}
	return Resolution{}, false
}

// exportedBy finds name in a module's files: topLevelOf, then members of
// that name.
func (rv *Resolver) exportedBy(files []*snap.Entry, name string, ok func(*lang.Def) bool) []snap.Target {
	if ts := rv.topLevelOf(files, name, ok); len(ts) > 0 {
		return ts
	}
	return moduleDefsIn(files, name, ok)
}

// topLevelOf finds name among a module's own names: its top-level
// definitions, then, for a language whose modules re-export what they
// import, through the files' own imports. A definition inside a function
// or a value (a method of an object literal) is not the module's.
func (rv *Resolver) topLevelOf(files []*snap.Entry, name string, ok func(*lang.Def) bool) []snap.Target {
	top := func(d *lang.Def) bool { return ok(d) && !d.Member() }
	if ts := moduleDefsIn(files, name, top); len(ts) > 0 {
		return ts
	}
	return rv.reexported(files, name, top, 0, map[reexportKey]bool{})
}

// moduleDefsIn is defsIn without the definitions nested in a function or
// a value.
func moduleDefsIn(files []*snap.Entry, name string, ok func(*lang.Def) bool) []snap.Target {
	var out []snap.Target
	for _, g := range files {
		for _, i := range g.DefsNamed(name) {
			if ok(&g.Defs[i]) && !g.Defs[i].Local {
				out = append(out, snap.Target{File: g, Def: i})
			}
		}
	}
	return out
}

type reexportKey struct {
	f    *snap.Entry
	name string
}

// maxReexport bounds a chain of re-exports (index.ts re-exporting a
// folder's index.ts ...); seen ends cycles.
const maxReexport = 8

// reexported follows name through the imports of files that bind it: a
// named import (from .impl import f; export {f} from './impl') or an
// import of every name (from .impl import *; export * from './impl').
func (rv *Resolver) reexported(files []*snap.Entry, name string, ok func(*lang.Def) bool, depth int, seen map[reexportKey]bool) []snap.Target {
	var out []snap.Target
	for _, g := range files {
		if !g.Lang.Reexports || seen[reexportKey{g, name}] {
			continue
		}
		seen[reexportKey{g, name}] = true
		for _, im := range g.Imports {
			next := ""
			switch {
			case im.Name != "" && im.Local == name:
				next = im.Name
			case im.Local == "*":
				next = name
			default:
				continue
			}
			fs, known := rv.ModuleFiles(g, im.Module)
			if next == lang.DefaultImport {
				next = importedName(fs, im)
			}
			if !known {
				continue
			}
			if ts := moduleDefsIn(fs, next, ok); len(ts) > 0 {
				out = append(out, ts...)
			} else if depth+1 < maxReexport {
				out = append(out, rv.reexported(fs, next, ok, depth+1, seen)...)
			}
		}
	}
	return dedupeTargets(out)
}

func dedupeTargets(ts []snap.Target) []snap.Target {
	if len(ts) < 2 {
		return ts
	}
	seen := map[snap.Target]bool{}
	out := ts[:0]
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// viaIncludes resolves a bare name through included headers (C, C++): the
// header itself and the sources beside it with its base name.
func (rv *Resolver) viaIncludes(f *snap.Entry, name string, ok func(*lang.Def) bool) (Resolution, bool) {
	if !f.Lang.Rule().Textual() {
		return Resolution{}, false
	}
	var files []*snap.Entry
	for _, im := range f.Imports {
		hs, known := rv.ModuleFiles(f, im.Module)
		if !known {
			continue
		}
		for _, h := range hs {
			files = append(files, h)
			stem := strings.TrimSuffix(h.Rel, path.Ext(h.Rel))
			for _, g := range rv.dirOf(f.Lang, h.Dir) {
				if g != h && strings.TrimSuffix(g.Rel, path.Ext(g.Rel)) == stem {
					files = append(files, g)
				}
			}
		}
	}
	ts := defsIn(files, name, func(d *lang.Def) bool { return ok(d) && !d.Member() })
	if len(ts) == 0 {
		ts = defsIn(files, name, ok)
	}
	if len(ts) > 0 {
		return settle(f, lang.ViaImport, ts, "in an included file"), true
	}
	return rv.viaIncludedIncludes(f, name, ok)
}

// viaIncludedIncludes resolves a bare name through the headers the
// included ones include in turn, as the preprocessor does (tree_cursor.c
// includes tree_cursor.h, which includes subtree.h), and the sources
// beside each with its base name. It runs only when no file included
// directly defines the name, so what those give stays as it was.
func (rv *Resolver) viaIncludedIncludes(f *snap.Entry, name string, ok func(*lang.Def) bool) (Resolution, bool) {
	ids := rv.s.Tables(f.Lang).Defs.Get(name)
	if len(ids) == 0 {
		return Resolution{}, false
	}
	reach := rv.included(f)
	var files []*snap.Entry
	for _, id := range ids {
		if g := rv.s.ByID(id); g != nil && g != f && reach[g.ID] {
			files = append(files, g)
		}
	}
	ts := defsIn(files, name, func(d *lang.Def) bool { return ok(d) && !d.Member() })
	if len(ts) == 0 {
		return Resolution{}, false
	}
	return settle(f, lang.ViaImport, ts, "in a file an included header includes"), true
}

// maxIncluded bounds the files the include closures cached for one
// snapshot hold in all; past it the cache starts again.
const maxIncluded = 1 << 20

// included is the set of files f's includes reach, followed through the
// headers' own includes, with the sources beside each header (x.c for
// x.h; their own includes are not followed). Kept for the snapshot.
func (rv *Resolver) included(f *snap.Entry) map[snap.FileID]bool {
	rv.c.mu.Lock()
	reach, ok := rv.c.incl[f.ID]
	rv.c.mu.Unlock()
	if ok {
		return reach
	}
	reach = map[snap.FileID]bool{}
	seen := map[*snap.Entry]bool{f: true}
	queue := []*snap.Entry{f}
	for len(queue) > 0 {
		g := queue[0]
		queue = queue[1:]
		for _, im := range g.Imports {
			hs, known := rv.ModuleFiles(g, im.Module)
			if !known {
				continue
			}
			for _, h := range hs {
				if seen[h] {
					continue
				}
				seen[h] = true
				reach[h.ID] = true
				queue = append(queue, h)
				stem := strings.TrimSuffix(h.Rel, path.Ext(h.Rel))
				for _, s := range rv.dirOf(f.Lang, h.Dir) {
					if s != h && strings.TrimSuffix(s.Rel, path.Ext(s.Rel)) == stem {
						reach[s.ID] = true
					}
				}
			}
		}
	}
	rv.c.mu.Lock()
	if rv.c.incl == nil || rv.c.nincl > maxIncluded {
		rv.c.incl, rv.c.nincl = map[snap.FileID]map[snap.FileID]bool{}, 0
	}
	rv.c.incl[f.ID] = reach
	rv.c.nincl += len(reach)
	rv.c.mu.Unlock()
	return reach
}

// moduleBinding says whether recv names a module the file imports, and the
// module's files (nil when it is outside the index).
func (rv *Resolver) moduleBinding(f *snap.Entry, recv string) ([]*snap.Entry, string, bool) {
	if module, ok := rv.scope(f).bindings[recv]; ok {
		files, known := rv.ModuleFiles(f, module)
		if !known {
			files = nil
		}
		return files, module, true
	}
	// A path written out in full: crate::a::b::f(), a.b.f(); crate::f().
	if f.Lang.Rule().IsPath(recv) {
		if files, ok := rv.ModuleFiles(f, recv); ok {
			return files, recv, true
		}
	}
	return nil, "", false
}

// bindings maps the local names f's imports bind to the modules they
// name (the first import of a name wins).
func (rv *Resolver) bindings(f *snap.Entry) map[string]string {
	out := map[string]string{}
	for _, im := range f.Imports {
		if im.Name != "" {
			// from m import sub: sub may be a module itself; a name from a
			// module outside the index is outside it too (from os import
			// path; use serde::Serialize).
			if _, seen := out[im.Local]; seen {
				continue
			}
			joined := joinModule(f.Lang, im.Module, im.Name)
			if _, ok := rv.ModuleFiles(f, joined); ok {
				out[im.Local] = joined
			} else if _, known := rv.ModuleFiles(f, im.Module); !known {
				out[im.Local] = joined
			}
			continue
		}
		local := im.Local
		if local == "" {
			files, _ := rv.ModuleFiles(f, im.Module)
			local = rv.defaultLocal(f.Lang, im.Module, files)
		}
		if local == "_" || local == "." || local == "*" || local == "" {
			continue
		}
		if _, seen := out[local]; !seen {
			out[local] = im.Module
		}
	}
	return out
}

// joinModule names a module inside another: a.b + c is a.b.c, but the
// relative module "." + c is .c and ".." + c is ..c.
func joinModule(l *lang.Language, module, name string) string {
	if strings.Trim(module, ".") == "" {
		return module + name
	}
	return module + moduleSep(l) + name
}

func moduleSep(l *lang.Language) string { return l.Rule().Separator() }

// defaultLocal is the name an import without an alias binds: the
// package's declared name (Go), else the module path's last element.
func (rv *Resolver) defaultLocal(l *lang.Language, module string, files []*snap.Entry) string {
	pkgs := make([]string, len(files))
	for i, g := range files {
		pkgs[i] = g.Package
	}
	return l.Rule().DefaultLocal(module, pkgs)
}

// ModuleFiles maps an import path written in f to the files it names, by
// the language's import rule; known is false when it names nothing in the
// index (a standard or third-party module). The list is the cache's:
// never change it.
func (rv *Resolver) ModuleFiles(f *snap.Entry, module string) ([]*snap.Entry, bool) {
	k := modKey{f.Rel, module}
	rv.c.mu.Lock()
	m, ok := rv.c.mods[k]
	rv.c.mu.Unlock()
	if ok {
		return rv.current(m.files), m.known
	}
	ids, known := f.Lang.Rule().Files(rv.s, f.Lang, f.Rel, module)
	m = modFiles{rv.s.Entries(ids), known}
	rv.c.mu.Lock()
	if rv.c.mods == nil || len(rv.c.mods) > 100000 {
		rv.c.mods = map[modKey]modFiles{}
	}
	rv.c.mods[k] = m
	rv.c.mu.Unlock()
	return m.files, m.known
}

// current is files with the entries this snapshot has for them: a list
// kept from an earlier snapshot of the same files (ModGen) may hold the
// entry a file had before it was read again.
func (rv *Resolver) current(files []*snap.Entry) []*snap.Entry {
	for i, e := range files {
		if rv.s.ByID(e.ID) != e {
			out := slices.Clone(files)
			for j := i; j < len(out); j++ {
				out[j] = rv.s.ByID(out[j].ID)
			}
			return out
		}
	}
	return files
}

// literalMethods lists the methods named name of the object literal
// whose method e is (const o = {m() {}, n() { this.m() }}): methods with
// no class around them whose innermost enclosing definition is e's, with
// nothing else of that definition declared between the two (const p =
// {run() {…}}; const q = {helper() {…}} in one function are two
// literals), written on lines of their own at e's column (a literal
// nested in a property, sub: {n() {…}}, is indented further; one written
// on one line is left to the ranking).
func literalMethods(f *snap.Entry, e int32, name string, want func(*lang.Def) bool) []snap.Target {
	// Each definition's innermost enclosing one, in one pass (Defs are by
	// start, outer first): a stack of those around the last one.
	par := make([]int32, len(f.Defs))
	stack := make([]int32, 0, 8)
	for i := range f.Defs {
		d := &f.Defs[i]
		for len(stack) > 0 {
			if p := &f.Defs[stack[len(stack)-1]]; p.Start <= d.Start && d.End <= p.End {
				break
			}
			stack = stack[:len(stack)-1]
		}
		par[i] = -1
		if len(stack) > 0 {
			par[i] = stack[len(stack)-1]
		}
		stack = append(stack, int32(i))
	}
	parent := func(i int32) int32 { return par[i] }
	literal := func(d *lang.Def) bool { return d.Kind == "method" && d.Container == "" }
	pe := parent(e)
	var out []snap.Target
	for _, i := range f.DefsNamed(name) {
		d := &f.Defs[i]
		if i == e || !literal(d) || !want(d) || parent(i) != pe || d.Col != f.Defs[e].Col || d.Line == f.Defs[e].Line {
			continue
		}
		lo, hi := min(d.End, f.Defs[e].End), max(d.Start, f.Defs[e].Start)
		apart := false
		for k := range f.Defs {
			if o := &f.Defs[k]; int32(k) != i && int32(k) != e && lo <= o.Start && o.Start < hi && !literal(o) && parent(int32(k)) == pe {
				apart = true
				break
			}
		}
		for k := range f.Locals {
			if lc := &f.Locals[k]; lc.Encl == pe && lo <= lc.At && lc.At < hi {
				apart = true
				break
			}
		}
		if !apart {
			out = append(out, snap.Target{File: f, Def: i})
		}
	}
	return out
}

// typeMembers finds members called name of the class-like definition recv
// names, when recv is a type in scope or imported.
func (rv *Resolver) typeMembers(f *snap.Entry, recv, name string, ok func(*lang.Def) bool) []snap.Target {
	if strings.ContainsAny(recv, ".()[]:") {
		return nil
	}
	// A function holds members too where the language assigns them to it
	// (X.m = function () {}).
	isType := func(d *lang.Def) bool { return lang.ClassLike(d.Kind) || d.Kind == "function" && !d.Member() }
	types := rv.inScope(f, recv, isType)
	if len(types) == 0 {
		types = pick(f, recv, isType)
	}
	if len(types) == 0 {
		for _, im := range f.Imports {
			star := im.Local == "*" || im.Local == "."
			if im.Local != recv && !star || !star && im.Name == "" {
				continue
			}
			files, known := rv.ModuleFiles(f, im.Module)
			if !known {
				continue
			}
			if star {
				types = append(types, defsIn(files, recv, isType)...)
			} else {
				types = append(types, defsIn(files, importedName(files, im), isType)...)
			}
		}
	}
	var out []snap.Target
	seen := map[*snap.Entry]bool{}
	for _, t := range types {
		// Members live in the type's file, or (Go) beside it.
		files := []*snap.Entry{t.File}
		if f.Lang.Scope == "directory" {
			files = rv.dirOf(f.Lang, t.File.Dir)
		}
		for _, g := range files {
			if seen[g] {
				continue
			}
			seen[g] = true
			out = append(out, pick(g, name, func(d *lang.Def) bool { return ok(d) && d.Container == t.D().Name })...)
		}
	}
	return out
}

// maxCandidates bounds the candidates a resolution lists (callees, dumps).
const maxCandidates = 64

// Pending is a name-only resolution whose candidates are ranked only when
// asked (callers needs one candidate's rank, not the whole list).
type Pending struct {
	f    *snap.Entry
	r    *lang.Ref
	ok   func(*lang.Def) bool
	hint []snap.Target // the receiver's declared type, whose members rank first
	// hintHow says how hint was found, before the type's name in a
	// candidate's reason (default: a declared type).
	hintHow string
	// note ends every candidate's reason: why a call of a declared type
	// is still name-only (dispatch the index cannot see into).
	note string
	// noIface, for dispatch: a method of an interface the snapshot
	// declares is not a candidate (an interface's own method never runs).
	// A flag, not a filter holding the resolver: a site kept along the
	// snapshots must not keep an old snapshot alive.
	noIface bool
}

// Dispatch says whether p's candidates are what a call through a
// declared type the index cannot see into may run (io.Writer's Write):
// not a guess at the receiver's type but dispatch, each a possible runner.
func (p *Pending) Dispatch() bool { return p.note != "" }

// Accepts says whether d is a definition p's candidates are among.
func (rv *Resolver) Accepts(p *Pending, d *lang.Def) bool {
	return p.ok(d) && (!p.noIface || !rv.interfaceNamed(p.f.Lang, d.Container))
}

// Scored is one candidate of a Pending resolution with its score. Its
// reason is made only when asked (reasonOf): callers scores every
// candidate of a site and reads one reason.
type Scored struct {
	t     snap.Target
	score int
	// what the score was made of, for its reason
	place           int8 // 0 name only, 1 imported, 2 same directory, 3 same file
	other, built    bool // built for another system; for this one
	hint, resembled bool // the receiver's declared type; its name
}

// Scores lists p's candidates with their scores, unsorted, for RankOf.
func (rv *Resolver) Scores(p *Pending) []Scored { return rv.scores(p) }

// byName ranks every definition with the reference's name in the language.
func (rv *Resolver) byName(lazy bool, f *snap.Entry, r *lang.Ref, ok func(*lang.Def) bool) Resolution {
	return rv.byNameHint(lazy, f, r, ok, nil)
}

// byNameHint is byName with the receiver's declared type.
func (rv *Resolver) byNameHint(lazy bool, f *snap.Entry, r *lang.Ref, ok func(*lang.Def) bool, hint []snap.Target) Resolution {
	return rv.byNameHow(lazy, f, r, ok, hint, "")
}

// byNameHow is byNameHint saying how the hint was found.
func (rv *Resolver) byNameHow(lazy bool, f *snap.Entry, r *lang.Ref, ok func(*lang.Def) bool, hint []snap.Target, how string) Resolution {
	p := &Pending{f: f, r: r, ok: ok, hint: hint, hintHow: how}
	if lazy {
		if len(rv.s.Tables(f.Lang).Defs.Get(f.RefName(r))) == 0 {
			return unresolvedName(f, r)
		}
		return Resolution{Class: lang.Candidate, Pending: p}
	}
	return rv.rankAll(p)
}

func unresolvedName(f *snap.Entry, r *lang.Ref) Resolution {
	name := f.RefName(r)
	if f.Lang.IsBuiltin(name) {
		return Resolution{Class: lang.Unresolved, Why: "builtin"}
	}
	return Resolution{Class: lang.Unresolved, Why: "no definition named " + name + " in the index"}
}

// scores lists p's candidates with their scores, unsorted.
func (rv *Resolver) scores(p *Pending) []Scored {
	f, r := p.f, p.r
	imported := rv.scope(f).imported
	var all []Scored
	name, recv := f.RefName(r), f.RefReceiver(r)
	var mine lang.Variant
	if f.Lang.Variants != "" {
		mine = f.Lang.Variant(f.Rel)
	}
	for _, nd := range rv.named(f.Lang, name) {
		g, d := nd.t.File, nd.t.D()
		if !rv.Accepts(p, d) {
			continue
		}
		s := Scored{t: nd.t}
		switch {
		case g == f:
			s.score, s.place = 600, 3
		case g.Dir == f.Dir:
			s.score, s.place = 500, 2
		case imported[g.Rel]:
			s.score, s.place = 400, 1
		}
		s.score += 10 * sharedDirs(f.Dir, g.Dir)
		if f.Lang.Variants != "" {
			switch {
			case !mine.Compatible(nd.variant):
				s.score -= 300
				s.other = true
			case nd.host == 0:
				// Built for this system by its name or its //go:build line.
				s.score += 5
				s.built = g.Host == lang.HostYes
			}
		}
		// A declared receiver type beats file proximity; the
		// receiver's name only breaks ties.
		if d.Container != "" && hinted(p.hint, d.Container) {
			s.score += 1000
			s.hint = true
		} else if recv != "" && d.Container != "" && resembles(recv, d.Container) {
			s.score++
			s.resembled = true
		}
		all = append(all, s)
	}
	return all
}

// reasonOf says why s is ranked where it is; full adds what only breaks
// ties or goes without saying (built on this system, the receiver's
// name), which RankOf's reader does not get.
func reasonOf(p *Pending, s *Scored, full bool) string {
	reason := [...]string{"name only", "in a module this file imports", "same directory", "same file"}[s.place]
	if s.other {
		reason += "; built for another system"
	} else if s.built && full {
		reason += "; built on this system"
	}
	if c := s.t.D().Container; s.hint {
		if p.hintHow != "" {
			reason += "; " + p.hintHow + c
		} else {
			reason += "; the receiver's declared type embeds or is " + c
		}
	} else if s.resembled && full {
		reason += "; receiver looks like " + c
	}
	if p.note != "" {
		reason += "; " + p.note
	}
	return reason
}

// namedDef is a definition of a name, with what ranking reads of its
// file worked out once.
type namedDef struct {
	t       snap.Target
	variant lang.Variant
	host    int // hostRank
}

// namedAt is the definitions of one name in one language, in path order,
// and the entries they were read from: valid in any snapshot whose Defs
// table lists the same files with the same entries.
type namedAt struct {
	files []*snap.Entry
	defs  []namedDef
}

type nameKey struct {
	l    *lang.Language
	name string
}

// named lists the definitions of name in language l, what a name-only
// reference's candidates are drawn from. The lists are shared along the
// snapshots (Cache.named) and each is made again only when a file
// defining the name changed, came or went.
func (rv *Resolver) named(l *lang.Language, name string) []namedDef {
	ids := rv.s.Tables(l).Defs.Get(name)
	k := nameKey{l, name}
	if v, ok := rv.c.named.m.Load(k); ok {
		if at := v.(*namedAt); slices.EqualFunc(at.files, ids, func(e *snap.Entry, id snap.FileID) bool { return rv.s.ByID(id) == e }) {
			return at.defs
		}
	}
	at := &namedAt{files: rv.s.Entries(ids)}
	for _, g := range at.files {
		var v lang.Variant
		if l.Variants != "" {
			v = g.Lang.Variant(g.Rel)
		}
		h := hostRank(g)
		for _, i := range g.DefsNamed(name) {
			at.defs = append(at.defs, namedDef{t: snap.Target{File: g, Def: i}, variant: v, host: h})
		}
	}
	if _, had := rv.c.named.m.Swap(k, at); !had {
		rv.c.named.n.Add(1)
	}
	return at.defs
}

func before(a, b Scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if a.t.File.Rel != b.t.File.Rel {
		return a.t.File.Rel < b.t.File.Rel
	}
	return a.t.Def < b.t.Def
}

// rankAll resolves a Pending name-only reference in full.
func (rv *Resolver) rankAll(p *Pending) Resolution {
	all := rv.scores(p)
	if len(all) == 0 {
		return unresolvedName(p.f, p.r)
	}
	sort.Slice(all, func(i, j int) bool { return before(all[i], all[j]) })
	res := Resolution{Class: lang.Candidate}
	for i, s := range all {
		if i == maxCandidates {
			res.Reasons[len(res.Reasons)-1] += "; " + itoa(len(all)-maxCandidates) + " more by name"
			break
		}
		res.Targets = append(res.Targets, s.t)
		res.Reasons = append(res.Reasons, reasonOf(p, &all[i], true))
	}
	return res
}

// rankOf returns t's place (1-based) among p's candidates, their number
// and t's reason; 0 when t is not among them. Callers counts every place,
// however far down: a method called on an interface is a candidate of
// every method of that name, and dropping the low ranks would drop those
// call sites.
func (rv *Resolver) RankOf(p *Pending, t snap.Target, all []Scored) (int, int, string) {
	var mine *Scored
	for i := range all {
		if all[i].t == t {
			mine = &all[i]
		}
	}
	if mine == nil {
		return 0, len(all), ""
	}
	rank := 1
	for i := range all {
		if all[i].t != t && before(all[i], *mine) {
			rank++
		}
	}
	reason := reasonOf(p, mine, false)
	if recv := p.f.RefReceiver(p.r); recv != "" && mine.t.D().Container != "" && resembles(recv, mine.t.D().Container) {
		reason += "; receiver looks like " + mine.t.D().Container
	}
	return rank, len(all), reason
}

func hinted(hint []snap.Target, container string) bool {
	for _, t := range hint {
		if t.D().Name == container {
			return true
		}
	}
	return false
}

// sharedDirs counts the leading folders two slash paths share.
func sharedDirs(a, b string) int {
	n := 0
	for {
		ia, ib := strings.IndexByte(a, '/'), strings.IndexByte(b, '/')
		ea, eb := a, b
		if ia >= 0 {
			ea = a[:ia]
		}
		if ib >= 0 {
			eb = b[:ib]
		}
		if ea != eb {
			return n
		}
		n++
		if ia < 0 || ib < 0 {
			return n
		}
		a, b = a[ia+1:], b[ib+1:]
	}
}

// resembles says whether a receiver expression's last word looks like a
// type name (srv and Server, conn and Conn).
func resembles(recv, typ string) bool {
	if i := strings.LastIndexAny(recv, ".:"); i >= 0 {
		recv = recv[i+1:]
	}
	if len(recv) < 2 {
		return false
	}
	return containsFold(typ, recv) || containsFold(recv, typ)
}

// containsFold is strings.Contains ignoring ASCII case, without
// allocating.
func containsFold(s, sub string) bool {
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		if strings.EqualFold(s[i:i+n], sub) {
			return true
		}
	}
	return false
}

func itoa(n int) string { return strconv.Itoa(n) }

// fileScope is what a file's imports make visible: names, not records.
type fileScope struct {
	imported map[string]bool   // files its imports name, by Rel
	bindings map[string]string // local name → module
}

// Bindings maps the local names f's imports bind to the modules they
// name.
func (rv *Resolver) Bindings(f *snap.Entry) map[string]string { return rv.scope(f).bindings }

func (rv *Resolver) scope(f *snap.Entry) *fileScope {
	rv.c.mu.Lock()
	e := rv.c.imp[f]
	rv.c.mu.Unlock()
	if e != nil {
		return e
	}
	e = &fileScope{imported: map[string]bool{}, bindings: rv.bindings(f)}
	for _, im := range f.Imports {
		if fs, known := rv.ModuleFiles(f, im.Module); known {
			for _, g := range fs {
				e.imported[g.Rel] = true
			}
		}
	}
	rv.c.mu.Lock()
	if rv.c.imp == nil || len(rv.c.imp) > 50000 {
		rv.c.imp = map[*snap.Entry]*fileScope{}
	}
	rv.c.imp[f] = e
	rv.c.mu.Unlock()
	return e
}
