// Package pool holds the running language servers the runs of one
// process share (LSP-7): an entry per start's key (its row, root folder,
// the runs' root, the trust and a digest of what else shapes the start),
// counted once per run holding it, started once by the first run that
// asks, stopped when the last one lets go, when no run has used it for
// the idle time, or before another start to keep within the memory budget
// (LSP-8), least recently used first; and the listing of what it holds.
// It knows a server only as a [Member]: package lsp starts them.
package pool

import (
	"cmp"
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/lifetime"
	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// A run's Close waits at most CloseTimeout in all for its servers to stop
// (so does a stop for the budget), and a stop at most StartGrace for a
// start under way that it cancelled.
const (
	CloseTimeout = 10 * time.Second
	StartGrace   = 2 * time.Second
)

// Pool holds running language servers for the Supervisors (runs) that
// use it, so that runs of one process over the same folder share each
// server (LSP-7). A server is keyed by its row, its root folder, the run's
// root, the trust of the checkout and everything that changes its start
// (program, arguments, environment, settings, time limits): an untrusted
// run never gets a server a trusted one started, nor the reverse. Each
// Supervisor holding a server counts once; the server stops when the last
// one lets go (Close), or earlier when no run has used it for the idle
// time. Document state (open files, versions) belongs to the server and is
// shared; what a run was shown — its ledger, action ids, crash notes,
// late diagnostics — stays with the run. The servers keep within one
// memory budget (LSP-8, [Pool.SetBudget]).
//
// A Pool's methods are safe for concurrent use; its zero value is not
// usable: call [New] or use [Process].
type Pool struct {
	mu      sync.Mutex
	entries map[Key]*Entry
	// budget bounds the servers' resident memory, in KiB (LSP-8): 0 a
	// quarter of the machine's, < 0 none.
	budget int64
	stops  []BudgetStop // the latest stops for the budget, oldest first
}

// New returns an empty pool with the default memory budget.
func New() *Pool { return &Pool{entries: map[Key]*Entry{}} }

// SetBudget sets the memory budget of the servers the pool holds, in
// bytes: 0 is the default (a quarter of the machine's memory), a negative
// one turns it off. It applies from the next server start.
func (p *Pool) SetBudget(bytes int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case bytes < 0:
		p.budget = -1
	case bytes == 0:
		p.budget = 0
	default:
		p.budget = max(bytes/1024, 1)
	}
}

// budgetKB is the budget in KiB, 0 when there is none. Called with p.mu
// held.
func (p *Pool) budgetKB() int64 {
	switch {
	case p.budget < 0:
		return 0
	case p.budget > 0:
		return p.budget
	}
	return defaultBudgetKB()
}

// DefaultBudgetKB is the memory budget of servers when none is given (a
// pool's, the broker's): a quarter of MemTotal in KiB, 0 (no budget)
// when unknown.
func DefaultBudgetKB() int64 { return defaultBudgetKB() }

// defaultBudgetKB is a quarter of MemTotal, 0 (no budget) when unknown.
var defaultBudgetKB = sync.OnceValue(func() int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	return meminfoKB(string(data), "MemTotal:") / 4
})

// meminfoKB reads one "Name: N kB" line of /proc/meminfo or a status file.
func meminfoKB(data, name string) int64 {
	for line := range strings.Lines(data) {
		if rest, ok := strings.CutPrefix(line, name); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return 0
}

// maxStops is how many budget stops a pool remembers for status.
const maxStops = 8

// BudgetStop is a server the pool stopped to keep within its memory
// budget before starting another.
type BudgetStop struct {
	Server   string    // its row
	Root     string    // its root folder, absolute
	RunRoot  string    // the root of the runs that held it
	MemoryKB int64     // its resident memory when stopped
	UsedKB   int64     // the pool's servers' memory before the stop
	BudgetKB int64     // the budget then
	For      string    // the row of the server being started
	ForRoot  string    // and its root folder, absolute
	At       time.Time // when
}

var processPool = sync.OnceValue(New)

// Process is the pool lsptool's runs share unless their lsp.Config asks
// for servers of their own (Private).
func Process() *Pool { return processPool() }

// Key says which servers may stand in for each other.
type Key struct {
	ID, Root string // the row and the folder holding its marker
	RunRoot  string // the run's root: paths are told relative to it
	Trusted  bool
	Launch   string // a digest of what else shapes the start
	Prepared string // the state of the files Prepare reads (lsp's preparedFrom)
}

// Member is a running server as the pool keeps it.
type Member interface {
	Alive() bool
	PID() int
	// Shutdown stops it: shutdown, exit, then its process group.
	Shutdown(ctx context.Context)
	// Calls is how many calls are using it; Use counts one more, which
	// the call's end takes back. A server in use is neither reaped nor
	// stopped for the budget.
	Calls() int
	Use()
	// LastUsed is when a call last used it; Previewing says a
	// diagnostics preview holds it alone.
	LastUsed() time.Time
	Previewing() bool
}

// Entry is a server being started or running; ready is closed when the
// start finished (srv or err set). The fields below ready are the pool's,
// guarded by Pool.mu unless noted.
type Entry struct {
	ready chan struct{}
	srv   Member
	err   error

	pool    *Pool
	key     Key
	refs    int           // Supervisors holding it
	gone    bool          // out of the pool: reaped, reloaded, or its last run left
	done    chan struct{} // closed when gone; ends the reaper
	abandon chan struct{} // closed when no run holds it: cancels its start

	guard     *pathguard.Guard // a shared server's own guard, closed after it stops
	stopOnce  sync.Once
	guardOnce sync.Once
}

// Acquire returns the entry for key, counting one more holder, or makes
// one and runs start for it (created): the server it starts, or why it
// did not, is the entry's once Ready is closed. idle < 0 turns reaping
// off.
func (p *Pool) Acquire(key Key, idle time.Duration, start func(*Entry) (Member, error)) (e *Entry, created bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.entries[key]; e != nil && !e.gone {
		if !e.dead() {
			e.refs++
			return e, false
		}
		// Crashed or failed to start: its holders drop it on their next
		// call; a run asking now gets a new one.
		p.retireLocked(e)
	}
	e = &Entry{ready: make(chan struct{}), pool: p, key: key, refs: 1, done: make(chan struct{}), abandon: make(chan struct{})}
	victims := p.makeRoomLocked(e)
	p.entries[key] = e
	go func() {
		// The idle servers given up for the budget stop before the new
		// one starts, so their memory is free for it.
		for _, v := range victims {
			ctx, cancel := context.WithTimeout(context.Background(), CloseTimeout)
			v.stop(ctx)
			cancel()
		}
		e.srv, e.err = start(e)
		if e.Abandoned() {
			e.closeGuard()
		}
		close(e.ready)
	}()
	if idle >= 0 {
		go p.reap(e, idle)
	}
	return e, true
}

// Use marks the server of a ready entry in use (never reaped until the
// call ends), or reports that the entry left the pool.
func (e *Entry) Use() bool {
	p := e.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.gone {
		return false
	}
	e.srv.Use()
	return true
}

func (p *Pool) retireLocked(e *Entry) {
	if e.gone {
		return
	}
	e.gone = true
	close(e.done)
	if p.entries[e.key] == e {
		delete(p.entries, e.key)
	}
}

// Release ends one run's hold on e. When it was the last, e leaves the
// pool and its server is stopped before Release returns; retire also
// stops it for everyone (a reload), at once.
func (e *Entry) Release(ctx context.Context, retire bool) {
	p := e.pool
	p.mu.Lock()
	e.refs--
	last := e.refs <= 0
	if last || retire {
		p.retireLocked(e)
	}
	if last {
		close(e.abandon)
	}
	p.mu.Unlock()
	if last || retire {
		e.stop(ctx)
	}
	if last && e.started() { // else the start, still under way, closes it
		e.closeGuard()
	}
}

// stop shuts the entry's server down once, waiting at most StartGrace for
// a start under way (which kills what it started once it sees it is
// abandoned).
func (e *Entry) stop(ctx context.Context) {
	e.stopOnce.Do(func() {
		if !lifetime.Await(ctx, e.ready, StartGrace) {
			return
		}
		if e.srv != nil {
			e.srv.Shutdown(ctx)
		}
	})
}

// dead reports whether e's start failed or its server exited.
func (e *Entry) dead() bool {
	return e.started() && (e.err != nil || !e.srv.Alive())
}

// closeGuard closes a shared server's own guard, once: called by the
// last release once the start has ended, or by the start itself when it
// ends after that release.
func (e *Entry) closeGuard() {
	e.guardOnce.Do(func() {
		if e.guard != nil {
			e.guard.Close()
		}
	})
}

// Abandoned reports whether no run holds e any more.
func (e *Entry) Abandoned() bool { return lifetime.Ended(e.abandon) }

// reap stops e's server once no run has used it for idle (LSP-1), counted
// over every run that holds it.
func (p *Pool) reap(e *Entry, idle time.Duration) {
	select {
	case <-e.ready:
	case <-e.done:
		return
	}
	if e.srv == nil {
		return
	}
	tick := time.NewTicker(max(idle/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-e.done:
			return
		case <-tick.C:
		}
		p.mu.Lock()
		reaped := false
		if !e.gone && e.srv.Calls() == 0 && time.Since(e.srv.LastUsed()) >= idle {
			p.retireLocked(e)
			reaped = true
		}
		p.mu.Unlock()
		if reaped {
			e.stop(context.Background())
			return
		}
	}
}

// makeRoomLocked keeps the pool within its budget before e starts
// (LSP-8): while the running servers' resident memory is at or over the
// budget, the least recently used one that no call is using (mid-request
// or mid-preview) leaves the pool, and is returned to be stopped. A run
// holding it starts it again on its next call. Called with p.mu held.
func (p *Pool) makeRoomLocked(e *Entry) []*Entry {
	limit := p.budgetKB()
	if limit <= 0 {
		return nil
	}
	type candidate struct {
		e    *Entry
		rss  int64
		last time.Time
	}
	var used int64
	var idle []candidate
	var children map[int][]int
	for _, x := range p.entries {
		if x.gone || !x.started() || x.srv == nil || !x.srv.Alive() {
			continue
		}
		if children == nil {
			children = proc.ChildMap()
		}
		rss := proc.TreeRSSKB(x.srv.PID(), children)
		used += rss
		if x.srv.Calls() == 0 {
			idle = append(idle, candidate{x, rss, x.srv.LastUsed()})
		}
	}
	slices.SortFunc(idle, func(a, b candidate) int { return a.last.Compare(b.last) })
	var victims []*Entry
	for _, c := range idle {
		if used < limit {
			break
		}
		p.retireLocked(c.e)
		victims = append(victims, c.e)
		p.stops = append(p.stops, BudgetStop{Server: c.e.key.ID, Root: c.e.key.Root, RunRoot: c.e.key.RunRoot, MemoryKB: c.rss,
			UsedKB: used, BudgetKB: limit, For: e.key.ID, ForRoot: e.key.Root, At: time.Now()})
		if len(p.stops) > maxStops {
			p.stops = slices.Delete(p.stops, 0, len(p.stops)-maxStops)
		}
		used -= c.rss
	}
	return victims
}

// started reports whether e's start has ended.
func (e *Entry) started() bool { return lifetime.Ended(e.ready) }

// Listed is one server a pool holds, for a harness's own view.
type Listed struct {
	Server   string        `json:"server"`
	Root     string        `json:"root"`     // absolute
	RunRoot  string        `json:"run_root"` // the root of the runs holding it, absolute
	State    string        `json:"state"`    // starting, in_use, previewing or idle
	PID      int           `json:"pid"`      // 0 while starting
	Clients  int           `json:"clients"`
	MemoryKB int64         `json:"memory_kb"` // with its child processes
	Idle     time.Duration `json:"idle"`      // since its last use
	Trusted  bool          `json:"trusted"`
}

// Server states in a pool's listing.
const (
	Starting   = "starting"
	InUse      = "in_use"
	Previewing = "previewing"
	Idle       = "idle"
)

// Servers lists the servers the pool holds, starting or running, by id
// and root.
func (p *Pool) Servers() []Listed {
	rows, _ := p.List()
	out := make([]Listed, len(rows))
	for i, r := range rows {
		out[i] = r.Listed
	}
	return out
}

// Row is a listed server with its entry.
type Row struct {
	Listed
	Entry *Entry
}

// List is Servers with each one's entry, and the budget stops.
func (p *Pool) List() ([]Row, []BudgetStop) {
	p.mu.Lock()
	var out []Row
	var srvs []Member
	for _, e := range p.entries {
		if e.gone {
			continue
		}
		row := Row{Listed{Server: e.key.ID, Root: e.key.Root, RunRoot: e.key.RunRoot, State: Starting, Clients: e.refs,
			Trusted: e.key.Trusted}, e}
		var srv Member
		if e.started() {
			if e.srv == nil || !e.srv.Alive() {
				continue
			}
			srv = e.srv
			row.PID = srv.PID()
			row.State = Idle
			if srv.Calls() > 0 {
				row.State = InUse
			}
		}
		out = append(out, row)
		srvs = append(srvs, srv)
	}
	stops := slices.Clone(p.stops)
	p.mu.Unlock()
	var children map[int][]int
	for i, srv := range srvs {
		if srv == nil {
			continue
		}
		if srv.Previewing() {
			out[i].State = Previewing
		}
		out[i].Idle = time.Since(srv.LastUsed())
		if children == nil {
			children = proc.ChildMap()
		}
		out[i].MemoryKB = proc.TreeRSSKB(out[i].PID, children)
	}
	slices.SortFunc(out, func(a, b Row) int {
		return cmp.Or(strings.Compare(a.Server, b.Server), strings.Compare(a.Root, b.Root), strings.Compare(a.RunRoot, b.RunRoot),
			cmp.Compare(a.PID, b.PID))
	})
	return out, stops
}

// Budget is the pool's memory budget in KiB, 0 when there is none.
func (p *Pool) Budget() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.budgetKB()
}

// Ready is closed once the entry's start has ended: Server or Err is set.
func (e *Entry) Ready() <-chan struct{} { return e.ready }

// Server is the server the start gave, nil if it failed. Set once Ready
// is closed.
func (e *Entry) Server() Member { return e.srv }

// Err is why the start failed, nil if it did not. Set once Ready is
// closed.
func (e *Entry) Err() error { return e.err }

// Key is the entry's key.
func (e *Entry) Key() Key { return e.key }

// Holders is how many runs hold e, and whether it has left the pool.
func (e *Entry) Holders() (refs int, gone bool) {
	e.pool.mu.Lock()
	defer e.pool.mu.Unlock()
	return e.refs, e.gone
}

// Abandon is closed when no run holds e any more: a start under way then
// stops what it started (Abandoned).
func (e *Entry) Abandon() <-chan struct{} { return e.abandon }

// SetGuard gives e a shared server's own path guard, closed once the
// start has ended and no run holds e. Called by the start.
func (e *Entry) SetGuard(g *pathguard.Guard) { e.guard = g }
