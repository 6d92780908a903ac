package snap

import (
	"hash/maphash"
	"maps"
	"slices"
	"sync/atomic"
)

// Copy on write. A published snapshot shares everything it did not change
// with the one before: the builder copies a table's shard array, a shard,
// a posting list or a chunk of the files table only the first time it
// writes to it after a publish. What a builder may write in place is
// marked with its epoch, a number no other batch of any builder has.

var epochs atomic.Uint64

func newEpoch() uint64 { return epochs.Add(1) }

var seed = maphash.MakeSeed()

// table is a map from strings to V, sharded so that a change copies one
// shard, not the map. The shard count grows with the keys (doubling, a
// whole copy each time), so a small table costs little and a large one
// keeps shards of a few dozen keys.
type table[V any] struct {
	epoch  uint64
	shards []*shard[V] // a power of two
	n      int         // keys
}

type shard[V any] struct {
	epoch uint64
	m     map[string]V
}

const (
	minShards    = 8
	keysPerShard = 32
)

func newTable[V any](epoch uint64) *table[V] {
	return &table[V]{epoch: epoch, shards: make([]*shard[V], minShards)}
}

func (t *table[V]) shardOf(k string) int {
	return int(maphash.String(seed, k) & uint64(len(t.shards)-1))
}

func (t *table[V]) get(k string) (V, bool) {
	if sh := t.shards[t.shardOf(k)]; sh != nil {
		v, ok := sh.m[k]
		return v, ok
	}
	var zero V
	return zero, false
}

func (t *table[V]) each(fn func(string, V) bool) {
	for _, sh := range t.shards {
		if sh == nil {
			continue
		}
		for k, v := range sh.m {
			if !fn(k, v) {
				return
			}
		}
	}
}

// own is t, or a copy of it the batch of epoch e may change: the shard
// array is copied, the shards are shared until written.
func (t *table[V]) own(e uint64) *table[V] {
	if t.epoch == e {
		return t
	}
	return &table[V]{epoch: e, shards: slices.Clone(t.shards), n: t.n}
}

// shard returns the shard of k, the batch's own to change. t is owned.
func (t *table[V]) shard(e uint64, k string) *shard[V] {
	i := t.shardOf(k)
	sh := t.shards[i]
	switch {
	case sh == nil:
		sh = &shard[V]{epoch: e, m: map[string]V{}}
		t.shards[i] = sh
	case sh.epoch != e:
		sh = &shard[V]{epoch: e, m: maps.Clone(sh.m)}
		t.shards[i] = sh
	}
	return sh
}

// set and del change an owned table.
func (t *table[V]) set(e uint64, k string, v V) {
	sh := t.shard(e, k)
	_, ok := sh.m[k]
	sh.m[k] = v
	if !ok {
		t.added(e)
	}
}

// added counts a key just put in a shard of the owned table.
func (t *table[V]) added(e uint64) {
	t.n++
	if t.n > keysPerShard*len(t.shards) {
		t.grow(e)
	}
}

func (t *table[V]) del(e uint64, k string) {
	if _, ok := t.get(k); !ok {
		return
	}
	sh := t.shard(e, k)
	delete(sh.m, k)
	t.n--
}

// grow doubles the shards, moving every key: new shards, all owned.
func (t *table[V]) grow(e uint64) {
	old := t.shards
	t.shards = make([]*shard[V], 2*len(old))
	for _, sh := range old {
		if sh == nil {
			continue
		}
		for k, v := range sh.m {
			i := t.shardOf(k)
			if t.shards[i] == nil {
				t.shards[i] = &shard[V]{epoch: e, m: map[string]V{}}
			}
			t.shards[i].m[k] = v
		}
	}
}

// chunks is the files table: entries by id, in chunks of chunkSize, so a
// change copies one chunk and the (short) list of chunks.
type chunks struct {
	epoch uint64
	c     []*chunk
}

const chunkSize = 256

type chunk struct {
	epoch uint64
	e     [chunkSize]*Entry
}

func (c *chunks) at(id FileID) *Entry {
	if i := int(id) / chunkSize; i < len(c.c) {
		return c.c[i].e[int(id)%chunkSize]
	}
	return nil
}

func (c *chunks) len() int { return len(c.c) * chunkSize }

func (c *chunks) own(e uint64) *chunks {
	if c.epoch == e {
		return c
	}
	return &chunks{epoch: e, c: slices.Clone(c.c)}
}

// set changes an owned files table, growing it for a new id.
func (c *chunks) set(e uint64, id FileID, v *Entry) {
	i := int(id) / chunkSize
	for i >= len(c.c) {
		c.c = append(c.c, &chunk{epoch: e})
	}
	ch := c.c[i]
	if ch.epoch != e {
		cp := *ch
		cp.epoch = e
		ch = &cp
		c.c[i] = ch
	}
	ch.e[int(id)%chunkSize] = v
}
