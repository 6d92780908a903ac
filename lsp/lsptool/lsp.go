package lsptool

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/builtin-tools/builtin-tools/lsp/answertext"

	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/pathguard"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

type lspParams struct {
	Operation  string `json:"operation" jsonschema:"what to ask"`
	File       string `json:"file,omitempty" jsonschema:"file the operation is about, relative to the root; for diagnostics \"*\" runs the project's checker (go vet, pyright, tsc --noEmit ...) instead"`
	Line       int    `json:"line,omitempty" jsonschema:"1-based line of the symbol, for navigation operations"`
	Symbol     string `json:"symbol,omitempty" jsonschema:"text of the symbol as it appears on that line; its position on the line is the column, so no column is ever needed. A qualified name (pkg.Func, obj.method, Type::method) points at its last part"`
	Occurrence int    `json:"occurrence,omitempty" jsonschema:"which occurrence of symbol on the line, when it appears there more than once (1-based; default 1)"`
	Query      string `json:"query,omitempty" jsonschema:"for symbols: a name to search the whole workspace for (give file instead for that file's outline)"`
	// IncludeDisabled lists disabled code actions too.
	IncludeDisabled bool `json:"include_disabled,omitempty" jsonschema:"for code_actions: list disabled actions too (by default only enabled ones)"`
}

// An operation of the lsp tool. The table below is the one place an
// operation is declared: the schema's enum, the tool's description and the
// dispatch are made from it.
type operation struct {
	name string
	// args says what the operation needs: "" nothing, "file", "position"
	// (file, line and symbol), "query-or-file".
	args string
	doc  string
	// run asks the engine and puts its typed answer and text in out.
	run func(ctx context.Context, c *registry.Call, sup *lsp.Supervisor, q opQuery, out *LSPResult) error
}

// opQuery is a call's arguments with the file confined.
type opQuery struct {
	op    string
	file  pathguard.Path // zero when not given
	all   bool           // file "*": the project's checker
	place protocol.Place
	query string
	// includeDisabled: code_actions lists disabled actions too.
	includeDisabled bool
}

// locate runs a navigation operation that answers with locations.
func locate(find func(*lsp.Supervisor, context.Context, pathguard.Path, protocol.Place) (*answer.Locations, error)) func(context.Context, *registry.Call, *lsp.Supervisor, opQuery, *LSPResult) error {
	return func(ctx context.Context, c *registry.Call, sup *lsp.Supervisor, q opQuery, out *LSPResult) error {
		return fill(out, &out.Locations, func(res *answer.Locations) string {
			return withLoading(answertext.FormatLocations(res), res.Loading)
		})(find(sup, ctx, q.file, q.place))
	}
}

// callSites runs incoming_calls or outgoing_calls.
func callSites(find func(*lsp.Supervisor, context.Context, pathguard.Path, protocol.Place) (*answer.Calls, error)) func(context.Context, *registry.Call, *lsp.Supervisor, opQuery, *LSPResult) error {
	return func(ctx context.Context, c *registry.Call, sup *lsp.Supervisor, q opQuery, out *LSPResult) error {
		return fill(out, &out.Calls, func(res *answer.Calls) string {
			return withLoading(answertext.FormatCalls(res, c.Budget().Reserve(300)), res.Loading)
		})(find(sup, ctx, q.file, q.place))
	}
}

// fill returns a function that puts an answer and its text in out, or
// returns the error that came instead.
func fill[T any](out *LSPResult, field *T, format func(T) string) func(T, error) error {
	return func(res T, err error) error {
		if err != nil {
			return err
		}
		*field, out.text = res, format(res)
		return nil
	}
}

// withLoading adds to text that the server had not loaded its workspace
// when it answered (the answer may be incomplete).
func withLoading(text, loading string) string {
	if loading == "" {
		return text
	}
	return text + "\nnote: " + loading
}

var operations = []operation{
	{"diagnostics", "file", `diagnostics (file, or "*" for the project's checker)`,
		func(ctx context.Context, c *registry.Call, sup *lsp.Supervisor, q opQuery, out *LSPResult) error {
			if q.all {
				res, err := sup.Check(ctx)
				if res != nil {
					out.Check, out.text = res, answertext.FormatCheck(res)
				}
				return err
			}
			res, err := sup.Diagnostics(ctx, q.file)
			if err != nil {
				return err
			}
			out.text = answertext.FormatFileDiagnostics(sup.Root(), res)
			rel := *res
			rel.Diagnostics = relDiagnostics(c, res.Diagnostics)
			out.Diagnostics = &rel
			out.shown = res
			return nil
		}},
	{"definition", "position", "definition", locate((*lsp.Supervisor).Definition)},
	{"type_definition", "position", "type_definition", locate((*lsp.Supervisor).TypeDefinition)},
	{"implementation", "position", "implementation", locate((*lsp.Supervisor).Implementation)},
	{"references", "position", fmt.Sprintf("references (at most %d)", answer.MaxReferences), locate((*lsp.Supervisor).References)},
	{"incoming_calls", "position", "incoming_calls (every call of the function at line/symbol, one site a line)", callSites((*lsp.Supervisor).IncomingCalls)},
	{"outgoing_calls", "position", "outgoing_calls (every call the function at line/symbol makes)", callSites((*lsp.Supervisor).OutgoingCalls)},
	{"hover", "position", "hover",
		func(ctx context.Context, c *registry.Call, sup *lsp.Supervisor, q opQuery, out *LSPResult) error {
			return fill(out, &out.Hover, answertext.FormatHover)(sup.Hover(ctx, q.file, q.place))
		}},
	{"code_actions", "position", "code_actions (file, line, symbol; each enabled action gets an id for lsp_fix)",
		func(ctx context.Context, c *registry.Call, sup *lsp.Supervisor, q opQuery, out *LSPResult) error {
			res, err := sup.CodeActions(ctx, q.file, q.place)
			if err != nil {
				return err
			}
			if !q.includeDisabled {
				res = enabledOnly(res)
			}
			out.CodeActions, out.text = res, answertext.FormatCodeActions(res, c.Mode.Sees(tiers.Write))
			return nil
		}},
	{"symbols", "query-or-file", "symbols (query for the workspace, or file for its outline)",
		func(ctx context.Context, c *registry.Call, sup *lsp.Supervisor, q opQuery, out *LSPResult) error {
			return fill(out, &out.Symbols, func(res *answer.Symbols) string {
				return withLoading(answertext.FormatSymbols(res), res.Loading)
			})(sup.Symbols(ctx, q.query, q.file))
		}},
	{"status", "", "status (which servers run here, and why others do not)",
		func(ctx context.Context, c *registry.Call, sup *lsp.Supervisor, q opQuery, out *LSPResult) error {
			res := sup.Status(ctx)
			out.Status, out.text = res, answertext.FormatStatus(res)
			return nil
		}},
	{"reload", "", "reload (restart the server for file)",
		func(ctx context.Context, c *registry.Call, sup *lsp.Supervisor, q opQuery, out *LSPResult) error {
			return fill(out, &out.Reload, answertext.FormatReload)(sup.Reload(ctx, q.file))
		}},
}

// enabledOnly leaves the disabled actions out, counting them.
func enabledOnly(r *answer.CodeActions) *answer.CodeActions {
	out := *r
	out.Actions = make([]answer.CodeAction, 0, len(r.Actions))
	for _, a := range r.Actions {
		if a.Disabled {
			out.HiddenDisabled++
			continue
		}
		out.Actions = append(out.Actions, a)
	}
	return &out
}

// relDiagnostics copies diagnostics with their files relative to the root,
// as results show paths.
func relDiagnostics(c *registry.Call, diags []diag.Diagnostic) []diag.Diagnostic {
	out := make([]diag.Diagnostic, len(diags))
	for i, d := range diags {
		d.File = c.Rel(d.File)
		out[i] = d
	}
	return out
}

func (o operation) ChoiceName() string { return o.name }
func (o operation) ChoiceDoc() string  { return o.doc }

// LSPTool is the `lsp` tool (LSP-1..5). It stays registered whenever the
// run has a supervisor, even when no server can run, so that status can say
// why.
var LSPTool = registry.Descriptor{
	Name:  "lsp",
	Title: "language server",
	Tier:  tiers.Read,
	Description: "Ask the language servers of this checkout (gopls, pyright, typescript-language-server, clangd, rust-analyzer, dart). " +
		"Positions are a 1-based line plus a symbol: the text of the symbol on that line — never a column; " +
		"a qualified name (stats.Sum) points at its last part, and occurrence picks one a line holds more than once. " +
		"Operations: " + registry.ChoiceDocs(operations) + ". Servers start on first use.",
	Handler: registry.With(Key, query).WithEnum("operation", registry.ChoiceNames(operations)),
}

// LSPResult is the answer to one operation: the operation and the one
// field it fills.
type LSPResult struct {
	Operation   string                  `json:"operation"`
	Locations   *answer.Locations       `json:"locations,omitempty" jsonschema:"definition, type_definition, implementation, references"`
	Calls       *answer.Calls           `json:"calls,omitempty" jsonschema:"incoming_calls, outgoing_calls"`
	Hover       *answer.Hover           `json:"hover,omitempty"`
	Symbols     *answer.Symbols         `json:"symbols,omitempty"`
	CodeActions *answer.CodeActions     `json:"code_actions,omitempty"`
	Diagnostics *answer.FileDiagnostics `json:"diagnostics,omitempty" jsonschema:"diagnostics of one file"`
	Check       *answer.CheckReport     `json:"check,omitempty" jsonschema:"diagnostics \"*\": the project's checkers"`
	Status      *answer.Status          `json:"status,omitempty"`
	Reload      *answer.ReloadResult    `json:"reload,omitempty"`
	text        string
	// shown is the diagnostics listing as the ledger takes it (absolute
	// paths).
	shown *answer.FileDiagnostics
}

// Text is what the agent reads.
func (r LSPResult) Text() string { return r.text }

func query(ctx context.Context, c *registry.Call, s *Servers, p lspParams) (LSPResult, error) {
	op, ok := registry.FindChoice(operations, p.Operation)
	if !ok {
		return LSPResult{}, fmt.Errorf("unknown operation %q; use one of %s", p.Operation, strings.Join(registry.ChoiceNames(operations), ", "))
	}
	q := opQuery{op: op.name, place: protocol.Place{Line: p.Line, Symbol: p.Symbol, Occurrence: p.Occurrence}, query: p.Query, includeDisabled: p.IncludeDisabled}
	switch {
	case p.File == "*" && op.name == "diagnostics":
		q.all = true
	case p.File != "" && p.File != "*":
		at, err := c.Location(p.File)
		if err != nil {
			return LSPResult{}, err
		}
		q.file = at
	}
	switch op.args {
	case "file":
		if q.file.IsZero() && !q.all {
			return LSPResult{}, fmt.Errorf("%s needs file (a path relative to the root)", op.name)
		}
	case "position":
		if q.file.IsZero() && !q.all {
			return LSPResult{}, fmt.Errorf("%s needs file (a path relative to the root)", op.name)
		}
		if p.Line <= 0 || strings.TrimSpace(p.Symbol) == "" {
			return LSPResult{}, fmt.Errorf("%s needs line (1-based) and symbol (the symbol's text on that line); there is no column to guess from", op.name)
		}
	case "query-or-file":
		if p.Query == "" && q.file.IsZero() {
			return LSPResult{}, fmt.Errorf("symbols needs query (a name to find in the workspace) or file (for its outline)")
		}
	}
	out := LSPResult{Operation: op.name}
	if err := op.run(ctx, c, s.Sup, q, &out); err != nil {
		// An error names files relative to the root, as results do.
		return LSPResult{}, errors.New(s.Sup.RelText(err.Error()))
	}
	if d := out.shown; d != nil {
		// What the agent was shown is what the next write's diagnostics
		// are compared with: those not new, those gone fixed (WRT-2). An
		// incomplete listing adds what it showed and drops nothing.
		if abs, err := c.Path(d.File); err == nil {
			if d.Incomplete {
				s.ledger.Add(abs, d.Diagnostics, false)
			} else {
				s.ledger.Record(abs, d.Diagnostics, false)
			}
		}
	}
	return out, nil
}
