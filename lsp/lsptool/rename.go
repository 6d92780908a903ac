package lsptool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/lsp/answertext"

	"github.com/builtin-tools/builtin-tools/internal/staged"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/lsp/wsedit"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/registry/textfit"
	"github.com/builtin-tools/builtin-tools/tiers"
)

type renameParams struct {
	File       string `json:"file" jsonschema:"file where the symbol appears, relative to the root"`
	Line       int    `json:"line" jsonschema:"1-based line of the symbol"`
	Symbol     string `json:"symbol" jsonschema:"the symbol's text on that line; a qualified name (pkg.Func, obj.method, Type::method) points at its last part"`
	Occurrence int    `json:"occurrence,omitempty" jsonschema:"which occurrence of symbol on the line, when it appears there more than once (1-based; default 1)"`
	NewName    string `json:"new_name" jsonschema:"the new name"`
	Preview    bool   `json:"preview,omitempty" jsonschema:"stage the rename instead of writing it: the result is the edit count, the files and lines, a unified diff, the diagnostics accepting would introduce or fix (the staged text checked by the language server, nothing written) and an edit_id for resolve to accept or discard"`
	Force      bool   `json:"force,omitempty" jsonschema:"change files even if they are read-only, have other hard links (they keep the old content) or their owner cannot be kept; the result says what was lost"`
}

// RenameTool is the `lsp_rename` tool (REN-1).
var RenameTool = registry.Descriptor{
	Name:  "lsp_rename",
	Title: "rename symbol",
	Tier:  tiers.Write,
	Description: "Rename a symbol across the project with its language server: every file the server names is changed, all or nothing, " +
		"including files the server moves. Reports the files and edit counts. With preview, nothing is written: the rename is staged " +
		"like ast_edit's rewrites (files, lines, diff, edit_id) for resolve to accept or discard.",
	Writes: true,
	// A preview only stages: under write=ask the resolve that accepts it
	// is asked, once, with the diff on the card.
	Handler: registry.With(Key, rename, registry.Approve(func(ctx context.Context, c *registry.Call, s *Servers, p renameParams) (bool, string) {
		return !p.Preview, ""
	})),
}

// staging is the run's store of staged edits, whichever family provides
// it (the tree-sitter family, structural, as ast_edit's): found as a
// staged.Stager, so that this family builds without cgo and names no other.
var staging = registry.RequiresService[staged.Stager]("preview (the change staged for resolve, as ast_edit's rewrites)", "lsp_rename", "lsp_fix")

// RenameResult is what lsp_rename changed, or, with preview, staged.
type RenameResult struct {
	*answer.RenameResult
	// EditID, Diff and Lines are set for a preview: nothing was written.
	EditID  string         `json:"edit_id,omitempty" jsonschema:"with preview: give it to resolve"`
	Staged  []StagedRename `json:"staged,omitempty" jsonschema:"with preview: each file's edits and lines"`
	Diff    string         `json:"diff,omitempty" jsonschema:"with preview: unified diff of every file"`
	DiffCut bool           `json:"diff_cut,omitempty" jsonschema:"the diff is longer than 256 KiB and was cut"`
	Evicted []string       `json:"evicted,omitempty" jsonschema:"older pending edits dropped to make room"`
	// Preview is what accepting would do to the diagnostics (PRE-1).
	Preview *lsp.Preview `json:"preview,omitempty" jsonschema:"with preview: per file, the errors and warnings accepting would introduce and fix, as the language server sees the staged text"`
	text    string
}

// StagedRename is one file of a previewed rename.
type StagedRename struct {
	File  string `json:"file"`
	Edits int    `json:"edits"`
	Lines []int  `json:"lines" jsonschema:"1-based lines the edits start on"`
}

// maxDiffBytes bounds the diff a result carries as data, as ast_edit's.
const maxDiffBytes = 256 << 10

// Text is what the agent reads.
func (r RenameResult) Text() string { return r.text }

func rename(ctx context.Context, c *registry.Call, s *Servers, p renameParams) (RenameResult, error) {
	at, err := c.Location(p.File)
	if err != nil {
		return RenameResult{}, err
	}
	if p.Line <= 0 || strings.TrimSpace(p.Symbol) == "" || strings.TrimSpace(p.NewName) == "" {
		return RenameResult{}, errors.New("lsp_rename needs file, line (1-based), symbol (its text on that line) and new_name")
	}
	place := protocol.Place{Line: p.Line, Symbol: p.Symbol, Occurrence: p.Occurrence}
	if p.Preview {
		return previewRename(ctx, c, s, p, place)
	}
	res, err := s.Sup.Rename(ctx, at, place, p.NewName, p.Force)
	if err != nil {
		return RenameResult{}, errors.New(s.Sup.RelText(err.Error()))
	}
	for _, f := range res.Files {
		if abs, err := c.Path(f.Path); err == nil {
			c.Wrote(abs)
		}
	}
	return RenameResult{RenameResult: res, text: answertext.FormatRename(res)}, nil
}

func previewRename(ctx context.Context, c *registry.Call, s *Servers, p renameParams, place protocol.Place) (RenameResult, error) {
	st, ok := staging.Of(c.Run)
	if !ok {
		return RenameResult{}, fmt.Errorf("preview needs the staged edits of ast_edit and resolve, which this run does not have (%s); call lsp_rename without preview to write the rename", staging.Missing(c.Run))
	}
	at, _ := c.Location(p.File)
	plan, err := s.Sup.PlanRename(ctx, at, place, p.NewName)
	symbol := fmt.Sprintf("%q", p.Symbol)
	if p.Occurrence > 1 {
		symbol += fmt.Sprintf(" (occurrence %d)", p.Occurrence)
	}
	renaming := fmt.Sprintf("renaming %s to %q", symbol, textcut.Ellipsis(p.NewName, 80))
	if tl, ok := errors.AsType[*wsedit.TooLargeError](err); ok {
		return RenameResult{}, (&staged.TooLargeError{File: tl.File, Size: tl.Size, Limit: tl.Limit}).Of(renaming)
	}
	if err != nil {
		return RenameResult{}, errors.New(s.Sup.RelText(err.Error()))
	}
	occ := 0
	if p.Occurrence > 1 {
		occ = p.Occurrence
	}
	title := fmt.Sprintf("rename %s at %s:%d to %q (%s)", symbol, at.Rel(), p.Line, p.NewName, plan.Server)
	out, err := st.StageChange(at.Guard(), staged.Change{Title: title, Redo: "call lsp_rename with preview again", Files: plan.Files})
	if tl, ok := errors.AsType[*staged.TooLargeError](err); ok {
		return RenameResult{}, tl.Of(renaming)
	}
	if err != nil {
		return RenameResult{}, err
	}
	pv, files, text, err := s.previewStaged(ctx, c, title, out, plan.Files, plan.Edits)
	if err != nil {
		return RenameResult{}, err
	}
	res := RenameResult{RenameResult: &answer.RenameResult{Symbol: p.Symbol, Occurrence: occ, NewName: p.NewName,
		Server: plan.Server, Files: []answer.FileEdit{}, Edits: plan.Edits},
		EditID: out.ID, Staged: files, Diff: textcut.Bytes(out.Diff, maxDiffBytes), DiffCut: len(out.Diff) > maxDiffBytes, Evicted: out.Evicted,
		Preview: pv, text: text}
	for _, f := range plan.Files {
		res.Files = append(res.Files, answer.FileEdit{Path: f.File, Edits: f.Edits})
	}
	return res, nil
}

// previewStaged checks the files of the change staged as out with their
// language servers (PRE-1), keeps that preview for resolve, and renders
// what was staged and the preview for the agent.
func (s *Servers) previewStaged(ctx context.Context, c *registry.Call, title string, out staged.Staged, files []staged.File, edits int) (*lsp.Preview, []StagedRename, string, error) {
	pv, err := s.PreviewFiles(ctx, c, files)
	if err != nil {
		return nil, nil, "", fmt.Errorf("%s was staged, but its diagnostics preview stopped: %w", out.ID, err)
	}
	s.Keep(out.ID, pv, files)
	shown := make([]StagedRename, 0, len(files))
	for _, f := range files {
		shown = append(shown, StagedRename{File: f.File, Edits: f.Edits, Lines: f.Lines})
	}
	pvText := answertext.FormatPreview(pv)
	return pv, shown, formatRenamePreview(title, out, shown, edits, c.Budget().Reserve(utf8.RuneCountInString(pvText)+1)) + "\n" + pvText, nil
}

// formatRenamePreview renders a staged rename as ast_edit renders its
// proposals: what was staged and how to resolve it, the files and lines,
// then as much of the diff as the budget leaves, whole lines only.
func formatRenamePreview(title string, st staged.Staged, files []StagedRename, edits int, budget textfit.Budget) string {
	var b strings.Builder
	fmt.Fprintf(&b, "(proposed) %s: %s in %s. Nothing is written yet: call resolve with edit_id %q and action \"accept\" to apply it, or \"discard\".\n",
		title, textcut.Count(edits, "edit", "edits"), textcut.Count(len(files), "file", "files"), st.ID)
	b.WriteString("files:\n")
	const maxFiles = 50
	for i, f := range files {
		if i == maxFiles {
			fmt.Fprintf(&b, "  … %d more files\n", len(files)-maxFiles)
			break
		}
		word := "line"
		if len(f.Lines) > 1 {
			word = "lines"
		}
		shown, more := f.Lines, ""
		if len(shown) > 20 {
			shown, more = shown[:20], ", …"
		}
		nums := make([]string, len(shown))
		for j, n := range shown {
			nums[j] = fmt.Sprint(n)
		}
		fmt.Fprintf(&b, "  %s: %s at %s %s%s\n", f.File, textcut.Count(f.Edits, "edit", "edits"), word, strings.Join(nums, ", "), more)
	}
	if len(st.Evicted) > 0 {
		fmt.Fprintf(&b, "dropped older unresolved edits to make room (resolving them now fails; stage them again if still wanted): %s\n", strings.Join(st.Evicted, ", "))
	}
	b.WriteString("diff:\n")
	room := budget.Chars() - utf8.RuneCountInString(b.String()) - 200
	lines := strings.SplitAfter(st.Diff, "\n")
	used := 0
	for i, l := range lines {
		n := utf8.RuneCountInString(l)
		if used+n > room {
			fmt.Fprintf(&b, "… diff cut at %d of %d lines by the output budget (%d characters); accept and read the files, or discard\n", i, len(lines), budget.Chars())
			break
		}
		used += n
		b.WriteString(l)
	}
	return strings.TrimRight(b.String(), "\n")
}
