package astgrep

import (
	"github.com/builtin-tools/builtin-tools/astgrep/parsecache"
	"github.com/builtin-tools/builtin-tools/astgrep/tsnative"
)

// procCache is the process's parse cache (see package parsecache): every
// Engine uses it, under one budget.
var procCache = parsecache.New[*tree](DefaultCacheBytes)

// SetProcessCacheBytes sets the byte budget of the parse cache all Engines
// in the process share (DefaultCacheBytes until set; 0 restores it,
// negative turns caching off for every engine). Lowering it evicts at
// once. Once it is called, Options.CacheBytes no longer sets the budget.
func SetProcessCacheBytes(n int64) { procCache.SetLimit(n) }

// treeCost is what a tree holds in memory.
func treeCost(srcLen, nodes int) int64 {
	return int64(srcLen) + int64(nodes)*tsnative.NodeSize + 128
}

// Source is the bytes t was parsed from (the cache checks a racy entry's
// against its file).
func (t *tree) Source() []byte { return t.src }
