package registry

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/builtin-tools/builtin-tools/tiers"
)

type out struct {
	Msg string `json:"msg"`
}

func (o out) Text() string { return o.Msg }

func toyRun(t *testing.T, tools ...Descriptor) *Run {
	t.Helper()
	f := Family[None]{Key: NewKey[None]("toys"), Tools: tools}
	r, err := NewRun(Config{Root: t.TempDir(), Families: []Extension{f}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// REG-10: calls to a serial tool run one at a time, in arrival order.
func TestSerialToolRunsInArrivalOrder(t *testing.T) {
	synctest.Test(t, testSerialToolRunsInArrivalOrder)
}

func testSerialToolRunsInArrivalOrder(t *testing.T) {
	var (
		mu      sync.Mutex
		order   []int
		running atomic.Int32
		overlap atomic.Bool
	)
	release := make(chan struct{})
	type p struct {
		N int `json:"n" jsonschema:"call number"`
	}
	d := Descriptor{Name: "step", Tier: tiers.Exec, Description: "serial", Serial: true, Handler: Func(func(ctx context.Context, c *Call, p p) (out, error) {
		if running.Add(1) > 1 {
			overlap.Store(true)
		}
		defer running.Add(-1)
		if p.N == 0 {
			<-release
		}
		mu.Lock()
		order = append(order, p.N)
		mu.Unlock()
		return out{"ok"}, nil
	})}
	r := toyRun(t, d)
	e := r.tools["step"]
	ctx := context.Background()
	var wg sync.WaitGroup
	const n = 8
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res, err := r.Call(ctx, tiers.Normal, "step", []byte(`{"n":`+string(rune('0'+i))+`}`))
			if err != nil || res.IsError {
				t.Errorf("call %d: %v %v", i, err, ResultText(res))
			}
		}(i)
		// Call i holds the lock (i == 0) or is queued once every goroutine
		// is blocked, so arrival order is known.
		synctest.Wait()
		e.serial.mu.Lock()
		ready := e.serial.held && len(e.serial.waiters) == i
		e.serial.mu.Unlock()
		if !ready {
			t.Fatalf("call %d is neither running nor queued", i)
		}
	}
	close(release)
	wg.Wait()
	for i, v := range order {
		if v != i {
			t.Fatalf("calls ran in order %v, want arrival order", order)
		}
	}
	if overlap.Load() {
		t.Fatal("two calls to a serial tool ran at once")
	}
	if got := e.tool.Meta.AdditionalFields[MetaSerial]; got != true {
		t.Fatalf("serial tool's _meta %s = %v, want true", MetaSerial, got)
	}
}

// A waiter that gives up leaves the queue without blocking those behind it.
func TestFIFOWaiterGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFIFO()
		if err := f.lock(context.Background()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error)
		go func() { errc <- f.lock(ctx) }()
		synctest.Wait()
		f.mu.Lock()
		n := len(f.waiters)
		f.mu.Unlock()
		if n != 1 {
			t.Fatalf("%d waiters, want 1", n)
		}
		cancel()
		if err := <-errc; err == nil {
			t.Fatal("cancelled waiter got the lock")
		}
		f.unlock()
		if err := f.lock(context.Background()); err != nil {
			t.Fatal(err)
		}
		f.unlock()
	})
}
