package lsptool

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

type fixParams struct {
	ID      string `json:"id,omitempty" jsonschema:"an action id from lsp code_actions in this run, such as action_3"`
	File    string `json:"file,omitempty" jsonschema:"with kind: the file to fix, relative to the root"`
	Kind    string `json:"kind,omitempty" jsonschema:"instead of id: organize_imports, fix_all (the server's source actions) or format" enum:"organize_imports,fix_all,format"`
	Line    int    `json:"line,omitempty" jsonschema:"for format: first line (1-based) of a range to format instead of the whole file"`
	EndLine int    `json:"end_line,omitempty" jsonschema:"for format: last line of the range (default: line)"`
	Force   bool   `json:"force,omitempty" jsonschema:"change files even if they are read-only, have other hard links (they keep the old content) or their owner cannot be kept; the result says what was lost"`
}

// FixTool is the `lsp_fix` tool: it applies what a language server offers.
var FixTool = registry.Descriptor{
	Name:  "lsp_fix",
	Title: "apply language-server fix",
	Tier:  tiers.Write,
	Description: "Apply what the language server offers: one code action by the id lsp code_actions gave it, or by kind on a file — " +
		"organize_imports, fix_all, or format (the whole file, or line..end_line). The server's edit, or the edit its command sends back, " +
		"is written all or nothing; an id listed before its file changed is refused and the actions are listed afresh. " +
		"New diagnostics come back with the result.",
	Writes:  true,
	Handler: registry.With(Key, fix),
}

// FixResult is what lsp_fix applied.
type FixResult struct {
	*lsp.FixResult
	text string
}

// Text is what the agent reads.
func (r FixResult) Text() string { return r.text }

func fix(ctx context.Context, c *registry.Call, s *Servers, p fixParams) (FixResult, error) {
	var res *lsp.FixResult
	var err error
	switch {
	case p.ID != "" && p.Kind != "":
		return FixResult{}, errors.New("lsp_fix takes id (an action from lsp code_actions) or kind with file, not both")
	case p.ID != "":
		if p.Line > 0 || p.EndLine > 0 {
			return FixResult{}, errors.New("line and end_line are for kind format; an action's id already says where it applies")
		}
		res, err = s.Sup.ApplyAction(ctx, p.ID, p.Force)
	case p.Kind != "":
		if p.File == "" {
			return FixResult{}, fmt.Errorf("kind %s needs file (a path relative to the root)", p.Kind)
		}
		at, lerr := c.Location(p.File)
		if lerr != nil {
			return FixResult{}, lerr
		}
		if p.EndLine > 0 && p.Line <= 0 {
			return FixResult{}, errors.New("end_line needs line, the first line of the range")
		}
		res, err = s.Sup.Fix(ctx, at, p.Kind, p.Line, p.EndLine, p.Force)
	default:
		return FixResult{}, errors.New("lsp_fix needs id (an action from lsp code_actions) or kind (organize_imports, fix_all, format) with file")
	}
	if err != nil {
		var stale *lsp.StaleActionError
		if errors.As(err, &stale) && stale.Fresh != nil {
			return FixResult{}, errors.New(s.Sup.RelText(err.Error() + ". Offered now:\n" + FormatCodeActions(enabledOnly(stale.Fresh), true)))
		}
		return FixResult{}, errors.New(s.Sup.RelText(err.Error()))
	}
	for _, f := range res.Files {
		if abs, err := c.Path(f.Path); err == nil {
			c.Wrote(abs)
		}
	}
	return FixResult{FixResult: res, text: strings.TrimSpace(FormatFix(res))}, nil
}
