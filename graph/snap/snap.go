// Package snap is the code graph's published data: a Snapshot is the
// index of a root at one moment — every file's entry and record, the
// per-language name tables, the modules manifests declare — and is
// immutable, so any number of queries read it with no lock while the
// index builds the next one (Builder) and publishes it whole.
package snap

import (
	"iter"
	"slices"

	"github.com/builtin-tools/builtin-tools/graph/imports"
	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/record"
)

// FileID names a file in a snapshot: its place in the files table. A
// file keeps its id while it is in the index; a removed file's id may be
// given to another later.
type FileID = imports.FileID

// Stamp is what tells a later reading whether a file changed.
type Stamp struct {
	Size    int64
	ModTime int64 // Unix nanoseconds
	// CTime is the inode's change time, which no program can set back: a
	// rewrite in place that restores the size and mtime still changes it
	// (N21).
	CTime int64
	Inode uint64
}

// Entry is one file as a snapshot has it: where it is, how it was read,
// and its record (embedded: e.Defs is e.Record.Defs). Immutable once in a
// snapshot.
type Entry struct {
	ID   FileID // set by Builder.Put
	Rel  string // slash-separated, relative to the root
	Dir  string // path.Dir(Rel)
	Lang *lang.Language
	// Content is the SHA-256 of the bytes the record was read from (an
	// editor checks it against the bytes it reads).
	Content [32]byte
	Stamp   Stamp
	// Host says whether the file is built on this system, by its record's
	// build line and the language's variants rule: lang.HostAny without a
	// say, HostYes or HostNo. Set by Builder.Put.
	Host uint8
	*record.Record
}

// Cost estimates the bytes e holds in memory.
func (e *Entry) Cost() int64 { return e.Record.Cost() + int64(len(e.Rel)) }

// Target is one definition: a file's entry and the index in its Defs.
// Targets of two snapshots are not comparable: a query keeps to one.
type Target struct {
	File *Entry
	Def  int32
}

// D returns the definition.
func (t Target) D() *record.Def { return &t.File.Defs[t.Def] }

// Qualified names the definition for a reader: pkg.Type.Method in Go,
// Class.method elsewhere.
func (t Target) Qualified() string {
	q := t.D().Qualified()
	if t.File.Package != "" {
		q = t.File.Package + "." + q
	}
	return q
}

// Snapshot is the index at one moment. It is immutable: any number of
// goroutines read it with no lock.
type Snapshot struct {
	// Gen moves on every change.
	Gen uint64
	// ModGen moves when the set of files, the packages they declare or
	// the modules change: what import paths name.
	ModGen uint64
	// FactsGen moves when what resolving reads changes: a file comes or
	// goes, a file's record is another (Builder.Put keeps the old record
	// of a re-read file whose facts are the same: a comment or a touch),
	// or the modules change. Two snapshots of one FactsGen differ only in
	// entries' Content and Stamp, so a resolution made in one holds in the
	// other, its entries taken by ID.
	FactsGen uint64
	// Langs are the languages the index reads.
	Langs *lang.Set

	files   *chunks  // by ID; nil where no file has the id
	free    []FileID // ids below files.len() no file has, for the next new file
	byRel   *table[FileID]
	order   []FileID  // by Rel
	tables  []*Tables // by Language.Index
	mods    []imports.Module
	skipped *table[string]
	bytes   int64
}

// Tables are one language's lookups; every list is in path order, so
// tied candidates come out the same in every build.
type Tables struct {
	Defs    Names // definition name → the files defining it
	Refs    Names // reference name → the files referencing it
	Dirs    Names // folder → its files
	Modules Names // module name (the import rule's Modules) → files
	Base    Names // file name → files
	// ImportsGen moves when a file's imports, exports or default export
	// change, or a file comes or goes.
	ImportsGen uint64
	// BasesGen moves when a file's nameless fields (bases, embedded
	// types) change, or a file holding some comes or goes.
	BasesGen uint64
}

// Names maps a string to files, in path order, in shards copied on
// write.
type Names struct{ t *table[[]FileID] }

// Get lists the files of key, in path order. The list is the snapshot's:
// never change it.
func (n Names) Get(key string) []FileID {
	ids, _ := n.t.get(key)
	return ids
}

// Len is the number of keys.
func (n Names) Len() int { return n.t.n }

// Each calls fn with every key and its files, in no order, until it
// returns false.
func (n Names) Each(fn func(key string, ids []FileID) bool) { n.t.each(fn) }

// Keys lists the keys, sorted.
func (n Names) Keys() []string {
	out := make([]string, 0, n.t.n)
	n.t.each(func(k string, _ []FileID) bool {
		out = append(out, k)
		return true
	})
	slices.Sort(out)
	return out
}

// Empty is a snapshot of no files.
func Empty(langs *lang.Set) *Snapshot {
	e := newEpoch()
	s := &Snapshot{Langs: langs, files: &chunks{epoch: e}, byRel: newTable[FileID](e), skipped: newTable[string](e)}
	for range langs.All() {
		s.tables = append(s.tables, &Tables{Defs: Names{newTable[[]FileID](e)}, Refs: Names{newTable[[]FileID](e)}, Dirs: Names{newTable[[]FileID](e)},
			Modules: Names{newTable[[]FileID](e)}, Base: Names{newTable[[]FileID](e)}})
	}
	return s
}

// Entry is the file at rel, or nil.
func (s *Snapshot) Entry(rel string) *Entry {
	if id, ok := s.byRel.get(rel); ok {
		return s.files.at(id)
	}
	return nil
}

// ByID is the file of an id, or nil.
func (s *Snapshot) ByID(id FileID) *Entry { return s.files.at(id) }

// Entries maps ids to their entries.
func (s *Snapshot) Entries(ids []FileID) []*Entry {
	if len(ids) == 0 {
		return nil
	}
	out := make([]*Entry, len(ids))
	for i, id := range ids {
		out[i] = s.files.at(id)
	}
	return out
}

// Each calls fn with every file in path order until it returns false.
func (s *Snapshot) Each(fn func(*Entry) bool) {
	for _, id := range s.order {
		if !fn(s.files.at(id)) {
			return
		}
	}
}

// Files lists every file in path order.
func (s *Snapshot) Files() iter.Seq[*Entry] {
	return func(yield func(*Entry) bool) {
		for _, id := range s.order {
			if !yield(s.files.at(id)) {
				return
			}
		}
	}
}

// Tables are a language's lookups.
func (s *Snapshot) Tables(l *lang.Language) *Tables { return s.tables[l.Index] }

// Mods are the manifests' module paths, longest first.
func (s *Snapshot) Mods() []imports.Module { return s.mods }

// Skipped says why rel is not indexed, if it was left out.
func (s *Snapshot) Skipped(rel string) (string, bool) { return s.skipped.get(rel) }

// EachSkipped calls fn with every file left out and why, in no order.
func (s *Snapshot) EachSkipped(fn func(rel, why string)) {
	s.skipped.each(func(rel, why string) bool {
		fn(rel, why)
		return true
	})
}

// Len is the number of files.
func (s *Snapshot) Len() int { return len(s.order) }

// Bytes estimates the memory the files' records take.
func (s *Snapshot) Bytes() int64 { return s.bytes }

// The snapshot as import rules read it (imports.View).

func (s *Snapshot) Lookup(rel string) (FileID, bool) { return s.byRel.get(rel) }

func (s *Snapshot) Dir(l int, dir string) []FileID { return s.tables[l].Dirs.Get(dir) }

func (s *Snapshot) EachDir(l int, fn func(string, []FileID) bool) {
	t := s.tables[l]
	for _, d := range t.Dirs.Keys() {
		if !fn(d, t.Dirs.Get(d)) {
			return
		}
	}
}

func (s *Snapshot) Module(l int, name string) []FileID {
	return s.tables[l].Modules.Get(name)
}

func (s *Snapshot) Base(l int, base string) []FileID {
	return s.tables[l].Base.Get(base)
}

func (s *Snapshot) Modules() []imports.Module { return s.mods }

func (s *Snapshot) Rel(id FileID) string { return s.files.at(id).Rel }

var _ imports.View = (*Snapshot)(nil)
