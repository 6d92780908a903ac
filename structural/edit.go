package structural

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/lsp/answertext"

	"github.com/builtin-tools/builtin-tools/astedit"
	"github.com/builtin-tools/builtin-tools/internal/staged"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/lsp/lsptool"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

type editParams struct {
	Pattern     string         `json:"pattern,omitempty" jsonschema:"what to match, as for ast_grep"`
	Rule        map[string]any `json:"rule,omitempty" jsonschema:"instead of pattern, an ast-grep rule object, as for ast_grep; each node it matches is rewritten"`
	Constraints map[string]any `json:"constraints,omitempty" jsonschema:"with rule: metavariable name to a rule its capture must match, as for ast_grep"`
	Utils       map[string]any `json:"utils,omitempty" jsonschema:"with rule: named rules that matches refers to, as for ast_grep"`
	Rewrite     string         `json:"rewrite" jsonschema:"what each match becomes; $NAME and $$$NAME are replaced by what they captured"`
	Path        string         `json:"path,omitempty" jsonschema:"file or folder to rewrite in, relative to the root (default: the whole root)"`
	Language    string         `json:"language,omitempty" jsonschema:"grammar id, as for ast_grep"`
}

// EditTool is the ast_edit tool (AE-1, AE-4): it stages and writes nothing,
// so it does not declare Writes.
var EditTool = registry.Descriptor{
	Name:  "ast_edit",
	Title: "stage structural rewrite",
	Tier:  tiers.Write,
	Description: "Stage a structural rewrite: every match of pattern (or of an ast-grep rule, as for ast_grep) becomes rewrite, with $NAME and $$$NAME substituted. Nothing is written: " +
		"the result is the count, the files and lines, a unified diff and an edit_id; call resolve with that edit_id to accept or discard. " +
		"A rewrite that would leave a file unparsable is refused here. " +
		fmt.Sprintf("Resolve each edit before staging many: at most %d stay pending, and older ones are dropped.", astedit.DefaultMaxPending),
	Stages:  true,
	Handler: registry.With(Key, edit),
}

// EditResult is the staged proposal.
type EditResult struct {
	EditID       string        `json:"edit_id" jsonschema:"give it to resolve"`
	Replacements int           `json:"replacements"`
	Files        []StagedFile  `json:"files"`
	Dropped      []StagedMatch `json:"dropped,omitempty" jsonschema:"matches nested in or overlapping a kept match, left for another ast_edit"`
	Evicted      []string      `json:"evicted,omitempty" jsonschema:"older pending edits dropped to make room"`
	Diff         string        `json:"diff" jsonschema:"unified diff of every file"`
	DiffCut      bool          `json:"diff_cut,omitempty" jsonschema:"the diff is longer than 256 KiB and was cut"`
	// Preview is what accepting would do to the diagnostics (PRE-1).
	Preview *lsp.Preview `json:"preview,omitempty" jsonschema:"per file, the errors and warnings accepting would introduce and fix, as the language servers see the staged text; absent when the run has no language servers"`
	text    string
}

// maxDiffBytes bounds the diff a result carries as data.
const maxDiffBytes = 256 << 10

// StagedFile is one file a staged edit rewrites.
type StagedFile struct {
	File         string `json:"file" jsonschema:"relative to the root"`
	Replacements int    `json:"replacements"`
	Lines        []int  `json:"lines" jsonschema:"start line of each replacement"`
}

// StagedMatch is a match the edit left out.
type StagedMatch struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

func editResult(p *astedit.Proposal, text string) EditResult {
	out := EditResult{EditID: p.ID, Replacements: len(p.Replacements), Files: []StagedFile{}, Evicted: p.Evicted,
		Diff: textcut.Bytes(p.Diff, maxDiffBytes), DiffCut: len(p.Diff) > maxDiffBytes, text: text}
	for _, f := range p.Files {
		out.Files = append(out.Files, StagedFile{File: f.File, Replacements: f.Replacements, Lines: append([]int{}, f.Lines...)})
	}
	for _, d := range p.Dropped {
		out.Dropped = append(out.Dropped, StagedMatch{File: d.File, Line: d.StartLine})
	}
	return out
}

// Text is what the agent reads.
func (r EditResult) Text() string { return r.text }

func edit(ctx context.Context, c *registry.Call, s *Structural, p editParams) (EditResult, error) {
	rule, err := ruleSpec(p.Pattern, p.Rule, p.Constraints, p.Utils)
	if err != nil {
		return EditResult{}, err
	}
	q, err := query(c, p.Pattern, p.Path, p.Language)
	if err != nil {
		return EditResult{}, err
	}
	q.Rule = rule
	q.Progress = func(done, total int) {
		c.Progress(ctx, float64(done), float64(total), "files searched")
	}
	prop, err := s.Stager.Stage(ctx, q, p.Rewrite)
	if err != nil {
		return EditResult{}, err
	}
	res := editResult(prop, "")
	pvText, err := previewStaged(ctx, c, prop.ID, prop.Contents(), &res.Preview)
	if err != nil {
		return EditResult{}, err
	}
	res.text = strings.TrimRight(formatProposal(prop, c.Budget().Reserve(utf8.RuneCountInString(pvText)+1).Chars()), "\n")
	if pvText != "" {
		res.text += "\n" + pvText
	}
	return res, nil
}

// servers are the run's language servers, which check a staged edit's
// text before it is accepted and the written text after.
var servers = registry.Requires(lsptool.Key, "the diagnostics preview (what accepting a staged edit would introduce and fix)", "ast_edit", "resolve")

// previewStaged runs the staged edit id's files past the language servers,
// keeps the preview for resolve and sets *into; it returns the preview's
// text, "" when the run has no language servers.
func previewStaged(ctx context.Context, c *registry.Call, id string, files []staged.File, into **lsp.Preview) (string, error) {
	sv, ok := servers.Of(c.Run)
	if !ok {
		return "", nil
	}
	pv, err := sv.PreviewFiles(ctx, c, files)
	if err != nil {
		return "", fmt.Errorf("%s was staged, but its diagnostics preview stopped: %w", id, err)
	}
	sv.Keep(id, pv, files)
	*into = pv
	return answertext.FormatPreview(pv), nil
}
