package lsptool

import (
	"context"

	"github.com/builtin-tools/builtin-tools/lsp/answertext"

	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/pathguard"
	"github.com/builtin-tools/builtin-tools/registry"
)

// dependents is the run's code graph as the lsp family uses it: it names
// the files using what a write changed (WRT-6).
var dependents = registry.RequiresService[lsp.Dependents]("after a write, the check of the other files that use what it changed (the code graph names them)", "lsp")

// checkOthers checks, for each written file its server checked and whose
// earlier contents the call recorded, the files that use the definitions
// the write removed, renamed or gave another signature: at most
// lsp.MaxOtherFiles in all, none of them written by the call.
func (s *Servers) checkOthers(ctx context.Context, c *registry.Call, checked []string) *answertext.OthersReport {
	deps, ok := dependents.Of(c.Run)
	if !ok || len(checked) == 0 {
		return nil
	}
	written := map[string]bool{}
	for _, f := range c.Written() {
		written[c.Rel(f)] = true
	}
	rep := &answertext.OthersReport{Changed: map[string][]string{}}
	budget := lsp.MaxOtherFiles
	// One write's checks of other files together wait at most twice one
	// version's bound, however many written files changed a signature.
	ctx, cancel := context.WithTimeout(ctx, 2*s.Sup.DiagnosticsWait())
	defer cancel()
	for _, abs := range checked {
		before, ok := c.BeforeOf(abs)
		if !ok || budget == 0 {
			continue
		}
		after, _, err := c.Run.Guard().ReadFile(abs, registry.MaxBefore)
		if err != nil {
			continue
		}
		rel := c.Rel(abs)
		changed, files, more, err := deps.Dependents(ctx, rel, before, after, budget+len(written))
		if err != nil || len(changed) == 0 {
			continue
		}
		rep.Changed[rel] = changed
		var at []pathguard.Path
		for _, f := range files {
			if written[f] {
				continue
			}
			if len(at) == budget {
				more++
				continue
			}
			if p, err := c.Location(f); err == nil {
				at = append(at, p)
			}
		}
		rep.More += more
		if len(at) == 0 {
			continue
		}
		loc, err := c.Location(abs)
		if err != nil {
			continue
		}
		oc, err := s.Sup.CheckOthers(ctx, loc, before, at)
		if err != nil && oc == nil {
			continue
		}
		budget -= len(at)
		for path, ds := range oc.Diagnostics {
			s.ledger.Record(path, ds, false)
		}
		for _, v := range oc.Files {
			v.After = &diag.WriteRef{File: rel, Tool: c.Tool.Name}
			rep.Files = append(rep.Files, v)
		}
		rep.New = append(rep.New, relDiagnostics(c, oc.New)...)
		rep.Fixed = append(rep.Fixed, relDiagnostics(c, oc.Fixed)...)
	}
	if len(rep.Changed) == 0 {
		return nil
	}
	return rep
}
