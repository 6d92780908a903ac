package lsp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
)

// maxCheckerLines caps one checker's output in the result.
const maxCheckerLines = 200

// Check runs the project checker of every language whose root marker is in
// the checkout (diagnostics "*"), one run per marker folder, and says why
// a language with a marker had none.
func (s *Supervisor) Check(ctx context.Context) (*CheckReport, error) {
	markers := s.scanMarkers(ctx)
	rep := &CheckReport{Runs: []CheckRun{}}
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
			rep.Runs = append(rep.Runs, CheckRun{Language: spec.Language, Dirs: dirs, Skipped: SkipNoChecker, Reason: spec.CheckerNote})
			continue
		}
		if spec.CheckerRunsCode != "" && !s.cfg.Trusted {
			rep.Runs = append(rep.Runs, CheckRun{Language: spec.Language, Dirs: dirs, Command: spec.Checker,
				Skipped: SkipRunsCode, Reason: spec.CheckerRunsCode})
			continue
		}
		for _, dir := range dirs {
			abs := filepath.Join(s.root, filepath.FromSlash(dir))
			bin, err := s.lookBin(spec.Checker[0], spec.LocalBinDirs, abs)
			if err != nil {
				rep.Runs = append(rep.Runs, CheckRun{Language: spec.Language, Dirs: []string{dir}, Command: spec.Checker,
					Skipped: SkipNotInstalled, Reason: spec.Install})
				continue
			}
			ran = true
			rep.Runs = append(rep.Runs, s.runChecker(ctx, spec, bin, abs, dir))
		}
	}
	if len(rep.Runs) == 0 {
		return nil, fmt.Errorf("%w: no language with a project checker was found in %s (no root marker of any known language); ask diagnostics for one file instead", ErrUnavailable, s.root)
	}
	if !ran {
		return rep, nil
	}
	return rep, ctx.Err()
}

// runChecker runs one checker in dir and reports its exit and output.
func (s *Supervisor) runChecker(ctx context.Context, spec *ServerSpec, bin, abs, dir string) CheckRun {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CheckerTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, spec.Checker[1:]...)
	cmd.Dir = abs
	cmd.Cancel = func() error { proc.KillGroup(cmd.Process.Pid); return nil }
	cmd.WaitDelay = 2 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	t0 := time.Now()
	err := proc.StartOld(cmd) // own group, gone with this process
	if err == nil {
		err = cmd.Wait()
		proc.KillGroup(cmd.Process.Pid) // helpers it left behind
		proc.Done(cmd.Process.Pid)
	}
	run := CheckRun{Language: spec.Language, Dirs: []string{dir}, Command: spec.Checker,
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
		run.TimedOut, run.TimeoutMS = true, s.cfg.CheckerTimeout.Milliseconds()
	}
	text := strings.TrimRight(out.String(), "\n")
	if strings.TrimSpace(text) == "" {
		return run
	}
	lines := strings.Split(text, "\n")
	if len(lines) > maxCheckerLines {
		lines, run.MoreLines = lines[:maxCheckerLines], len(lines)-maxCheckerLines
	}
	for i, l := range lines {
		lines[i] = clip(l, 400)
	}
	run.Output = lines
	return run
}
