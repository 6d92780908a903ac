package index

import (
	"path/filepath"
	"runtime"
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

// split returns the changed files (absolute paths) Sync re-reads now: up
// to syncNow of them, and every deleted one (dropping costs no parse). The
// others are queued for the refresher, as is a file a worker is reading
// (its bytes may have changed again after it began), unless queued
// already.
func (x *Index) split(changed []string) []string {
	x.pendMu.Lock()
	defer x.pendMu.Unlock()
	var now []string
	seen := make(map[string]bool, len(changed))
	read := 0
	for _, a := range changed {
		if seen[a] || x.queuedSet[a] {
			continue
		}
		seen[a] = true
		if x.inflight[a] > 0 {
			x.enqueue(a)
			continue
		}
		if _, err := x.guard.Lstat(a); err != nil {
			now = append(now, a)
			continue
		}
		if read < syncNow {
			read++
			now = append(now, a)
			continue
		}
		x.enqueue(a)
	}
	x.recount()
	return now
}

// enqueue queues a file for the refresher and starts a worker when fewer
// than refreshWorkers run. x.pendMu is held.
func (x *Index) enqueue(abs string) {
	if x.ctx.Err() != nil {
		return
	}
	x.queued = append(x.queued, abs)
	x.queuedSet[abs] = true
	if x.workers < refreshWorkers() {
		x.workers++
		x.workRun.Add(1)
		go x.refreshWorker()
	}
}

// refreshWorker re-reads queued files until none is left or the index is
// closed.
func (x *Index) refreshWorker() {
	defer x.workRun.Done()
	for {
		x.pendMu.Lock()
		if x.ctx.Err() != nil {
			x.queued, x.queuedSet = nil, map[string]bool{}
		}
		if len(x.queued) == 0 {
			x.workers--
			x.recount()
			x.pendMu.Unlock()
			return
		}
		batch := append([]string(nil), x.queued[:min(refreshBatch, len(x.queued))]...)
		clear(x.queued[:len(batch)])
		x.queued = x.queued[len(batch):]
		for _, a := range batch {
			delete(x.queuedSet, a)
			x.inflight[a]++
		}
		x.recount()
		x.pendMu.Unlock()
		var todo []string
		for _, a := range batch {
			if BeforeBackgroundReadForTest != nil {
				BeforeBackgroundReadForTest(a)
			}
			if !x.current(a) {
				todo = append(todo, a)
			}
		}
		// Published once at the end (or every 250 ms): each snapshot
		// costs queries the resolver's per-snapshot caches.
		x.refresh(x.ctx, todo, true) // an error is ctx's: the index is closing
		x.pendMu.Lock()
		for _, a := range batch {
			if x.inflight[a]--; x.inflight[a] == 0 {
				delete(x.inflight, a)
			}
		}
		x.recount()
		x.pendMu.Unlock()
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
func (x *Index) current(abs string) bool {
	rel, err := filepath.Rel(x.root, abs)
	if err != nil {
		return false
	}
	f := x.Snapshot().Entry(filepath.ToSlash(rel))
	st, err := x.guard.Lstat(abs)
	return f != nil && err == nil && unchanged(f, st)
}

// Pending says how many changed files the refresher has still to re-read
// (a query reads it with no lock).
func (x *Index) Pending() int { return int(x.pending.Load()) }

// recount sets what Pending says. x.pendMu is held.
func (x *Index) recount() {
	n := len(x.queued)
	for a := range x.inflight { // a file queued again while read is one file
		if !x.queuedSet[a] {
			n++
		}
	}
	x.pending.Store(int64(n))
}
