// Package viewlock is the lock on what a language server sees: the calls
// of every run share a server, and a diagnostics preview, whose unsaved
// text is in the server meanwhile, holds it alone. Each side waits for
// the other, bounded, and says it was kept waiting with ErrBusy.
package viewlock

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrBusy is what a wait that outlasted its bound returns.
var ErrBusy = errors.New("busy")

// Lock is one server's view lock; its zero value is unlocked.
type Lock struct {
	mu      sync.Mutex
	shares  int
	alone   bool
	changed chan struct{}
}

// wait blocks until ok holds (called with l.mu held, returns with it held)
// or ctx ends or bound passes.
func (l *Lock) wait(ctx context.Context, bound time.Duration, ok func() bool) error {
	var timer *time.Timer
	for !ok() {
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		ch := l.changed
		l.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(bound)
			defer timer.Stop()
		}
		select {
		case <-ch:
		case <-ctx.Done():
			l.mu.Lock()
			return ctx.Err()
		case <-timer.C:
			l.mu.Lock()
			return ErrBusy
		}
		l.mu.Lock()
	}
	return nil
}

func (l *Lock) signalLocked() {
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

// Share waits until no preview holds the server, then counts a use.
func (l *Lock) Share(ctx context.Context, bound time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.wait(ctx, bound, func() bool { return !l.alone }); err != nil {
		return err
	}
	l.shares++
	return nil
}

// Unshare ends a use Share counted.
func (l *Lock) Unshare() {
	l.mu.Lock()
	l.shares--
	l.signalLocked()
	l.mu.Unlock()
}

// LockAlone turns the caller's use into the only one: it gives up its
// share, waits until no other use or preview is under way, and holds the
// server alone until UnlockAlone, which gives the share back.
func (l *Lock) LockAlone(ctx context.Context, bound time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.shares--
	l.signalLocked()
	if err := l.wait(ctx, bound, func() bool { return !l.alone && l.shares == 0 }); err != nil {
		l.shares++
		return err
	}
	l.alone = true
	return nil
}

// UnlockAlone ends LockAlone.
func (l *Lock) UnlockAlone() {
	l.mu.Lock()
	l.alone = false
	l.shares++
	l.signalLocked()
	l.mu.Unlock()
}

// Alone reports whether a preview holds the server now.
func (l *Lock) Alone() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.alone
}
