package structural

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/graph"
	"github.com/builtin-tools/builtin-tools/graph/graphtool"
	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/internal/atomicfile"
	"github.com/builtin-tools/builtin-tools/internal/staged"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/structural/symbolplan"
	"github.com/builtin-tools/builtin-tools/tiers"
)

type symbolParams struct {
	Symbol    string `json:"symbol,omitempty" jsonschema:"the definition, as code_graph names it: a name, Type.Method, pkg.Func or path/file.go:Func; with file and line, the name on that line"`
	File      string `json:"file,omitempty" jsonschema:"file the definition is in, relative to the root"`
	Line      int    `json:"line,omitempty" jsonschema:"1-based line in file: the definition's first line, or without symbol any line inside it (the innermost definition there is edited)"`
	Operation string `json:"operation" jsonschema:"replace (the whole definition), replace_body (what is inside its braces, or its indented block in Python), insert_before or insert_after it" enum:"replace,replace_body,insert_before,insert_after"`
	NewText   string `json:"new_text" jsonschema:"the text to put in; it is re-indented to the definition's own indentation (a body to the body's)"`
	Force     bool   `json:"force,omitempty" jsonschema:"change the file even if it is read-only, has other hard links (they keep the old content) or its owner cannot be kept; the result says what was lost"`
	Preview   bool   `json:"preview,omitempty" jsonschema:"stage the change instead of writing it: the result is the diff, the diagnostics accepting would introduce or fix (the staged text checked by the language server, nothing written) and an edit_id for resolve to accept or discard"`
}

// SymbolTool is edit_symbol: an edit addressed by a definition's name,
// written at once through the commit plan (asked about under write=ask
// with the diff on the card).
var SymbolTool = registry.Descriptor{
	Name:  "edit_symbol",
	Title: "edit definition by name",
	Tier:  tiers.Write,
	Description: "Change one definition found by name, as code_graph finds it (Type.Method, pkg.Func, path/file.go:Func, or file + line): " +
		"replace its whole text, replace_body (inside its braces, or its block in Python; the signature, doc comment and a Python docstring stay " +
		"unless new_text brings its own docstring), or insert_before / insert_after it. new_text is re-indented to the definition's indentation. " +
		"replace keeps what is above the signature unless new_text starts with the same kind of line: new_text starting with a comment " +
		"replaces the doc comment (and the decorators, annotations or attributes after it); starting with a decorator, annotation or attribute, it replaces those and keeps the doc comment. " +
		"A name with several definitions is refused with the candidates; a change that would leave the file unparsable, a generated file " +
		"and a read-only one (without force) are refused before anything is written. The result is the diff and the definition's new lines.",
	Writes: true,
	Handler: registry.With(Key, editSymbol, registry.Approve(func(ctx context.Context, c *registry.Call, s *Structural, p symbolParams) (bool, string) {
		if p.Preview {
			return false, "" // it stages: resolve's accept is asked
		}
		plan, err := s.locateAndPlan(ctx, c, p)
		if err != nil {
			return true, "edit_symbol will fail: " + err.Error()
		}
		return true, approvalSummary(p, plan)
	})),
}

// codeGraph is the run's code graph, through which edit_symbol finds the
// definition it edits.
var codeGraph = registry.Requires(graphtool.Key, "editing a definition found by name (edit_symbol finds it through the code graph)", "edit_symbol")

// SymbolResult is what edit_symbol wrote.
type SymbolResult struct {
	File      string   `json:"file" jsonschema:"relative to the root"`
	Symbol    string   `json:"symbol" jsonschema:"the definition, qualified"`
	Kind      string   `json:"kind"`
	Operation string   `json:"operation"`
	StartLine int      `json:"start_line" jsonschema:"first line of the definition now (for insert_*, of the inserted text)"`
	EndLine   int      `json:"end_line"`
	Diff      string   `json:"diff" jsonschema:"unified diff of the file"`
	DiffCut   bool     `json:"diff_cut,omitempty" jsonschema:"the diff is longer than 256 KiB and was cut"`
	Notes     []string `json:"notes,omitempty"`
	// EditID and Preview are set with preview: nothing was written.
	EditID  string       `json:"edit_id,omitempty" jsonschema:"with preview: give it to resolve"`
	Preview *lsp.Preview `json:"preview,omitempty" jsonschema:"with preview: the errors and warnings accepting would introduce and fix, as the language server sees the staged text"`
	text    string
}

// Text is what the agent reads.
func (r SymbolResult) Text() string { return r.text }

func editSymbol(ctx context.Context, c *registry.Call, s *Structural, p symbolParams) (SymbolResult, error) {
	if strings.TrimSpace(p.NewText) == "" && p.Operation != "replace_body" {
		return SymbolResult{}, fmt.Errorf("new_text is empty; to delete a definition use edit, and give %s the text to put in", p.Operation)
	}
	// Plan and write under the file's lock, so no other write of this
	// process or another lands between the read and the write; the plan
	// takes its ranges from the bytes read under the lock (planCurrent).
	loc, abs, err := locateSymbol(ctx, c, p)
	if err != nil {
		return SymbolResult{}, err
	}
	unlock, err := atomicfile.Lock(ctx, abs)
	if err != nil {
		return SymbolResult{}, fmt.Errorf("%v; %s was not changed", err, c.Rel(abs))
	}
	defer unlock()
	loc, plan, err := s.planCurrent(ctx, c, p, loc, abs)
	if err != nil {
		return SymbolResult{}, err
	}
	if p.Preview {
		return s.previewSymbol(ctx, c, p, loc, plan)
	}
	// What is written must be what was approved: the file may have
	// changed while the card was open.
	if asked := c.ApprovalSummary(); asked != "" && asked != approvalSummary(p, plan) {
		return SymbolResult{}, fmt.Errorf("%s changed while the change was waiting for approval, so nothing was written: the approved diff is no longer the one it would make. Call edit_symbol again", plan.Rel)
	}
	rep, err := atomicfile.Write(c.Run.Guard(), atomicfile.Change{Path: abs, Data: plan.After, Expect: plan.Before, Expected: true},
		atomicfile.Options{Force: p.Force, ApproveExec: func(paths []string) error {
			return c.Escalate(ctx, tiers.Exec, strings.Join(paths, ", "))
		}})
	if err != nil {
		text := err.Error()
		if ae, ok := errors.AsType[*atomicfile.Error](err); ok && ae.Path == plan.Rel {
			text = strings.TrimPrefix(text, plan.Rel+": ")
		}
		msg := fmt.Sprintf("could not write %s: %s", plan.Rel, text)
		if errors.Is(err, atomicfile.ErrChanged) {
			msg += "; another program changed it meanwhile: call edit_symbol again"
		}
		return SymbolResult{}, errors.New(msg)
	}
	c.Before(abs, plan.Before)
	c.Wrote(abs)
	out := SymbolResult{File: plan.Rel, Symbol: loc.Qualified, Kind: loc.Kind, Operation: p.Operation,
		StartLine: plan.StartLine, EndLine: plan.EndLine,
		Diff: textcut.Bytes(plan.Diff, maxDiffBytes), DiffCut: len(plan.Diff) > maxDiffBytes}
	if rep != nil {
		out.Notes = rep.Notes
	}
	out.text = symbolText(out, plan.Diff, c.Budget().Reserve(600).Chars())
	return out, nil
}

// previewSymbol stages plan for resolve, as ast_edit stages a rewrite,
// with its diagnostics preview; nothing is written.
func (s *Structural) previewSymbol(ctx context.Context, c *registry.Call, p symbolParams, loc graph.Located, plan *symbolplan.Plan) (SymbolResult, error) {
	what := map[string]string{"replace": "replace", "replace_body": "replace the body of", "insert_before": "insert before", "insert_after": "insert after"}[p.Operation]
	title := fmt.Sprintf("%s %s %s in %s", what, loc.Kind, loc.Qualified, plan.Rel)
	files := []staged.File{{File: plan.Rel, Path: plan.Abs, Before: plan.Before, After: plan.After, Edits: 1, Lines: []int{firstChanged(plan.Before, plan.After)}}}
	st, err := s.Stager.StageChange(c.Run.Guard(), staged.Change{Title: title, Redo: "call edit_symbol with preview again", Files: files})
	if err != nil {
		return SymbolResult{}, err
	}
	out := SymbolResult{File: plan.Rel, Symbol: loc.Qualified, Kind: loc.Kind, Operation: p.Operation,
		StartLine: plan.StartLine, EndLine: plan.EndLine, EditID: st.ID,
		Diff: textcut.Bytes(plan.Diff, maxDiffBytes), DiffCut: len(plan.Diff) > maxDiffBytes}
	pvText, err := previewStaged(ctx, c, st.ID, files, &out.Preview)
	if err != nil {
		return SymbolResult{}, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "(proposed) %s. Nothing is written yet: call resolve with edit_id %q and action \"accept\" to apply it, or \"discard\".\n", title, st.ID)
	if len(st.Evicted) > 0 {
		fmt.Fprintf(&b, "dropped older unresolved edits to make room (resolving them now fails): %s\n", strings.Join(st.Evicted, ", "))
	}
	diff := c.Budget().Reserve(utf8.RuneCountInString(b.String()+pvText)+200).Head(strings.TrimRight(plan.Diff, "\n"), func(left int) string {
		return fmt.Sprintf("\n[diff cut by the output budget, %d characters left out; the structured result's diff is whole]", left)
	})
	b.WriteString(diff)
	if pvText != "" {
		b.WriteString("\n" + pvText)
	}
	out.text = b.String()
	return out, nil
}

// firstChanged is the 1-based line of before where after first differs.
func firstChanged(before, after []byte) int {
	n := 0
	for n < len(before) && n < len(after) && before[n] == after[n] {
		n++
	}
	return bytes.Count(before[:n], []byte("\n")) + 1
}

// approvalSummary is the card's text: the diff, and when it is too long
// to show whole, a digest of the change, so a card approves one change.
func approvalSummary(p symbolParams, plan *symbolplan.Plan) string {
	text := fmt.Sprintf("%s %s %s in %s:\n%s", p.Operation, plan.Def.Kind, plan.Def.Qualified, plan.Rel, textcut.Ellipsis(plan.Diff, maxCardDiff))
	if len(plan.Diff) > maxCardDiff {
		sum := sha256.Sum256(append(slices.Clone(plan.Before), plan.After...))
		text += fmt.Sprintf("\n(the diff is cut; change %x)", sum[:8])
	}
	return text
}

// maxCardDiff bounds the diff an approval card shows.
const maxCardDiff = 4000

func symbolText(r SymbolResult, diff string, budget int) string {
	var b strings.Builder
	what := map[string]string{"replace": "replaced", "replace_body": "replaced the body of", "insert_before": "inserted before", "insert_after": "inserted after"}[r.Operation]
	where := fmt.Sprintf("lines %d-%d", r.StartLine, r.EndLine)
	if r.StartLine == r.EndLine {
		where = fmt.Sprintf("line %d", r.StartLine)
	}
	if strings.HasPrefix(r.Operation, "insert") {
		fmt.Fprintf(&b, "%s %s %s in %s; the new text is at %s\n", what, r.Kind, r.Symbol, r.File, where)
	} else {
		fmt.Fprintf(&b, "%s %s %s in %s; it is now at %s\n", what, r.Kind, r.Symbol, r.File, where)
	}
	if len(diff) > budget {
		head := textcut.Runes(diff, budget)
		head = head[:strings.LastIndexByte(head, '\n')+1]
		b.WriteString(head)
		fmt.Fprintf(&b, "[diff cut at %d of %d lines by the output budget; the structured result's diff is whole, and read of %s with offset %d shows the definition as it is now]",
			strings.Count(head, "\n"), strings.Count(diff, "\n"), r.File, r.StartLine)
	} else {
		b.WriteString(strings.TrimRight(diff, "\n"))
	}
	for _, n := range r.Notes {
		b.WriteString("\nnote: " + n)
	}
	return b.String()
}

func (s *Structural) locateAndPlan(ctx context.Context, c *registry.Call, p symbolParams) (*symbolplan.Plan, error) {
	loc, abs, err := locateSymbol(ctx, c, p)
	if err != nil {
		return nil, err
	}
	_, plan, err := s.planCurrent(ctx, c, p, loc, abs)
	return plan, err
}

// planCurrent plans the edit on the file as it is now. The graph's ranges
// are those of the bytes it last read, and a write since (inside the
// body: the name stays where it was, the end moves) makes them wrong; so
// a plan is made only when the bytes it reads are the bytes the ranges
// were taken from. When they are not, the graph reads the file again and
// the definition is located anew, by the same arguments, in the file as
// it is: the edit is made to the definition as it is then, and the
// result's diff shows what it replaced. Under the file's lock no tool of
// ours writes meanwhile; another program writing it each time is refused.
func (s *Structural) planCurrent(ctx context.Context, c *registry.Call, p symbolParams, loc graph.Located, abs string) (graph.Located, *symbolplan.Plan, error) {
	e := symbolplan.Edit{Op: p.Operation, Text: p.NewText, Force: p.Force}
	for try := 0; ; try++ {
		rules, err := languageShapes(c, loc)
		if err != nil {
			return loc, nil, err
		}
		plan, err := symbolplan.Make(ctx, s.Engine, c.Run.Guard(), loc, abs, rules, e)
		if !errors.Is(err, symbolplan.ErrStale) {
			return loc, plan, err
		}
		if try == 2 {
			return loc, nil, fmt.Errorf("%s changed each time edit_symbol read it (another program is writing it), so nothing was written; call edit_symbol again", c.Rel(abs))
		}
		g, spec, err := graphSpec(c, p)
		if err != nil {
			return loc, nil, err
		}
		if err := g.H.Index().Refresh(ctx, abs); err != nil {
			return loc, nil, err
		}
		again, againAbs, err := pickLocated(c, g, spec)
		if err != nil {
			return loc, nil, fmt.Errorf("%s changed while edit_symbol was locating %s, and now: %w", c.Rel(abs), loc.Name, err)
		}
		if againAbs != abs {
			return loc, nil, fmt.Errorf("%s changed while edit_symbol was locating %s, which is now found in %s; nothing was written, call edit_symbol again", c.Rel(abs), loc.Name, again.File)
		}
		loc = again
	}
}

// languageShapes is what the code graph's language of loc tells
// edit_symbol: its shape query and layout (graph/languages/<id>/shapes.scm
// and language.json).
func languageShapes(c *registry.Call, loc graph.Located) (*lang.Shapes, error) {
	g, ok := graphtool.Key.Of(c.Run)
	if !ok {
		return nil, errNoGraph
	}
	l := g.H.Index().Languages().Lookup(loc.Language)
	if l == nil || l.Shapes() == nil {
		return nil, fmt.Errorf("edit_symbol does not know %s's definitions: the code graph's language %s has no shapes.scm, which says where a definition's body is and what wraps it (add one beside its tags.scm); nothing was written, use edit or ast_edit", loc.File, loc.Language)
	}
	return l.Shapes(), nil
}

// graphSpec is the code graph and the lookup the arguments ask for.
func graphSpec(c *registry.Call, p symbolParams) (*graphtool.Graph, graph.Spec, error) {
	g, ok := codeGraph.Of(c.Run)
	if !ok {
		return nil, graph.Spec{}, errNoGraph
	}
	spec := graph.Spec{Symbol: strings.TrimSpace(p.Symbol), Line: p.Line}
	if p.File != "" {
		abs, err := c.Path(p.File)
		if err != nil {
			return nil, graph.Spec{}, err
		}
		spec.File = c.Rel(abs)
	}
	if spec.Symbol == "" && (spec.File == "" || spec.Line == 0) {
		return nil, graph.Spec{}, fmt.Errorf("name the definition: symbol (a name, Type.Method, pkg.Func or path/file.go:Func), or file and line")
	}
	return g, spec, nil
}

// locateSymbol asks the code graph, made fresh, for the one definition
// the arguments name.
func locateSymbol(ctx context.Context, c *registry.Call, p symbolParams) (graph.Located, string, error) {
	g, spec, err := graphSpec(c, p)
	if err != nil {
		return graph.Located{}, "", err
	}
	x := g.H.Index()
	x.Start(nil)
	wait := g.Wait
	if wait <= 0 {
		wait = 5 * time.Second
	}
	deadline := time.Now().Add(wait)
	for !x.Wait(ctx, min(250*time.Millisecond, time.Until(deadline))) && ctx.Err() == nil && time.Now().Before(deadline) {
		done, total := x.Progress()
		c.Progress(ctx, float64(done), float64(total), "code graph: "+x.ProgressText())
	}
	if _, err := x.Sync(ctx); err != nil {
		return graph.Located{}, "", err
	}
	return pickLocated(c, g, spec)
}

// pickLocated is the one definition spec names in the graph as it is.
func pickLocated(c *registry.Call, g *graphtool.Graph, spec graph.Spec) (graph.Located, string, error) {
	x := g.H.Index()
	locs, err := graph.Locate(g.H.View(0), spec)
	if err != nil {
		if !x.Ready() {
			return graph.Located{}, "", fmt.Errorf("%w — but the code graph is still building (%s); call edit_symbol again shortly", err, x.ProgressText())
		}
		return graph.Located{}, "", err
	}
	locs, err = exactName(spec, locs)
	if err != nil {
		return graph.Located{}, "", err
	}
	if len(locs) > 1 {
		var b strings.Builder
		fmt.Fprintf(&b, "%q names %d definitions, so nothing was changed; name one with file and line (or a qualified name such as Type.Method or pkg.Func):", describeSpec(spec), len(locs))
		for i, l := range locs[:min(len(locs), 20)] {
			fmt.Fprintf(&b, "\n%d. %s %s (%s:%d)", i+1, l.Kind, l.Qualified, l.File, l.Line)
		}
		if len(locs) > 20 {
			fmt.Fprintf(&b, "\n… and %d more", len(locs)-20)
		}
		return graph.Located{}, "", errors.New(b.String())
	}
	loc := locs[0]
	abs, err := c.Path(loc.File)
	if err != nil {
		return graph.Located{}, "", err
	}
	return loc, abs, nil
}

// exactName drops what the graph matched by part of a name: an edit must
// not land on LoadAll when Load was asked for.
func exactName(spec graph.Spec, locs []graph.Located) ([]graph.Located, error) {
	if spec.Symbol == "" {
		return locs, nil
	}
	name := spec.Symbol
	if i := strings.LastIndex(name, ":"); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.LastIndex(name, "."); i >= 0 {
		name = name[i+1:]
	}
	var exact []graph.Located
	var near []string
	for _, l := range locs {
		if l.Name == name {
			exact = append(exact, l)
		} else {
			near = append(near, fmt.Sprintf("%s (%s:%d)", l.Qualified, l.File, l.Line))
		}
	}
	if len(exact) == 0 {
		where := ""
		switch {
		case spec.Line > 0:
			where = fmt.Sprintf(" on line %d of %s", spec.Line, spec.File)
		case spec.File != "":
			where = " in " + spec.File
		}
		return nil, &graph.LookupError{Msg: fmt.Sprintf("no definition%s is named exactly %q, and an edit does not guess; these match only part of the name: %s. Give the whole name",
			where, name, strings.Join(near[:min(len(near), 8)], ", "))}
	}
	return exact, nil
}

func describeSpec(s graph.Spec) string {
	switch {
	case s.File != "" && s.Symbol != "":
		return fmt.Sprintf("%s in %s", s.Symbol, s.File)
	case s.File != "":
		return fmt.Sprintf("%s:%d", s.File, s.Line)
	}
	return s.Symbol
}

var errNoGraph = errors.New("edit_symbol finds definitions through the code graph, which this run does not have (the code_graph family is not attached); use edit, or ast_edit")
