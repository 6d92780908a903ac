package lsp

import (
	"errors"
	"fmt"
	"strings"

	"github.com/builtin-tools/builtin-tools/internal/lifetime"
)

// Sentinel errors callers test with errors.Is. The concrete errors carry
// text that says what happened and what to do.
var (
	// ErrNotOwned: no server in the table handles files of this kind.
	ErrNotOwned = errors.New("no language server handles this kind of file")
	// ErrUnavailable: a server handles the file, but its root marker or its
	// binary is missing (LSP-2). The error says which.
	ErrUnavailable = errors.New("language server not available")
	// ErrServerExited: the server process died (before or during the call).
	ErrServerExited = errors.New("language server exited")
	// ErrServerTimeout: the server did not answer within the bound.
	ErrServerTimeout = errors.New("language server did not answer in time")
	// ErrServerFailed: the server answered with an error.
	ErrServerFailed = errors.New("language server returned an error")
	// ErrDiagnosticsTimeout: a document version's diagnostics did not arrive
	// within DiagnosticsWait. Diagnostics returned alongside it may be stale.
	ErrDiagnosticsTimeout = errors.New("diagnostics not ready in time")
	// ErrClosed: the Supervisor was closed.
	ErrClosed = lifetime.Closed("lsp supervisor is closed")
	// ErrBadArgument: an operation's arguments do not fit together.
	ErrBadArgument = errors.New("bad argument")
	// ErrNoCallHierarchy: the server has no call hierarchy, or not the
	// direction asked (clangd 14 has no outgoing calls).
	ErrNoCallHierarchy = errors.New("the server has no such call hierarchy")
)

// UnavailableError says, per candidate server, which half of detection
// (root marker, binary) is missing for a file.
type UnavailableError struct {
	File    string   // relative to the root
	Reasons []string // one per candidate server
	// Broken lists the servers whose binary resolves but does not run.
	Broken []string
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("no language server can answer for %s: %s", e.File, strings.Join(e.Reasons, "; "))
}

// Unwrap makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Unwrap() error { return ErrUnavailable }

// ServerError is a failure of one server on one request: it exited, did not
// answer, or answered with an error (Kind says which).
type ServerError struct {
	Server string // spec ID
	Root   string // relative to the supervisor root, "." for the root
	Method string
	Kind   error // ErrServerExited, ErrServerTimeout or ErrServerFailed
	Detail string
	// Code is the JSON-RPC error code the server answered with
	// (ErrServerFailed), 0 otherwise.
	Code int64
}

func (e *ServerError) Error() string {
	var what, todo string
	switch e.Kind {
	case ErrServerExited:
		what = "exited"
		todo = "the next call starts a fresh server"
	case ErrServerTimeout:
		what = "did not answer"
		todo = "try again, ask something narrower, or use reload to restart it"
	default:
		what = "returned an error"
	}
	msg := fmt.Sprintf("%s (root %s) %s", e.Server, e.Root, what)
	if e.Method != "" {
		msg += " on " + e.Method
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if todo != "" {
		msg += "; " + todo
	}
	return msg
}

// Unwrap returns Kind, for errors.Is.
func (e *ServerError) Unwrap() error { return e.Kind }
