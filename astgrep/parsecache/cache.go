package parsecache

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
// Each entry records the open engines that used it; Release drops the
// engine from its entries and evicts those no other open engine used.

// Tree is what the cache holds: a parse, immutable once cached, and the
// bytes it was parsed from (to check a racy entry against its file).
type Tree interface {
	Source() []byte
}

// Key names what a tree was parsed from.
type Key struct {
	Path    string
	Lang    string
	Grammar uintptr // the TSLanguage's address; grammars stay loaded for the life of the process
}

// Stamp is what says a file has not changed (see StampOf).
type Stamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // Unix nanoseconds
}

// racyWindow covers the coarsest timestamp tick of a file system this
// runs on: a file whose change time is this close to the moment it was
// read may change again without its stamp changing.
const racyWindow = int64(2 * time.Second)

// Racy reports whether a file of stamp st, read from readStart on, may
// have changed since without its stamp moving: its tree is then checked
// against the file's bytes when next used.
func Racy(st Stamp, readStart time.Time) bool {
	return st.ctime >= readStart.UnixNano()-racyWindow
}

// Entry is one file's place in the cache: a filled tree, or a claim on a
// parse in flight.
type Entry[T Tree] struct {
	key   Key
	stamp Stamp
	t     T
	full  bool // t is set; false while pending
	cost  int64
	gen   uint64 // the last query that used it
	racy  bool   // check the bytes before serving
	el    *list.Element
	ready chan struct{} // closed once a pending entry is filled or abandoned
	users []*User[T]    // open engines that used it
}

// Cache is a parse cache under a byte budget. It is safe for concurrent
// use.
type Cache[T Tree] struct {
	mu    sync.Mutex
	limit int64
	def   int64 // the budget SetLimit(0) restores
	fixed bool  // SetLimit set the limit
	asked bool  // an Engine's Options.CacheBytes set it
	used  int64
	lru   *list.List // of filled *Entry, front = most recent
	byKey map[Key]*Entry[T]
	// seen holds the files a large search parsed without caching them
	// (see Admission): the next search to parse one caches it.
	seen map[seenKey]struct{}
	gen  atomic.Uint64 // numbers queries, for admission
}

type seenKey struct {
	key   Key
	stamp Stamp
}

// maxSeen bounds the seen set (about 100 bytes an entry); past it the set
// starts again.
const maxSeen = 1 << 17

// New makes a cache whose budget is limit bytes until SetLimit or Ask
// changes it.
func New[T Tree](limit int64) *Cache[T] {
	return &Cache[T]{limit: limit, def: limit, lru: list.New(), byKey: map[Key]*Entry[T]{}, seen: map[seenKey]struct{}{}}
}

// NextGen numbers a new query: entries a query used are not evicted to
// make room for its own trees (see Admit).
func (c *Cache[T]) NextGen() uint64 { return c.gen.Add(1) }

// SecondSight records that a search parsed claim's file at its stamp
// without caching it, and reports whether one had already: a file parsed
// twice is worth its room.
func (c *Cache[T]) SecondSight(claim *Entry[T]) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := seenKey{claim.key, claim.stamp}
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

// Budget returns the cache's byte budget.
func (c *Cache[T]) Budget() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.limit
}

// SetLimit sets the byte budget (0 restores the one New gave, negative
// turns caching off). Lowering it evicts at once. Once it is called, Ask
// no longer sets the budget.
func (c *Cache[T]) SetLimit(n int64) {
	if n == 0 {
		n = c.def
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.limit = n
	c.fixed = true
	c.shrink()
}

// Ask sets the budget from the first Engine that names one, unless
// SetLimit has.
func (c *Cache[T]) Ask(n int64) {
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
func (c *Cache[T]) shrink() {
	for c.used > c.limit || c.limit <= 0 {
		back := c.lru.Back()
		if back == nil {
			return
		}
		c.remove(back.Value.(*Entry[T]))
	}
}

// User is one Engine's handle on the cache: the entries it used, evicted
// by Release unless another open engine used them too.
type User[T Tree] struct {
	c       *Cache[T]
	entries map[*Entry[T]]struct{} // guarded by c.mu
}

// User makes a handle for one Engine.
func (c *Cache[T]) User() *User[T] { return &User[T]{c: c} }

// Lookup is one of: a tree (check its bytes first when Racy), a claim the
// caller must fill or abandon, a channel to wait on before looking again,
// or nothing (parse without caching).
type Lookup[T Tree] struct {
	Tree  T
	Found bool      // Tree is set
	Racy  bool      // check Tree's bytes with SameBytes before using it
	Entry *Entry[T] // Tree's entry, to Drop or Settle
	Claim *Entry[T]
	Wait  <-chan struct{}
}

// Lookup looks key up for query gen at the file's stamp st.
func (u *User[T]) Lookup(key Key, st Stamp, gen uint64) Lookup[T] {
	c := u.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.limit <= 0 {
		return Lookup[T]{}
	}
	if e := c.byKey[key]; e != nil {
		switch {
		case !e.full && e.stamp == st:
			return Lookup[T]{Wait: e.ready}
		case !e.full:
			// Another search is reading another version of the file.
			return Lookup[T]{}
		case e.stamp == st:
			c.lru.MoveToFront(e.el)
			e.gen = gen
			c.addUser(e, u)
			return Lookup[T]{Tree: e.t, Found: true, Racy: e.racy, Entry: e}
		}
		c.remove(e)
	}
	e := &Entry[T]{key: key, stamp: st, ready: make(chan struct{})}
	c.byKey[key] = e
	return Lookup[T]{Claim: e}
}

// Admit reserves room for a tree of the given cost for query gen. It
// evicts only entries the current query has not used: a scan larger than
// the budget keeps what it cached first instead of evicting its own
// entries in a loop (which would leave nothing for the next query).
func (c *Cache[T]) Admit(cost int64, gen uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.limit <= 0 || cost > c.limit/4 {
		return false
	}
	for c.used+cost > c.limit {
		back := c.lru.Back()
		if back == nil || back.Value.(*Entry[T]).gen == gen {
			return false
		}
		c.remove(back.Value.(*Entry[T]))
	}
	c.used += cost // reserved; Fill takes it over
	return true
}

// Unreserve gives back room Admit reserved for a tree that was not filled.
func (c *Cache[T]) Unreserve(cost int64) {
	c.mu.Lock()
	c.used -= cost
	c.mu.Unlock()
}

// Fill stores the tree of a claim, with room Admit reserved, and wakes
// whoever waits for it.
func (u *User[T]) Fill(claim *Entry[T], t T, cost int64, gen uint64, isRacy bool) {
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
	claim.t, claim.full, claim.cost, claim.gen, claim.racy = t, true, cost, gen, isRacy
	claim.el = c.lru.PushFront(claim)
	c.addUser(claim, u)
}

// Abandon gives up a claim: whoever waits for it looks again.
func (c *Cache[T]) Abandon(claim *Entry[T]) {
	c.mu.Lock()
	if c.byKey[claim.key] == claim {
		delete(c.byKey, claim.key)
	}
	c.mu.Unlock()
	close(claim.ready)
}

// Drop evicts an entry whose bytes turned out to differ from the file's.
func (c *Cache[T]) Drop(e *Entry[T]) {
	c.mu.Lock()
	if c.byKey[e.key] == e && e.full {
		c.remove(e)
	}
	c.mu.Unlock()
}

// Settle marks an entry checked at a time its stamp can be trusted.
func (c *Cache[T]) Settle(e *Entry[T]) {
	c.mu.Lock()
	e.racy = false
	c.mu.Unlock()
}

func (c *Cache[T]) addUser(e *Entry[T], u *User[T]) {
	if _, ok := u.entries[e]; ok {
		return
	}
	if u.entries == nil {
		u.entries = map[*Entry[T]]struct{}{}
	}
	u.entries[e] = struct{}{}
	e.users = append(e.users, u)
}

// remove evicts a filled entry.
func (c *Cache[T]) remove(e *Entry[T]) {
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

// Release is an Engine's Close: u's entries that no other open engine
// used are evicted.
func (u *User[T]) Release() {
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

// Clear evicts every filled entry (pending ones finish on their own).
func (c *Cache[T]) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.lru.Len() > 0 {
		c.remove(c.lru.Back().Value.(*Entry[T]))
	}
}

// Len returns the number of trees cached.
func (c *Cache[T]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// SameBytes reports whether the file at abs still has stamp st and holds
// exactly src, reading it in small pieces.
func SameBytes(g *pathguard.Guard, abs string, st Stamp, src []byte) bool {
	f, info, err := g.Open(abs)
	if err != nil {
		return false
	}
	defer f.Close()
	if now, ok := StampOf(info); !ok || now != st {
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

// Peek returns the cached tree of key if it is there for stamp st (its
// bytes checked when the stamp was racy), without claiming a miss: a
// reader that does not fill the cache.
func (u *User[T]) Peek(key Key, st Stamp, gen uint64, g *pathguard.Guard) (T, bool) {
	var none T
	c := u.c
	c.mu.Lock()
	e := c.byKey[key]
	if e == nil || !e.full || e.stamp != st {
		c.mu.Unlock()
		return none, false
	}
	c.lru.MoveToFront(e.el)
	e.gen = gen
	c.addUser(e, u)
	t, isRacy := e.t, e.racy
	c.mu.Unlock()
	if isRacy && !SameBytes(g, key.Path, st, t.Source()) {
		c.Drop(e)
		return none, false
	}
	return t, true
}
