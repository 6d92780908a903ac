// Package lsptool puts the lsp package on a run's tool surface: the `lsp`
// tool (read), `lsp_rename` (write — a separate tool because the tier
// decides who sees it), and the wrapper that reports new diagnostics after
// every write (WRT-1..3). The language-server work itself is package lsp.
package lsptool

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

// Tools returns the descriptors of lsp and lsp_rename.
func Tools() []registry.Descriptor { return []registry.Descriptor{Tool, Rename} }

type lspParams struct {
	Operation string `json:"operation" jsonschema:"what to ask: diagnostics, definition, type_definition, implementation, references, hover, symbols, code_actions, status or reload" enum:"diagnostics,definition,type_definition,implementation,references,hover,symbols,code_actions,status,reload"`
	File      string `json:"file,omitempty" jsonschema:"file the operation is about, relative to the root; for diagnostics \"*\" runs the project's checker (go vet, pyright, tsc --noEmit ...) instead"`
	Line      int    `json:"line,omitempty" jsonschema:"1-based line of the symbol, for navigation operations"`
	Symbol    string `json:"symbol,omitempty" jsonschema:"text of the symbol as it appears on that line; its position on the line is the column, so no column is ever needed"`
	Query     string `json:"query,omitempty" jsonschema:"for symbols: a name to search the whole workspace for (give file instead for that file's outline)"`
}

var operations = []string{"diagnostics", "definition", "type_definition", "implementation", "references", "hover", "symbols", "code_actions", "status", "reload"}

// Tool is the `lsp` tool (LSP-1..5). It stays registered whenever the run
// has a supervisor, even when no server can run, so that status can say why.
var Tool = func() registry.Descriptor {
	d := registry.Tool("lsp", tiers.Read,
		"Ask the language servers of this checkout (gopls, pyright, typescript-language-server, clangd, rust-analyzer, dart). "+
			"Positions are a 1-based line plus a symbol: the text of the symbol on that line — never a column. "+
			"Operations: diagnostics (file, or \"*\" for the project's checker), definition, type_definition, implementation, "+
			"references (at most 50), hover, code_actions (file, line, symbol), symbols (query for the workspace, or file for its outline), "+
			"status (which servers run here, and why others do not), reload (restart the server for file). Servers start on first use.",
		[]registry.ResourceKind{registry.LSP}, query)
	d.Title = "language server"
	return d
}()

func query(ctx context.Context, c *registry.Call, p lspParams) (*mcp.CallToolResult, error) {
	sup, ok := registry.Resource[*lsp.Supervisor](c.Run, registry.LSP)
	if !ok {
		return registry.Errorf("this run has no language-server supervisor")
	}
	file := ""
	if p.File != "" && p.File != "*" {
		abs, err := c.Path(p.File)
		if err != nil {
			return registry.Errorf("%v", err)
		}
		file = abs
	}
	needFile := func() (*mcp.CallToolResult, error) {
		return registry.Errorf("%s needs file (a path relative to the root)", p.Operation)
	}
	var out string
	var err error
	switch p.Operation {
	case "status":
		out = FormatStatus(sup.Status(ctx))
	case "reload":
		var res *lsp.ReloadResult
		if res, err = sup.Reload(ctx, file); err == nil {
			out = FormatReload(res)
		}
	case "diagnostics":
		switch {
		case p.File == "*":
			var res *lsp.CheckReport
			res, err = sup.Check(ctx)
			if res != nil {
				out = FormatCheck(res)
			}
		case file == "":
			return needFile()
		default:
			var res *lsp.FileDiagnostics
			if res, err = sup.Diagnostics(ctx, file); err == nil {
				out = FormatFileDiagnostics(sup.Root(), res)
			}
		}
	case "symbols":
		if p.Query == "" && file == "" {
			return registry.Errorf("symbols needs query (a name to find in the workspace) or file (for its outline)")
		}
		var res *lsp.Symbols
		if res, err = sup.Symbols(ctx, p.Query, file); err == nil {
			out = FormatSymbols(res)
		}
	case "definition", "type_definition", "implementation", "references", "hover", "code_actions":
		if file == "" {
			return needFile()
		}
		if p.Line <= 0 || strings.TrimSpace(p.Symbol) == "" {
			return registry.Errorf("%s needs line (1-based) and symbol (the symbol's text on that line); there is no column to guess from", p.Operation)
		}
		out, err = position(ctx, sup, p.Operation, file, p.Line, p.Symbol)
	default:
		return registry.Errorf("unknown operation %q; use one of %s", p.Operation, strings.Join(operations, ", "))
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return registry.Errorf("%v", err)
	}
	return registry.Text(out)
}

// position runs an operation at a line and symbol and formats its answer.
func position(ctx context.Context, sup *lsp.Supervisor, op, file string, line int, symbol string) (string, error) {
	switch op {
	case "hover":
		res, err := sup.Hover(ctx, file, line, symbol)
		if err != nil {
			return "", err
		}
		return FormatHover(res), nil
	case "code_actions":
		res, err := sup.CodeActions(ctx, file, line, symbol)
		if err != nil {
			return "", err
		}
		return FormatCodeActions(res), nil
	}
	locate := map[string]func(context.Context, string, int, string) (*lsp.Locations, error){
		"definition": sup.Definition, "type_definition": sup.TypeDefinition, "implementation": sup.Implementation,
		"references": sup.References,
	}[op]
	res, err := locate(ctx, file, line, symbol)
	if err != nil {
		return "", err
	}
	return FormatLocations(res), nil
}

type renameParams struct {
	File    string `json:"file" jsonschema:"file where the symbol appears, relative to the root"`
	Line    int    `json:"line" jsonschema:"1-based line of the symbol"`
	Symbol  string `json:"symbol" jsonschema:"the symbol's text on that line"`
	NewName string `json:"new_name" jsonschema:"the new name"`
	Force   bool   `json:"force,omitempty" jsonschema:"change files even if they are read-only, have other hard links (they keep the old content) or their owner cannot be kept; the result says what was lost"`
}

// Rename is the `lsp_rename` tool (REN-1).
var Rename = func() registry.Descriptor {
	d := registry.Tool("lsp_rename", tiers.Write,
		"Rename a symbol across the project with its language server: every file the server names is changed, all or nothing, "+
			"including files the server moves. Reports the files and edit counts.",
		[]registry.ResourceKind{registry.LSP}, rename)
	d.Title = "rename symbol"
	return d
}()

func rename(ctx context.Context, c *registry.Call, p renameParams) (*mcp.CallToolResult, error) {
	sup, ok := registry.Resource[*lsp.Supervisor](c.Run, registry.LSP)
	if !ok {
		return registry.Errorf("this run has no language-server supervisor")
	}
	abs, err := c.Path(p.File)
	if err != nil {
		return registry.Errorf("%v", err)
	}
	if p.Line <= 0 || strings.TrimSpace(p.Symbol) == "" || strings.TrimSpace(p.NewName) == "" {
		return registry.Errorf("lsp_rename needs file, line (1-based), symbol (its text on that line) and new_name")
	}
	res, err := sup.Rename(ctx, abs, p.Line, p.Symbol, p.NewName, p.Force)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return registry.Errorf("%v", err)
	}
	for _, f := range res.Files {
		if abs, err := c.Path(f.Path); err == nil {
			c.Wrote(abs)
		}
	}
	return registry.Text(FormatRename(res))
}

// DiagnosticsOnWrite wraps every write-tier tool: after a successful call,
// each file it wrote is synced to its language server, that version's
// diagnostics are awaited (bounded), and only those the run has not reported
// before are appended to the result (WRT-1, WRT-2). Files no server owns
// cost nothing (WRT-3). Errors and warnings are shown; hints and
// information are left to `lsp diagnostics`.
func DiagnosticsOnWrite(sup *lsp.Supervisor) registry.Wrapper {
	ledger := lsp.NewLedger()
	return registry.Wrapper{
		Name:    "diagnostics-on-write",
		Applies: func(d *registry.Descriptor) bool { return d.Tier == tiers.Write },
		Wrap: func(next registry.HandlerFunc) registry.HandlerFunc {
			return func(ctx context.Context, c *registry.Call) (*mcp.CallToolResult, error) {
				res, err := next(ctx, c)
				if err != nil || res == nil || res.IsError {
					return res, err
				}
				if note := afterWrite(ctx, sup, ledger, c); note != "" {
					res.Content = append(res.Content, mcp.NewTextContent(note))
				}
				return res, nil
			}
		},
	}
}

func afterWrite(ctx context.Context, sup *lsp.Supervisor, ledger *lsp.Ledger, c *registry.Call) string {
	written := c.Written()
	type outcome struct {
		file  string
		diags []lsp.Diagnostic
		err   error
	}
	results := make([]outcome, len(written))
	done := make(chan int, len(written))
	for i, f := range written {
		go func(i int, f string) {
			diags, err := sup.AfterWrite(ctx, f)
			results[i] = outcome{f, diags, err}
			done <- i
		}(i, f)
	}
	for range written {
		<-done
	}
	var fresh []lsp.Diagnostic
	var notes []string
	for _, r := range results {
		if r.err != nil && !errors.Is(r.err, lsp.ErrNotOwned) {
			notes = append(notes, fmt.Sprintf("%s: %v", c.Rel(r.file), r.err))
		}
		fresh = append(fresh, ledger.Fresh(r.file, r.diags, false)...)
	}
	var b strings.Builder
	if len(fresh) > 0 {
		b.WriteString("New diagnostics after this write:\n")
		b.WriteString(FormatDiagnostics(c.Run.Root(), fresh))
	}
	if len(notes) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString("Diagnostics could not be checked: " + strings.Join(notes, "; "))
	}
	return strings.TrimSpace(b.String())
}
