package lsptool

import (
	"context"
	"fmt"
	"strings"

	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

type lspParams struct {
	Operation string `json:"operation" jsonschema:"what to ask"`
	File      string `json:"file,omitempty" jsonschema:"file the operation is about, relative to the root; for diagnostics \"*\" runs the project's checker (go vet, pyright, tsc --noEmit ...) instead"`
	Line      int    `json:"line,omitempty" jsonschema:"1-based line of the symbol, for navigation operations"`
	Symbol    string `json:"symbol,omitempty" jsonschema:"text of the symbol as it appears on that line; its position on the line is the column, so no column is ever needed"`
	Query     string `json:"query,omitempty" jsonschema:"for symbols: a name to search the whole workspace for (give file instead for that file's outline)"`
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
	run  func(ctx context.Context, sup *lsp.Supervisor, q opQuery) (string, error)
}

// opQuery is a call's arguments with the file confined.
type opQuery struct {
	file   string // absolute, "" when not given; "*" for the project's checker
	line   int
	symbol string
	query  string
}

func position(op func(*lsp.Supervisor) func(context.Context, string, int, string) (string, error)) func(context.Context, *lsp.Supervisor, opQuery) (string, error) {
	return func(ctx context.Context, sup *lsp.Supervisor, q opQuery) (string, error) {
		return op(sup)(ctx, q.file, q.line, q.symbol)
	}
}

var operations = []operation{
	{"diagnostics", "file", `diagnostics (file, or "*" for the project's checker)`,
		func(ctx context.Context, sup *lsp.Supervisor, q opQuery) (string, error) {
			return sup.Diagnostics(ctx, q.file)
		}},
	{"definition", "position", "definition",
		position(func(s *lsp.Supervisor) func(context.Context, string, int, string) (string, error) {
			return s.Definition
		})},
	{"type_definition", "position", "type_definition",
		position(func(s *lsp.Supervisor) func(context.Context, string, int, string) (string, error) {
			return s.TypeDefinition
		})},
	{"implementation", "position", "implementation",
		position(func(s *lsp.Supervisor) func(context.Context, string, int, string) (string, error) {
			return s.Implementation
		})},
	{"references", "position", "references (at most 50)",
		position(func(s *lsp.Supervisor) func(context.Context, string, int, string) (string, error) {
			return s.References
		})},
	{"hover", "position", "hover",
		position(func(s *lsp.Supervisor) func(context.Context, string, int, string) (string, error) { return s.Hover })},
	{"code_actions", "position", "code_actions (file, line, symbol)",
		position(func(s *lsp.Supervisor) func(context.Context, string, int, string) (string, error) {
			return s.CodeActions
		})},
	{"symbols", "query-or-file", "symbols (query for the workspace, or file for its outline)",
		func(ctx context.Context, sup *lsp.Supervisor, q opQuery) (string, error) {
			return sup.Symbols(ctx, q.query, q.file)
		}},
	{"status", "", "status (which servers run here, and why others do not)",
		func(ctx context.Context, sup *lsp.Supervisor, q opQuery) (string, error) { return sup.Status(ctx), nil }},
	{"reload", "", "reload (restart the server for file)",
		func(ctx context.Context, sup *lsp.Supervisor, q opQuery) (string, error) {
			return sup.Reload(ctx, q.file)
		}},
}

func operationNames() []string {
	names := make([]string, len(operations))
	for i, op := range operations {
		names[i] = op.name
	}
	return names
}

func describeOperations() string {
	docs := make([]string, len(operations))
	for i, op := range operations {
		docs[i] = op.doc
	}
	return strings.Join(docs, ", ")
}

// LSPTool is the `lsp` tool (LSP-1..5). It stays registered whenever the
// run has a supervisor, even when no server can run, so that status can say
// why.
var LSPTool = registry.Descriptor{
	Name:  "lsp",
	Title: "language server",
	Tier:  tiers.Read,
	Description: "Ask the language servers of this checkout (gopls, pyright, typescript-language-server, clangd, rust-analyzer, dart). " +
		"Positions are a 1-based line plus a symbol: the text of the symbol on that line — never a column. " +
		"Operations: " + describeOperations() + ". Servers start on first use.",
	Handler: registry.With(Key, query).WithEnum("operation", operationNames()),
}

// LSPResult is the answer to one operation.
type LSPResult struct {
	Operation string `json:"operation"`
	text      string
}

// Text is what the agent reads.
func (r LSPResult) Text() string { return r.text }

func query(ctx context.Context, c *registry.Call, s *Servers, p lspParams) (LSPResult, error) {
	var op *operation
	for i := range operations {
		if operations[i].name == p.Operation {
			op = &operations[i]
		}
	}
	if op == nil {
		return LSPResult{}, fmt.Errorf("unknown operation %q; use one of %s", p.Operation, strings.Join(operationNames(), ", "))
	}
	q := opQuery{line: p.Line, symbol: p.Symbol, query: p.Query}
	switch {
	case p.File == "*" && op.name == "diagnostics":
		q.file = "*"
	case p.File != "" && p.File != "*":
		abs, err := c.Path(p.File)
		if err != nil {
			return LSPResult{}, err
		}
		q.file = abs
	}
	switch op.args {
	case "file":
		if q.file == "" {
			return LSPResult{}, fmt.Errorf("%s needs file (a path relative to the root)", op.name)
		}
	case "position":
		if q.file == "" {
			return LSPResult{}, fmt.Errorf("%s needs file (a path relative to the root)", op.name)
		}
		if p.Line <= 0 || strings.TrimSpace(p.Symbol) == "" {
			return LSPResult{}, fmt.Errorf("%s needs line (1-based) and symbol (the symbol's text on that line); there is no column to guess from", op.name)
		}
	case "query-or-file":
		if p.Query == "" && q.file == "" {
			return LSPResult{}, fmt.Errorf("symbols needs query (a name to find in the workspace) or file (for its outline)")
		}
	}
	out, err := op.run(ctx, s.Sup, q)
	if err != nil {
		return LSPResult{}, err
	}
	return LSPResult{Operation: op.name, text: out}, nil
}
