package lsp

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/lifetime"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/checkout"
	"github.com/builtin-tools/builtin-tools/lsp/pool"
	"github.com/builtin-tools/builtin-tools/lsp/viewlock"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// fleet is the servers one run holds — from its own pool or the shared
// one — with their crashes and start failures, and the files it syncs to
// them.
type fleet struct {
	co  *checkout.Checkout
	la  *launcher
	cfg *Config

	// ownPool holds the servers this run shares with no other.
	ownPool *pool.Pool

	mu      sync.Mutex
	closed  bool
	servers map[serverKey]*pool.Entry  // the pool entries this run holds
	crashes map[serverKey]answer.Crash // last unexpected exit, for Status
	// failures are servers that failed to start, not started again until
	// their backoff ends (or reload).
	failures map[serverKey]*startFailure
	told     map[string]bool // servers that do not run, already reported on a write
	stop     chan struct{}
	wg       sync.WaitGroup // the starts this run began
}

type serverKey struct {
	id   string
	root string
}

// close lets go of every server the fleet holds (Close), reporting whether
// it was open.
func (fl *fleet) close() bool {
	fl.mu.Lock()
	if fl.closed {
		fl.mu.Unlock()
		return false
	}
	fl.closed = true
	close(fl.stop)
	entries := make([]*pool.Entry, 0, len(fl.servers))
	for _, e := range fl.servers {
		entries = append(entries, e)
	}
	fl.servers = map[serverKey]*pool.Entry{}
	fl.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), pool.CloseTimeout)
	defer cancel()
	// A start this was the last holder of is cancelled; one that does not
	// end within pool.StartGrace (a preparation stuck in a system call) is not
	// waited for: start stops what it started once it returns.
	var wg sync.WaitGroup
	for _, e := range entries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.Release(ctx, false)
		}()
	}
	wg.Wait()
	return true
}

// checkFile is the checkout's checkFile, failing with ErrClosed once the
// run has closed.
func (fl *fleet) checkFile(at pathguard.Path) (string, error) {
	if fl.isClosed() {
		return "", ErrClosed
	}
	return fl.co.CheckFile(at)
}

func (fl *fleet) isClosed() bool {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return fl.closed
}

// tell reports whether the server id that does not run is not yet
// reported on a write, and notes that it is now.
func (fl *fleet) tell(id string) bool {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	first := !fl.told[id]
	fl.told[id] = true
	return first
}

// troubles are the last crash and the start failure of each of server
// id's roots, for Status.
func (fl *fleet) troubles(id string) (crashes []answer.Crash, failures []answer.StartFailure) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	for key, c := range fl.crashes {
		if key.id == id {
			crashes = append(crashes, c)
		}
	}
	for key, f := range fl.failures {
		if key.id == id {
			failures = append(failures, answer.StartFailure{Root: fl.co.Rel(key.root), Error: f.err.Error(), RetryAt: f.until})
		}
	}
	return crashes, failures
}

// serverFor returns the running server for c, starting one (and waiting,
// bounded by StartTimeout) when there is none or the last one died. The
// server counts as in use (never reaped, and no preview runs on it) until
// the caller calls release.
func (fl *fleet) serverFor(ctx context.Context, c *choice) (*server, error) {
	key := serverKey{c.spec.ID, c.root}
	for {
		prepared := fl.la.preparedFrom(c)
		fl.mu.Lock()
		if fl.closed {
			fl.mu.Unlock()
			return nil, ErrClosed
		}
		e := fl.servers[key]
		if e != nil && e.Key().Prepared != prepared {
			// Prepared from a file that has changed since: start afresh.
			fl.mu.Unlock()
			fl.drop(key, e)
			continue
		}
		if f := fl.failures[key]; e == nil && f != nil && time.Now().Before(f.until) {
			fl.mu.Unlock()
			return nil, &BackoffError{Err: f.err, Until: f.until}
		}
		if e == nil {
			p, shared := fl.poolFor()
			pkey := pool.Key{ID: c.spec.ID, Root: c.root, RunRoot: fl.co.Root(), Trusted: fl.cfg.Trusted, Launch: fl.la.launchDigest(c), Prepared: prepared}
			fl.wg.Add(1)
			var created bool
			e, created = p.Acquire(pkey, fl.cfg.IdleTimeout, func(e *pool.Entry) (pool.Member, error) {
				defer fl.wg.Done()
				return fl.la.start(e, c, shared)
			})
			if !created {
				fl.wg.Done()
			}
			fl.servers[key] = e
		}
		fl.mu.Unlock()

		select {
		case <-e.Ready():
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-fl.stop:
			return nil, ErrClosed
		}
		if err := e.Err(); err != nil {
			fl.drop(key, e)
			fl.failed(key, err)
			return nil, err
		}
		fl.mu.Lock()
		delete(fl.failures, key)
		fl.mu.Unlock()
		srv := e.Server().(*server)
		if srv.peerGone() || !srv.Alive() {
			// Crashed since the last call: note it and start afresh.
			srv.mu.Lock()
			closing := srv.closing
			srv.mu.Unlock()
			if !closing && !srv.stoppedIdle() {
				fl.mu.Lock()
				fl.crashes[key] = answer.Crash{Root: fl.co.Rel(key.root), Error: srv.exitError("").Error(), At: time.Now()}
				fl.mu.Unlock()
			}
			fl.drop(key, e)
			continue
		}
		if !e.Use() {
			// Reaped or reloaded (by this run or another): start afresh.
			fl.drop(key, e)
			continue
		}
		srv.touch()
		if err := srv.view.Share(ctx, fl.cfg.viewBound()); err != nil {
			srv.inflight.Add(-1)
			if errors.Is(err, viewlock.ErrBusy) {
				return nil, srv.busyError("", false)
			}
			return nil, err
		}
		return srv, nil
	}
}

// failed records a start failure and its backoff, doubled each time it
// fails again.
func (fl *fleet) failed(key serverKey, err error) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if fl.closed {
		return
	}
	f := fl.failures[key]
	if f == nil {
		f = &startFailure{backoff: firstBackoff}
		fl.failures[key] = f
	} else {
		f.backoff = min(2*f.backoff, maxBackoff)
	}
	f.err, f.until = err, time.Now().Add(f.backoff)
}

// release ends a use begun by serverFor.
func (srv *server) release() {
	srv.view.Unshare()
	srv.endUse()
}

// endUse is release for a use that gave its view share back earlier
// (a wait for late diagnostics, which asks the server nothing).
func (srv *server) endUse() {
	srv.touch()
	srv.inflight.Add(-1)
}

// drop lets go of e if it is still the entry this run holds for key.
func (fl *fleet) drop(key serverKey, e *pool.Entry) {
	fl.mu.Lock()
	held := fl.servers[key] == e
	if held {
		delete(fl.servers, key)
	}
	fl.mu.Unlock()
	if held {
		ctx, cancel := context.WithTimeout(context.Background(), pool.CloseTimeout)
		defer cancel()
		e.Release(ctx, false)
	}
}

// runningEntry is a live server this run holds.
type runningEntry struct {
	srv     *server
	clients int // runs holding it, this one included
}

// running returns the live servers, sorted by id and root.
func (fl *fleet) running() []*server {
	var out []*server
	for _, r := range fl.runningEntries() {
		out = append(out, r.srv)
	}
	return out
}

// runningEntries is running with how many runs hold each server.
func (fl *fleet) runningEntries() []runningEntry {
	fl.mu.Lock()
	var entries []*pool.Entry
	for _, e := range fl.servers {
		entries = append(entries, e)
	}
	fl.mu.Unlock()
	var out []runningEntry
	for _, e := range entries {
		if !lifetime.Ended(e.Ready()) {
			continue
		}
		refs, gone := e.Holders()
		if srv, _ := e.Server().(*server); srv != nil && srv.Alive() && !gone {
			out = append(out, runningEntry{srv: srv, clients: refs})
		}
	}
	slices.SortFunc(out, func(a, b runningEntry) int {
		return cmp.Or(strings.Compare(a.srv.spec.ID, b.srv.spec.ID), strings.Compare(a.srv.root, b.srv.root))
	})
	return out
}

// stopKey shuts down the server for key, reporting whether one ran. A
// server other runs share stops for them too: their next call starts it
// again.
func (fl *fleet) stopKey(ctx context.Context, key serverKey) bool {
	fl.mu.Lock()
	e := fl.servers[key]
	delete(fl.servers, key)
	delete(fl.failures, key) // reload retries at once
	fl.mu.Unlock()
	if e == nil {
		return false
	}
	e.Release(ctx, true)
	return true
}

// poolStatus lists the servers of the pool this run's servers go to.
func (fl *fleet) poolStatus(ctx context.Context) *answer.PoolStatus {
	p, shared := fl.poolFor()
	held := map[*pool.Entry]bool{}
	fl.mu.Lock()
	for _, e := range fl.servers {
		held[e] = true
	}
	fl.mu.Unlock()
	rows, stops := p.List()
	ps := &answer.PoolStatus{BudgetKB: p.Budget(), Shared: shared, Servers: make([]answer.PoolServerStatus, 0, len(rows))}
	where := func(root string) (string, bool) {
		if !fl.co.InRoot(root) {
			return "", true
		}
		if rel := fl.co.Rel(root); rel != "" {
			return rel, false
		}
		return ".", false
	}
	for _, r := range rows {
		root, other := where(r.Root)
		ps.UsedKB += r.MemoryKB
		ps.Servers = append(ps.Servers, answer.PoolServerStatus{Server: r.Server, Root: root, OtherFolder: other, ThisRun: held[r.Entry],
			Trusted: r.Trusted, State: r.State, Clients: r.Clients, PID: r.PID, MemoryKB: r.MemoryKB,
			IdleSeconds: int64(r.Idle.Round(time.Second) / time.Second), OverBudget: ps.BudgetKB > 0 && r.MemoryKB >= ps.BudgetKB})
		if srv, _ := r.Entry.Server().(*server); r.State != pool.Starting && srv != nil {
			ps.Servers[len(ps.Servers)-1].Processes = srv.processes(ctx)
		}
	}
	for _, r := range rows {
		if srv, _ := r.Entry.Server().(*server); r.State != pool.Starting && srv != nil {
			if bs := srv.brokerServers(ctx); bs != nil {
				ps.Broker = &answer.BrokerStatus{BudgetKB: bs.BudgetKB, Servers: make([]answer.PoolServerStatus, 0, len(bs.Servers))}
				for _, x := range bs.Servers {
					root, other := where(x.Dir)
					ps.Broker.UsedKB += x.MemoryKB
					ps.Broker.Servers = append(ps.Broker.Servers, answer.PoolServerStatus{Server: x.Server, Root: root, OtherFolder: other,
						Trusted: x.Trusted, State: x.State, Processes: x.Clients, PID: x.PID, MemoryKB: x.MemoryKB,
						IdleSeconds: x.IdleMS / 1000, OverBudget: bs.BudgetKB > 0 && x.MemoryKB >= bs.BudgetKB})
				}
				break
			}
		}
	}
	for _, b := range stops {
		root, other := where(b.Root)
		forRoot, forOther := where(b.ForRoot)
		if forOther {
			forRoot = "another folder"
		}
		ps.Stopped = append(ps.Stopped, answer.BudgetStopStatus{Server: b.Server, Root: root, OtherFolder: other, MemoryKB: b.MemoryKB,
			UsedKB: b.UsedKB, BudgetKB: b.BudgetKB, For: b.For + " for " + forRoot, At: b.At})
	}
	return ps
}

// poolFor is the pool a start of c goes to, and whether it is shared with
// other runs: a run that watches its servers (Observe, Stderr, test hooks)
// keeps them to itself.
func (fl *fleet) poolFor() (*pool.Pool, bool) {
	if fl.cfg.Pool == nil || fl.la.hooks != nil && !fl.la.hooks.shared || fl.cfg.Observe != nil || fl.cfg.Stderr != nil || fl.co.Guard() == nil {
		return fl.ownPool, false
	}
	return fl.cfg.Pool, true
}
