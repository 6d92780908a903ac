package graph

import (
	"path/filepath"

	"github.com/builtin-tools/builtin-tools/graph/resolve"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// View is what a query reads: one snapshot, a resolver of it, the index's
// state when it was taken, and where source lines are read from. A query
// keeps to one view: targets of two snapshots are not comparable.
type View struct {
	Snap  *snap.Snapshot
	State IndexState
	Lines LineSource
	r     *resolve.Resolver
}

// LineSource reads a file (by its path relative to the root) for quoting
// its lines.
type LineSource interface {
	ReadFile(rel string) ([]byte, error)
}

// View is the index as a query reads it now: the published snapshot and
// the index's state (synced: the files Sync re-read before it).
func (x *Index) View(synced int) View {
	st := x.state(synced) // before the snapshot: ready means it is complete
	s := x.Snapshot()
	if x.parent == nil {
		st.Files = s.Len()
	}
	return View{Snap: s, State: st, Lines: x, r: x.resolverOf(s)}
}

// state is how complete the index is, for an answer.
func (x *Index) state(synced int) IndexState {
	if p := x.parent; p != nil {
		p.mu.RLock()
		defer p.mu.RUnlock()
		x.mu.RLock()
		defer x.mu.RUnlock()
		return IndexState{Ready: false, Files: p.Snapshot().Len(), Found: max(p.total, x.total), Synced: synced, Ahead: len(x.parsed), NamesOnly: x.namesOnly, Done: x.done, Total: x.total}
	}
	ready := x.Ready()
	x.mu.RLock()
	defer x.mu.RUnlock()
	return IndexState{Ready: ready, Found: x.total, Synced: synced, Done: x.done, Total: x.total}
}

// ReadFile reads a file of the root (rel to it) through the index's
// guard, within its size bound.
func (x *Index) ReadFile(rel string) ([]byte, error) {
	data, _, err := x.guard.ReadFile(filepath.Join(x.root, filepath.FromSlash(rel)), x.opts.MaxFileSize)
	return data, err
}

// The queries on the index as it is now (tests and measurement programs;
// the code_graph tool takes one View per answer).

func (x *Index) Outline(file string, synced int) (*Answer, error) {
	return Outline(x.View(synced), file)
}
func (x *Index) Find(query, kind string, limit, synced int) (*Answer, error) {
	return Find(x.View(synced), query, kind, limit)
}
func (x *Index) Callers(spec Spec, synced int) (*Answer, error) { return Callers(x.View(synced), spec) }
func (x *Index) Callees(spec Spec, synced int) (*Answer, error) { return Callees(x.View(synced), spec) }
func (x *Index) Impact(spec Spec, depth, perDepth, synced int) (*Answer, error) {
	return Impact(x.View(synced), spec, depth, perDepth)
}
func (x *Index) Definitions() []Symbol            { return Definitions(x.View(0)) }
func (x *Index) Dump() string                     { return Dump(x.View(0)) }
func (x *Index) Locate(s Spec) ([]Located, error) { return Locate(x.View(0), s) }

// cacheAt is the resolver's cache of one snapshot.
type cacheAt struct {
	s *snap.Snapshot
	c *resolve.Cache
}

// resolverOf is a resolver of s with the cache of the latest snapshot a
// query read, made anew from it (keeping what is still valid) when s is
// newer.
func (x *Index) resolverOf(s *snap.Snapshot) *resolve.Resolver {
	ca := x.cache.Load()
	if ca == nil || ca.s != s {
		var prev *resolve.Cache
		if ca != nil {
			prev = ca.c
		}
		next := &cacheAt{s, resolve.NewCache(s, prev)}
		switch {
		case x.cache.CompareAndSwap(ca, next):
			ca = next
		default:
			if now := x.cache.Load(); now != nil && now.s == s {
				ca = now // another query made it first
			} else {
				ca = next
			}
		}
	}
	return resolve.New(s, ca.c)
}
