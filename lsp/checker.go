package lsp

import (
	"context"
	"fmt"

	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/projcheck"
)

// Check runs the project checker of every language whose root marker is in
// the checkout (diagnostics "*"), one run per marker folder, and says why
// a language with a marker had none (package projcheck).
func (s *Supervisor) Check(ctx context.Context) (*answer.CheckReport, error) {
	markers := s.co.ScanMarkers(ctx, s.cfg.Servers)
	if err := ctx.Err(); err != nil {
		// An unfinished scan found nothing; that is not "no marker".
		return nil, fmt.Errorf("diagnostics \"*\" stopped before the checkout's root markers were read: %w", err)
	}
	checkers := projcheck.Checkers{Servers: s.cfg.Servers, Root: s.co.Root(), Trusted: s.cfg.Trusted, Timeout: s.cfg.CheckerTimeout,
		Look: s.tools.lookBin, Env: s.tools.env, RelText: s.co.RelText}
	rep, ran := checkers.Run(ctx, markers)
	if len(rep.Runs) == 0 {
		return nil, fmt.Errorf("%w: no language with a project checker was found in %s (no root marker of any known language); ask diagnostics for one file instead", ErrUnavailable, s.co.Root())
	}
	if !ran {
		return rep, nil
	}
	return rep, ctx.Err()
}
