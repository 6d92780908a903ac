// Package resolve is the code graph's resolver: it decides where a
// reference leads — exact, import, candidate or unresolved — against one
// snapshot (graph/snap), reading the records the snapshot holds. It takes
// no lock of the index and does no I/O; what it computes once per
// snapshot (file scopes, renames, implementations, subclasses) is kept in
// a Cache, which the next snapshot's cache inherits where still valid.
package resolve

import (
	"maps"
	"sync"
	"sync/atomic"

	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// Resolver resolves references against one snapshot.
type Resolver struct {
	s *snap.Snapshot
	c *Cache
}

// New is a resolver of s with cache c (made with NewCache for s); nil
// gives it a private cache.
func New(s *snap.Snapshot, c *Cache) *Resolver {
	if c == nil || c.s != s {
		c = NewCache(s, nil)
	}
	return &Resolver{s: s, c: c}
}

// Snapshot is the snapshot the resolver reads.
func (rv *Resolver) Snapshot() *snap.Snapshot { return rv.s }

// Cache holds what resolving computes once per snapshot. Safe for
// concurrent use; it takes no lock a writer of the index holds and never
// waits on I/O.
type Cache struct {
	s  *snap.Snapshot
	mu sync.Mutex
	// imp: a file's scope, valid while the snapshot's ModGen is the same
	// (scopes hold paths and names, not entries).
	imp map[*snap.Entry]*fileScope
	// ren: renames per language, valid while ModGen and every language's
	// ImportsGen are.
	ren map[*lang.Language]map[string][]string
	// impls: implementations, for this snapshot only.
	impls map[snap.Target][]snap.Target
	// mods: the files an import path written in a file names, valid
	// while ModGen is (the entries of files changed since are replaced
	// when read).
	mods map[modKey]modFiles
	// subs: base-class fields by the base's name per language, by file
	// id, valid while the language's BasesGen is.
	subs map[*lang.Language]subsAt

	importsGen uint64 // the sum of the languages' ImportsGen

	// named: each name's definitions (named), shared with the caches of
	// the snapshots before and after, each list checked against the
	// snapshot it is read in.
	named *namedStore

	// sites: references resolved lazily (SiteLazy), for this snapshot
	// only; nsites counts them, up to maxSites.
	sites  sync.Map // siteKey → *Resolution
	nsites atomic.Int64
}

type siteKey struct {
	f    *snap.Entry
	ri   int32
	kind uint8
}

// maxSites bounds the sites a cache keeps: a few of the largest callers
// answers (a method name thousands of calls share), some megabytes.
const maxSites = 50000

// namedStore holds the definitions by name along the snapshots. It is
// made anew once it holds maxNamed names, so it neither grows without
// bound nor keeps replaced entries alive for long.
type namedStore struct {
	m sync.Map // nameKey → *namedAt
	n atomic.Int64
}

const maxNamed = 8192

// modKey is an import path as one file writes it.
type modKey struct{ from, module string }

type modFiles struct {
	files []*snap.Entry
	known bool
}

type subsAt struct {
	gen uint64 // the language's BasesGen
	m   map[string][]fieldRef
}

// NewCache makes the cache of s, taking from prev (the cache of an
// earlier snapshot, may be nil) every entry still valid for s: file
// scopes when the files, packages and modules are the same (ModGen),
// renames when imports are too (ImportsGen), subclasses when a language's
// bases are (BasesGen). Valid entries are kept as they are: an inherited
// cache answers as a fresh one would.
func NewCache(s *snap.Snapshot, prev *Cache) *Cache {
	c := &Cache{s: s, named: &namedStore{}}
	for _, l := range s.Langs.All() {
		c.importsGen += s.Tables(l).ImportsGen
	}
	if prev == nil || prev.s == nil {
		return c
	}
	if prev.named.n.Load() < maxNamed && prev.s.Langs == s.Langs {
		c.named = prev.named
	}
	prev.mu.Lock()
	defer prev.mu.Unlock()
	if prev.s == s {
		c.impls = maps.Clone(prev.impls)
	}
	if prev.s.ModGen == s.ModGen {
		c.imp = maps.Clone(prev.imp)
		c.mods = maps.Clone(prev.mods) // the same files: ModuleFiles takes each one's entry anew
		if prev.importsGen == c.importsGen {
			c.ren = maps.Clone(prev.ren) // the maps in it are never changed
		}
	}
	for l, e := range prev.subs {
		if e.gen == s.Tables(l).BasesGen {
			if c.subs == nil {
				c.subs = map[*lang.Language]subsAt{}
			}
			c.subs[l] = e
		}
	}
	return c
}

// dirOf lists the files of l in a folder, in path order.
func (rv *Resolver) dirOf(l *lang.Language, dir string) []*snap.Entry {
	return rv.s.Entries(rv.s.Tables(l).Dirs.Get(dir))
}

// SiteLazy is ResolveLazy of f's reference ri read as kind (a method
// read, not called, is a value), kept for the snapshot: callers and
// impact ask for the same sites again, and a name many types share has
// thousands. The resolution is shared: never change it.
func (rv *Resolver) SiteLazy(f *snap.Entry, ri int32, kind uint8) Resolution {
	k := siteKey{f, ri, kind}
	if v, ok := rv.c.sites.Load(k); ok {
		return *v.(*Resolution)
	}
	r := &f.Refs[ri]
	if r.Kind != kind {
		c := *r
		c.Kind = kind
		r = &c
	}
	res := rv.ResolveLazy(f, r)
	if rv.c.nsites.Add(1) <= maxSites {
		rv.c.sites.Store(k, &res)
	}
	return res
}
