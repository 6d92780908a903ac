package lsp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/lifetime"

	"github.com/builtin-tools/builtin-tools/lsp/checkout"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// installedAt matches the program's path in a reason that says it is
// installed: a verdict says only what is missing.
var installedAt = regexp.MustCompile(`^(\S+ is installed) \([^)]*\)`)

// unowned is the verdict on a file choose found no server for: NoServer
// and which half is missing, or ServerFailed, the server that does not run
// and its line.
func unowned(path string, err error) (state diag.State, server, why string) {
	var ue *UnavailableError
	switch {
	case errors.Is(err, ErrNotOwned):
		kind := filepath.Ext(path)
		if kind == "" {
			kind = filepath.Base(path)
		}
		return diag.NoServer, "", fmt.Sprintf("no language server handles %s files", kind)
	case errors.As(err, &ue) && len(ue.Broken) > 0:
		return diag.ServerFailed, ue.Broken[0], strings.Join(ue.Reasons, "; ")
	case errors.As(err, &ue):
		why := make([]string, len(ue.Reasons))
		for i, r := range ue.Reasons {
			why[i] = installedAt.ReplaceAllString(r, "$1")
		}
		return diag.NoServer, "", strings.Join(why, "; ")
	}
	return diag.ServerFailed, "", err.Error()
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
func (s *Supervisor) CheckWritten(ctx context.Context, at pathguard.Path, together bool) (diag.WriteCheck, error) {
	start := time.Now()
	absPath, err := s.co.Guard().Of(at)
	if err != nil {
		return diag.WriteCheck{}, fmt.Errorf("%w: %v", checkout.ErrBadFile, err)
	}
	path := filepath.Clean(absPath)
	if _, err := s.co.Confine(path); !s.co.InRoot(path) || err != nil {
		return diag.WriteCheck{}, fmt.Errorf("%w: %s is outside the root %s", checkout.ErrBadFile, absPath, s.co.Root())
	}
	wc := diag.WriteCheck{Verdict: diag.Verdict{File: s.co.Rel(path), New: []diag.Finding{}, Fixed: []diag.Finding{}}}
	failed := func(err error) (diag.WriteCheck, error) {
		if ctx.Err() != nil {
			return wc, ctx.Err()
		}
		wc.State, wc.Why = diag.ServerFailed, s.co.RelText(err.Error())
		wc.WaitedMS = time.Since(start).Milliseconds()
		return wc, nil
	}
	c, err := s.tools.choose(path)
	if err != nil {
		state, server, why := unowned(path, err)
		if state == diag.ServerFailed {
			wc.Server = server
			return failed(errors.New(why))
		}
		wc.State, wc.Why = state, why
		return wc, nil
	}
	wc.Server = c.spec.ID
	srv, err := s.fleet.serverFor(ctx, c)
	if err != nil {
		return failed(err)
	}
	doc, _, err := srv.docs.syncFile(ctx, path, c.languageID)
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
		wc.State = diag.Checked
		wc.Diagnostics = s.co.RelMessages(diag.Convert(items, path, doc.text, srv.encoding))
	case errors.Is(err, ErrDiagnosticsTimeout):
		wc.State = diag.TimedOut
		wc.Why = fmt.Sprintf("%s published no diagnostics for %s version %d within %s", srv.spec.ID, wc.File, doc.version, s.cfg.DiagnosticsWait)
		wc.Late = s.fleet.watchLate(srv, doc) // releases srv
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
func (fl *fleet) watchLate(srv *server, doc *openDoc) <-chan []diag.Diagnostic {
	late := make(chan []diag.Diagnostic, 1)
	// It only listens: a preview need not wait for it.
	srv.view.Unshare()
	go func() {
		defer close(late)
		defer srv.endUse()
		ctx, cancel := context.WithTimeout(context.Background(), LateWait)
		defer cancel()
		ctx, stop := lifetime.Until(ctx, fl.stop)
		defer stop()
		// diagnosticsForSince bounds its wait by DiagnosticsWait from
		// start: a start that far ahead makes the bound LateWait from now.
		items, err := srv.diagnosticsForSince(ctx, doc, time.Now().Add(LateWait-fl.cfg.DiagnosticsWait))
		if err != nil {
			return
		}
		current := srv.docs.doc(doc.path) == doc
		if current {
			late <- fl.co.RelMessages(diag.Convert(items, doc.path, doc.text, srv.encoding))
		}
	}()
	return late
}

// SyncWritten gives each server the new text of every file a call wrote
// before any of them is checked (CheckWritten with together), so no
// file's diagnostics are taken while the server still holds another's old
// text. A file it cannot sync is left to CheckWritten, which says why.
func (s *Supervisor) SyncWritten(ctx context.Context, ats []pathguard.Path) {
	for _, at := range ats {
		abs, err := s.co.Guard().Of(at)
		if err != nil {
			continue
		}
		path := filepath.Clean(abs)
		if _, err := s.co.Confine(path); !s.co.InRoot(path) || err != nil {
			continue
		}
		c, err := s.tools.choose(path)
		if err != nil {
			continue
		}
		srv, err := s.fleet.serverFor(ctx, c)
		if err != nil {
			continue
		}
		srv.docs.syncFile(ctx, path, c.languageID)
		srv.release()
	}
}
