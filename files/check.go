package files

import (
	"context"
	"fmt"

	"github.com/builtin-tools/builtin-tools/internal/staged"
	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/registry"
)

// servers are the run's language servers: with check, a write tool gives
// them the contents it would write and writes nothing (PRE-1).
var servers = registry.RequiresService[lsp.Checker]("check (the contents a call would write, checked by the language servers with nothing written)", "write", "edit", "apply_patch")

// noCheckApproval lets a call with check through the approval gate: it
// writes nothing.
func noCheckApproval[P any](check func(P) bool) registry.Hook[registry.None, P] {
	return registry.Approve(func(ctx context.Context, c *registry.Call, _ registry.None, p P) (bool, string) {
		return !check(p), ""
	})
}

// checkContents runs files' new contents past the language servers and
// returns the preview and its text; nothing is written.
func checkContents(ctx context.Context, c *registry.Call, files []staged.File) (*lsp.Preview, string, error) {
	sv, ok := servers.Of(c.Run)
	if !ok {
		return nil, "", fmt.Errorf("check needs the language servers, which this run does not have (%s); nothing was written", servers.Missing(c.Run))
	}
	pv, text, err := sv.CheckFiles(ctx, files)
	if err != nil {
		return nil, "", fmt.Errorf("the check stopped and nothing was written: %w", err)
	}
	return pv, text, nil
}
