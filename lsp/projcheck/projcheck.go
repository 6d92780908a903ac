// Package projcheck runs the project checkers of `diagnostics "*"`: for
// each language whose root marker is in the checkout, the checker of its
// server row (go vet, pyright, tsc, cargo check, dart analyze) in every
// folder holding the marker, within a time limit, its output kept to the
// first lines with the paths made relative to the root; or why it was
// skipped (no checker, not installed, it runs the checkout's code in an
// untrusted checkout). It starts no language server.
package projcheck

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/toolenv"
)

// maxCheckerLines caps one checker's output in the result.
const maxCheckerLines = 200

// Checkers is what running the checkers needs of package lsp's run.
type Checkers struct {
	// Servers is the server table: each row's checker, one per language
	// (the first row of a language with a marker).
	Servers []langserver.Spec
	// Root is the checkout's root, absolute; Trusted its trust.
	Root    string
	Trusted bool
	// Timeout bounds one checker run.
	Timeout time.Duration
	// Look resolves a program for a folder as a server's start would
	// (the local bin folders only in a trusted checkout).
	Look func(program string, localDirs []string, dir string) (string, error)
	// Env is the environment the checkers run in.
	Env *toolenv.Env
	// RelText makes the paths in a line of output relative to the root.
	RelText func(string) string
}

// Run runs the checker of every language with a marker folder in markers
// (by server id, relative to the root), one run per folder, and says why
// a language with a marker had none. ran says whether any checker ran; a
// report with no runs found no language.
func (c *Checkers) Run(ctx context.Context, markers map[string][]string) (rep *answer.CheckReport, ran bool) {
	rep = &answer.CheckReport{Runs: []answer.CheckRun{}}
	covered := map[string]bool{} // language → handled by an earlier row
	for i := range c.Servers {
		spec := &c.Servers[i]
		dirs := markers[spec.ID]
		if len(dirs) == 0 || covered[spec.Language] {
			continue
		}
		covered[spec.Language] = true
		if len(spec.Checker) == 0 {
			rep.Runs = append(rep.Runs, answer.CheckRun{Language: spec.Language, Dirs: dirs, Skipped: answer.SkipNoChecker, Reason: spec.CheckerNote})
			continue
		}
		if spec.CheckerRunsCode != "" && !c.Trusted {
			rep.Runs = append(rep.Runs, answer.CheckRun{Language: spec.Language, Dirs: dirs, Command: spec.Checker,
				Skipped: answer.SkipRunsCode, Reason: spec.CheckerRunsCode})
			continue
		}
		for _, dir := range dirs {
			abs := filepath.Join(c.Root, filepath.FromSlash(dir))
			bin, err := c.Look(spec.Checker[0], spec.LocalBinDirs, abs)
			if err != nil {
				rep.Runs = append(rep.Runs, answer.CheckRun{Language: spec.Language, Dirs: []string{dir}, Command: spec.Checker,
					Skipped: answer.SkipNotInstalled, Reason: spec.Install})
				continue
			}
			if bin, err = c.Env.Unshim(bin); err != nil {
				rep.Runs = append(rep.Runs, answer.CheckRun{Language: spec.Language, Dirs: []string{dir}, Command: spec.Checker, Error: err.Error()})
				continue
			}
			ran = true
			rep.Runs = append(rep.Runs, c.runChecker(ctx, spec, bin, abs, dir))
		}
	}
	return rep, ran
}

// runChecker runs one checker in dir and reports its exit and output.
func (c *Checkers) runChecker(ctx context.Context, spec *langserver.Spec, bin, abs, dir string) answer.CheckRun {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	cmd := exec.Command(bin, spec.Checker[1:]...)
	cmd.Dir = abs
	cmd.Env = c.Env.Child(abs)
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
		run.TimedOut, run.TimeoutMS = true, c.Timeout.Milliseconds()
	}
	run.Output, run.MoreLines = out.result()
	for i, line := range run.Output {
		// pyright names files by absolute path.
		run.Output[i] = c.RelText(line)
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
		c.lines = append(c.lines, textcut.BytesEllipsis(string(c.partial), 400))
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
