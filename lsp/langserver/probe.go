package langserver

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
)

// A binary that resolves may still not run: rustup installs a
// rust-analyzer proxy even without the component, and the proxy fails with
// a backtrace. A probe ([Spec.Probe]) runs it once per binary (and
// again when the file changes) before it counts as installed.

type probeKey struct {
	bin   string
	size  int64
	mtime time.Time
	dir   string // where it ran
	env   string // the pins it ran with
}

var probes sync.Map // probeKey -> error (nil: it runs)

// RunProbe reports why bin, the program of row s, does not run, or nil;
// a row without Probe arguments is not probed. It runs bin with them in
// dir with env, bounded by timeout, once per binary (and again when the
// file changes), folder and pins (the toolchain pins env holds, "" for
// none): the answer is the process's from then on.
func (s *Spec) RunProbe(bin, dir string, env []string, pins string, timeout time.Duration) error {
	if len(s.Probe) == 0 {
		return nil
	}
	info, err := os.Stat(bin)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, s.Probe...)
	cmd.Dir, cmd.Env = dir, env
	key := probeKey{bin: bin, size: info.Size(), mtime: info.ModTime(), dir: dir, env: pins}
	if v, ok := probes.Load(key); ok {
		err, _ := v.(error)
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := proc.Output(ctx, cmd)
	var result error
	if err != nil {
		var timedOut *proc.TimeoutError
		why := proc.ExplainingLine(string(out))
		switch {
		case errors.As(err, &timedOut):
			why = fmt.Sprintf("`%s %s` did not finish within %s", bin, strings.Join(s.Probe, " "), timeout)
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
