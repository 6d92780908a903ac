package procpool

import (
	"context"
	"slices"
	"testing"
)

// The tests use the process's budget, which nothing else in this test
// binary takes from.

// A feeder hands files out in order, except that a big file that does not
// fit the budget is held back while the small ones after it go, and goes
// first once the budget has room; the last file waits for the budget.
func TestFeederHoldsBackWhatDoesNotFit(t *testing.T) {
	b := BigParses
	b.ResetPeak()
	big := b.Weight(300 << 10) // more than half the budget
	weights := []int64{big, big, 0, 0, big}
	f := NewFeeder([]int{0, 1, 2, 3, 4}, func(i int) int64 { return weights[i] })
	var got []int
	take := func() int64 {
		i, held, ok := f.Take(context.Background())
		if !ok {
			t.Fatalf("nothing to take after %v", got)
		}
		got = append(got, i)
		return held
	}
	first := take()  // 0 fits
	take()           // 1 does not: held back, 2 goes
	take()           // 3
	b.Release(first) // room for 1 again
	second := take() // the held-back 1 first
	b.Release(second)
	last := take() // 4
	if want := []int{0, 2, 3, 1, 4}; !slices.Equal(got, want) {
		t.Errorf("files taken in the order %v, want %v", got, want)
	}
	if used, peak, _ := b.Use(); used != last || peak != big {
		t.Errorf("%d bytes in use with the last file's %d held, peak %d (want %d)", used, last, peak, big)
	}
	b.Release(last)
	if _, _, ok := f.Take(context.Background()); ok {
		t.Error("a file taken after all were")
	}
}

// A held-back file whose wait is cancelled is not handed out, and takes
// nothing from the budget.
func TestFeederWaitEndsWithTheContext(t *testing.T) {
	b := BigParses
	_, _, limit := b.Use()
	if !b.Acquire(context.Background(), limit) {
		t.Fatal("no budget")
	}
	f := NewFeeder([]int{0}, func(int) int64 { return b.Weight(limit) })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, held, ok := f.Take(ctx); ok || held != 0 {
		t.Errorf("a cancelled wait took a file (held %d)", held)
	}
	b.Release(limit)
	if used, _, _ := b.Use(); used != 0 {
		t.Errorf("%d bytes in use", used)
	}
}
