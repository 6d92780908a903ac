package vibe

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/builtin-tools/builtin-tools/vibe/runner"
)

// The queue, the time limits and a wait's timeout are the roster's own
// timers and channels, so they are tested here in a testing/synctest
// bubble: a backend whose runs live in the test process and end when the
// test ends them or their context ends, and a fake clock, on which a
// 30-minute limit passes at once. What a real worker process does is
// tested in roster_test.go, which no bubble can hold (a process's pipe
// is no channel the bubble's clock waits on).

// held is a backend whose runs say they work and then wait for their
// context or a message on end(id): "say X" writes X and goes on, anything
// else is the result.
type held struct {
	mu   sync.Mutex
	ends map[string]chan string
}

func (*held) Describe() string { return "held by the test" }
func (*held) Check() error     { return nil }

func (h *held) Run(ctx context.Context, j runner.Job) (runner.Outcome, error) {
	fmt.Fprintf(j.Output, "%s working\n", j.ID)
	for {
		select {
		case m := <-h.end(j.ID):
			if said, ok := strings.CutPrefix(m, "say "); ok {
				fmt.Fprintln(j.Output, said)
				j.Activity()
				continue
			}
			return runner.Outcome{Result: m, Final: true}, nil
		case <-ctx.Done():
			return runner.Outcome{ExitCode: -1}, nil
		}
	}
}

// end is the channel that ends worker id's run.
func (h *held) end(id string) chan string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ends[id] == nil {
		h.ends[id] = make(chan string)
	}
	return h.ends[id]
}

func heldRoster(t *testing.T, max int, timeout time.Duration) (*Roster, *held) {
	t.Helper()
	h := &held{ends: map[string]chan string{}}
	r, err := New(Config{StateDir: t.TempDir(), Dir: t.TempDir(), MaxRunning: max, Timeout: timeout, Backends: map[string]runner.Backend{"fast": h}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, h
}

func statuses(r *Roster) string {
	var s []string
	for _, w := range r.List() {
		s = append(s, w.ID+" "+string(w.Status))
	}
	return strings.Join(s, ", ")
}

// Over MaxRunning a worker waits queued; runs start in spawn order as
// slots free, and one stopped while queued never starts.
func TestQueueStartsInOrderAsSlotsFree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, h := heldRoster(t, 2, 0)
		for _, b := range []string{"a", "b", "c", "d", "e"} {
			spawn(t, r, b)
		}
		synctest.Wait()
		if got := statuses(r); got != "w1 running, w2 running, w3 queued, w4 queued, w5 queued" {
			t.Fatalf("at spawn: %s", got)
		}
		if k, stopped, err := r.Kill("w4"); err != nil || !stopped || k.Status != Killed || k.Why != "vibe_kill stopped it before it started" {
			t.Fatalf("kill a queued worker: %+v %v %v", k, stopped, err)
		}
		h.end("w2") <- "b done"
		synctest.Wait()
		if got := statuses(r); got != "w1 running, w2 succeeded, w3 running, w4 killed, w5 queued" {
			t.Fatalf("after w2 ended: %s", got)
		}
		h.end("w1") <- "a done"
		synctest.Wait()
		if got := statuses(r); got != "w1 succeeded, w2 succeeded, w3 running, w4 killed, w5 running" {
			t.Fatalf("after w1 ended: %s", got)
		}
		h.end("w3") <- "c done"
		h.end("w5") <- "e done"
		done, pending := wait(t, r, true, time.Hour, "w1", "w2", "w3", "w5")
		if len(done) != 4 || len(pending) != 0 || done[3].Result != "e done" || done[3].Runs != 1 {
			t.Fatalf("done %+v, pending %v", done, pending)
		}
	})
}

// A run past its time limit is stopped, times out and keeps its output;
// the limit of a spawn wins over the roster's.
func TestTimeLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, _ := heldRoster(t, 4, 30*time.Minute)
		long := spawn(t, r, "the roster's limit")
		short, err := r.Spawn(SpawnRequest{Brief: "its own limit", Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		done, pending := wait(t, r, false, time.Hour, long.ID, short.ID)
		if len(done) != 1 || done[0].ID != short.ID || len(pending) != 1 || time.Since(start) != time.Minute {
			t.Fatalf("after its own limit: done %+v, pending %v, at %v", done, pending, time.Since(start))
		}
		if d := done[0]; d.Status != TimedOut || d.Why != "the time limit (1m0s) ran out; the result is its output so far" || d.Result != short.ID+" working" {
			t.Fatalf("timed out: %+v", d)
		}
		done, _ = wait(t, r, true, time.Hour, long.ID)
		if d := done[0]; d.Status != TimedOut || !strings.HasPrefix(d.Why, "the time limit (30m0s) ran out") || time.Since(start) != 30*time.Minute {
			t.Fatalf("the roster's limit: %+v at %v", d, time.Since(start))
		}
	})
}

// A wait's timeout ends the wait, never the worker; ctx ends it too.
func TestWaitTimeoutLeavesTheWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, h := heldRoster(t, 4, 0)
		in := spawn(t, r, "long")
		done, pending := wait(t, r, true, 10*time.Minute, in.ID)
		if len(done) != 0 || len(pending) != 1 || r.List()[0].Status != Running {
			t.Fatalf("after the wait's timeout: done %+v, pending %v, %s", done, pending, statuses(r))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, pending, err := r.Wait(ctx, WaitRequest{IDs: []string{in.ID}, Timeout: time.Hour}); err != context.DeadlineExceeded || len(pending) != 1 {
			t.Fatalf("a wait whose context ended: pending %v, %v", pending, err)
		}
		if st := r.List()[0].Status; st != Running {
			t.Fatalf("after a wait's context ended the worker is %s", st)
		}
		h.end(in.ID) <- "finally"
		if done, _ := wait(t, r, true, time.Hour, in.ID); done[0].Status != Succeeded || done[0].Result != "finally" {
			t.Fatalf("the worker after two waits: %+v", done[0])
		}
	})
}

// A wait with Every reports when the count of finished workers changes,
// and at a tick only when a running one showed a sign of life since the
// last report.
func TestWaitProgressEvery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, h := heldRoster(t, 4, 0)
		a, b := spawn(t, r, "a"), spawn(t, r, "b")
		synctest.Wait()
		start := time.Now()
		var mu sync.Mutex
		var reports []string
		progress := func(finished, total int, running []Info) {
			var tails []string
			for _, w := range running {
				tails = append(tails, w.ID+": "+strings.ReplaceAll(w.Tail, "\n", " / "))
			}
			mu.Lock()
			reports = append(reports, fmt.Sprintf("%v %d of %d; %s", time.Since(start), finished, total, strings.Join(tails, "; ")))
			mu.Unlock()
		}
		time.AfterFunc(90*time.Second, func() { h.end(a.ID) <- "say step 1" })
		time.AfterFunc(150*time.Second, func() { h.end(a.ID) <- "a done" })
		time.AfterFunc(10*time.Minute, func() { h.end(b.ID) <- "b done" })
		if _, pending, err := r.Wait(context.Background(), WaitRequest{IDs: []string{a.ID, b.ID}, All: true, Timeout: time.Hour, Progress: progress, Every: time.Minute}); err != nil || len(pending) != 0 {
			t.Fatalf("wait: pending %v, %v", pending, err)
		}
		want := []string{
			"0s 0 of 2; w1: w1 working; w2: w2 working",
			"2m0s 0 of 2; w1: w1 working / step 1; w2: w2 working",
			"2m30s 1 of 2; w2: w2 working",
			"10m0s 2 of 2; ",
		}
		if strings.Join(reports, "\n") != strings.Join(want, "\n") {
			t.Fatalf("reports:\n%s\nwant:\n%s", strings.Join(reports, "\n"), strings.Join(want, "\n"))
		}
	})
}
