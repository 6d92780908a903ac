package lsp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/checkout"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// clip cuts s to at most n bytes (and an ellipsis) on a rune boundary.
func clip(s string, n int) string { return textcut.BytesEllipsis(s, n) }

// AfterWrite syncs a file that was just written to the server that owns it
// (didOpen or didChange with the full text and the next version, then
// didSave) and returns the diagnostics for that version: pulled when the
// server offers it, otherwise the published ones once they settle, bounded
// by DiagnosticsWait. It is the hook behind diagnostics on write (WRT-1).
//
// When no server owns the file (no row for its kind, no root marker, or the
// binary is missing) it returns nil, nil at once, so the write goes on with
// no delay and no noise (WRT-3); so it does when the file was deleted, or
// its server is in a start failure's backoff. A file that was checked gets
// a non-nil slice, empty when it has no problems. On timeout it returns the
// diagnostics it has and an error wrapping ErrDiagnosticsTimeout.
func (s *Supervisor) AfterWrite(ctx context.Context, at pathguard.Path) ([]diag.Diagnostic, error) {
	absPath, err := s.co.Guard().Of(at)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", checkout.ErrBadFile, err)
	}
	path := filepath.Clean(absPath)
	if _, err := s.co.Confine(path); !s.co.InRoot(path) || err != nil {
		return nil, fmt.Errorf("%w: %s is outside the root %s", checkout.ErrBadFile, absPath, s.co.Root())
	}
	c, err := s.tools.choose(path)
	if err != nil {
		// A server that is installed but does not run is said once; a file
		// no server owns costs nothing (WRT-3).
		var ue *UnavailableError
		if errors.As(err, &ue) && len(ue.Broken) > 0 {
			if s.fleet.tell(ue.Broken[0]) {
				return nil, err
			}
		}
		return nil, nil
	}
	srv, err := s.fleet.serverFor(ctx, c)
	var backoff *BackoffError
	if errors.As(err, &backoff) {
		return nil, nil // reported when it failed; not retried on every write
	}
	if err != nil {
		return nil, err
	}
	defer srv.release()
	doc, _, err := srv.docs.syncFile(ctx, path, c.languageID)
	if err != nil || doc == nil {
		return nil, err // a deleted file was closed: nothing to report
	}
	items, err := srv.diagnosticsFor(ctx, doc)
	return s.co.RelMessages(diag.Convert(items, path, doc.text, srv.encoding)), err
}

// Diagnostics returns the errors and warnings (and information) the owning
// server reports for file. The project checkers (diagnostics "*") are
// [Supervisor.Check].
func (s *Supervisor) Diagnostics(ctx context.Context, file pathguard.Path) (*answer.FileDiagnostics, error) {
	path, err := s.fleet.checkFile(file)
	if err != nil {
		return nil, err
	}
	srv, doc, _, err := s.fleet.sync(ctx, path)
	if err != nil {
		return nil, err
	}
	defer srv.release()
	items, err := srv.diagnosticsFor(ctx, doc)
	res := &answer.FileDiagnostics{File: s.co.Rel(path), Server: srv.spec.ID}
	if err != nil {
		if !errors.Is(err, ErrDiagnosticsTimeout) {
			return nil, err
		}
		res.Incomplete, res.WaitMS = true, s.cfg.DiagnosticsWait.Milliseconds()
	}
	res.Diagnostics = s.co.RelMessages(diag.Convert(items, path, doc.text, srv.encoding))
	return res, nil
}
