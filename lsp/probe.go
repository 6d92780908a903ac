package lsp

import (
	"fmt"
	"strings"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
)

// probe reports why bin does not run, or nil (langserver.Spec.RunProbe).
// For an untrusted checkout it runs in proc.NeutralDir with the toolchain
// pins (package toolenv), so the checkout chooses nothing; for a trusted
// one in root, where the server will run, so that it checks the program
// the start will get.
func (la *launcher) probe(spec *langserver.Spec, bin, root string) error {
	if len(spec.Probe) == 0 {
		return nil // no environment worked out for a row with no probe
	}
	dir, pins := root, ""
	if !la.cfg.Trusted {
		dir, pins = proc.NeutralDir, strings.Join(la.env.Pins(), "\x00")
	}
	return spec.RunProbe(bin, dir, la.env.Child(""), pins, la.cfg.ProbeTimeout)
}

// Start failures back off: a server that failed to start is not started
// again on every call (every write would pay for it and repeat the error)
// until its backoff ends or reload asks for it.
const (
	firstBackoff = 30 * time.Second
	maxBackoff   = 10 * time.Minute
)

type startFailure struct {
	err     error
	until   time.Time
	backoff time.Duration
}

// BackoffError repeats a start failure during its backoff.
type BackoffError struct {
	Err   error
	Until time.Time
}

func (e *BackoffError) Error() string {
	return fmt.Sprintf("%v (not retried until %s; lsp reload retries now)", e.Err, e.Until.Format(time.TimeOnly))
}

func (e *BackoffError) Unwrap() error { return e.Err }
