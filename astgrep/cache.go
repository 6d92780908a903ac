package astgrep

import (
	"bytes"
	"container/list"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/builtin-tools/builtin-tools/pathguard"
)

// The parse cache is one per process: every Engine (every agent run) uses
// the same one, under one byte budget, so ten runs searching one checkout
// hold its trees once, and a file one run is parsing is waited for, not
// parsed again, by the others.
//
// An entry is keyed by absolute path, language id and grammar (the loaded
// TSLanguage, since two engines may load one id from different grammar
// folders) and is served only while the file's stamp — device, inode,
// size, modification time and change time — is the one it had when it was
// read. The change time moves on every write and cannot be set back by
// utimes, and an atomic rename gives a new inode, so an edited file is
// never served stale. A file written within racyWindow of being read
// could change again within the same timestamp tick without its stamp
// moving (git's "racily clean" entries), so such an entry is checked
// against the file's bytes when it is next used, until it is old enough.
//
// Trees are plain Go memory, immutable once built: a search holding one
// keeps it alive after eviction, so evicting never frees a tree in use.
// Each entry records the open engines that used it; Close drops the
// engine from its entries and evicts those no other open engine used.

// cacheKey names what a tree was parsed from.
type cacheKey struct {
	path    string
	lang    string
	grammar uintptr // the TSLanguage's address; grammars stay loaded for the life of the process
}

// fileStamp is what says a file has not changed.
type fileStamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // Unix nanoseconds
}

// racyWindow covers the coarsest timestamp tick of a file system this
// runs on: a file whose change time is this close to the moment it was
// read may change again without its stamp changing.
const racyWindow = int64(2 * time.Second)

func racy(st fileStamp, readStart time.Time) bool {
	return st.ctime >= readStart.UnixNano()-racyWindow
}

type cacheEntry struct {
	key   cacheKey
	stamp fileStamp
	t     *tree // nil while pending
	cost  int64
	gen   uint64 // the last query that used it
	racy  bool   // check the bytes before serving
	el    *list.Element
	ready chan struct{} // closed once a pending entry is filled or abandoned
	users []*cacheUser  // open engines that used it
}

type parseCache struct {
	mu    sync.Mutex
	limit int64
	fixed bool // SetProcessCacheBytes set the limit
	asked bool // an Engine's Options.CacheBytes set it
	used  int64
	lru   *list.List // of filled *cacheEntry, front = most recent
	byKey map[cacheKey]*cacheEntry
	// seen holds the files a large search parsed without caching them
	// (see admission): the next search to parse one caches it.
	seen map[seenKey]struct{}
}

type seenKey struct {
	key   cacheKey
	stamp fileStamp
}

// maxSeen bounds the seen set (about 100 bytes an entry); past it the set
// starts again.
const maxSeen = 1 << 17

func newParseCache(limit int64) *parseCache {
	return &parseCache{limit: limit, lru: list.New(), byKey: map[cacheKey]*cacheEntry{}, seen: map[seenKey]struct{}{}}
}

// secondSight records that a search parsed key at stamp st without
// caching it, and reports whether one had already: a file parsed twice
// is worth its room.
func (c *parseCache) secondSight(key cacheKey, st fileStamp) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := seenKey{key, st}
	if _, ok := c.seen[k]; ok {
		delete(c.seen, k)
		return true
	}
	if len(c.seen) >= maxSeen {
		clear(c.seen)
	}
	c.seen[k] = struct{}{}
	return false
}

func (c *parseCache) budget() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.limit
}

// admission decides, for one search, whether a tree is cached the first
// time it is parsed. A search whose trees would take a large share of the
// cache (an unselective pattern over a large tree) caches a tree only on
// its second sight, so one cold search peaks at what it parses at once,
// not at every tree it parsed, and does not flush what earlier searches
// cached; a later search over the same files fills the cache. A smaller
// search (a selective pattern, whose prefilter passes few files, or a
// small tree) caches what it parses at once, as before.
type admission struct {
	total  int64 // bytes of the files the search may parse
	budget int64 // the cache's budget when the search started
	// Bytes read so far, and of those the bytes that passed the prefilter
	// and were parsed, with the cost of their trees.
	read, parsed, cost atomic.Int64
}

// admissionSample is how much a search reads before its share of the
// cache is projected; until then a search that could exceed its share
// caches at second sight only. (A variable for tests.)
var admissionSample int64 = 4 << 20

// admissionShare: a search whose trees are projected to take more than
// this share of the budget caches at second sight only.
const admissionShare = 4

func (a *admission) sawRead(n int) { a.read.Add(int64(n)) }

func (a *admission) sawParsed(n int, cost int64) {
	a.parsed.Add(int64(n))
	a.cost.Add(cost)
}

// firstSight reports whether trees of this search are cached the first
// time they are parsed: yes when every file's tree would fit in the share
// (at the usual cost of a tree per byte), else, once the search has read
// enough to tell, when the bytes parsed per byte read so far, times the
// search's bytes, times the cost of its trees per byte, fit.
func (a *admission) firstSight() bool {
	share := float64(a.budget / admissionShare)
	if float64(a.total)*treeCostPerByte <= share {
		return true
	}
	read, parsed, cost := a.read.Load(), a.parsed.Load(), a.cost.Load()
	if read < admissionSample || parsed == 0 {
		return false
	}
	return float64(a.total)*float64(parsed)/float64(read)*float64(cost)/float64(parsed) <= share
}

// treeCostPerByte is about what a tree costs per byte of its file.
const treeCostPerByte = 4.5

// procCache is the process's parse cache.
var procCache = newParseCache(DefaultCacheBytes)

// queryGen numbers queries across the process, for the cache's admission.
var queryGen atomic.Uint64

// SetProcessCacheBytes sets the byte budget of the parse cache all Engines
// in the process share (DefaultCacheBytes until set; 0 restores it,
// negative turns caching off for every engine). Lowering it evicts at
// once. Once it is called, Options.CacheBytes no longer sets the budget.
func SetProcessCacheBytes(n int64) {
	if n == 0 {
		n = DefaultCacheBytes
	}
	c := procCache
	c.mu.Lock()
	defer c.mu.Unlock()
	c.limit = n
	c.fixed = true
	c.shrink()
}

// ask sets the budget from the first Engine that names one, unless
// SetProcessCacheBytes has.
func (c *parseCache) ask(n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.fixed && !c.asked {
		c.asked = true
		c.limit = n
		c.shrink()
	}
}

// shrink evicts least recently used entries until the cache is within its
// budget (reservations in flight stay).
func (c *parseCache) shrink() {
	for c.used > c.limit || c.limit <= 0 {
		back := c.lru.Back()
		if back == nil {
			return
		}
		c.remove(back.Value.(*cacheEntry))
	}
}

// cacheUser is one Engine's handle on the process cache.
type cacheUser struct {
	c       *parseCache
	entries map[*cacheEntry]struct{} // guarded by c.mu
}

func (c *parseCache) user() *cacheUser { return &cacheUser{c: c} }

// lookupResult is one of: a tree (check its bytes first when racy), a
// claim the caller must fill or abandon, a channel to wait
// on before looking again, or nothing (parse without caching).
type lookupResult struct {
	t     *tree
	racy  bool
	entry *cacheEntry
	claim *cacheEntry
	wait  <-chan struct{}
}

func (u *cacheUser) lookup(key cacheKey, st fileStamp, gen uint64) lookupResult {
	c := u.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.limit <= 0 {
		return lookupResult{}
	}
	if e := c.byKey[key]; e != nil {
		switch {
		case e.t == nil && e.stamp == st:
			return lookupResult{wait: e.ready}
		case e.t == nil:
			// Another search is reading another version of the file.
			return lookupResult{}
		case e.stamp == st:
			c.lru.MoveToFront(e.el)
			e.gen = gen
			c.addUser(e, u)
			return lookupResult{t: e.t, racy: e.racy, entry: e}
		}
		c.remove(e)
	}
	e := &cacheEntry{key: key, stamp: st, ready: make(chan struct{})}
	c.byKey[key] = e
	return lookupResult{claim: e}
}

// treeCost is what a tree holds in memory.
func treeCost(srcLen, nodes int) int64 {
	return int64(srcLen) + int64(nodes)*nodeSize + 128
}

// admit reserves room for a tree of the given cost for query gen. It
// evicts only entries the current query has not used: a scan larger than
// the budget keeps what it cached first instead of evicting its own
// entries in a loop (which would leave nothing for the next query).
func (c *parseCache) admit(cost int64, gen uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.limit <= 0 || cost > c.limit/4 {
		return false
	}
	for c.used+cost > c.limit {
		back := c.lru.Back()
		if back == nil || back.Value.(*cacheEntry).gen == gen {
			return false
		}
		c.remove(back.Value.(*cacheEntry))
	}
	c.used += cost // reserved; fill takes it over
	return true
}

// unreserve gives back room admit reserved for a tree that was not filled.
func (c *parseCache) unreserve(cost int64) {
	c.mu.Lock()
	c.used -= cost
	c.mu.Unlock()
}

// fill stores the tree of a claim, with room admit reserved, and wakes
// whoever waits for it.
func (u *cacheUser) fill(claim *cacheEntry, t *tree, cost int64, gen uint64, isRacy bool) {
	c := u.c
	c.mu.Lock()
	defer c.mu.Unlock()
	defer close(claim.ready)
	if c.byKey[claim.key] != claim || c.limit <= 0 {
		c.used -= cost
		if c.byKey[claim.key] == claim {
			delete(c.byKey, claim.key)
		}
		return
	}
	claim.t, claim.cost, claim.gen, claim.racy = t, cost, gen, isRacy
	claim.el = c.lru.PushFront(claim)
	c.addUser(claim, u)
}

// abandon gives up a claim: whoever waits for it looks again.
func (c *parseCache) abandon(claim *cacheEntry) {
	c.mu.Lock()
	if c.byKey[claim.key] == claim {
		delete(c.byKey, claim.key)
	}
	c.mu.Unlock()
	close(claim.ready)
}

// drop evicts an entry whose bytes turned out to differ from the file's.
func (c *parseCache) drop(e *cacheEntry) {
	c.mu.Lock()
	if c.byKey[e.key] == e && e.t != nil {
		c.remove(e)
	}
	c.mu.Unlock()
}

// settle marks an entry checked at a time its stamp can be trusted.
func (c *parseCache) settle(e *cacheEntry) {
	c.mu.Lock()
	e.racy = false
	c.mu.Unlock()
}

func (c *parseCache) addUser(e *cacheEntry, u *cacheUser) {
	if _, ok := u.entries[e]; ok {
		return
	}
	if u.entries == nil {
		u.entries = map[*cacheEntry]struct{}{}
	}
	u.entries[e] = struct{}{}
	e.users = append(e.users, u)
}

// remove evicts a filled entry.
func (c *parseCache) remove(e *cacheEntry) {
	c.lru.Remove(e.el)
	if c.byKey[e.key] == e {
		delete(c.byKey, e.key)
	}
	c.used -= e.cost
	for _, u := range e.users {
		delete(u.entries, e)
	}
	e.users = nil
}

// release is Close's part: u's entries that no other open engine used
// are evicted.
func (u *cacheUser) release() {
	c := u.c
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := range u.entries {
		for i, x := range e.users {
			if x == u {
				last := len(e.users) - 1
				e.users[i] = e.users[last]
				e.users[last] = nil
				e.users = e.users[:last]
				break
			}
		}
		if len(e.users) == 0 {
			c.remove(e)
		}
	}
	u.entries = nil
}

// clear evicts every filled entry (pending ones finish on their own).
func (c *parseCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.lru.Len() > 0 {
		c.remove(c.lru.Back().Value.(*cacheEntry))
	}
}

// sameBytes reports whether the file at abs still has stamp st and holds
// exactly src, reading it in small pieces.
func sameBytes(g *pathguard.Guard, abs string, st fileStamp, src []byte) bool {
	f, info, err := g.Open(abs)
	if err != nil {
		return false
	}
	defer f.Close()
	if now, ok := stampOf(info); !ok || now != st {
		return false
	}
	bp := cmpBufs.Get().(*[]byte)
	defer cmpBufs.Put(bp)
	buf := *bp
	for {
		n, err := f.Read(buf)
		if n > len(src) || !bytes.Equal(buf[:n], src[:n]) {
			return false
		}
		src = src[n:]
		if err == io.EOF {
			return len(src) == 0
		}
		if err != nil {
			return false
		}
	}
}

var cmpBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// peek returns the cached tree of key if it is there for stamp st (its
// bytes checked when the stamp was racy), without claiming a miss: a
// reader that does not fill the cache.
func (u *cacheUser) peek(key cacheKey, st fileStamp, gen uint64, g *pathguard.Guard) *tree {
	c := u.c
	c.mu.Lock()
	e := c.byKey[key]
	if e == nil || e.t == nil || e.stamp != st {
		c.mu.Unlock()
		return nil
	}
	c.lru.MoveToFront(e.el)
	e.gen = gen
	c.addUser(e, u)
	t, isRacy := e.t, e.racy
	c.mu.Unlock()
	if isRacy && !sameBytes(g, key.path, st, t.src) {
		c.drop(e)
		return nil
	}
	return t
}
