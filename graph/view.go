package graph

import (
	"sync/atomic"

	"github.com/builtin-tools/builtin-tools/graph/index"
	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/resolve"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// Options configure an index (graph/index).
type Options = index.Options

// Resolution classes: how sure an edge is (lang's edge vocabulary).
const (
	Exact          = lang.Exact
	ViaImport      = lang.ViaImport
	Candidate      = lang.Candidate
	Interface      = lang.Interface
	Implementation = lang.Implementation
	Unresolved     = lang.Unresolved
)

// View is what a query reads: one snapshot, a resolver of it, the index's
// state when it was taken, and where source lines are read from. A query
// keeps to one view: targets of two snapshots are not comparable.
type View struct {
	Snap  *snap.Snapshot
	R     *resolve.Resolver
	State IndexState
	Lines LineSource
}

// LineSource reads a file (by its path relative to the root) for quoting
// its lines.
type LineSource interface {
	ReadFile(rel string) ([]byte, error)
}

// Viewer makes the views of one index, sharing the resolver's cache
// between them: a view of a newer snapshot makes the next cache from the
// last one, keeping what is still valid.
type Viewer struct {
	x     *index.Index
	cache atomic.Pointer[cacheAt]
}

// cacheAt is the resolver's cache of one snapshot.
type cacheAt struct {
	s *snap.Snapshot
	c *resolve.Cache
}

// NewViewer makes the views of x.
func NewViewer(x *index.Index) *Viewer { return &Viewer{x: x} }

// Index is the index viewed.
func (w *Viewer) Index() *index.Index { return w.x }

// View is the index as a query reads it now: the published snapshot, a
// resolver of it and the index's state (synced: the files Sync re-read
// before it).
func (w *Viewer) View(synced int) View {
	st := w.x.State() // before the snapshot: ready means it is complete
	s := w.x.Snapshot()
	return View{Snap: s, R: resolve.New(s, w.cacheOf(s)), Lines: w.x,
		State: IndexState{Ready: st.Ready, Files: s.Len(), Found: st.Total, Synced: synced, Pending: st.Pending, Done: st.Done, Total: st.Total}}
}

// cacheOf is the cache of s: the latest one, or one made from it when s
// is newer.
func (w *Viewer) cacheOf(s *snap.Snapshot) *resolve.Cache {
	ca := w.cache.Load()
	if ca != nil && ca.s == s {
		return ca.c
	}
	var prev *resolve.Cache
	if ca != nil {
		prev = ca.c
	}
	next := &cacheAt{s, resolve.NewCache(s, prev)}
	if w.cache.CompareAndSwap(ca, next) {
		return next.c
	}
	if now := w.cache.Load(); now != nil && now.s == s {
		return now.c // another query made it first
	}
	return next.c
}
