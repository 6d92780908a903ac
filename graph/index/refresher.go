package index

import (
	"path/filepath"
	"runtime"
)

// The background refresher re-reads the files changed outside the tools
// that Sync did not read before answering (past syncNow). It runs at most
// refreshWorkers files at once, one less than the process's cores, so a
// query always has a core to answer on while a large change (a checkout)
// is read; queries read the snapshots it publishes file by file.

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
			x.pendMu.Unlock()
			return
		}
		abs := x.queued[0]
		x.queued[0] = ""
		x.queued = x.queued[1:]
		delete(x.queuedSet, abs)
		x.inflight[abs]++
		x.pendMu.Unlock()
		if BeforeBackgroundReadForTest != nil {
			BeforeBackgroundReadForTest(abs)
		}
		if !x.current(abs) {
			x.Refresh(x.ctx, abs) // an error is ctx's: the index is closing
		}
		x.pendMu.Lock()
		if x.inflight[abs]--; x.inflight[abs] == 0 {
			delete(x.inflight, abs)
		}
		x.pendMu.Unlock()
	}
}

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

// Pending says how many changed files the refresher has still to re-read.
func (x *Index) Pending() int {
	x.pendMu.Lock()
	defer x.pendMu.Unlock()
	n := len(x.queued)
	for a := range x.inflight { // a file queued again while read is one file
		if !x.queuedSet[a] {
			n++
		}
	}
	return n
}
