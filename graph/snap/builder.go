package snap

import (
	"maps"
	"path"
	"slices"

	"github.com/builtin-tools/builtin-tools/graph/lang"
)

// Builder makes the next snapshot from one. It is not safe for
// concurrent use: the index calls it under its own lock. Snapshot
// publishes what was built; the snapshots it returned are never changed
// after, since the builder copies what it changes next.
type Builder struct {
	s     *Snapshot // the snapshot being built; shared with the last published one unless dirty
	dirty bool      // s is the builder's own copy
	owned map[ownKey]bool
}

// ownKey names one posting list the builder copied since it last
// published: its own, to change in place.
type ownKey struct {
	lang  int
	table uint8
	key   string
}

const (
	tDefs uint8 = iota
	tRefs
	tDirs
	tModules
	tBase
)

// New is a builder whose first snapshot holds no files.
func New(langs *lang.Set) *Builder { return &Builder{s: Empty(langs)} }

// Edit is a builder of the snapshots after s.
func (s *Snapshot) Edit() *Builder { return &Builder{s: s} }

// w is the snapshot to change, copied from the published one at the
// first change after a publish.
func (b *Builder) w() *Snapshot {
	if b.dirty {
		return b.s
	}
	o := b.s
	n := &Snapshot{Gen: o.Gen, ModGen: o.ModGen, Langs: o.Langs, files: slices.Clone(o.files), free: slices.Clone(o.free),
		byRel: maps.Clone(o.byRel), order: slices.Clone(o.order), mods: o.mods, skipped: maps.Clone(o.skipped), bytes: o.bytes}
	n.tables = make([]*Tables, len(o.tables))
	for i, t := range o.tables {
		n.tables[i] = &Tables{Defs: Names{maps.Clone(t.Defs.m)}, Refs: Names{maps.Clone(t.Refs.m)}, Dirs: Names{maps.Clone(t.Dirs.m)},
			Modules: Names{maps.Clone(t.Modules.m)}, Base: Names{maps.Clone(t.Base.m)}, ImportsGen: t.ImportsGen, BasesGen: t.BasesGen}
	}
	b.s, b.dirty, b.owned = n, true, map[ownKey]bool{}
	return n
}

// Snapshot publishes what was built so far.
func (b *Builder) Snapshot() *Snapshot {
	b.dirty = false
	return b.s
}

// Langs are the languages of the snapshots built.
func (b *Builder) Langs() *lang.Set { return b.s.Langs }

// Entry is the file at rel as built so far, or nil.
func (b *Builder) Entry(rel string) *Entry { return b.s.Entry(rel) }

// Len and Bytes are the files built so far and the memory they take.
func (b *Builder) Len() int     { return b.s.Len() }
func (b *Builder) Bytes() int64 { return b.s.bytes }

// Each calls fn with every file built so far, in path order, until it
// returns false.
func (b *Builder) Each(fn func(*Entry) bool) { b.s.Each(fn) }

// Put replaces the entry of e.Rel with e, or adds it; e is new (in no
// snapshot) and gets its ID and Host here.
func (b *Builder) Put(e *Entry) {
	s := b.w()
	old := s.Entry(e.Rel)
	if old != nil {
		e.ID = old.ID
		b.unindex(s, old)
		s.bytes -= old.Cost()
		s.Gen++
	} else {
		if n := len(s.free); n > 0 {
			e.ID, s.free = s.free[n-1], s.free[:n-1]
		} else {
			e.ID = FileID(len(s.files))
			s.files = append(s.files, nil)
		}
		s.byRel[e.Rel] = e.ID
	}
	e.Host = e.Lang.HostOf(e.BuildLine)
	s.files[e.ID] = e
	if old == nil {
		i, _ := slices.BinarySearchFunc(s.order, e.Rel, func(id FileID, rel string) int { return compare(s.files[id].Rel, rel) })
		s.order = slices.Insert(s.order, i, e.ID)
	}
	s.bytes += e.Cost()
	s.Gen++
	if old == nil || old.Package != e.Package || old.Lang != e.Lang {
		s.ModGen++
	}
	t := s.tables[e.Lang.Index]
	if old == nil || old.Lang != e.Lang || !sameImports(old.Record, e.Record) {
		t.ImportsGen++
		if old != nil {
			s.tables[old.Lang.Index].ImportsGen++
		}
	}
	if old == nil && hasBases(e.Record) || old != nil && (old.Lang != e.Lang || !sameBases(old.Record, e.Record)) {
		t.BasesGen++
		if old != nil {
			s.tables[old.Lang.Index].BasesGen++
		}
	}
	b.index(s, e)
	delete(s.skipped, e.Rel)
}

// Remove drops the file at rel; false when there is none.
func (b *Builder) Remove(rel string) bool {
	if b.s.Entry(rel) == nil {
		return false
	}
	s := b.w()
	old := s.Entry(rel)
	b.unindex(s, old)
	delete(s.byRel, rel)
	i, _ := slices.BinarySearchFunc(s.order, rel, func(id FileID, rel string) int { return compare(s.files[id].Rel, rel) })
	s.order = slices.Delete(s.order, i, i+1)
	s.files[old.ID] = nil
	s.free = append(s.free, old.ID)
	s.bytes -= old.Cost()
	s.Gen++
	s.ModGen++
	t := s.tables[old.Lang.Index]
	t.ImportsGen++
	if hasBases(old.Record) {
		t.BasesGen++
	}
	return true
}

// Skip records why rel is not indexed; Unskip forgets it.
func (b *Builder) Skip(rel, why string) {
	if w, ok := b.s.skipped[rel]; !ok || w != why {
		b.w().skipped[rel] = why
	}
}

func (b *Builder) Unskip(rel string) {
	if _, ok := b.s.skipped[rel]; ok {
		delete(b.w().skipped, rel)
	}
}

// SetModules replaces the manifests' module paths (longest first).
func (b *Builder) SetModules(ms []lang.Module) {
	s := b.w()
	s.mods = ms
	s.Gen++
	s.ModGen++
}

// Skipped is the reason rel was left out, as built so far.
func (b *Builder) Skipped(rel string) (string, bool) { return b.s.Skipped(rel) }

func (b *Builder) index(s *Snapshot, e *Entry) {
	b.eachKey(e, func(table uint8, names Names, key string) { b.insert(s, e.Lang.Index, table, names, key, e.ID) })
}

func (b *Builder) unindex(s *Snapshot, e *Entry) {
	b.eachKey(e, func(table uint8, names Names, key string) { b.delete(s, e.Lang.Index, table, names, key, e.ID) })
}

// eachKey calls fn with every table key e is listed under, once each.
func (b *Builder) eachKey(e *Entry, fn func(table uint8, names Names, key string)) {
	t := b.s.tables[e.Lang.Index]
	seen := make(map[string]bool, len(e.Defs))
	for i := range e.Defs {
		if n := e.Defs[i].Name; !seen[n] {
			seen[n] = true
			fn(tDefs, t.Defs, n)
		}
	}
	clear(seen)
	for i := range e.Refs {
		if n := e.Strs[e.Refs[i].Name]; !seen[n] {
			seen[n] = true
			fn(tRefs, t.Refs, n)
		}
	}
	fn(tDirs, t.Dirs, e.Dir)
	fn(tBase, t.Base, path.Base(e.Rel))
	for _, m := range e.Lang.Rule().Modules(e.Rel) {
		fn(tModules, t.Modules, m)
	}
}

// list is names' list of key, the builder's own to change.
func (b *Builder) list(lang int, table uint8, names Names, key string, extra int) []FileID {
	l := names.m[key]
	k := ownKey{lang, table, key}
	if !b.owned[k] {
		b.owned[k] = true
		l = append(make([]FileID, 0, len(l)+extra), l...)
	}
	return l
}

// insert adds id to a list in the order of paths: the lists, and
// whatever is resolved from them (which of two variants' results a call
// names, the order of tied candidates), do not depend on the order files
// were read.
func (b *Builder) insert(s *Snapshot, lang int, table uint8, names Names, key string, id FileID) {
	l := b.list(lang, table, names, key, 1)
	rel := s.files[id].Rel
	if n := len(l); n == 0 || compare(s.files[l[n-1]].Rel, rel) < 0 {
		names.m[key] = append(l, id)
		return
	}
	i, _ := slices.BinarySearchFunc(l, rel, func(g FileID, rel string) int { return compare(s.files[g].Rel, rel) })
	names.m[key] = slices.Insert(l, i, id)
}

func (b *Builder) delete(s *Snapshot, lang int, table uint8, names Names, key string, id FileID) {
	i := slices.Index(names.m[key], id)
	if i < 0 {
		return
	}
	if len(names.m[key]) == 1 {
		delete(names.m, key)
		return
	}
	l := b.list(lang, table, names, key, 0)
	names.m[key] = slices.Delete(l, i, i+1)
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func sameImports(a, b *lang.Record) bool {
	return a.Exports == b.Exports && a.Default == b.Default && slices.Equal(a.Imports, b.Imports)
}

// bases are a record's nameless fields: the bases and embedded types the
// resolver's subclass tables are made of.
func bases(r *lang.Record) []lang.Field {
	var out []lang.Field
	for _, f := range r.Fields {
		if f.Name == "" {
			out = append(out, f)
		}
	}
	return out
}

func hasBases(r *lang.Record) bool {
	for i := range r.Fields {
		if r.Fields[i].Name == "" {
			return true
		}
	}
	return false
}

func sameBases(a, b *lang.Record) bool {
	ba, bb := bases(a), bases(b)
	if len(ba) != len(bb) {
		return false
	}
	for i := range ba {
		if ba[i].Container != bb[i].Container || ba[i].Type != bb[i].Type {
			return false
		}
	}
	return true
}
