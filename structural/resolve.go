package structural

import (
	"context"
	"fmt"
	"strings"

	"github.com/builtin-tools/builtin-tools/lsp/answertext"

	"github.com/builtin-tools/builtin-tools/internal/atomicfile"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/lsp/lsptool"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

type resolveParams struct {
	EditID string `json:"edit_id" jsonschema:"the id from ast_edit's result or lsp_rename's preview, such as edit_1"`
	Action string `json:"action" jsonschema:"accept (write every file, or none if any changed since staging) or discard" enum:"accept,discard"`
	Force  bool   `json:"force,omitempty" jsonschema:"on accept, write files even if they are read-only, have other hard links (they keep the old content) or their owner cannot be kept; the result says what was lost"`
}

// ResolveTool is the resolve tool (AE-2, AE-3).
var ResolveTool = registry.Descriptor{
	Name:  "resolve",
	Title: "apply or drop staged rewrite",
	Tier:  tiers.Write,
	Description: "Accept or discard an edit staged by ast_edit or by lsp_rename with preview. Accept first checks every file against what was staged: if any changed, " +
		"nothing is written and the edit is dropped. Otherwise every file is written atomically, all or nothing.",
	Writes: true,
	// Asked once, here, on accept: ast_edit only stages (Stages); a
	// discard writes nothing.
	Handler: registry.With(Key, resolve, registry.Approve(func(ctx context.Context, c *registry.Call, s *Structural, p resolveParams) (bool, string) {
		if p.Action != "accept" {
			return false, ""
		}
		summary, _ := s.Stager.Summary(p.EditID)
		if sv, ok := servers.Of(c.Run); ok {
			if pv, ok := sv.Kept(p.EditID); ok {
				summary += "\n\n" + answertext.FormatPreview(pv)
			}
		}
		return true, summary
	})),
}

// ResolveResult is what resolve did.
type ResolveResult struct {
	EditID       string   `json:"edit_id"`
	Accepted     bool     `json:"accepted"`
	Replacements int      `json:"replacements,omitempty"`
	Files        []string `json:"files,omitempty" jsonschema:"files written, relative to the root"`
	Notes        []string `json:"notes,omitempty"`
	// Preview says whether what was written matched the edit's
	// diagnostics preview (PRE-2).
	Preview *lsptool.PreviewMatch `json:"preview,omitempty" jsonschema:"on accept of an edit that was previewed: whether the written files have the previewed contents and diagnostics"`
}

// Text is what the agent reads.
func (r ResolveResult) Text() string {
	if !r.Accepted {
		return fmt.Sprintf("discarded %s: nothing was written", r.EditID)
	}
	text := fmt.Sprintf("accepted %s: %s in %s written: %s", r.EditID,
		textcut.Count(r.Replacements, "replacement", "replacements"), textcut.Count(len(r.Files), "file", "files"), strings.Join(r.Files, ", "))
	for _, n := range r.Notes {
		text += "\nnote: " + n
	}
	if r.Preview != nil {
		text += "\n" + r.Preview.Text()
	}
	return text
}

func resolve(ctx context.Context, c *registry.Call, s *Structural, p resolveParams) (ResolveResult, error) {
	var accept bool
	switch p.Action {
	case "accept":
		accept = true
	case "discard":
	default:
		return ResolveResult{}, fmt.Errorf("action must be accept or discard, not %q", p.Action)
	}
	out, err := s.Stager.Resolve(ctx, p.EditID, accept, atomicfile.Options{Force: p.Force, ApproveExec: func(paths []string) error {
		return c.Escalate(ctx, tiers.Exec, strings.Join(paths, ", "))
	}})
	if err != nil {
		return ResolveResult{}, err
	}
	if !accept {
		return ResolveResult{EditID: out.ID}, nil
	}
	for i, f := range out.Files {
		if abs, err := c.Path(f); err == nil {
			if i < len(out.Before) {
				c.Before(abs, out.Before[i])
			}
			c.Wrote(abs)
		}
	}
	res := ResolveResult{EditID: out.ID, Accepted: true, Replacements: out.Replacements, Files: out.Files, Notes: out.Notes}
	if sv, ok := servers.Of(c.Run); ok {
		res.Preview = sv.Compare(ctx, c, out.ID)
	}
	return res, nil
}
