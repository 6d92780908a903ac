package snap

import (
	"path"
	"reflect"
	"slices"

	"github.com/builtin-tools/builtin-tools/graph/imports"
	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/record"
)

// Builder makes the next snapshot from one. It is not safe for
// concurrent use: the index calls it under its own lock. Snapshot
// publishes what was built; a published snapshot is never changed after,
// since the builder copies what it changes next: the shards of a table
// and the posting lists it writes to, the chunk of the files table, the
// list of files in path order only when a file comes or goes. A file
// whose text changed costs the shards and lists of the names it gained
// or lost.
type Builder struct {
	s     *Snapshot // the snapshot being built; shared with the last published one unless dirty
	dirty bool      // s is the builder's own copy
	epoch uint64    // this batch's: what carries it is the builder's own
	owned map[ownKey]bool
	// orderOwned, freeOwned: the batch copied s.order, s.free.
	orderOwned, freeOwned bool
	seen                  map[nameKey]bool // eachKey's, kept between files
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

// w is the snapshot to change: at the first change after a publish, a
// copy of the published one that shares all it holds.
func (b *Builder) w() *Snapshot {
	if b.dirty {
		return b.s
	}
	o := b.s
	n := *o
	n.tables = make([]*Tables, len(o.tables))
	for i, t := range o.tables {
		c := *t
		n.tables[i] = &c
	}
	b.s, b.dirty, b.epoch, b.owned = &n, true, newEpoch(), map[ownKey]bool{}
	b.orderOwned, b.freeOwned = false, false
	return b.s
}

// Snapshot publishes what was built so far.
func (b *Builder) Snapshot() *Snapshot {
	b.dirty, b.owned = false, nil // (w makes the next batch's)
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

// Skipped is the reason rel was left out, as built so far.
func (b *Builder) Skipped(rel string) (string, bool) { return b.s.Skipped(rel) }

// Put replaces the entry of e.Rel with e, or adds it; e is new (in no
// snapshot) and gets its ID and Host here.
func (b *Builder) Put(e *Entry) {
	s := b.w()
	old := s.Entry(e.Rel)
	if old != nil && old.Lang != e.Lang {
		b.Remove(e.Rel)
		old = nil
	}
	if old != nil && old.Record != e.Record && reflect.DeepEqual(old.Record, e.Record) {
		e.Record = old.Record // the same facts: nothing resolving reads moved
	}
	if old == nil || old.Record != e.Record {
		s.FactsGen++
	}
	e.Host = e.Lang.HostOf(e.BuildLine)
	t := s.tables[e.Lang.Index]
	if old == nil {
		e.ID = b.newID(s)
		s.byRel = s.byRel.own(b.epoch)
		s.byRel.set(b.epoch, e.Rel, e.ID)
		b.setFile(s, e.ID, e)
		if !b.orderOwned {
			s.order, b.orderOwned = slices.Clone(s.order), true
		}
		i, _ := slices.BinarySearchFunc(s.order, e.Rel, func(id FileID, rel string) int { return compare(s.files.at(id).Rel, rel) })
		s.order = slices.Insert(s.order, i, e.ID)
		b.eachKey(e, func(table uint8, names *Names, key string) { b.insert(s, e.Lang.Index, table, names, key, e.ID) })
		s.Gen++
		s.ModGen++
		t.ImportsGen++
		if hasBases(e.Record) {
			t.BasesGen++
		}
	} else {
		// The same path in the same language: its folder, file name and
		// module names are the same, and so is its place in every list
		// of a name it keeps.
		e.ID = old.ID
		b.setFile(s, e.ID, e)
		s.bytes -= old.Cost()
		gone, came := nameDiff(old, e)
		for _, k := range gone {
			b.delete(s, e.Lang.Index, k.table, b.names(t, k.table), k.name, e.ID)
		}
		for _, k := range came {
			b.insert(s, e.Lang.Index, k.table, b.names(t, k.table), k.name, e.ID)
		}
		s.Gen += 2 // out, in
		if old.Package != e.Package {
			s.ModGen++
		}
		if !sameImports(old.Record, e.Record) {
			t.ImportsGen++
		}
		if !sameBases(old.Record, e.Record) {
			t.BasesGen++
		}
	}
	s.bytes += e.Cost()
	b.Unskip(e.Rel)
}

// newID is a free id, or the next one.
func (b *Builder) newID(s *Snapshot) FileID {
	if n := len(s.free); n > 0 {
		id := s.free[n-1]
		if !b.freeOwned {
			s.free, b.freeOwned = slices.Clone(s.free), true
		}
		s.free = s.free[:n-1]
		return id
	}
	id := FileID(s.files.len())
	// A new chunk: its ids after the first are free.
	b.setFile(s, id, nil)
	if !b.freeOwned {
		s.free, b.freeOwned = slices.Clone(s.free), true
	}
	for i := s.files.len() - 1; i > int(id); i-- {
		s.free = append(s.free, FileID(i))
	}
	return id
}

func (b *Builder) setFile(s *Snapshot, id FileID, e *Entry) {
	s.files = s.files.own(b.epoch)
	s.files.set(b.epoch, id, e)
}

// Remove drops the file at rel; false when there is none.
func (b *Builder) Remove(rel string) bool {
	if b.s.Entry(rel) == nil {
		return false
	}
	s := b.w()
	old := s.Entry(rel)
	b.eachKey(old, func(table uint8, names *Names, key string) { b.delete(s, old.Lang.Index, table, names, key, old.ID) })
	s.byRel = s.byRel.own(b.epoch)
	s.byRel.del(b.epoch, rel)
	if !b.orderOwned {
		s.order, b.orderOwned = slices.Clone(s.order), true
	}
	i, _ := slices.BinarySearchFunc(s.order, rel, func(id FileID, rel string) int { return compare(s.files.at(id).Rel, rel) })
	s.order = slices.Delete(s.order, i, i+1)
	b.setFile(s, old.ID, nil)
	if !b.freeOwned {
		s.free, b.freeOwned = slices.Clone(s.free), true
	}
	s.free = append(s.free, old.ID)
	s.bytes -= old.Cost()
	s.Gen++
	s.ModGen++
	s.FactsGen++
	t := s.tables[old.Lang.Index]
	t.ImportsGen++
	if hasBases(old.Record) {
		t.BasesGen++
	}
	return true
}

// Skip records why rel is not indexed; Unskip forgets it.
func (b *Builder) Skip(rel, why string) {
	if w, ok := b.s.skipped.get(rel); !ok || w != why {
		s := b.w()
		s.skipped = s.skipped.own(b.epoch)
		s.skipped.set(b.epoch, rel, why)
	}
}

func (b *Builder) Unskip(rel string) {
	if _, ok := b.s.skipped.get(rel); ok {
		s := b.w()
		s.skipped = s.skipped.own(b.epoch)
		s.skipped.del(b.epoch, rel)
	}
}

// SetModules replaces the manifests' module paths (longest first).
func (b *Builder) SetModules(ms []imports.Module) {
	s := b.w()
	s.mods = ms
	s.Gen++
	s.ModGen++
	s.FactsGen++
}

// names is a language's table by kind, the builder's own to change.
func (b *Builder) names(t *Tables, table uint8) *Names {
	var n *Names
	switch table {
	case tDefs:
		n = &t.Defs
	case tRefs:
		n = &t.Refs
	case tDirs:
		n = &t.Dirs
	case tModules:
		n = &t.Modules
	default:
		n = &t.Base
	}
	n.t = n.t.own(b.epoch)
	return n
}

// nameKey is one key of the Defs or Refs table.
type nameKey struct {
	table uint8
	name  string
}

// nameDiff is the keys of the Defs and Refs tables old is listed under
// and e is not, and those e is and old is not.
func nameDiff(old, e *Entry) (gone, came []nameKey) {
	o, n := nameSet(old), nameSet(e)
	for k := range o {
		if !n[k] {
			gone = append(gone, k)
		}
	}
	for k := range n {
		if !o[k] {
			came = append(came, k)
		}
	}
	return gone, came
}

func nameSet(e *Entry) map[nameKey]bool {
	m := make(map[nameKey]bool, len(e.Defs)+len(e.Refs)/2)
	for i := range e.Defs {
		m[nameKey{tDefs, e.Defs[i].Name}] = true
	}
	for i := range e.Refs {
		m[nameKey{tRefs, e.Strs[e.Refs[i].Name]}] = true
	}
	return m
}

// eachKey calls fn with every table key e is listed under, once each.
func (b *Builder) eachKey(e *Entry, fn func(table uint8, names *Names, key string)) {
	t := b.s.tables[e.Lang.Index]
	if b.seen == nil || len(b.seen) > 1<<14 {
		b.seen = map[nameKey]bool{} // (a rare huge file's is not kept)
	}
	seen := b.seen
	defer clear(seen)
	for i := range e.Defs {
		seen[nameKey{tDefs, e.Defs[i].Name}] = true
	}
	for i := range e.Refs {
		seen[nameKey{tRefs, e.Strs[e.Refs[i].Name]}] = true
	}
	for k := range seen {
		fn(k.table, b.names(t, k.table), k.name)
	}
	fn(tDirs, b.names(t, tDirs), e.Dir)
	fn(tBase, b.names(t, tBase), path.Base(e.Rel))
	for _, m := range e.Lang.Rule().Modules(e.Rel) {
		fn(tModules, b.names(t, tModules), m)
	}
}

// list is names' list of key, the builder's own to change.
func (b *Builder) list(lang int, table uint8, names *Names, key string, extra int) []FileID {
	l, _ := names.t.get(key)
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
func (b *Builder) insert(s *Snapshot, lang int, table uint8, names *Names, key string, id FileID) {
	// (The key's shard is found once, for the list and its update.)
	sh := names.t.shard(b.epoch, key)
	l, had := sh.m[key]
	if k := (ownKey{lang, table, key}); !b.owned[k] {
		b.owned[k] = true
		l = append(make([]FileID, 0, len(l)+1), l...)
	}
	rel := s.files.at(id).Rel
	if n := len(l); n == 0 || compare(s.files.at(l[n-1]).Rel, rel) < 0 {
		l = append(l, id)
	} else {
		i, _ := slices.BinarySearchFunc(l, rel, func(g FileID, rel string) int { return compare(s.files.at(g).Rel, rel) })
		l = slices.Insert(l, i, id)
	}
	sh.m[key] = l
	if !had {
		names.t.added(b.epoch)
	}
}

func (b *Builder) delete(s *Snapshot, lang int, table uint8, names *Names, key string, id FileID) {
	cur, _ := names.t.get(key)
	i := slices.Index(cur, id)
	if i < 0 {
		return
	}
	if len(cur) == 1 {
		names.t.del(b.epoch, key)
		return
	}
	l := b.list(lang, table, names, key, 0)
	names.t.set(b.epoch, key, slices.Delete(l, i, i+1))
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

func sameImports(a, b *record.Record) bool {
	return a.Exports == b.Exports && a.Default == b.Default && slices.Equal(a.Imports, b.Imports)
}

func hasBases(r *record.Record) bool {
	for i := range r.Fields {
		if r.Fields[i].Name == "" {
			return true
		}
	}
	return false
}

// sameBases says two records have the same nameless fields (the bases
// and embedded types the resolver's subclass tables are made of).
func sameBases(a, b *record.Record) bool {
	i, j := 0, 0
	for {
		for i < len(a.Fields) && a.Fields[i].Name != "" {
			i++
		}
		for j < len(b.Fields) && b.Fields[j].Name != "" {
			j++
		}
		if i == len(a.Fields) || j == len(b.Fields) {
			return i == len(a.Fields) && j == len(b.Fields)
		}
		if a.Fields[i].Container != b.Fields[j].Container || a.Fields[i].Type != b.Fields[j].Type {
			return false
		}
		i, j = i+1, j+1
	}
}
