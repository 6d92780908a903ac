package dap

import (
	"errors"
	"fmt"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
)

// ErrNoSession means there is no debug session to act on.
var ErrNoSession = errors.New("no debug session")

func noSession(format string, args ...any) error {
	return &adapter.Error{Kind: ErrNoSession, Msg: fmt.Sprintf(format, args...)}
}
