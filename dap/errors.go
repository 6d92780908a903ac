package dap

import (
	"errors"
	"fmt"
)

// ErrBadArgument marks a request the agent can fix by changing its
// arguments.
var ErrBadArgument = errors.New("bad argument")

// ErrNoSession means there is no debug session to act on.
var ErrNoSession = errors.New("no debug session")

func badArg(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadArgument, fmt.Sprintf(format, args...))
}
