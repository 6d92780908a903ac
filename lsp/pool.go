package lsp

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/pathguard"
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
// usable: call [NewPool] or use [ProcessPool].
type Pool struct {
	mu      sync.Mutex
	entries map[poolKey]*serverEntry
	// budget bounds the servers' resident memory, in KiB (LSP-8): 0 a
	// quarter of the machine's, < 0 none.
	budget int64
	stops  []BudgetStop // the latest stops for the budget, oldest first
}

// NewPool returns an empty pool with the default memory budget.
func NewPool() *Pool { return &Pool{entries: map[poolKey]*serverEntry{}} }

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

var processPool = sync.OnceValue(NewPool)

// ProcessPool is the pool lsptool's runs share unless their Config asks
// for servers of their own ([Config.Private]).
func ProcessPool() *Pool { return processPool() }

// poolKey says which servers may stand in for each other.
type poolKey struct {
	id, root string // the row and the folder holding its marker
	runRoot  string // the run's root: paths are told relative to it
	trusted  bool
	launch   string // a digest of what else shapes the start
	prepared string // the state of the files Prepare reads (preparedFrom)
}

// serverEntry is a server being started or running; ready is closed when
// the start finished (srv or err set). The fields below ready are the
// pool's, guarded by Pool.mu unless noted.
type serverEntry struct {
	ready chan struct{}
	srv   *server
	err   error

	pool    *Pool
	key     poolKey
	refs    int           // Supervisors holding it
	gone    bool          // out of the pool: reaped, reloaded, or its last run left
	done    chan struct{} // closed when gone; ends the reaper
	abandon chan struct{} // closed when no run holds it: cancels its start

	guard     *pathguard.Guard // a shared server's own guard, closed after it stops
	stopOnce  sync.Once
	guardOnce sync.Once
}

// acquire returns the entry for key, counting one more holder, or makes
// one and runs start for it (created). idle < 0 turns reaping off.
func (p *Pool) acquire(key poolKey, idle time.Duration, start func(*serverEntry)) (e *serverEntry, created bool) {
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
	e = &serverEntry{ready: make(chan struct{}), pool: p, key: key, refs: 1, done: make(chan struct{}), abandon: make(chan struct{})}
	victims := p.makeRoomLocked(e)
	p.entries[key] = e
	go func() {
		// The idle servers given up for the budget stop before the new
		// one starts, so their memory is free for it.
		for _, v := range victims {
			ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
			v.stop(ctx)
			cancel()
		}
		start(e)
	}()
	if idle >= 0 {
		go p.reap(e, idle)
	}
	return e, true
}

// use marks the server of a ready entry in use (never reaped until
// release), or reports that the entry left the pool.
func (p *Pool) use(e *serverEntry) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.gone {
		return false
	}
	e.srv.inflight.Add(1)
	return true
}

func (p *Pool) retireLocked(e *serverEntry) {
	if e.gone {
		return
	}
	e.gone = true
	close(e.done)
	if p.entries[e.key] == e {
		delete(p.entries, e.key)
	}
}

// release ends one Supervisor's hold on e. When it was the last, e leaves
// the pool and its server is stopped before release returns; retire
// also stops it for everyone (a reload), at once.
func (p *Pool) release(ctx context.Context, e *serverEntry, retire bool) {
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
	if last {
		select {
		case <-e.ready:
			e.closeGuard()
		default: // the start, still under way, closes it
		}
	}
}

// stop shuts the entry's server down once, waiting at most startGrace for
// a start under way (which kills what it started once it sees it is
// abandoned).
func (e *serverEntry) stop(ctx context.Context) {
	e.stopOnce.Do(func() {
		grace := time.NewTimer(startGrace)
		defer grace.Stop()
		select {
		case <-e.ready:
		case <-grace.C:
			return
		case <-ctx.Done():
			return
		}
		if e.srv != nil {
			e.srv.shutdown(ctx)
		}
	})
}

// dead reports whether e's start failed or its server exited.
func (e *serverEntry) dead() bool {
	select {
	case <-e.ready:
		return e.err != nil || !e.srv.alive()
	default:
		return false
	}
}

// closeGuard closes a shared server's own guard, once: called by the
// last release once the start has ended, or by the start itself when it
// ends after that release.
func (e *serverEntry) closeGuard() {
	e.guardOnce.Do(func() {
		if e.guard != nil {
			e.guard.Close()
		}
	})
}

// abandoned reports whether no run holds e any more.
func (e *serverEntry) abandoned() bool {
	select {
	case <-e.abandon:
		return true
	default:
		return false
	}
}

// reap stops e's server once no run has used it for idle (LSP-1), counted
// over every run that holds it.
func (p *Pool) reap(e *serverEntry, idle time.Duration) {
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
		if !e.gone && e.srv.inflight.Load() == 0 && e.srv.idleFor() >= idle {
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

// launchDigest is what, beside the row's id and the roots, makes two
// starts the same: the row's data and hooks, the program and environment,
// the trust and the time limits the server's calls run with.
func (la *launcher) launchDigest(c *choice) string {
	spec := c.spec
	loaded := ""
	if spec.LoadedLog != nil {
		loaded = spec.LoadedLog.String()
	}
	data := map[string]any{
		"command": spec.Command, "bin": c.bin, "env": la.env.Digest(c.root), "markers": spec.RootMarkers,
		"at_top": spec.RootAtTop, "ext": spec.Extensions, "local": spec.LocalBinDirs, "indexes": spec.Indexes,
		"once": spec.PublishesOnce, "loaded": loaded, "settings": spec.Settings, "fix": spec.FixCommands,
		"hooks": fmt.Sprintf("%p %p", spec.Prepare, spec.Pull),
		"times": []time.Duration{la.cfg.IdleTimeout, la.cfg.StartTimeout, la.cfg.RequestTimeout, la.cfg.DiagnosticsWait,
			la.cfg.DiagnosticsSettle, la.cfg.ApplyEditWait},
	}
	raw, err := json.Marshal(data)
	if err != nil {
		raw = []byte(err.Error())
	}
	init, err := json.Marshal(spec.InitializationOptions)
	if err != nil {
		// Options that cannot be compared are never shared.
		init = fmt.Appendf(nil, "%p", la)
	}
	sum := sha256.Sum256(append(raw, init...))
	return hex.EncodeToString(sum[:])
}

// poolFor is the pool a start of c goes to, and whether it is shared with
// other runs: a run that watches its servers (Observe, Stderr, test hooks)
// keeps them to itself.
func (fl *fleet) poolFor() (*Pool, bool) {
	if fl.cfg.Pool == nil || fl.la.hooks != nil && !fl.la.hooks.shared || fl.cfg.Observe != nil || fl.cfg.Stderr != nil || fl.co.Guard() == nil {
		return fl.ownPool, false
	}
	return fl.cfg.Pool, true
}

// viewBound bounds a wait for the server's view: as long as a preview
// may hold it (its syncs, the waits for the file as on disk and for the
// proposed version, the restore).
func (c *Config) viewBound() time.Duration {
	return c.StartTimeout + 2*c.RequestTimeout + 2*c.DiagnosticsWait
}

// busyError says why a call waited in vain for another call's preview, or
// why a preview waited in vain for the calls under way.
func (s *server) busyError(method string, preview bool) error {
	detail := fmt.Sprintf("another call's diagnostics preview held it for over %s; ask again", s.cfg.viewBound())
	if preview {
		detail = fmt.Sprintf("other calls kept it busy for over %s, so the preview could not start; ask again", s.cfg.viewBound())
	}
	return &ServerError{Server: s.spec.ID, Root: s.relRoot, Method: method, Kind: ErrServerTimeout, Detail: detail}
}

// idleFor is how long no call has used the server.
func (s *server) idleFor() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Since(s.lastUsed)
}

// makeRoomLocked keeps the pool within its budget before e starts
// (LSP-8): while the running servers' resident memory is at or over the
// budget, the least recently used one that no call is using (mid-request
// or mid-preview) leaves the pool, and is returned to be stopped. A run
// holding it starts it again on its next call. Called with p.mu held.
func (p *Pool) makeRoomLocked(e *serverEntry) []*serverEntry {
	limit := p.budgetKB()
	if limit <= 0 {
		return nil
	}
	type candidate struct {
		e    *serverEntry
		rss  int64
		last time.Time
	}
	var used int64
	var idle []candidate
	var children map[int][]int
	for _, x := range p.entries {
		if x.gone || !x.started() || x.srv == nil || !x.srv.alive() {
			continue
		}
		if children == nil {
			children = proc.ChildMap()
		}
		rss := proc.TreeRSSKB(x.srv.pid(), children)
		used += rss
		if x.srv.inflight.Load() == 0 {
			x.srv.mu.Lock()
			last := x.srv.lastUsed
			x.srv.mu.Unlock()
			idle = append(idle, candidate{x, rss, last})
		}
	}
	slices.SortFunc(idle, func(a, b candidate) int { return a.last.Compare(b.last) })
	var victims []*serverEntry
	for _, c := range idle {
		if used < limit {
			break
		}
		p.retireLocked(c.e)
		victims = append(victims, c.e)
		p.stops = append(p.stops, BudgetStop{Server: c.e.key.id, Root: c.e.key.root, RunRoot: c.e.key.runRoot, MemoryKB: c.rss,
			UsedKB: used, BudgetKB: limit, For: e.key.id, ForRoot: e.key.root, At: time.Now()})
		if len(p.stops) > maxStops {
			p.stops = slices.Delete(p.stops, 0, len(p.stops)-maxStops)
		}
		used -= c.rss
	}
	return victims
}

// started reports whether e's start has ended.
func (e *serverEntry) started() bool {
	select {
	case <-e.ready:
		return true
	default:
		return false
	}
}

// PoolServer is one server a pool holds, for a harness's own view.
type PoolServer struct {
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
	PoolStarting   = "starting"
	PoolInUse      = "in_use"
	PoolPreviewing = "previewing"
	PoolIdle       = "idle"
)

// Servers lists the servers the pool holds, starting or running, by id
// and root.
func (p *Pool) Servers() []PoolServer {
	rows, _ := p.list()
	out := make([]PoolServer, len(rows))
	for i, r := range rows {
		out[i] = r.PoolServer
	}
	return out
}

// poolRow is a listed server with its entry.
type poolRow struct {
	PoolServer
	e *serverEntry
}

// list is Servers with each one's entry, and the budget stops.
func (p *Pool) list() ([]poolRow, []BudgetStop) {
	p.mu.Lock()
	var out []poolRow
	var srvs []*server
	for _, e := range p.entries {
		if e.gone {
			continue
		}
		row := poolRow{PoolServer{Server: e.key.id, Root: e.key.root, RunRoot: e.key.runRoot, State: PoolStarting, Clients: e.refs,
			Trusted: e.key.trusted}, e}
		var srv *server
		if e.started() {
			if e.srv == nil || !e.srv.alive() {
				continue
			}
			srv = e.srv
			row.PID = srv.pid()
			row.State = PoolIdle
			if srv.inflight.Load() > 0 {
				row.State = PoolInUse
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
		if srv.view.Alone() {
			out[i].State = PoolPreviewing
		}
		out[i].Idle = srv.idleFor()
		if children == nil {
			children = proc.ChildMap()
		}
		out[i].MemoryKB = proc.TreeRSSKB(out[i].PID, children)
	}
	slices.SortFunc(out, func(a, b poolRow) int {
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
