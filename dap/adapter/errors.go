package adapter

import (
	"errors"
	"fmt"
)

// ErrBadArgument marks a request the agent can fix by changing its
// arguments.
var ErrBadArgument = errors.New("bad argument")

// Error is an error an agent can act on: its text is the sentence the
// agent reads, and Kind (ErrBadArgument, or dap's ErrNoSession) is what
// errors.Is matches, so no caller reads the kind from the text.
type Error struct {
	Kind error
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Unwrap gives Kind, for errors.Is.
func (e *Error) Unwrap() error { return e.Kind }

// BadArg is an Error of kind ErrBadArgument: the agent fixes it by
// changing its arguments.
func BadArg(format string, args ...any) error {
	return &Error{Kind: ErrBadArgument, Msg: fmt.Sprintf(format, args...)}
}
