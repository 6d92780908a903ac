package lsptool

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/builtin-tools/builtin-tools/lsp/answertext"

	"github.com/builtin-tools/builtin-tools/internal/staged"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
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
	Preview bool   `json:"preview,omitempty" jsonschema:"stage the fix's edit instead of writing it: the result is the diff, the diagnostics accepting would introduce or fix (the staged text checked by the language server, nothing written) and an edit_id for resolve to accept or discard; not for a fix that runs a server command"`
}

// FixTool is the `lsp_fix` tool: it applies what a language server offers.
// Under write=ask the card shows the files and diff of the fix's edit,
// worked out before asking, and exactly that edit is written (R7); the
// edit a command sends once it runs is asked about on a card of its own.
var FixTool = registry.Descriptor{
	Name:  "lsp_fix",
	Title: "apply language-server fix",
	Tier:  tiers.Write,
	Description: "Apply what the language server offers: one code action by the id lsp code_actions gave it, or by kind on a file — " +
		"organize_imports, fix_all, or format (the whole file, or line..end_line). The server's edit, or the edit its command sends back, " +
		"is written all or nothing; an id listed before its file changed is refused and the actions are listed afresh. " +
		"New diagnostics come back with the result.",
	Writes:  true,
	Handler: registry.With(Key, fix, registry.Approve(fixApproval)),
}

// FixResult is what lsp_fix applied.
type FixResult struct {
	*answer.FixResult
	// EditID, Diff and Preview are set with preview: nothing was written.
	EditID  string       `json:"edit_id,omitempty" jsonschema:"with preview: give it to resolve"`
	Diff    string       `json:"diff,omitempty" jsonschema:"with preview: unified diff of every file"`
	DiffCut bool         `json:"diff_cut,omitempty" jsonschema:"the diff is longer than 256 KiB and was cut"`
	Preview *lsp.Preview `json:"preview,omitempty" jsonschema:"with preview: the errors and warnings accepting would introduce and fix, as the language server sees the staged text"`
	text    string
}

// Text is what the agent reads.
func (r FixResult) Text() string { return r.text }

// fixApproval works the fix out before the operator is asked: the card
// shows its files and diff, and the outcome is kept for the handler, which
// writes that plan and nothing else — nor anything when the plan failed or
// changed nothing, however the server answers when asked again. A fix that
// changes nothing is not asked about.
func fixApproval(ctx context.Context, c *registry.Call, s *Servers, p fixParams) (bool, string) {
	if p.Preview {
		return false, "" // it stages: resolve's accept is asked
	}
	plan, err := planFix(ctx, c, s, p)
	s.keepPlan(ctx, c, planned{plan, err})
	switch {
	case err != nil:
		return true, "lsp_fix will fail: " + s.Sup.RelText(err.Error())
	case plan.Result.Unchanged && plan.Command == "":
		return false, ""
	}
	return true, answertext.FixCard(plan)
}

// planned is a fix worked out for an approval card: the plan, or why
// there is none.
type planned struct {
	plan *lsp.FixPlan
	err  error
}

// keepPlan holds what a call's card was made from for its handler, until
// the call ends (a refused call's goes with it).
func (s *Servers) keepPlan(ctx context.Context, c *registry.Call, p planned) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.plans == nil {
		s.plans = map[*registry.Call]planned{}
	}
	s.plans[c] = p
	context.AfterFunc(ctx, func() { s.takePlan(c) })
}

func (s *Servers) takePlan(c *registry.Call) (planned, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.plans[c]
	delete(s.plans, c)
	return p, ok
}

// planFix works out the fix the arguments name, writing nothing.
func planFix(ctx context.Context, c *registry.Call, s *Servers, p fixParams) (*lsp.FixPlan, error) {
	switch {
	case p.ID != "" && p.Kind != "":
		return nil, errors.New("lsp_fix takes id (an action from lsp code_actions) or kind with file, not both")
	case p.ID != "":
		if p.Line > 0 || p.EndLine > 0 {
			return nil, errors.New("line and end_line are for kind format; an action's id already says where it applies")
		}
		return s.Sup.PlanAction(ctx, p.ID)
	case p.Kind != "":
		if p.File == "" {
			return nil, fmt.Errorf("kind %s needs file (a path relative to the root)", p.Kind)
		}
		at, err := c.Location(p.File)
		if err != nil {
			return nil, err
		}
		if p.EndLine > 0 && p.Line <= 0 {
			return nil, errors.New("end_line needs line, the first line of the range")
		}
		return s.Sup.PlanFix(ctx, at, p.Kind, p.Line, p.EndLine)
	}
	return nil, errors.New("lsp_fix needs id (an action from lsp code_actions) or kind (organize_imports, fix_all, format) with file")
}

func fix(ctx context.Context, c *registry.Call, s *Servers, p fixParams) (FixResult, error) {
	// What the operator's card was made from, when asked; else worked out
	// now.
	kept, asked := s.takePlan(c)
	plan, err := kept.plan, kept.err
	if !asked {
		plan, err = planFix(ctx, c, s, p)
	}
	if err != nil {
		var stale *lsp.StaleActionError
		if errors.As(err, &stale) && stale.Fresh != nil {
			return FixResult{}, errors.New(s.Sup.RelText(err.Error() + ". Offered now:\n" + answertext.FormatCodeActions(enabledOnly(stale.Fresh), true)))
		}
		return FixResult{}, errors.New(s.Sup.RelText(err.Error()))
	}
	if p.Preview {
		return previewFix(ctx, c, s, plan)
	}
	// Each edit the fix's command sends passes the gate again, with its
	// own diff on the card: under write=ask the operator approves it
	// before it is written.
	confirm := func(ctx context.Context, e *answer.ProposedEdit) error {
		files := make([]string, len(e.Files))
		for i, f := range e.Files {
			files[i] = f.Path
		}
		what := fmt.Sprintf("the edit %s's command %s sent (%s)", e.Server, e.Command, textcut.Ellipsis(strings.Join(files, ", "), 80))
		card := fmt.Sprintf("%s's command %s, run by lsp_fix %s, sent an edit: %s", e.Server, e.Command, answertext.FixName(&plan.Result),
			answertext.ChangesCard(e.Changes, e.Edits))
		return c.EscalateCard(ctx, tiers.Write, what, card)
	}
	res, err := s.Sup.CommitFix(ctx, plan, p.Force, confirm)
	if res != nil {
		for _, f := range res.Files {
			if abs, err := c.Path(f.Path); err == nil {
				c.Wrote(abs)
			}
		}
	}
	if err != nil {
		return FixResult{}, errors.New(s.Sup.RelText(err.Error()))
	}
	return FixResult{FixResult: res, text: strings.TrimSpace(answertext.FormatFix(res))}, nil
}

// previewFix stages a fix's own edit for resolve, with its diagnostics
// preview (PRE-1); nothing is written. A fix whose command makes the
// change cannot be staged: its edit is known only once it runs.
func previewFix(ctx context.Context, c *registry.Call, s *Servers, plan *lsp.FixPlan) (FixResult, error) {
	name := answertext.FixName(&plan.Result)
	if plan.Command != "" {
		return FixResult{}, fmt.Errorf("lsp_fix %s runs %s's command %s, whose edit is known only once it runs, so it cannot be previewed; call lsp_fix without preview", name, plan.Result.Server, plan.Command)
	}
	if plan.Result.Unchanged || len(plan.Changes) == 0 {
		return FixResult{FixResult: &plan.Result, text: strings.TrimSpace(answertext.FormatFix(&plan.Result))}, nil
	}
	st, ok := staging.Of(c.Run)
	if !ok {
		return FixResult{}, fmt.Errorf("preview needs the staged edits of ast_edit and resolve, which this run does not have (%s); call lsp_fix without preview to write the fix", staging.Missing(c.Run))
	}
	var files []staged.File
	for _, f := range plan.Changes {
		if f.Created || f.Deleted || f.RenamedFrom != "" {
			return FixResult{}, fmt.Errorf("lsp_fix %s creates, deletes or moves %s, which a preview cannot stage; call lsp_fix without preview", name, f.Path)
		}
		abs, err := c.Path(f.Path)
		if err != nil {
			return FixResult{}, err
		}
		files = append(files, staged.File{File: f.Path, Path: abs, Before: []byte(f.Before), After: []byte(f.After), Edits: f.Edits,
			Lines: []int{firstChanged(f.Before, f.After)}})
	}
	title := fmt.Sprintf("lsp_fix %s for %s (%s)", name, plan.Result.File, plan.Result.Server)
	out, err := st.StageChange(c.Run.Guard(), staged.Change{Title: title, Redo: "call lsp_fix with preview again", Files: files})
	if err != nil {
		return FixResult{}, err
	}
	pv, _, text, err := s.previewStaged(ctx, c, title, out, files, plan.Result.Edits)
	if err != nil {
		return FixResult{}, err
	}
	return FixResult{FixResult: &plan.Result, EditID: out.ID, Preview: pv,
		Diff: textcut.Bytes(out.Diff, maxDiffBytes), DiffCut: len(out.Diff) > maxDiffBytes, text: text}, nil
}

// firstChanged is the 1-based line of before where after first differs.
func firstChanged(before, after string) int {
	n := 0
	for n < len(before) && n < len(after) && before[n] == after[n] {
		n++
	}
	return strings.Count(before[:n], "\n") + 1
}
