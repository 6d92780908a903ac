// Package scope looks a name up as the file it is written in sees it
// outside its functions — its own definitions, its folder's, what its
// imports and includes name, bind, rename and re-export — against one
// snapshot, and keeps for that snapshot what costs a pass over imports to
// know (Scopes), handing it on to the next snapshot's where still valid.
package scope

import (
	"maps"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/graph/resolve/outcome"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// What a file sees outside its functions: its own names, its folder's,
// the files its imports and includes name and the names they bind or
// rename.

// Scopes looks names up as a file sees them and keeps, for one
// snapshot, what that costs a pass over imports to know: each file's
// scope, the files an import path names, the files each file's includes
// reach, and the renames of each language's imports.
type Scopes struct {
	s  *snap.Snapshot
	mu sync.Mutex
	// imp: a file's scope, valid while the snapshot's ModGen is the same
	// (scopes hold paths and names, not entries).
	imp map[*snap.Entry]*fileScope
	// mods: the files an import path written in a file names, valid
	// while ModGen is (the entries of files changed since are replaced
	// when read).
	mods map[modKey]modFiles
	// incl: the files each file's includes reach (included), for this
	// snapshot only; nincl counts them.
	incl  map[snap.FileID]map[snap.FileID]bool
	nincl int
	// ren: renames per language, valid while ModGen and every language's
	// ImportsGen are.
	ren map[*lang.Language]map[string][]string

	importsGen uint64 // the sum of the languages' ImportsGen
}

// Init makes sc the scopes of s, empty.
func (sc *Scopes) Init(s *snap.Snapshot) {
	sc.s = s
	for _, l := range s.Langs.All() {
		sc.importsGen += s.Tables(l).ImportsGen
	}
}

// Inherit takes from prev, the scopes of an earlier snapshot, what is
// still valid for sc's.
func (sc *Scopes) Inherit(prev *Scopes) {
	prev.mu.Lock()
	defer prev.mu.Unlock()
	if prev.s.ModGen != sc.s.ModGen {
		return
	}
	sc.imp = maps.Clone(prev.imp)
	sc.mods = maps.Clone(prev.mods) // the same files: ModuleFiles takes each one's entry anew
	if prev.importsGen == sc.importsGen {
		sc.ren = maps.Clone(prev.ren) // the maps in it are never changed
	}
}

// fileScope is what a file's imports make visible: names, not records.
type fileScope struct {
	imported map[string]bool   // files its imports name, by Rel
	bindings map[string]string // local name → module
}

// Bindings maps the local names f's imports bind to the modules they
// name.
func (sc *Scopes) Bindings(f *snap.Entry) map[string]string { return sc.scope(f).bindings }

// Imported is the files f's imports name, by Rel: they rank higher.
func (sc *Scopes) Imported(f *snap.Entry) map[string]bool { return sc.scope(f).imported }

func (sc *Scopes) scope(f *snap.Entry) *fileScope {
	sc.mu.Lock()
	e := sc.imp[f]
	sc.mu.Unlock()
	if e != nil {
		return e
	}
	e = &fileScope{imported: map[string]bool{}, bindings: sc.bindings(f)}
	for _, im := range f.Imports {
		if fs, known := sc.ModuleFiles(f, im.Module); known {
			for _, g := range fs {
				e.imported[g.Rel] = true
			}
		}
	}
	sc.mu.Lock()
	if sc.imp == nil || len(sc.imp) > 50000 {
		sc.imp = map[*snap.Entry]*fileScope{}
	}
	sc.imp[f] = e
	sc.mu.Unlock()
	return e
}

// modKey is an import path as one file writes it.
type modKey struct{ from, module string }

type modFiles struct {
	files []*snap.Entry
	known bool
}

// ModuleFiles maps an import path written in f to the files it names, by
// the language's import rule; known is false when it names nothing in the
// index (a standard or third-party module). The list is the cache's:
// never change it.
func (sc *Scopes) ModuleFiles(f *snap.Entry, module string) ([]*snap.Entry, bool) {
	k := modKey{f.Rel, module}
	sc.mu.Lock()
	m, ok := sc.mods[k]
	sc.mu.Unlock()
	if ok {
		return sc.current(m.files), m.known
	}
	ids, known := f.Lang.Rule().Files(sc.s, f.Lang.Index, f.Rel, module)
	m = modFiles{sc.s.Entries(ids), known}
	sc.mu.Lock()
	if sc.mods == nil || len(sc.mods) > 100000 {
		sc.mods = map[modKey]modFiles{}
	}
	sc.mods[k] = m
	sc.mu.Unlock()
	return m.files, m.known
}

// current is files with the entries this snapshot has for them: a list
// kept from an earlier snapshot of the same files (ModGen) may hold the
// entry a file had before it was read again.
func (sc *Scopes) current(files []*snap.Entry) []*snap.Entry {
	for i, e := range files {
		if sc.s.ByID(e.ID) != e {
			out := slices.Clone(files)
			for j := i; j < len(out); j++ {
				out[j] = sc.s.ByID(out[j].ID)
			}
			return out
		}
	}
	return files
}

// bindings maps the local names f's imports bind to the modules they
// name (the first import of a name wins).
func (sc *Scopes) bindings(f *snap.Entry) map[string]string {
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
			if _, ok := sc.ModuleFiles(f, joined); ok {
				out[im.Local] = joined
			} else if _, known := sc.ModuleFiles(f, im.Module); !known {
				out[im.Local] = joined
			}
			continue
		}
		local := im.Local
		if local == "" {
			files, _ := sc.ModuleFiles(f, im.Module)
			local = sc.defaultLocal(f.Lang, im.Module, files)
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

// ModuleBinding says whether recv names a module the file imports, and the
// module's files (nil when it is outside the index).
func (sc *Scopes) ModuleBinding(f *snap.Entry, recv string) ([]*snap.Entry, string, bool) {
	if module, ok := sc.scope(f).bindings[recv]; ok {
		files, known := sc.ModuleFiles(f, module)
		if !known {
			files = nil
		}
		return files, module, true
	}
	// A path written out in full: crate::a::b::f(), a.b.f(); crate::f().
	if f.Lang.Rule().IsPath(recv) {
		if files, ok := sc.ModuleFiles(f, recv); ok {
			return files, recv, true
		}
	}
	return nil, "", false
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
func (sc *Scopes) defaultLocal(l *lang.Language, module string, files []*snap.Entry) string {
	pkgs := make([]string, len(files))
	for i, g := range files {
		pkgs[i] = g.Package
	}
	return l.Rule().DefaultLocal(module, pkgs)
}

// dirOf lists the files of l in a folder, in path order.
func (sc *Scopes) dirOf(l *lang.Language, dir string) []*snap.Entry {
	return sc.s.Entries(sc.s.Tables(l).Dirs.Get(dir))
}

// InScope looks name up in the files that share f's scope: f alone, or
// its folder (and package, when the language names one).
func (sc *Scopes) InScope(f *snap.Entry, name string, ok func(*record.Def) bool) []snap.Target {
	if f.Lang.Scope != "directory" {
		return outcome.Pick(f, name, ok)
	}
	var out []snap.Target
	for _, id := range sc.s.Tables(f.Lang).Defs.Get(name) {
		g := sc.s.ByID(id)
		if g.Dir == f.Dir && g.Package == f.Package {
			out = append(out, outcome.Pick(g, name, ok)...)
		}
	}
	return out
}

// BareTargets finds a bare name as a file sees it outside any function:
// its own definitions, its imports, its package, its included headers;
// external names the module outside the index an import takes it from.
func (sc *Scopes) BareTargets(f *snap.Entry, name string, ok func(*record.Def) bool) ([]snap.Target, string) {
	if ts := outcome.Pick(f, name, func(d *record.Def) bool { return ok(d) && !d.Member() && !d.Local }); len(ts) > 0 {
		return ts, ""
	}
	if res, found := sc.ViaNameImport(f, name, ok); found {
		if res.Class == lang.Unresolved && strings.HasPrefix(res.Why, "external: ") {
			return nil, strings.TrimPrefix(res.Why, "external: ")
		}
		return res.Targets, ""
	}
	if res, found := sc.ViaModuleValue(f, name, ok); found {
		return res.Targets, ""
	}
	if res, found := sc.ViaStarImport(f, name, ok); found {
		return res.Targets, ""
	}
	if f.Lang.Scope == "directory" {
		if ts := sc.InScope(f, name, func(d *record.Def) bool { return ok(d) && !d.Member() }); len(ts) > 0 {
			return ts, ""
		}
	}
	if res, found := sc.ViaIncludes(f, name, ok); found {
		return res.Targets, ""
	}
	return nil, ""
}

// importedName is the name an import binds in the module's files: the
// definition the module's default export names for a default import
// (else, as the usual export default class D, the local name itself).
func importedName(files []*snap.Entry, im record.Import) string {
	if im.Name != record.DefaultImport {
		return im.Name
	}
	for _, g := range files {
		if g.Default != "" {
			return g.Default
		}
	}
	return im.Local
}

// ViaNameImport resolves a bare name bound by a `from m import name`-style
// import.
func (sc *Scopes) ViaNameImport(f *snap.Entry, name string, ok func(*record.Def) bool) (outcome.Resolution, bool) {
	for _, im := range f.Imports {
		if im.Name == "" || im.Local != name {
			continue
		}
		files, known := sc.ModuleFiles(f, im.Module)
		if !known {
			return outcome.Resolution{Class: lang.Unresolved, Why: "external: " + im.Module}, true
		}
		if ts := sc.ExportedBy(files, importedName(files, im), ok); len(ts) > 0 {
			return outcome.Settle(f, lang.ViaImport, ts, "imported"), true
		}
		return outcome.Resolution{Class: lang.Unresolved, Why: "imported from " + im.Module + ", not defined there in the index"}, true
	}
	return outcome.Resolution{}, false
}

// ViaStarImport resolves a bare name through imports of every name of a
// module: Go's import . "m", Python's from m import *, Java's a.b.*.
func (sc *Scopes) ViaStarImport(f *snap.Entry, name string, ok func(*record.Def) bool) (outcome.Resolution, bool) {
	var files []*snap.Entry
	for _, im := range f.Imports {
		if im.Local != "." && im.Local != "*" {
			continue
		}
		if fs, known := sc.ModuleFiles(f, im.Module); known {
			files = append(files, fs...)
		}
	}
	if ts := sc.TopLevelOf(files, name, ok); len(ts) > 0 {
		return outcome.Settle(f, lang.ViaImport, ts, "imported with all of its module"), true
	}
	return outcome.Resolution{}, false
}

// ExportedBy finds name in a module's files: topLevelOf, then members of
// that name.
func (sc *Scopes) ExportedBy(files []*snap.Entry, name string, ok func(*record.Def) bool) []snap.Target {
	if ts := sc.TopLevelOf(files, name, ok); len(ts) > 0 {
		return ts
	}
	return moduleDefsIn(files, name, ok)
}

// TopLevelOf finds name among a module's own names: its top-level
// definitions, then, for a language whose modules re-export what they
// import, through the files' own imports. A definition inside a function
// or a value (a method of an object literal) is not the module's.
func (sc *Scopes) TopLevelOf(files []*snap.Entry, name string, ok func(*record.Def) bool) []snap.Target {
	top := func(d *record.Def) bool { return ok(d) && !d.Member() }
	if ts := moduleDefsIn(files, name, top); len(ts) > 0 {
		return ts
	}
	return sc.reexported(files, name, top, 0, map[reexportKey]bool{})
}

// moduleDefsIn is outcome.DefsIn without the definitions nested in a function or
// a value.
func moduleDefsIn(files []*snap.Entry, name string, ok func(*record.Def) bool) []snap.Target {
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
func (sc *Scopes) reexported(files []*snap.Entry, name string, ok func(*record.Def) bool, depth int, seen map[reexportKey]bool) []snap.Target {
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
			fs, known := sc.ModuleFiles(g, im.Module)
			if next == record.DefaultImport {
				next = importedName(fs, im)
			}
			if !known {
				continue
			}
			if ts := moduleDefsIn(fs, next, ok); len(ts) > 0 {
				out = append(out, ts...)
			} else if depth+1 < maxReexport {
				out = append(out, sc.reexported(fs, next, ok, depth+1, seen)...)
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

// ViaIncludes resolves a bare name through included headers (C, C++): the
// header itself and the sources beside it with its base name.
func (sc *Scopes) ViaIncludes(f *snap.Entry, name string, ok func(*record.Def) bool) (outcome.Resolution, bool) {
	if !f.Lang.Rule().Textual() {
		return outcome.Resolution{}, false
	}
	var files []*snap.Entry
	for _, im := range f.Imports {
		hs, known := sc.ModuleFiles(f, im.Module)
		if !known {
			continue
		}
		for _, h := range hs {
			files = append(files, h)
			stem := strings.TrimSuffix(h.Rel, path.Ext(h.Rel))
			for _, g := range sc.dirOf(f.Lang, h.Dir) {
				if g != h && strings.TrimSuffix(g.Rel, path.Ext(g.Rel)) == stem {
					files = append(files, g)
				}
			}
		}
	}
	ts := outcome.DefsIn(files, name, func(d *record.Def) bool { return ok(d) && !d.Member() })
	if len(ts) == 0 {
		ts = outcome.DefsIn(files, name, ok)
	}
	if len(ts) > 0 {
		return outcome.Settle(f, lang.ViaImport, ts, "in an included file"), true
	}
	return sc.viaIncludedIncludes(f, name, ok)
}

// viaIncludedIncludes resolves a bare name through the headers the
// included ones include in turn, as the preprocessor does (tree_cursor.c
// includes tree_cursor.h, which includes subtree.h), and the sources
// beside each with its base name. It runs only when no file included
// directly defines the name, so what those give stays as it was.
func (sc *Scopes) viaIncludedIncludes(f *snap.Entry, name string, ok func(*record.Def) bool) (outcome.Resolution, bool) {
	ids := sc.s.Tables(f.Lang).Defs.Get(name)
	if len(ids) == 0 {
		return outcome.Resolution{}, false
	}
	reach := sc.included(f)
	var files []*snap.Entry
	for _, id := range ids {
		if g := sc.s.ByID(id); g != nil && g != f && reach[g.ID] {
			files = append(files, g)
		}
	}
	ts := outcome.DefsIn(files, name, func(d *record.Def) bool { return ok(d) && !d.Member() })
	if len(ts) == 0 {
		return outcome.Resolution{}, false
	}
	return outcome.Settle(f, lang.ViaImport, ts, "in a file an included header includes"), true
}

// maxIncluded bounds the files the include closures cached for one
// snapshot hold in all; past it the cache starts again.
const maxIncluded = 1 << 20

// included is the set of files f's includes reach, followed through the
// headers' own includes, with the sources beside each header (x.c for
// x.h; their own includes are not followed). Kept for the snapshot.
func (sc *Scopes) included(f *snap.Entry) map[snap.FileID]bool {
	sc.mu.Lock()
	reach, ok := sc.incl[f.ID]
	sc.mu.Unlock()
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
			hs, known := sc.ModuleFiles(g, im.Module)
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
				for _, s := range sc.dirOf(f.Lang, h.Dir) {
					if s != h && strings.TrimSuffix(s.Rel, path.Ext(s.Rel)) == stem {
						reach[s.ID] = true
					}
				}
			}
		}
	}
	sc.mu.Lock()
	if sc.incl == nil || sc.nincl > maxIncluded {
		sc.incl, sc.nincl = map[snap.FileID]map[snap.FileID]bool{}, 0
	}
	sc.incl[f.ID] = reach
	sc.nincl += len(reach)
	sc.mu.Unlock()
	return reach
}

// NamespaceMember resolves ns::name when the receiver is a namespace (or
// inline module) some definition lives in: top-level definitions first
// (a class, not its constructor), the file's own before others.
func (sc *Scopes) NamespaceMember(f *snap.Entry, recv, name string, ok func(*record.Def) bool) (outcome.Resolution, bool) {
	scope := strings.ReplaceAll(recv, "::", ".")
	if strings.ContainsAny(scope, "()[]{}") {
		return outcome.Resolution{}, false
	}
	var all []snap.Target
	for _, id := range sc.s.Tables(f.Lang).Defs.Get(name) {
		g := sc.s.ByID(id)
		for _, i := range g.DefsNamed(name) {
			d := &g.Defs[i]
			if ok(d) && (d.Scope == scope || strings.HasSuffix(d.Scope, "."+scope)) {
				all = append(all, snap.Target{File: g, Def: i})
			}
		}
	}
	if len(all) == 0 {
		return outcome.Resolution{}, false
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
	return outcome.Settle(f, lang.Exact, all, "in "+recv), true
}

// TypeMembers finds members called name of the class-like definition recv
// names, when recv is a type in scope or imported.
func (sc *Scopes) TypeMembers(f *snap.Entry, recv, name string, ok func(*record.Def) bool) []snap.Target {
	if strings.ContainsAny(recv, ".()[]:") {
		return nil
	}
	// A function holds members too where the language assigns them to it
	// (X.m = function () {}).
	isType := func(d *record.Def) bool { return record.ClassLike(d.Kind) || d.Kind == "function" && !d.Member() }
	types := sc.InScope(f, recv, isType)
	if len(types) == 0 {
		types = outcome.Pick(f, recv, isType)
	}
	if len(types) == 0 {
		for _, im := range f.Imports {
			star := im.Local == "*" || im.Local == "."
			if im.Local != recv && !star || !star && im.Name == "" {
				continue
			}
			files, known := sc.ModuleFiles(f, im.Module)
			if !known {
				continue
			}
			if star {
				types = append(types, outcome.DefsIn(files, recv, isType)...)
			} else {
				types = append(types, outcome.DefsIn(files, importedName(files, im), isType)...)
			}
		}
	}
	var out []snap.Target
	seen := map[*snap.Entry]bool{}
	for _, t := range types {
		// Members live in the type's file, or (Go) beside it.
		files := []*snap.Entry{t.File}
		if f.Lang.Scope == "directory" {
			files = sc.dirOf(f.Lang, t.File.Dir)
		}
		for _, g := range files {
			if seen[g] {
				continue
			}
			seen[g] = true
			out = append(out, outcome.Pick(g, name, func(d *record.Def) bool { return ok(d) && d.Container == t.D().Name })...)
		}
	}
	return out
}

// renames maps each name an import renames to the local names it gets
// (import {f as g}; export {f as g} from; from m import f as g), in
// languages whose imports name definitions: one pass over the imports,
// kept with the snapshot.
func (sc *Scopes) renames(l *lang.Language) map[string][]string {
	if !l.Rule().BindsNames() {
		return nil
	}
	sc.mu.Lock()
	m, ok := sc.ren[l]
	sc.mu.Unlock()
	if ok {
		return m
	}
	out := map[string][]string{}
	for g := range sc.s.Files() {
		if g.Lang != l {
			continue
		}
		for _, im := range g.Imports {
			name := im.Name
			if name == record.DefaultImport {
				files, _ := sc.ModuleFiles(g, im.Module)
				name = importedName(files, im)
			}
			if name != "" && im.Local != "" && im.Local != name && im.Local != "*" && im.Local != "." {
				out[name] = append(out[name], im.Local)
			}
		}
	}
	sc.mu.Lock()
	if sc.ren == nil {
		sc.ren = map[*lang.Language]map[string][]string{}
	}
	sc.ren[l] = out
	sc.mu.Unlock()
	return out
}

// Aliases lists the other names imports give name in language l
// (import {f as g}; export {f as g} from), through chains of renames.
func (sc *Scopes) Aliases(l *lang.Language, name string) []string {
	return aliasesOf(sc.renames(l), name)
}

// aliasesOf lists the other names imports give name, through chains of
// renames (a re-export under a new name, imported under another). Where
// an import came from is not checked here: the caller keeps only the
// references that resolve to the definition.
func aliasesOf(renames map[string][]string, name string) []string {
	if len(renames) == 0 {
		return nil
	}
	seen := map[string]bool{name: true}
	var out []string
	todo := []string{name}
	for depth := 0; len(todo) > 0 && depth < maxReexport; depth++ {
		var next []string
		for _, n := range todo {
			for _, a := range renames[n] {
				if !seen[a] {
					seen[a] = true
					out = append(out, a)
					next = append(next, a)
				}
			}
		}
		todo = next
	}
	return out
}
