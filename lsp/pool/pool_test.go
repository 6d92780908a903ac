package pool

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/lifetime"
)

// member is a server the test starts: this process stands in for it
// (its PID, so its memory is real), and Shutdown says it was called.
type member struct {
	calls    atomic.Int32
	mu       sync.Mutex
	lastUsed time.Time
	down     chan struct{}
	once     sync.Once
}

func newMember() *member { return &member{lastUsed: time.Now(), down: make(chan struct{})} }

func (m *member) Alive() bool                  { return !lifetime.Ended(m.down) }
func (m *member) PID() int                     { return os.Getpid() }
func (m *member) Shutdown(ctx context.Context) { m.once.Do(func() { close(m.down) }) }
func (m *member) Calls() int                   { return int(m.calls.Load()) }
func (m *member) Use()                         { m.calls.Add(1) }
func (m *member) LastUsed() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lastUsed
}
func (m *member) Previewing() bool { return false }

func ready(t *testing.T, e *Entry) {
	t.Helper()
	select {
	case <-e.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("the start did not end")
	}
}

func stopped(t *testing.T, m *member, what string) {
	t.Helper()
	select {
	case <-m.down:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: the server was not stopped", what)
	}
}

// Runs asking for one key share one start; the server stops when the
// last of them lets go, not before.
func TestSharedUntilTheLastRelease(t *testing.T) {
	p := New()
	p.SetBudget(-1)
	m := newMember()
	starts := 0
	start := func(*Entry) (Member, error) { starts++; return m, nil }
	key := Key{ID: "fake", Root: "/r", RunRoot: "/r"}
	a, created := p.Acquire(key, -1, start)
	ready(t, a)
	b, again := p.Acquire(key, -1, start)
	if !created || again || a != b || starts != 1 {
		t.Fatalf("second acquire: same entry %v, created %v then %v, %d starts", a == b, created, again, starts)
	}
	if refs, gone := a.Holders(); refs != 2 || gone {
		t.Fatalf("holders %d, gone %v", refs, gone)
	}
	if got := p.Servers(); len(got) != 1 || got[0].Clients != 2 || got[0].State != Idle || got[0].PID != os.Getpid() {
		t.Fatalf("listing: %+v", got)
	}
	a.Release(context.Background(), false)
	if !m.Alive() {
		t.Fatal("stopped while another run holds it")
	}
	b.Release(context.Background(), false)
	stopped(t, m, "after the last release")
	if got := p.Servers(); len(got) != 0 {
		t.Fatalf("after the last release the pool lists %+v", got)
	}
}

// A start that failed is not handed to the next run: it gets a start of
// its own.
func TestFailedStartIsNotShared(t *testing.T) {
	p := New()
	p.SetBudget(-1)
	key := Key{ID: "fake", Root: "/r"}
	failed := errors.New("no such program")
	a, _ := p.Acquire(key, -1, func(*Entry) (Member, error) { return nil, failed })
	ready(t, a)
	if a.Err() != failed || a.Server() != nil {
		t.Fatalf("failed start: err %v, server %v", a.Err(), a.Server())
	}
	m := newMember()
	b, created := p.Acquire(key, -1, func(*Entry) (Member, error) { return m, nil })
	ready(t, b)
	if !created || b == a || b.Server() != Member(m) {
		t.Fatalf("after a failed start: created %v, same entry %v", created, a == b)
	}
	b.Release(context.Background(), false)
	stopped(t, m, "the second start")
}

// A server no call has used for the idle time is reaped; one in use is
// not.
func TestIdleServerIsReaped(t *testing.T) {
	p := New()
	p.SetBudget(-1)
	busy, idle := newMember(), newMember()
	busy.Use()
	eb, _ := p.Acquire(Key{ID: "busy"}, 20*time.Millisecond, func(*Entry) (Member, error) { return busy, nil })
	ei, _ := p.Acquire(Key{ID: "idle"}, 20*time.Millisecond, func(*Entry) (Member, error) { return idle, nil })
	ready(t, eb)
	ready(t, ei)
	stopped(t, idle, "idle")
	if _, gone := ei.Holders(); !gone || ei.Use() {
		t.Fatal("a reaped entry is still in the pool")
	}
	if !busy.Alive() || !eb.Use() {
		t.Fatal("a server in use was reaped")
	}
	eb.Release(context.Background(), false)
	ei.Release(context.Background(), false)
}

// Over the budget, the idle server used least recently is stopped before
// another starts, and the stop is listed.
func TestBudgetStopsTheLeastRecentlyUsed(t *testing.T) {
	p := New()
	p.SetBudget(1) // any server is over it
	old, recent := newMember(), newMember()
	old.lastUsed = time.Now().Add(-time.Hour)
	eo, _ := p.Acquire(Key{ID: "old", Root: "/o"}, -1, func(*Entry) (Member, error) { return old, nil })
	ready(t, eo)
	er, _ := p.Acquire(Key{ID: "recent", Root: "/r"}, -1, func(*Entry) (Member, error) { return recent, nil })
	ready(t, er)
	stopped(t, old, "the least recently used")
	if !recent.Alive() {
		t.Fatal("the server just started was stopped")
	}
	rows, stops := p.List()
	if len(rows) != 1 || rows[0].Server != "recent" || len(stops) != 1 || stops[0].Server != "old" || stops[0].For != "recent" || stops[0].MemoryKB <= 0 {
		t.Fatalf("rows %+v, stops %+v", rows, stops)
	}
	er.Release(context.Background(), false)
	eo.Release(context.Background(), false)
}
