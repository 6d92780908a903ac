package parsecache

import "sync/atomic"

// Admission decides, for one search, whether a tree is cached the first
// time it is parsed. A search whose trees would take a large share of the
// cache (an unselective pattern over a large tree) caches a tree only on
// its second sight, so one cold search peaks at what it parses at once,
// not at every tree it parsed, and does not flush what earlier searches
// cached; a later search over the same files fills the cache. A smaller
// search (a selective pattern, whose prefilter passes few files, or a
// small tree) caches what it parses at once, as before.
type Admission struct {
	total  int64 // bytes of the files the search may parse
	budget int64 // the cache's budget when the search started
	// Bytes read so far, and of those the bytes that passed the prefilter
	// and were parsed, with the cost of their trees.
	read, parsed, cost atomic.Int64
}

// NewAdmission starts the admission of a search that may parse total
// bytes into a cache of the given budget.
func NewAdmission(total, budget int64) *Admission {
	return &Admission{total: total, budget: budget}
}

// AdmissionSample is how much a search reads before its share of the
// cache is projected; until then a search that could exceed its share
// caches at second sight only. (A variable so tests can shorten it.)
var AdmissionSample int64 = 4 << 20

// admissionShare: a search whose trees are projected to take more than
// this share of the budget caches at second sight only.
const admissionShare = 4

// SawRead counts n bytes read.
func (a *Admission) SawRead(n int) { a.read.Add(int64(n)) }

// SawParsed counts n bytes parsed into a tree of the given cost.
func (a *Admission) SawParsed(n int, cost int64) {
	a.parsed.Add(int64(n))
	a.cost.Add(cost)
}

// FirstSight reports whether trees of this search are cached the first
// time they are parsed: yes when every file's tree would fit in the share
// (at the usual cost of a tree per byte), else, once the search has read
// enough to tell, when the bytes parsed per byte read so far, times the
// search's bytes, times the cost of its trees per byte, fit.
func (a *Admission) FirstSight() bool {
	share := float64(a.budget / admissionShare)
	if float64(a.total)*treeCostPerByte <= share {
		return true
	}
	read, parsed, cost := a.read.Load(), a.parsed.Load(), a.cost.Load()
	if read < AdmissionSample || parsed == 0 {
		return false
	}
	return float64(a.total)*float64(parsed)/float64(read)*float64(cost)/float64(parsed) <= share
}

// treeCostPerByte is about what a tree costs per byte of its file.
const treeCostPerByte = 4.5
