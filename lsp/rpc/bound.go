package rpc

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrBoundExpired is the cause a Bound cancels its request with.
var ErrBoundExpired = errors.New("request bound expired")

// Bound is a request's time limit that stops while the operator is asked
// about something the request sent (an edit a command sends), and starts
// afresh when the answer comes.
type Bound struct {
	d      time.Duration
	mu     sync.Mutex
	timer  *time.Timer
	paused int
}

// NewBound returns a limit of d.
func NewBound(d time.Duration) *Bound { return &Bound{d: d} }

// Limit is the time the request may run unpaused.
func (b *Bound) Limit() time.Duration { return b.d }

// Start bounds ctx; the returned function releases it.
func (b *Bound) Start(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	b.mu.Lock()
	b.timer = time.AfterFunc(b.d, func() { cancel(ErrBoundExpired) })
	b.mu.Unlock()
	return ctx, func() {
		b.mu.Lock()
		b.timer.Stop()
		b.mu.Unlock()
		cancel(nil)
	}
}

// Pause stops the clock until the matching Resume.
func (b *Bound) Pause() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.paused++; b.timer != nil {
		b.timer.Stop()
	}
}

// Resume starts the clock afresh once every Pause has been resumed.
func (b *Bound) Resume() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.paused--; b.paused == 0 && b.timer != nil {
		b.timer.Reset(b.d)
	}
}
