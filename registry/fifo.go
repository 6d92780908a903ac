package registry

import (
	"context"
	"io"
	"os"
	"sync"
)

var stderr io.Writer = os.Stderr

// fifo is a mutex that admits waiters in arrival order and lets a waiter
// give up when its context ends (REG-10).
type fifo struct {
	mu      sync.Mutex
	held    bool
	waiters []chan struct{}
}

func newFIFO() *fifo { return &fifo{} }

func (f *fifo) lock(ctx context.Context) error {
	f.mu.Lock()
	if !f.held {
		f.held = true
		f.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	f.waiters = append(f.waiters, ch)
	f.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		f.mu.Lock()
		for i, w := range f.waiters {
			if w == ch {
				f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
				f.mu.Unlock()
				return ctx.Err()
			}
		}
		f.mu.Unlock()
		// The lock was handed to us as we gave up: pass it on.
		f.unlock()
		return ctx.Err()
	}
}

func (f *fifo) unlock() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.waiters) == 0 {
		f.held = false
		return
	}
	next := f.waiters[0]
	f.waiters = f.waiters[1:]
	close(next)
}
