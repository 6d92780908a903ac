package graph

import (
	"iter"
	"sync"

	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// resolver resolves references against one snapshot: it takes no lock of
// the index and reads no file.
type resolver struct {
	s *snap.Snapshot
	c *cache
}

// cache holds what resolving computes once per snapshot: a file's scope,
// renames, implementations, subclasses. Safe for concurrent use.
type cache struct {
	mu    sync.Mutex
	imp   map[*snap.Entry]*fileScope
	ren   map[*lang.Language]map[string][]string
	impls map[snap.Target][]snap.Target
	subs  map[*lang.Language]map[string][]fieldRef
}

// cacheAt is a cache and the snapshot it is for.
type cacheAt struct {
	s *snap.Snapshot
	c *cache
}

// resolverOf is a resolver of s with the cache of the latest snapshot a
// query of x read, made anew when s is newer.
func (x *Index) resolverOf(s *snap.Snapshot) *resolver {
	ca := x.cache.Load()
	if ca == nil || ca.s != s {
		next := &cacheAt{s, &cache{}}
		if x.cache.CompareAndSwap(ca, next) {
			ca = next
		} else if now := x.cache.Load(); now != nil && now.s == s {
			ca = now
		} else {
			ca = next
		}
	}
	return &resolver{s: s, c: ca.c}
}

// files lists the entries of ids, in order.
func (x *resolver) files(ids []snap.FileID) iter.Seq2[int, *snap.Entry] {
	return func(yield func(int, *snap.Entry) bool) {
		for i, id := range ids {
			if !yield(i, x.s.ByID(id)) {
				return
			}
		}
	}
}

// defsOf lists the files of l that define name, in path order.
func (x *resolver) defsOf(l *lang.Language, name string) iter.Seq2[int, *snap.Entry] {
	return x.files(x.s.Tables(l).Defs.Get(name))
}

// refsOf lists the files of l that reference name, in path order.
func (x *resolver) refsOf(l *lang.Language, name string) iter.Seq2[int, *snap.Entry] {
	return x.files(x.s.Tables(l).Refs.Get(name))
}

// dirOf lists the files of l in a folder, in path order.
func (x *resolver) dirOf(l *lang.Language, dir string) []*snap.Entry {
	return x.s.Entries(x.s.Tables(l).Dirs.Get(dir))
}
