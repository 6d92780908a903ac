package index

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"os"
	"path/filepath"
	"sync"

	"github.com/builtin-tools/builtin-tools/graph/index/ondisk"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// Answers quote source lines of the files their sites are in (a large
// callers answer some eighty files). Reading and splitting them again for
// each answer was a quarter of a query's time while the index refreshed,
// so the lines of the files quoted last are kept, by content hash, across
// snapshots: a file re-read with other bytes has another hash, and the
// lines of files no longer quoted fall out.

// maxQuoteBytes bounds the bytes (text and line slices) the quote cache
// keeps.
const maxQuoteBytes = 16 << 20

type quoteCache struct {
	mu    sync.Mutex
	m     map[[32]byte]*list.Element // → *quoted
	lru   list.List                  // most recent first
	bytes int64
}

type quoted struct {
	hash  [32]byte
	lines [][]byte // into one copy of the file's bytes; never changed
	cost  int64
}

// Lines is the text of e's file, split at newlines, when the file on
// disk is still as e was read (its stamp); ok false otherwise (the caller
// reads the file itself, as it is now). The lines are shared: never
// change them.
func (x *Index) Lines(e *snap.Entry) (lines [][]byte, ok bool) {
	abs := filepath.Join(x.root, filepath.FromSlash(e.Rel))
	// A plain lstat, not the guard's walk of the path: it only checks
	// that the file is still the one whose lines are kept (read through
	// the guard), and anything else there (a link, another file, one
	// outside the root) has another stamp.
	if info, err := os.Lstat(abs); err != nil || !info.Mode().IsRegular() || ondisk.Stamp(info) != e.Stamp {
		return nil, false
	}
	c := &x.quotes
	c.mu.Lock()
	if el, hit := c.m[e.Content]; hit {
		c.lru.MoveToFront(el)
		c.mu.Unlock()
		return el.Value.(*quoted).lines, true
	}
	c.mu.Unlock()
	data, info, err := x.guard.ReadFile(abs, x.opts.MaxFileSize)
	// The bytes read must be the ones e was read from: the same stamp
	// after the read, and the same hash.
	if err != nil || ondisk.Stamp(info) != e.Stamp || sha256.Sum256(data) != e.Content {
		return nil, false
	}
	q := &quoted{hash: e.Content, lines: bytes.Split(data, []byte("\n"))}
	q.cost = int64(len(data)) + 24*int64(len(q.lines)) + 64
	if q.cost > maxQuoteBytes/4 {
		return q.lines, true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, hit := c.m[e.Content]; hit { // another answer read it meanwhile
		return el.Value.(*quoted).lines, true
	}
	if c.m == nil {
		c.m = map[[32]byte]*list.Element{}
	}
	c.m[e.Content] = c.lru.PushFront(q)
	c.bytes += q.cost
	for c.bytes > maxQuoteBytes {
		old := c.lru.Back()
		o := old.Value.(*quoted)
		c.lru.Remove(old)
		delete(c.m, o.hash)
		c.bytes -= o.cost
	}
	return q.lines, true
}
