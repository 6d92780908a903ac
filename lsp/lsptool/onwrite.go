package lsptool

import (
	"context"
	"errors"
	"io/fs"
	"time"

	"github.com/builtin-tools/builtin-tools/lsp/answertext"

	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/pathguard"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/mark3labs/mcp-go/mcp"
)

// DiagnosticsOnWrite wraps every tool that writes files: after a successful call,
// each file it wrote is synced to its language server, that version's
// diagnostics are awaited (bounded), and the result carries a verdict per
// written file (WRT-4): checked, timed out, no server or the server failed,
// with the diagnostics the run has not reported before and those reported
// earlier that the file no longer has (WRT-1, WRT-2). Files no server owns
// cost no wait (WRT-3). The text says nothing of a file checked clean, and
// one line of files not checked, so silence means "checked, clean". Errors
// and warnings are shown; hints and information are left to `lsp
// diagnostics`. The report reaches the result's text and its structured
// content (Call.Report), so a call made through eval's tool() gets it too.
// Diagnostics that come after the wait are reported on the run's next
// result (LateDiagnostics).
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
			if rep := s.afterWrite(ctx, c); rep != nil {
				c.Report("diagnostics", rep.Text(), rep.Data())
			}
			return res, nil
		}
	},
}

// LateDiagnostics wraps every tool: a result of the run's (not a child
// call's, which its parent may not show) carries the diagnostics that came
// for a written version after its write's wait, each naming that write
// (WRT-5).
var LateDiagnostics = registry.Wrapper{
	Name:    "late-diagnostics",
	Applies: func(*registry.Descriptor) bool { return true },
	Wrap: func(next registry.HandlerFunc) registry.HandlerFunc {
		return func(ctx context.Context, c *registry.Call) (*mcp.CallToolResult, error) {
			res, err := next(ctx, c)
			if err != nil || res == nil || res.IsError || c.Parent != nil {
				return res, err
			}
			s, ok := Key.Of(c.Run)
			if !ok {
				return res, nil
			}
			if rep := s.takeLate(); rep != nil {
				c.Report("diagnostics", rep.Text(), rep.Data())
			}
			return res, nil
		}
	},
}

// writeWorkers bounds the files checked at once after one write: each
// waits on its server, and a patch may touch hundreds.
const writeWorkers = 4

// checkWritten is Supervisor.CheckWritten; a test counts the checks under
// way through it.
var checkWritten = (*lsp.Supervisor).CheckWritten

// late is a verdict that came after its write's result.
type late struct {
	v            diag.Verdict
	fresh, fixed []diag.Diagnostic
	began        time.Time
}

func (s *Servers) afterWrite(ctx context.Context, c *registry.Call) *answertext.WriteReport {
	written := c.Written()
	type outcome struct {
		check diag.WriteCheck
		err   error
		gone  bool // the file no longer exists
	}
	results := make([]outcome, len(written))
	jobs := make(chan int)
	done := make(chan struct{})
	workers := min(len(written), writeWorkers)
	began := time.Now()
	together := len(written) > 1
	if together {
		var ats []pathguard.Path
		for _, f := range written {
			if at, err := c.Location(f); err == nil {
				ats = append(ats, at)
			}
		}
		s.Sup.SyncWritten(ctx, ats)
	}
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
					results[i].check, err = checkWritten(s.Sup, ctx, at, together)
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

	rep := &answertext.WriteReport{}
	var checked []string
	for i, r := range results {
		f := written[i]
		v := r.check.Verdict
		switch {
		case r.gone:
			s.ledger.Forget(f)
			continue
		case r.err != nil:
			v = diag.Verdict{File: c.Rel(f), State: diag.TimedOut, Why: "the call ended before the file was checked: " + s.Sup.RelText(r.err.Error())}
			if !errors.Is(r.err, context.Canceled) && !errors.Is(r.err, context.DeadlineExceeded) {
				v.State, v.Why = diag.NoServer, s.Sup.RelText(r.err.Error())
			}
		case v.State == diag.Checked:
			checked = append(checked, f)
			fresh, fixed := s.ledger.Record(f, r.check.Diagnostics, false)
			rep.Add(v, relDiagnostics(c, fresh), relDiagnostics(c, fixed))
			continue
		case r.check.Late != nil:
			// What the server said of an earlier version is no news of
			// this one, and no sign that anything was fixed; what it says
			// of this one later is reported then.
			go s.awaitLate(f, v, r.check.Late, c, began)
		}
		rep.Add(v, nil, nil)
	}
	rep.Others = s.checkOthers(ctx, c, checked)
	if len(rep.Files) == 0 {
		return nil
	}
	s.mu.Lock()
	if s.said == nil {
		s.said = map[string]bool{}
	}
	rep.Said = map[string]bool{}
	for _, v := range rep.Files {
		if v.State == diag.NoServer || v.State == diag.ServerFailed {
			rep.Said[v.Why] = s.said[v.Why]
			s.said[v.Why] = true
		}
	}
	s.mu.Unlock()
	return rep
}

// awaitLate waits for a timed-out check's late diagnostics (the channel is
// closed within lsp.LateWait, or when the run's supervisor closes) and
// keeps what they show, against the ledger, for the run's next result.
func (s *Servers) awaitLate(abs string, v diag.Verdict, ch <-chan []diag.Diagnostic, c *registry.Call, began time.Time) {
	diags, ok := <-ch
	if !ok {
		return
	}
	fresh, fixed := s.ledger.Record(abs, diags, false)
	v.State, v.Why = diag.Checked, ""
	v.WaitedMS = time.Since(began).Milliseconds()
	v.After = &diag.WriteRef{File: v.File, Tool: c.Tool.Name}
	s.mu.Lock()
	s.late = append(s.late, late{v: v, fresh: relDiagnostics(c, fresh), fixed: relDiagnostics(c, fixed), began: began})
	s.mu.Unlock()
}

// takeLate returns the late verdicts kept so far as one report, and
// forgets them; nil when there are none.
func (s *Servers) takeLate() *answertext.WriteReport {
	s.mu.Lock()
	kept := s.late
	s.late = nil
	s.mu.Unlock()
	if len(kept) == 0 {
		return nil
	}
	rep := &answertext.WriteReport{}
	for _, l := range kept {
		l.v.After.SecondsAgo = int(time.Since(l.began).Seconds())
		rep.Add(l.v, l.fresh, l.fixed)
	}
	return rep
}
