package lsp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
)

// maxCheckerLines caps one checker's output in the result.
const maxCheckerLines = 200

// Check runs the project checker of every language whose root marker is in
// the checkout (diagnostics "*"), one run per marker folder, and says why
// a language with a marker had none.
func (s *Supervisor) Check(ctx context.Context) (*answer.CheckReport, error) {
	markers := s.co.ScanMarkers(ctx, s.cfg.Servers)
	if err := ctx.Err(); err != nil {
		// An unfinished scan found nothing; that is not "no marker".
		return nil, fmt.Errorf("diagnostics \"*\" stopped before the checkout's root markers were read: %w", err)
	}
	rep := &answer.CheckReport{Runs: []answer.CheckRun{}}
	ran := false
	covered := map[string]bool{} // language → handled by an earlier row
	for i := range s.cfg.Servers {
		spec := &s.cfg.Servers[i]
		dirs := markers[spec.ID]
		if len(dirs) == 0 || covered[spec.Language] {
			continue
		}
		covered[spec.Language] = true
		if len(spec.Checker) == 0 {
			rep.Runs = append(rep.Runs, answer.CheckRun{Language: spec.Language, Dirs: dirs, Skipped: answer.SkipNoChecker, Reason: spec.CheckerNote})
			continue
		}
		if spec.CheckerRunsCode != "" && !s.cfg.Trusted {
			rep.Runs = append(rep.Runs, answer.CheckRun{Language: spec.Language, Dirs: dirs, Command: spec.Checker,
				Skipped: answer.SkipRunsCode, Reason: spec.CheckerRunsCode})
			continue
		}
		for _, dir := range dirs {
			abs := filepath.Join(s.co.Root(), filepath.FromSlash(dir))
			bin, err := s.tools.lookBin(spec.Checker[0], spec.LocalBinDirs, abs)
			if err != nil {
				rep.Runs = append(rep.Runs, answer.CheckRun{Language: spec.Language, Dirs: []string{dir}, Command: spec.Checker,
					Skipped: answer.SkipNotInstalled, Reason: spec.Install})
				continue
			}
			if bin, err = s.tools.env.Unshim(bin); err != nil {
				rep.Runs = append(rep.Runs, answer.CheckRun{Language: spec.Language, Dirs: []string{dir}, Command: spec.Checker, Error: err.Error()})
				continue
			}
			ran = true
			rep.Runs = append(rep.Runs, s.tools.runChecker(ctx, spec, bin, abs, dir))
		}
	}
	if len(rep.Runs) == 0 {
		return nil, fmt.Errorf("%w: no language with a project checker was found in %s (no root marker of any known language); ask diagnostics for one file instead", ErrUnavailable, s.co.Root())
	}
	if !ran {
		return rep, nil
	}
	return rep, ctx.Err()
}

// runChecker runs one checker in dir and reports its exit and output.
func (la *launcher) runChecker(ctx context.Context, spec *langserver.Spec, bin, abs, dir string) answer.CheckRun {
	ctx, cancel := context.WithTimeout(ctx, la.cfg.CheckerTimeout)
	defer cancel()
	cmd := exec.Command(bin, spec.Checker[1:]...)
	cmd.Dir = abs
	cmd.Env = la.env.Child(abs)
	out := &lineCollector{max: maxCheckerLines}
	t0 := time.Now()
	// Its own group, gone with this process; its end takes the helpers
	// it left behind along.
	p, err := proc.Start(cmd, proc.Options{Stdout: out, Stderr: out})
	if err == nil {
		select {
		case <-p.Done():
		case <-ctx.Done():
			p.Kill()
		}
		err = p.Wait()
	}
	run := answer.CheckRun{Language: spec.Language, Dirs: []string{dir}, Command: spec.Checker,
		DurationMS: time.Since(t0).Round(time.Millisecond).Milliseconds()}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		run.ExitCode = new(int)
	case errors.As(err, &exitErr):
		code := exitErr.ExitCode()
		run.ExitCode = &code
	default:
		run.Error = err.Error()
	}
	if ctx.Err() == context.DeadlineExceeded {
		run.TimedOut, run.TimeoutMS = true, la.cfg.CheckerTimeout.Milliseconds()
	}
	run.Output, run.MoreLines = out.result()
	for i, line := range run.Output {
		// pyright names files by absolute path.
		run.Output[i] = la.co.RelText(line)
	}
	return run
}

// lineCollector keeps the first max lines written to it (each cut at 400
// bytes) and counts the rest, from any goroutine: a checker's output and
// errors go to one collector, as a terminal would show them.
type lineCollector struct {
	mu      sync.Mutex
	max     int
	lines   []string
	partial []byte // the line being written, at most 400 bytes of it
	more    int
	blank   int // how many of the last lines were empty
}

func (c *lineCollector) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		chunk := rest
		if i >= 0 {
			chunk = rest[:i]
		}
		if room := 401 - len(c.partial); room > 0 {
			c.partial = append(c.partial, chunk[:min(len(chunk), room)]...)
		}
		if i < 0 {
			break
		}
		c.endLine()
		rest = rest[i+1:]
	}
	return len(p), nil
}

func (c *lineCollector) endLine() {
	if len(c.partial) == 0 {
		c.blank++
	} else {
		c.blank = 0
	}
	if len(c.lines) < c.max {
		c.lines = append(c.lines, clip(string(c.partial), 400))
	} else {
		c.more++
	}
	c.partial = c.partial[:0]
}

// result is the lines kept and how many more there were; none when the
// output was only blank.
func (c *lineCollector) result() ([]string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.partial) > 0 {
		c.endLine()
	}
	// Empty lines at the end are not output.
	drop := min(c.blank, c.more)
	lines, more := c.lines[:len(c.lines)-(c.blank-drop)], c.more-drop
	if more == 0 && strings.TrimSpace(strings.Join(lines, "")) == "" {
		return nil, 0
	}
	return lines, more
}
