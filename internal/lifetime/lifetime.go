// Package lifetime holds the one error a run's closing is known by, where
// every layer can reach it: the registry cancels with it, and an engine
// whose resource the run closed fails with it or with an error of its own
// words that errors.Is still matches to it. A caller tests closed-ness one
// way, errors.Is(err, lifetime.ErrClosed) (registry.ErrClosed is the same
// value), whichever layer said it.
package lifetime

import "errors"

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
