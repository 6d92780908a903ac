package lsp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
)

// A binary that resolves may still not run: rustup installs a
// rust-analyzer proxy even without the component, and the proxy fails with
// a backtrace. A probe ([langserver.Spec.Probe]) runs it once per binary (and
// again when the file changes) before it counts as installed.

type probeKey struct {
	bin   string
	size  int64
	mtime time.Time
	dir   string // where it ran
	env   string // the pins it ran with
}

var probes sync.Map // probeKey -> error (nil: it runs)

// probe reports why bin does not run, or nil; without a Probe in the spec
// it is not run and nil is returned. For an untrusted checkout it runs in
// proc.NeutralDir with the toolchain pins (package toolenv), so the checkout
// chooses nothing; for a trusted one in root, where the server will run,
// so that it checks the program the start will get.
func (la *launcher) probe(spec *langserver.Spec, bin, root string) error {
	if len(spec.Probe) == 0 {
		return nil
	}
	info, err := os.Stat(bin)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, spec.Probe...)
	cmd.Dir, cmd.Env = proc.NeutralDir, la.env.Child("")
	key := probeKey{bin: bin, size: info.Size(), mtime: info.ModTime(), dir: cmd.Dir}
	if la.cfg.Trusted {
		cmd.Dir, key.dir = root, root
	} else {
		key.env = strings.Join(la.env.Pins(), "\x00")
	}
	if v, ok := probes.Load(key); ok {
		err, _ := v.(error)
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), la.cfg.ProbeTimeout)
	defer cancel()
	out, err := proc.Output(ctx, cmd)
	var result error
	if err != nil {
		var timeout *proc.TimeoutError
		why := proc.ExplainingLine(string(out))
		switch {
		case errors.As(err, &timeout):
			why = fmt.Sprintf("`%s %s` did not finish within %s", bin, strings.Join(spec.Probe, " "), la.cfg.ProbeTimeout)
		case why == "":
			why = err.Error()
		default:
			why = fmt.Sprintf("%s (%v)", why, err)
		}
		result = errors.New(why)
	}
	probes.Store(key, result)
	return result
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
