package lsptool

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/mark3labs/mcp-go/mcp"
)

// DiagnosticsOnWrite wraps every tool that writes files: after a successful call,
// each file it wrote is synced to its language server, that version's
// diagnostics are awaited (bounded), and only those the run has not reported
// before are appended to the result (WRT-1, WRT-2). Files no server owns
// cost nothing (WRT-3). Errors and warnings are shown; hints and
// information are left to `lsp diagnostics`.
var DiagnosticsOnWrite = registry.Wrapper{
	Name:    "diagnostics-on-write",
	Applies: registry.WritesFiles,
	Wrap: func(next registry.HandlerFunc) registry.HandlerFunc {
		return func(ctx context.Context, c *registry.Call) (*mcp.CallToolResult, error) {
			res, err := next(ctx, c)
			if err != nil || res == nil || res.IsError {
				return res, err
			}
			s, ok := Key.Of(c.Run)
			if !ok {
				return res, nil
			}
			if note := afterWrite(ctx, s.Sup, s.ledger, c); note != "" {
				res.Content = append(res.Content, mcp.NewTextContent(note))
			}
			return res, nil
		}
	},
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
			at, err := c.Location(f)
			var diags []lsp.Diagnostic
			if err == nil {
				diags, err = sup.AfterWrite(ctx, at)
			}
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
