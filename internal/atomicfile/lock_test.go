package atomicfile

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestLockSerializesAndForgets(t *testing.T) {
	ctx := context.Background()
	unlock, err := Lock(ctx, "/r/b", "/r/a", "/r/a")
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := Lock(short, "/r/a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock of a held file: %v, want a deadline error", err)
	}
	// Overlapping sets taken in opposite orders cannot deadlock.
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(2)
		go func() { defer wg.Done(); u, _ := Lock(ctx, "/r/x", "/r/y"); u() }()
		go func() { defer wg.Done(); u, _ := Lock(ctx, "/r/y", "/r/x"); u() }()
	}
	unlock()
	unlock() // a second call is harmless
	wg.Wait()
	locks.mu.Lock()
	n := len(locks.m)
	locks.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d lock entries left after every holder released", n)
	}
}
