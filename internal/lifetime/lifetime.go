// Package lifetime holds how every layer tells that something has ended.
//
// A run's closing is known by one error: the registry cancels with it, and
// an engine whose resource the run closed fails with it or with an error of
// its own words that errors.Is still matches to it. A caller tests
// closed-ness one way, errors.Is(err, lifetime.ErrClosed)
// (registry.ErrClosed is the same value), whichever layer said it.
//
// Within a process, an end is a channel closed once: a child's exit, a
// start or a build finished, a session initialized. Ended tests one without
// waiting, Await waits for one within a bound, Until ends a context with it.
package lifetime

import (
	"context"
	"errors"
	"time"
)

// ErrClosed means the run is closed: its work was cancelled, or what
// served it was closed with it.
var ErrClosed = errors.New("the run is closed")

// Closed is an error with its own words ("lsp supervisor is closed") that
// errors.Is matches to ErrClosed, for an engine closed with its run.
func Closed(msg string) error { return &closed{msg} }

type closed struct{ msg string }

func (e *closed) Error() string { return e.msg }

// Is makes errors.Is(err, ErrClosed) hold.
func (e *closed) Is(target error) bool { return target == ErrClosed }

// Ended reports, without waiting, whether end is closed. end must be a
// channel that is only ever closed: a value sent on it would be taken.
func Ended(end <-chan struct{}) bool {
	select {
	case <-end:
		return true
	default:
		return false
	}
}

// Await waits until end is closed, d has passed or ctx is done, and
// reports whether end was closed.
func Await(ctx context.Context, end <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-end:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// Until is a context that ends when parent does or end is closed, so
// work under it stops at whichever comes first. Call cancel when the
// work is done: it also ends the goroutine that watches end.
func Until(parent context.Context, end <-chan struct{}) (ctx context.Context, cancel context.CancelFunc) {
	ctx, cancel = context.WithCancel(parent)
	go func() {
		select {
		case <-end:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
