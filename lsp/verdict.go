package lsp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/builtin-tools/builtin-tools/pathguard"
)

// State is what became of one file's check (WRT-4).
type State string

// The states of a check.
const (
	// Checked: the diagnostics for the file's version arrived.
	Checked State = "checked"
	// TimedOut: they did not arrive within the wait; Why says which wait.
	TimedOut State = "timed_out"
	// NoServer: no server checks the file; Why says which half is missing
	// (no server for the kind of file, no root marker, no binary).
	NoServer State = "no_server"
	// ServerFailed: the server that owns the file does not run, exited or
	// answered with an error; Why is its line.
	ServerFailed State = "server_failed"
)

// Finding is one diagnostic as a verdict reports it: keyed as the ledger
// keys it (severity, code, message), with where it starts and the line
// quoted, the severity a word.
type Finding struct {
	Severity string `json:"severity" jsonschema:"error, warning, info or hint"`
	Code     string `json:"code,omitempty" jsonschema:"the server's code for the problem"`
	Source   string `json:"source,omitempty" jsonschema:"compiler, Pyright, typescript, clang ..."`
	Message  string `json:"message"`
	Line     int    `json:"line" jsonschema:"1-based line"`
	Column   int    `json:"column" jsonschema:"1-based column, in characters"`
	LineText string `json:"line_text,omitempty" jsonschema:"the source line the diagnostic starts on"`
}

// Findings converts diagnostics to findings, in their order.
func Findings(ds []Diagnostic) []Finding {
	out := make([]Finding, 0, len(ds))
	for _, d := range ds {
		out = append(out, Finding{Severity: d.Severity.String(), Code: d.Code, Source: d.Source, Message: d.Message,
			Line: d.Line, Column: d.Column, LineText: d.LineText})
	}
	return out
}

// Verdict is what one file's check found, after a write or for a staged
// change (WRT-4): which server checked which version, how long that took,
// and the diagnostics it introduced and those it made go away. An agent
// tells "checked, clean" (State checked, New empty) from "not checked".
type Verdict struct {
	File     string    `json:"file" jsonschema:"relative to the root"`
	Server   string    `json:"server,omitempty" jsonschema:"the server that owns the file; absent when none does"`
	State    State     `json:"state" jsonschema:"checked, timed_out, no_server or server_failed"`
	Why      string    `json:"why,omitempty" jsonschema:"why the file was not checked: the wait, the missing half, the server's failure"`
	Version  int       `json:"version,omitempty" jsonschema:"the document version the server was sent and checked"`
	WaitedMS int64     `json:"waited_ms" jsonschema:"milliseconds spent syncing the file and waiting for its diagnostics"`
	New      []Finding `json:"new" jsonschema:"diagnostics not reported before in this run"`
	Fixed    []Finding `json:"fixed" jsonschema:"diagnostics reported before in this run that the file no longer has"`
	// After names the write that caused diagnostics reported on a later
	// result (they came after the wait) or in another file.
	After *WriteRef `json:"after,omitempty" jsonschema:"the write these diagnostics follow, when it was not this call's"`
}

// WriteRef names an earlier write.
type WriteRef struct {
	File       string `json:"file" jsonschema:"the file written, relative to the root"`
	Tool       string `json:"tool" jsonschema:"the tool that wrote it"`
	SecondsAgo int    `json:"seconds_ago" jsonschema:"how long before this result the write's check began"`
}

// WriteCheck is [Supervisor.CheckWritten]'s answer: the verdict (its New
// and Fixed empty: they need the run's ledger), every diagnostic the server
// gave for the version (absolute paths, for the ledger), and, on a check
// that timed out, Late.
type WriteCheck struct {
	Verdict
	Diagnostics []Diagnostic
	// Late, when the wait timed out, receives the version's diagnostics if
	// they come within LateWait after it, and is closed then, or at once
	// when the file was synced again before they came (what a later
	// version shows is its own check's). Nil otherwise.
	Late <-chan []Diagnostic
}

// installedAt matches the program's path in a reason that says it is
// installed: a verdict says only what is missing.
var installedAt = regexp.MustCompile(`^(\S+ is installed) \([^)]*\)`)

// unowned is the verdict on a file choose found no server for: NoServer
// and which half is missing, or ServerFailed, the server that does not run
// and its line.
func unowned(path string, err error) (state State, server, why string) {
	var ue *UnavailableError
	switch {
	case errors.Is(err, ErrNotOwned):
		kind := filepath.Ext(path)
		if kind == "" {
			kind = filepath.Base(path)
		}
		return NoServer, "", fmt.Sprintf("no language server handles %s files", kind)
	case errors.As(err, &ue) && len(ue.Broken) > 0:
		return ServerFailed, ue.Broken[0], strings.Join(ue.Reasons, "; ")
	case errors.As(err, &ue):
		why := make([]string, len(ue.Reasons))
		for i, r := range ue.Reasons {
			why[i] = installedAt.ReplaceAllString(r, "$1")
		}
		return NoServer, "", strings.Join(why, "; ")
	}
	return ServerFailed, "", err.Error()
}

// LateWait bounds how long after a write's wait timed out its version's
// diagnostics are still watched for.
const LateWait = 2 * time.Minute

// CheckWritten syncs a file that was just written to its server and waits,
// as AfterWrite does, for that version's diagnostics, and says what came of
// it in a verdict: checked, timed out (watching on for the late ones), no
// server (and why), or the server failed (its line). A file no server owns
// is answered at once (WRT-3). It returns an error only for a path outside
// the root and a cancelled ctx.
//
// together says the call wrote other files with it (SyncWritten gave the
// servers all of them first): a server that publishes once per version
// may then publish this file's version more than once — first as it saw
// it beside the others' old text, then again once it read theirs — so the
// publishes are awaited to settle rather than the first taken (a rename's
// caller would otherwise be reported broken by a name its callee file
// already had).
func (s *Supervisor) CheckWritten(ctx context.Context, at pathguard.Path, together bool) (WriteCheck, error) {
	start := time.Now()
	absPath, err := s.guard.Of(at)
	if err != nil {
		return WriteCheck{}, fmt.Errorf("%w: %v", ErrBadFile, err)
	}
	path := filepath.Clean(absPath)
	if _, err := s.confine(path); !s.inRoot(path) || err != nil {
		return WriteCheck{}, fmt.Errorf("%w: %s is outside the root %s", ErrBadFile, absPath, s.root)
	}
	wc := WriteCheck{Verdict: Verdict{File: s.rel(path), New: []Finding{}, Fixed: []Finding{}}}
	failed := func(err error) (WriteCheck, error) {
		if ctx.Err() != nil {
			return wc, ctx.Err()
		}
		wc.State, wc.Why = ServerFailed, s.RelText(err.Error())
		wc.WaitedMS = time.Since(start).Milliseconds()
		return wc, nil
	}
	c, err := s.choose(path)
	if err != nil {
		state, server, why := unowned(path, err)
		if state == ServerFailed {
			wc.Server = server
			return failed(errors.New(why))
		}
		wc.State, wc.Why = state, why
		return wc, nil
	}
	wc.Server = c.spec.ID
	srv, err := s.serverFor(ctx, c)
	if err != nil {
		return failed(err)
	}
	doc, _, err := srv.syncFile(ctx, path, c.languageID)
	if err != nil || doc == nil {
		srv.release()
		if err == nil {
			err = fmt.Errorf("%s is gone", wc.File)
		}
		return failed(err)
	}
	wc.Version = doc.version
	items, err := srv.diagnosticsAwait(ctx, doc, time.Now(), srv.spec.PublishesOnce && !together)
	wc.WaitedMS = time.Since(start).Milliseconds()
	switch {
	case err == nil:
		srv.release()
		wc.State = Checked
		wc.Diagnostics = s.relMessages(convertDiagnostics(items, path, doc.text, srv.encoding))
	case errors.Is(err, ErrDiagnosticsTimeout):
		wc.State = TimedOut
		wc.Why = fmt.Sprintf("%s published no diagnostics for %s version %d within %s", srv.spec.ID, wc.File, doc.version, s.cfg.DiagnosticsWait)
		wc.Late = s.watchLate(srv, doc) // releases srv
	default:
		srv.release()
		return failed(err)
	}
	return wc, nil
}

// watchLate waits, in the background and at most LateWait, for the
// diagnostics of doc's version, and sends them if the document is still
// at that version. srv stays in use (not reaped) until then, and is
// released; the supervisor's Close ends the wait.
func (s *Supervisor) watchLate(srv *server, doc *openDoc) <-chan []Diagnostic {
	late := make(chan []Diagnostic, 1)
	// It only listens: a preview need not wait for it.
	srv.view.unshare()
	go func() {
		defer close(late)
		defer srv.endUse()
		ctx, cancel := context.WithTimeout(context.Background(), LateWait)
		defer cancel()
		go func() {
			select {
			case <-s.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		// diagnosticsForSince bounds its wait by DiagnosticsWait from
		// start: a start that far ahead makes the bound LateWait from now.
		items, err := srv.diagnosticsForSince(ctx, doc, time.Now().Add(LateWait-s.cfg.DiagnosticsWait))
		if err != nil {
			return
		}
		srv.mu.Lock()
		current := srv.docs[doc.path] == doc
		srv.mu.Unlock()
		if current {
			late <- s.relMessages(convertDiagnostics(items, doc.path, doc.text, srv.encoding))
		}
	}()
	return late
}

// diffDiagnostics returns the errors and warnings of after whose key
// (severity, code, message) before lacks, and those of before that after
// lacks, each key once, as the Ledger counts them: what a preview's
// version would introduce and fix.
func diffDiagnostics(before, after []Diagnostic) (fresh, gone []Diagnostic) {
	keys := func(ds []Diagnostic) map[ledgerKey]bool {
		m := map[ledgerKey]bool{}
		for _, d := range ds {
			m[ledgerKey{d.Severity, d.Code, d.Message}] = true
		}
		return m
	}
	pick := func(ds []Diagnostic, other map[ledgerKey]bool) []Diagnostic {
		seen := map[ledgerKey]bool{}
		var out []Diagnostic
		for _, d := range ds {
			k := ledgerKey{d.Severity, d.Code, d.Message}
			if d.Severity > SeverityWarning || other[k] || seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, d)
		}
		return out
	}
	return pick(after, keys(before)), pick(before, keys(after))
}

// SyncWritten gives each server the new text of every file a call wrote
// before any of them is checked (CheckWritten with together), so no
// file's diagnostics are taken while the server still holds another's old
// text. A file it cannot sync is left to CheckWritten, which says why.
func (s *Supervisor) SyncWritten(ctx context.Context, ats []pathguard.Path) {
	for _, at := range ats {
		abs, err := s.guard.Of(at)
		if err != nil {
			continue
		}
		path := filepath.Clean(abs)
		if _, err := s.confine(path); !s.inRoot(path) || err != nil {
			continue
		}
		c, err := s.choose(path)
		if err != nil {
			continue
		}
		srv, err := s.serverFor(ctx, c)
		if err != nil {
			continue
		}
		srv.syncFile(ctx, path, c.languageID)
		srv.release()
	}
}
