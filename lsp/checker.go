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

// runCheckers runs the project checker of every language whose root marker
// is in the checkout (diagnostics "*"), one run per marker folder.
func (s *Supervisor) runCheckers(ctx context.Context) (string, error) {
	markers := s.scanMarkers(ctx)
	var b strings.Builder
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
			fmt.Fprintf(&b, "%s (%s): %s\n\n", spec.Language, strings.Join(dirs, ", "), spec.CheckerNote)
			continue
		}
		if spec.CheckerRunsCode != "" && !s.cfg.Trusted {
			fmt.Fprintf(&b, "%s (%s): %s was not run: %s, and %s\n\n", spec.Language, strings.Join(dirs, ", "),
				strings.Join(spec.Checker, " "), spec.CheckerRunsCode, untrustedNote)
			continue
		}
		for _, dir := range dirs {
			abs := filepath.Join(s.root, filepath.FromSlash(dir))
			bin, err := s.lookBin(spec.Checker[0], spec.LocalBinDirs, abs)
			if err != nil {
				fmt.Fprintf(&b, "%s in %s: %s is not installed, so the project check cannot run (%s)\n\n", spec.Language, dir, spec.Checker[0], spec.Install)
				continue
			}
			ran = true
			b.WriteString(s.runChecker(ctx, spec, bin, abs, dir))
			b.WriteString("\n\n")
		}
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("%w: no language with a project checker was found in %s (no root marker of any known language); ask diagnostics for one file instead", ErrUnavailable, s.root)
	}
	out := strings.TrimRight(b.String(), "\n")
	if !ran {
		return out, nil
	}
	return out, ctx.Err()
}

// runChecker runs one checker in dir and reports its exit and output.
func (s *Supervisor) runChecker(ctx context.Context, spec *ServerSpec, bin, abs, dir string) string {
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
	err := proc.Start(cmd) // own group, gone with this process
	if err == nil {
		err = cmd.Wait()
		proc.KillGroup(cmd.Process.Pid) // helpers it left behind
		proc.Done(cmd.Process.Pid)
	}
	label := strings.Join(spec.Checker, " ")
	var status string
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		status = fmt.Sprintf("stopped after %s (CheckerTimeout)", s.cfg.CheckerTimeout)
	case err == nil:
		status = "exit 0"
	case errors.As(err, &exitErr):
		status = fmt.Sprintf("exit %d", exitErr.ExitCode())
	default:
		status = err.Error()
	}
	text := strings.TrimRight(out.String(), "\n")
	lines := strings.Split(text, "\n")
	if len(lines) > maxCheckerLines {
		lines = append(lines[:maxCheckerLines], fmt.Sprintf("... and %d more lines", len(lines)-maxCheckerLines))
	}
	for i, l := range lines {
		lines[i] = clip(l, 400)
	}
	head := fmt.Sprintf("$ %s   (%s, in %s, %s, %s)", label, spec.Language, dir, status, time.Since(t0).Round(time.Millisecond))
	if strings.TrimSpace(text) == "" {
		if err == nil {
			return head + "\nno problems found"
		}
		return head + "\n(no output)"
	}
	return head + "\n" + strings.Join(lines, "\n")
}
