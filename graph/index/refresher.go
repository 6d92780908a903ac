package index

import (
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/builtin-tools/builtin-tools/graph/index/ondisk"
)

// The background refresher re-reads the files changed outside the tools
// that Sync did not read before answering (past syncNow). It runs at most
// refreshWorkers files at once, one less than the process's cores, so a
// query always has a core to answer on while a large change (a checkout)
// is read; queries read the snapshots it publishes every few files.

// refreshWorkers is how many files the refresher reads at once.
func refreshWorkers() int { return max(1, runtime.GOMAXPROCS(0)-1) }

// BeforeBackgroundReadForTest, when set by a test, runs in a refresher
// worker before it re-reads a file (its absolute path): a test holds the
// refresher there to see an answer with files pending.
var BeforeBackgroundReadForTest func(abs string)

// refresher holds the files Sync left to the background: queued, and
// being read by at most refreshWorkers workers.
type refresher struct {
	x         *Index
	mu        sync.Mutex
	queued    []string // absolute paths, in the order they were noticed
	queuedSet map[string]bool
	inflight  map[string]int // absolute paths a worker is re-reading
	workers   int            // workers running
	pending   atomic.Int64   // files queued or in flight (Pending)
	run       sync.WaitGroup
}

// stop drops what is queued and waits for the workers, which stop at
// their next file (the index's context has ended).
func (r *refresher) stop() {
	r.mu.Lock() // no worker is started past here (enqueue checks ctx)
	r.queued, r.queuedSet = nil, map[string]bool{}
	r.recount()
	r.mu.Unlock()
	r.run.Wait()
}

// split returns the changed files (absolute paths) Sync re-reads now: up
// to syncNow of them, and every deleted one (dropping costs no parse). The
// others are queued for the refresher, as is a file a worker is reading
// (its bytes may have changed again after it began), unless queued
// already.
func (r *refresher) split(changed []string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var now []string
	seen := make(map[string]bool, len(changed))
	read := 0
	for _, a := range changed {
		if seen[a] || r.queuedSet[a] {
			continue
		}
		seen[a] = true
		if r.inflight[a] > 0 {
			r.enqueue(a)
			continue
		}
		if _, err := r.x.guard.Lstat(a); err != nil {
			now = append(now, a)
			continue
		}
		if read < syncNow {
			read++
			now = append(now, a)
			continue
		}
		r.enqueue(a)
	}
	r.recount()
	return now
}

// enqueue queues a file for the refresher and starts a worker when fewer
// than refreshWorkers run. r.mu is held.
func (r *refresher) enqueue(abs string) {
	if r.x.ctx.Err() != nil {
		return
	}
	r.queued = append(r.queued, abs)
	r.queuedSet[abs] = true
	if r.workers < refreshWorkers() {
		r.workers++
		r.run.Add(1)
		go r.worker()
	}
}

// refreshWorker re-reads queued files until none is left or the index is
// closed.
func (r *refresher) worker() {
	defer r.run.Done()
	for {
		r.mu.Lock()
		if r.x.ctx.Err() != nil {
			r.queued, r.queuedSet = nil, map[string]bool{}
		}
		if len(r.queued) == 0 {
			r.workers--
			r.recount()
			r.mu.Unlock()
			return
		}
		batch := append([]string(nil), r.queued[:min(refreshBatch, len(r.queued))]...)
		clear(r.queued[:len(batch)])
		r.queued = r.queued[len(batch):]
		for _, a := range batch {
			delete(r.queuedSet, a)
			r.inflight[a]++
		}
		r.recount()
		r.mu.Unlock()
		var todo []string
		for _, a := range batch {
			if BeforeBackgroundReadForTest != nil {
				BeforeBackgroundReadForTest(a)
			}
			if !r.current(a) {
				todo = append(todo, a)
			}
		}
		// Published once at the end (or every 250 ms): each snapshot
		// costs queries the resolver's per-snapshot caches.
		r.x.refresh(r.x.ctx, todo, true) // an error is ctx's: the index is closing
		r.mu.Lock()
		for _, a := range batch {
			if r.inflight[a]--; r.inflight[a] == 0 {
				delete(r.inflight, a)
			}
		}
		r.recount()
		r.mu.Unlock()
	}
}

// refreshBatch is how many files a worker re-reads, one at a time, before
// it publishes them: a few parses' time, so a query that just sees a newer
// snapshot rebuilds the resolver's per-snapshot caches an eighth as often
// as after every file.
const refreshBatch = 8

// current says whether the published snapshot holds the file as it is on
// disk (a write's Refresh, or an earlier worker, read it since it was
// queued).
func (r *refresher) current(abs string) bool {
	x := r.x
	rel, err := filepath.Rel(x.root, abs)
	if err != nil {
		return false
	}
	f := x.Snapshot().Entry(filepath.ToSlash(rel))
	st, err := x.guard.Lstat(abs)
	return f != nil && err == nil && ondisk.Unchanged(f, st)
}

// recount sets what State().Pending says. r.mu is held.
func (r *refresher) recount() {
	n := len(r.queued)
	for a := range r.inflight { // a file queued again while read is one file
		if !r.queuedSet[a] {
			n++
		}
	}
	r.pending.Store(int64(n))
}
