package lifetime_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/lifetime"
)

// An engine's own closed error, wrapped or given as a context's cause, is
// the run's closing to errors.Is, and keeps its own identity and words.
func TestClosedIsErrClosed(t *testing.T) {
	own := lifetime.Closed("engine is closed")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(lifetime.ErrClosed)
	for _, err := range []error{own, fmt.Errorf("search: %w", own), context.Cause(ctx), fmt.Errorf("x: %w", lifetime.ErrClosed)} {
		if !errors.Is(err, lifetime.ErrClosed) {
			t.Errorf("%v is not ErrClosed", err)
		}
	}
	if !errors.Is(fmt.Errorf("a: %w", own), own) || own.Error() != "engine is closed" {
		t.Errorf("lost its identity or words: %v", own)
	}
	if errors.Is(errors.New("the run is closed"), lifetime.ErrClosed) {
		t.Error("matched what it is not")
	}
}

// An end is seen once its channel is closed, at once or within the bound;
// a bound passed or a context ended first says it was not.
func TestEndedAndAwait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		end := make(chan struct{})
		if lifetime.Ended(end) {
			t.Error("an open channel is an end")
		}
		start := time.Now()
		if lifetime.Await(context.Background(), end, time.Minute) || time.Since(start) != time.Minute {
			t.Errorf("Await on an open channel: true, or after %s instead of the bound", time.Since(start))
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if lifetime.Await(ctx, end, time.Hour) {
			t.Error("Await with an ended context reported the end")
		}
		time.AfterFunc(time.Second, func() { close(end) })
		start = time.Now()
		if !lifetime.Await(context.Background(), end, time.Minute) || time.Since(start) != time.Second {
			t.Errorf("Await missed the close, or waited %s", time.Since(start))
		}
		if !lifetime.Ended(end) {
			t.Error("a closed channel is not an end")
		}
	})
}

// A context made Until an end ends with it, or with its parent, or when
// cancelled; whichever comes first.
func TestUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		end := make(chan struct{})
		ctx, cancel := lifetime.Until(context.Background(), end)
		defer cancel()
		start := time.Now()
		time.AfterFunc(time.Second, func() { close(end) })
		<-ctx.Done()
		if time.Since(start) != time.Second || ctx.Err() != context.Canceled {
			t.Errorf("after the end closed: %v after %s", ctx.Err(), time.Since(start))
		}

		parent, stop := context.WithTimeout(context.Background(), time.Minute)
		defer stop()
		start = time.Now()
		ctx, cancel = lifetime.Until(parent, make(chan struct{}))
		defer cancel()
		<-ctx.Done()
		if time.Since(start) != time.Minute || ctx.Err() != context.DeadlineExceeded {
			t.Errorf("with the parent's deadline: %v after %s", ctx.Err(), time.Since(start))
		}

		ctx, cancel = lifetime.Until(context.Background(), make(chan struct{}))
		cancel()
		synctest.Wait() // the watching goroutine has ended: synctest fails a test that leaks one
		if ctx.Err() != context.Canceled {
			t.Errorf("after cancel: %v", ctx.Err())
		}
	})
}
