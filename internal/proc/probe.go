//go:build unix

package proc

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/textcut"
)

// ProbeTimeout bounds a probe whose context has no deadline.
const ProbeTimeout = 15 * time.Second

// outputLimit bounds what Output keeps of a program's output.
const outputLimit = 1 << 20

// NeutralDir is where programs that must not read the checkout's
// per-folder settings run (toolchain managers pick a toolchain from a
// file in the working folder or above): the file system's root.
const NeutralDir = "/"

// Probe runs bin with args in [NeutralDir] and returns what it printed
// (standard output and error together, at most 1 MiB) and how it ended: an
// *exec.ExitError, or an error saying it did not finish in time. Used to
// check that a program runs before it counts as installed.
func Probe(ctx context.Context, bin string, args ...string) ([]byte, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = NeutralDir
	return Output(ctx, cmd)
}

// Output runs cmd as a child of this process ([Start]) and returns its
// standard output and error together (at most 1 MiB kept) and how it
// ended. When ctx ends first the child's group is killed and the error
// says how long it ran; a ctx with no deadline gets [ProbeTimeout].
func Output(ctx context.Context, cmd *exec.Cmd) ([]byte, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, ProbeTimeout)
		defer cancel()
	}
	var buf limitedBuffer
	t0 := time.Now()
	p, err := Start(cmd, Options{Stdout: &buf, Stderr: &buf, Grace: 500 * time.Millisecond, Drain: time.Second})
	if err != nil {
		return nil, err
	}
	select {
	case <-p.Done():
	case <-ctx.Done():
		p.Kill()
		<-p.Done()
		return buf.Bytes(), &TimeoutError{Cmd: strings.Join(cmd.Args, " "), After: time.Since(t0).Round(time.Millisecond), Cause: context.Cause(ctx)}
	}
	return buf.Bytes(), p.Wait()
}

// ExplainingLine picks the line of a failed program's output that says
// why: the first that mentions an error, else the first non-empty one;
// backtraces and the rest are left out.
func ExplainingLine(out string) string {
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
			return textcut.BytesEllipsis(l, 300)
		}
	}
	return textcut.BytesEllipsis(first, 300)
}

// TimeoutError says a program did not finish before its context ended.
type TimeoutError struct {
	Cmd   string
	After time.Duration
	Cause error
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("`%s` did not finish within %s", e.Cmd, e.After)
}

func (e *TimeoutError) Unwrap() error { return e.Cause }

// limitedBuffer keeps the first outputLimit bytes written, from any
// goroutine.
type limitedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := outputLimit - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (l *limitedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}
