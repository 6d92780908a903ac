package framing

import (
	"errors"
	"fmt"
)

// Sentinel kinds of [HeaderError]; test with errors.Is.
var (
	// ErrMissingLength: a header block ended without a Content-Length header.
	ErrMissingLength = errors.New("framing: header block has no Content-Length")
	// ErrNegativeLength: Content-Length is a negative number.
	ErrNegativeLength = errors.New("framing: negative Content-Length")
	// ErrBadLength: Content-Length is not a plain decimal number.
	ErrBadLength = errors.New("framing: Content-Length is not a decimal number")
	// ErrConflictingLength: two Content-Length headers disagree.
	ErrConflictingLength = errors.New("framing: conflicting Content-Length headers")
	// ErrNoColon: a header line has no colon.
	ErrNoColon = errors.New("framing: header line without a colon")
	// ErrTooLarge: Content-Length is above the cap set with WithMaxBody.
	ErrTooLarge = errors.New("framing: Content-Length over the cap")
	// ErrHeaderTooLong: a header line or header block is over its bound.
	ErrHeaderTooLong = errors.New("framing: header too long")
	// ErrBareLF: a header line ended in LF without CR (WithStrictCRLF only).
	ErrBareLF = errors.New("framing: header line ends in LF without CR")
	// ErrNoFrame: too much non-frame output came before the first frame.
	ErrNoFrame = errors.New("framing: no frame header in the peer's output")
)

// HeaderError reports a malformed frame header. Kind is one of the Err*
// sentinels above and is what errors.Is matches.
type HeaderError struct {
	Kind error
	// Line is the offending header line (truncated), or "" when the fault is
	// not one line (ErrMissingLength, ErrHeaderTooLong for a block).
	Line string
	// Max is the body cap in force, set for ErrTooLarge.
	Max int
}

// Error says what was wrong and, where it helps, what to do about it.
func (e *HeaderError) Error() string {
	msg := e.Kind.Error()
	if e.Line != "" {
		msg += fmt.Sprintf(" (line %q)", e.Line)
	}
	switch e.Kind {
	case ErrTooLarge:
		msg += fmt.Sprintf(": the cap is %d bytes; raise it with framing.WithMaxBody if the peer really sends frames this large", e.Max)
	case ErrNoFrame:
		msg += fmt.Sprintf(": it wrote over %d bytes without a Content-Length header; check that it speaks LSP/DAP on this stream (many servers need a --stdio flag) and see Reader.Banner for what it printed", maxBannerBytes)
	case ErrNoColon, ErrMissingLength, ErrBadLength, ErrNegativeLength, ErrConflictingLength, ErrHeaderTooLong, ErrBareLF:
		msg += ": the peer is not speaking Content-Length framing correctly (or wrote other output into the stream); the connection cannot be resynchronised and must be restarted"
	}
	return msg
}

// Unwrap returns Kind, so errors.Is(err, ErrTooLarge) and the like work.
func (e *HeaderError) Unwrap() error { return e.Kind }

// newHeaderError copies (a bounded prefix of) line, which may alias the read
// buffer.
func newHeaderError(kind error, line []byte, max int) *HeaderError {
	const keep = 80
	s := line
	suffix := ""
	if len(s) > keep {
		s, suffix = s[:keep], "..."
	}
	return &HeaderError{Kind: kind, Line: string(s) + suffix, Max: max}
}
