package viewlock

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A preview waits for the other uses and keeps new ones out while it
// holds the server; a wait in vain says ErrBusy and leaves the lock as it
// was.
func TestAloneAgainstShares(t *testing.T) {
	ctx := context.Background()
	var l Lock
	for range 2 { // the preview's own use and another call's
		if err := l.Share(ctx, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.LockAlone(ctx, time.Millisecond); !errors.Is(err, ErrBusy) {
		t.Fatalf("alone beside another use: want ErrBusy, got %v", err)
	}
	l.Unshare() // the other call ends
	if err := l.LockAlone(ctx, time.Minute); err != nil {
		t.Fatalf("alone once the other use ended: %v", err)
	}
	if !l.Alone() {
		t.Fatal("Alone is false while a preview holds the lock")
	}
	if err := l.Share(ctx, time.Millisecond); !errors.Is(err, ErrBusy) {
		t.Fatalf("a use during a preview: want ErrBusy, got %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := l.Share(cctx, time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled use during a preview: want its cancel, got %v", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- l.Share(ctx, time.Minute) }()
	l.UnlockAlone()
	if err := <-waited; err != nil {
		t.Fatalf("a use after the preview: %v", err)
	}
	if l.Alone() {
		t.Fatal("Alone is true after UnlockAlone")
	}
	// The preview's own use is back, beside the waiter's.
	if err := l.LockAlone(ctx, time.Millisecond); !errors.Is(err, ErrBusy) {
		t.Fatalf("alone beside the waiter's use: want ErrBusy, got %v", err)
	}
	l.Unshare()
	if err := l.LockAlone(ctx, time.Millisecond); err != nil {
		t.Fatalf("alone once the waiter's use ended: %v", err)
	}
}
