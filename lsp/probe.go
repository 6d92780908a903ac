package lsp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
)

// A binary that resolves may still not run: rustup installs a
// rust-analyzer proxy even without the component, and the proxy fails with
// a backtrace. A probe ([ServerSpec.Probe]) runs it once per binary (and
// again when the file changes) before it counts as installed.

type probeKey struct {
	bin   string
	size  int64
	mtime time.Time
}

var probes sync.Map // probeKey -> error (nil: it runs)

// probeTimeout bounds one probe.
const probeTimeout = 15 * time.Second

// probe reports why bin does not run, or nil; without a Probe in the spec
// it is not run and nil is returned.
func probe(spec *ServerSpec, bin string) error {
	if len(spec.Probe) == 0 {
		return nil
	}
	info, err := os.Stat(bin)
	if err != nil {
		return err
	}
	key := probeKey{bin, info.Size(), info.ModTime()}
	if v, ok := probes.Load(key); ok {
		err, _ := v.(error)
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, spec.Probe...)
	cmd.Cancel = func() error { proc.KillGroup(cmd.Process.Pid); return nil }
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = proc.StartOld(cmd)
	if err == nil {
		err = cmd.Wait()
		proc.KillGroup(cmd.Process.Pid)
		proc.Done(cmd.Process.Pid)
	}
	var result error
	if err != nil {
		why := explainingLine(out.String())
		if why == "" {
			why = err.Error()
		} else {
			why = fmt.Sprintf("%s (%v)", why, err)
		}
		if ctx.Err() != nil {
			why = fmt.Sprintf("`%s %s` did not finish within %s", bin, strings.Join(spec.Probe, " "), probeTimeout)
		}
		result = errors.New(why)
	}
	probes.Store(key, result)
	return result
}

// explainingLine picks the line of a failed program's output that says
// why: the first that mentions an error, else the first non-empty one;
// backtraces and the rest are left out.
func explainingLine(out string) string {
	first := ""
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if first == "" {
			first = l
		}
		low := strings.ToLower(l)
		if strings.Contains(low, "error") || strings.Contains(low, "not found") || strings.Contains(low, "unknown") {
			return clip(l, 300)
		}
	}
	return clip(first, 300)
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
