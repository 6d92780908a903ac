// Package resolve is the code graph's resolver: it decides where a
// reference leads — exact, import, candidate or unresolved — against one
// snapshot (graph/snap), reading the records the snapshot holds. It takes
// no lock of the index and does no I/O; what it computes once per
// snapshot (file scopes, renames, implementations, subclasses) is kept in
// a Cache, which the next snapshot's cache inherits where still valid.
package resolve

import (
	"sync"
	"sync/atomic"

	"github.com/builtin-tools/builtin-tools/graph/resolve/dispatch"
	"github.com/builtin-tools/builtin-tools/graph/resolve/outcome"
	"github.com/builtin-tools/builtin-tools/graph/resolve/scope"
	"github.com/builtin-tools/builtin-tools/graph/resolve/types"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// Resolver resolves references against one snapshot. Its parts are
// split by what they keep: the scopes (package scope: what a file sees
// through its folder, imports and includes), the declared types
// (package types: types.Reader, keeping nothing), the hierarchy (package
// dispatch: dispatch.Hierarchy, implementations and subclasses) and the
// ranking of name-only candidates (the definitions by name); the
// resolver itself keeps the sites callers asks about. Each part reads
// only its own data and the parts below it.
type Resolver struct {
	s *snap.Snapshot
	c *Cache
	*scope.Scopes
	*dispatch.Hierarchy
	*ranking
	ty *types.Reader
}

// New is a resolver of s with cache c (made with NewCache for s); nil
// gives it a private cache.
func New(s *snap.Snapshot, c *Cache) *Resolver {
	if c == nil || c.s != s {
		c = NewCache(s, nil)
	}
	return &Resolver{s: s, c: c, Scopes: &c.scopes, Hierarchy: &c.hierarchy, ranking: &c.ranking, ty: &c.types}
}

// Snapshot is the snapshot the resolver reads.
func (rv *Resolver) Snapshot() *snap.Snapshot { return rv.s }

// Cache holds what resolving computes once per snapshot, in the part of
// the resolver that computes it. Safe for concurrent use; it takes no
// lock a writer of the index holds and never waits on I/O.
type Cache struct {
	s         *snap.Snapshot
	scopes    scope.Scopes
	types     types.Reader
	hierarchy dispatch.Hierarchy
	ranking   ranking

	// sites: references resolved lazily (SiteLazy), shared with the
	// caches of the snapshots before and after of the same FactsGen.
	sites *siteStore
}

// siteStore holds resolved sites along snapshots of one FactsGen: what
// one resolved holds in the others, with the entries of the snapshot it
// is read in (SiteLazy takes them anew by ID). It counts its sites and
// stops taking new ones at maxSites; the next snapshot then starts
// another.
type siteStore struct {
	m sync.Map // siteKey → *Resolution
	n atomic.Int64
	// ranks: a name-only site's place among its candidates for one
	// definition (SiteRank), and with no definition their number; they
	// hold no entries, so they need no moving. nranks counts them.
	ranks  sync.Map // rankKey → rankAt
	nranks atomic.Int64
}

type rankKey struct {
	site siteKey
	id   snap.FileID
	def  int32 // -1: the number of candidates
}

type rankAt struct {
	rank, of int32
	reason   string
}

type siteKey struct {
	f    snap.FileID
	ri   int32
	kind uint8
}

// maxSites bounds the sites a store keeps: a few of the largest callers
// answers (a method name thousands of calls share), some megabytes.
const maxSites = 50000

// NewCache makes the cache of s, taking from prev (the cache of an
// earlier snapshot, may be nil) every entry still valid for s: file
// scopes when the files, packages and modules are the same (ModGen),
// renames when imports are too (ImportsGen), subclasses when a language's
// bases are (BasesGen). Valid entries are kept as they are: an inherited
// cache answers as a fresh one would.
func NewCache(s *snap.Snapshot, prev *Cache) *Cache {
	c := &Cache{s: s, sites: &siteStore{}}
	c.scopes.Init(s)
	c.types.Init(s, &c.scopes)
	c.hierarchy.Init(s, &c.types)
	c.ranking.s, c.ranking.sc, c.ranking.names = s, &c.scopes, &namedStore{}
	if prev == nil || prev.s == nil {
		return c
	}
	if prev.ranking.names.n.Load() < maxNamed && prev.s.Langs == s.Langs {
		c.ranking.names = prev.ranking.names
	}
	if prev.sites.n.Load() < maxSites && prev.s.Langs == s.Langs && prev.s.FactsGen == s.FactsGen {
		c.sites = prev.sites
	}
	c.hierarchy.Inherit(&prev.hierarchy)
	c.scopes.Inherit(&prev.scopes)
	return c
}

// SiteLazy is ResolveLazy of f's reference ri read as kind (a method
// read, not called, is a value), kept for the snapshot: callers and
// impact ask for the same sites again, and a name many types share has
// thousands. The resolution is shared: never change it.
func (rv *Resolver) SiteLazy(f *snap.Entry, ri int32, kind uint8) outcome.Resolution {
	k := siteKey{f.ID, ri, kind}
	st := rv.c.sites
	if v, ok := st.m.Load(k); ok {
		res := v.(*outcome.Resolution)
		if rv.holds(res) {
			return *res
		}
		// types.Resolved in an earlier snapshot of the same facts: the same
		// answer, with this snapshot's entries.
		moved := rv.moved(res)
		st.m.Store(k, &moved)
		return moved
	}
	r := &f.Refs[ri]
	if r.Kind != kind {
		c := *r
		c.Kind = kind
		r = &c
	}
	res := rv.ResolveLazy(f, r)
	if st.n.Add(1) <= maxSites {
		st.m.Store(k, &res)
	}
	return res
}

// holds says every entry res holds is rv's snapshot's.
func (rv *Resolver) holds(res *outcome.Resolution) bool {
	here := func(ts []snap.Target) bool {
		for _, t := range ts {
			if rv.s.ByID(t.File.ID) != t.File {
				return false
			}
		}
		return true
	}
	if p := res.Pending; p != nil && (rv.s.ByID(p.File.ID) != p.File || !here(p.Hint)) {
		return false
	}
	return here(res.Targets) && here(res.Impls)
}

// moved is res, resolved in a snapshot of rv's FactsGen, with the
// entries of rv's snapshot (the same files, IDs and records).
func (rv *Resolver) moved(res *outcome.Resolution) outcome.Resolution {
	move := func(ts []snap.Target) []snap.Target {
		if ts == nil {
			return nil
		}
		out := make([]snap.Target, len(ts))
		for i, t := range ts {
			out[i] = snap.Target{File: rv.s.ByID(t.File.ID), Def: t.Def}
		}
		return out
	}
	m := *res
	m.Targets, m.Impls = move(res.Targets), move(res.Impls)
	if p := res.Pending; p != nil {
		q := *p
		q.File, q.Hint = rv.s.ByID(p.File.ID), move(p.Hint)
		m.Pending = &q
	}
	return m
}

// SiteRank is RankOf for the site's pending resolution p (SiteLazy's)
// and t, kept with the site: a name thousands of calls share ranks its
// candidates once, not on every answer.
func (rv *Resolver) SiteRank(f *snap.Entry, ri int32, kind uint8, p *outcome.Pending, t snap.Target) (rank, of int, reason string) {
	k := rankKey{siteKey{f.ID, ri, kind}, t.File.ID, t.Def}
	st := rv.c.sites
	if v, ok := st.ranks.Load(k); ok {
		at := v.(rankAt)
		return int(at.rank), int(at.of), at.reason
	}
	all := rv.scores(p)
	rank, of, reason = rv.RankOf(p, t, all)
	if st.nranks.Add(2) <= 2*maxSites {
		st.ranks.Store(k, rankAt{int32(rank), int32(of), reason})
		st.ranks.Store(rankKey{k.site, 0, -1}, rankAt{of: int32(len(all))})
	}
	return rank, of, reason
}

// SiteCandidates is the number of candidates of the site's pending
// resolution p (SiteLazy's), kept with the site.
func (rv *Resolver) SiteCandidates(f *snap.Entry, ri int32, kind uint8, p *outcome.Pending) int {
	k := rankKey{siteKey{f.ID, ri, kind}, 0, -1}
	st := rv.c.sites
	if v, ok := st.ranks.Load(k); ok {
		return int(v.(rankAt).of)
	}
	n := len(rv.scores(p))
	if st.nranks.Add(1) <= 2*maxSites {
		st.ranks.Store(k, rankAt{of: int32(n)})
	}
	return n
}
