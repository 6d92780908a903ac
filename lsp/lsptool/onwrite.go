package lsptool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/mark3labs/mcp-go/mcp"
)

// DiagnosticsOnWrite wraps every tool that writes files: after a successful call,
// each file it wrote is synced to its language server, that version's
// diagnostics are awaited (bounded), and those the run has not reported
// before are reported, with those reported earlier that the file no
// longer has (WRT-1, WRT-2). Files no server owns cost nothing (WRT-3).
// Errors and warnings are shown; hints and information are left to `lsp
// diagnostics`. The report reaches the result's text and its structured
// content (Call.Report), so a call made through eval's tool() gets it too.
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
			if rep := afterWrite(ctx, s.Sup, s.ledger, c); rep != nil {
				c.Report("diagnostics", rep.text(), rep.data())
			}
			return res, nil
		}
	},
}

// writeWorkers bounds the files checked at once after one write: each
// waits on its server, and a patch may touch hundreds.
const writeWorkers = 4

// checkWritten is Supervisor.AfterWrite; a test counts the checks under
// way through it.
var checkWritten = (*lsp.Supervisor).AfterWrite

// writeReport is what the diagnostics after a write found.
type writeReport struct {
	New       []lsp.Diagnostic // paths relative to the root
	Fixed     []lsp.Diagnostic // reported earlier in this run, gone now
	Unchecked []Unchecked
}

// Unchecked is a written file whose diagnostics could not be had.
type Unchecked struct {
	File  string `json:"file"`
	Error string `json:"error"`
}

func afterWrite(ctx context.Context, sup *lsp.Supervisor, ledger *lsp.Ledger, c *registry.Call) *writeReport {
	written := c.Written()
	type outcome struct {
		diags []lsp.Diagnostic
		err   error
		gone  bool // the file no longer exists
	}
	results := make([]outcome, len(written))
	jobs := make(chan int)
	done := make(chan struct{})
	workers := min(len(written), writeWorkers)
	for range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range jobs {
				f := written[i]
				if _, err := c.Run.Guard().Lstat(f); errors.Is(err, fs.ErrNotExist) {
					results[i].gone = true
					continue
				}
				at, err := c.Location(f)
				if err == nil {
					results[i].diags, err = checkWritten(sup, ctx, at)
				}
				results[i].err = err
			}
		}()
	}
	for i := range written {
		jobs <- i
	}
	close(jobs)
	for range workers {
		<-done
	}

	rep := &writeReport{}
	for i, r := range results {
		f := written[i]
		switch {
		case r.gone:
			ledger.Forget(f)
		case r.err != nil:
			// What the server said of an earlier version is no news of
			// this one, and no sign that anything was fixed.
			if !errors.Is(r.err, lsp.ErrNotOwned) {
				rep.Unchecked = append(rep.Unchecked, Unchecked{File: c.Rel(f), Error: sup.RelText(r.err.Error())})
			}
		case r.diags == nil:
			// No server checked it (WRT-3).
		default:
			fresh, fixed := ledger.Record(f, r.diags, false)
			rep.New = append(rep.New, relDiagnostics(c, fresh)...)
			rep.Fixed = append(rep.Fixed, relDiagnostics(c, fixed)...)
		}
	}
	if len(rep.New) == 0 && len(rep.Fixed) == 0 && len(rep.Unchecked) == 0 {
		return nil
	}
	return rep
}

// maxFixedShown bounds the fixed diagnostics listed in the text.
const maxFixedShown = 20

// text is what the agent reads.
func (r *writeReport) text() string {
	var parts []string
	if len(r.New) > 0 {
		parts = append(parts, "New diagnostics after this write:\n"+FormatDiagnostics("", r.New))
	}
	if len(r.Fixed) > 0 {
		var b strings.Builder
		for i, d := range r.Fixed {
			if i == maxFixedShown {
				fmt.Fprintf(&b, "... and %d more fixed\n", len(r.Fixed)-i)
				break
			}
			fmt.Fprintf(&b, "fixed: %s: %s\n", d.File, oneLine(d.Message))
		}
		parts = append(parts, strings.TrimRight(b.String(), "\n"))
	}
	if len(r.Unchecked) > 0 {
		var notes []string
		for _, u := range r.Unchecked {
			notes = append(notes, u.File+": "+u.Error)
		}
		parts = append(parts, "Diagnostics could not be checked: "+strings.Join(notes, "; "))
	}
	return strings.Join(parts, "\n")
}

// data is the report's structured content: the same, as fields.
func (r *writeReport) data() map[string]any {
	m := map[string]any{}
	if len(r.New) > 0 {
		m["new"] = r.New
	}
	if len(r.Fixed) > 0 {
		m["fixed"] = r.Fixed
	}
	if len(r.Unchecked) > 0 {
		m["unchecked"] = r.Unchecked
	}
	return m
}
