package lifetime_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

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
