package astgrep

import (
	"container/list"
	"sync"
	"time"
)

// parseCache keeps parsed files of one Engine, keyed by path and language
// and validated by size and modification time, evicting the least recently
// used past a byte budget. A second query in the same run then skips both
// the read and the parse of files it already saw.
type parseCache struct {
	mu     sync.Mutex
	limit  int64
	used   int64
	lru    *list.List // of *cacheEntry, front = most recent
	byKey  map[string]*list.Element
	hits   int64
	misses int64
}

type cacheEntry struct {
	key   string
	size  int64
	mtime time.Time
	t     *tree
	cost  int64
	gen   uint64 // the last query that used it
}

func newParseCache(limit int64) *parseCache {
	return &parseCache{limit: limit, lru: list.New(), byKey: map[string]*list.Element{}}
}

func cacheKey(path, lang string) string { return lang + "\x00" + path }

// get returns the cached tree when size and mtime still agree, marking it
// used by query gen.
func (c *parseCache) get(path, lang string, size int64, mtime time.Time, gen uint64) *tree {
	if c == nil || c.limit <= 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[cacheKey(path, lang)]
	if !ok {
		c.misses++
		return nil
	}
	e := el.Value.(*cacheEntry)
	if e.size != size || !e.mtime.Equal(mtime) {
		c.remove(el)
		c.misses++
		return nil
	}
	c.lru.MoveToFront(el)
	e.gen = gen
	c.hits++
	return e.t
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
	if c == nil || c.limit <= 0 || cost > c.limit/4 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.used+cost > c.limit {
		back := c.lru.Back()
		if back == nil || back.Value.(*cacheEntry).gen == gen {
			return false
		}
		c.remove(back)
	}
	c.used += cost // reserved; put takes it over
	return true
}

// unreserve gives back room admit reserved for a tree that was not put.
func (c *parseCache) unreserve(cost int64) {
	c.mu.Lock()
	c.used -= cost
	c.mu.Unlock()
}

// put stores a tree admitted with admit.
func (c *parseCache) put(path, lang string, size int64, mtime time.Time, t *tree, cost int64, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := cacheKey(path, lang)
	if el, ok := c.byKey[key]; ok {
		c.remove(el)
	}
	el := c.lru.PushFront(&cacheEntry{key: key, size: size, mtime: mtime, t: t, cost: cost, gen: gen})
	c.byKey[key] = el
}

func (c *parseCache) remove(el *list.Element) {
	e := el.Value.(*cacheEntry)
	c.lru.Remove(el)
	delete(c.byKey, e.key)
	c.used -= e.cost
}

func (c *parseCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Init()
	c.byKey = map[string]*list.Element{}
	c.used = 0
}
