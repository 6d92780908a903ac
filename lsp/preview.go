package lsp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/staged"
	"github.com/builtin-tools/builtin-tools/lsp/checkout"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Proposed is one file's proposed contents for a preview.
type Proposed struct {
	File pathguard.Path
	Text []byte
}

// Preview is what accepting proposed contents would do, per file, as the
// servers that own the files see it (PRE-1).
type Preview struct {
	Files []diag.Verdict `json:"files" jsonschema:"one entry per proposed file, in the order given"`
	// Others are the files using what the change alters, checked with
	// the proposed versions against the disk's (WRT-6).
	Others []diag.Verdict `json:"other_files,omitempty" jsonschema:"files using definitions the change alters: what the proposed versions would break or fix in them"`
	// Incomplete: a file's diagnostics did not arrive within the wait.
	Incomplete bool  `json:"incomplete,omitempty" jsonschema:"some file's diagnostics did not arrive within the wait: what is new may be missing"`
	WaitMS     int64 `json:"wait_ms,omitempty" jsonschema:"the wait for one version's diagnostics, when incomplete"`
	// after is every diagnostic the proposed version had, by file, for
	// Matches.
	after map[string][]diag.Diagnostic
}

// Matches reports whether ds, the diagnostics of file (relative to the
// root) once written, are those the preview found for its proposed
// version: the same errors and warnings by severity, code and message.
// False when the preview did not check file.
func (p *Preview) Matches(file string, ds []diag.Diagnostic) bool {
	before, ok := p.after[file]
	if !ok {
		return false
	}
	fresh, gone := diag.Diff(before, ds)
	return len(fresh) == 0 && len(gone) == 0
}

// previewItem is one proposed file on its way through a server.
type previewItem struct {
	v      *diag.Verdict
	path   string
	text   string
	base   *openDoc              // the document as on disk, nil for a new file
	raw    []protocol.Diagnostic // base's diagnostics as the server gave them
	before []diag.Diagnostic
	sent   *openDoc // the unsaved version
	after  []diag.Diagnostic
}

// Preview gives the servers that own files their proposed contents as
// unsaved versions (didOpen or didChange, no didSave), awaits each
// version's diagnostics (bounded by DiagnosticsWait, as after a write),
// then puts every document back to what is on disk — also when the
// preview fails, ctx ends, or the wait times out. Nothing is written.
//
// Each file's Verdict says what the version would introduce and what it
// would fix against the file as on disk, keyed as the Ledger keys. A file
// no server owns is NoServer with why; one whose server would not
// start is ServerFailed. Previews of one server are serialized, and
// no document sync of that server runs during one, so no other call sees
// the proposed text. When ctx ends the documents are restored and ctx's
// error is returned with what was found.
//
// users are files that use what the change alters (their own contents
// unchanged): each one a server of the proposed files owns is checked
// too, its diagnostics with the proposed versions against those with the
// disk's, into Others (at most MaxOtherFiles).
func (s *Supervisor) Preview(ctx context.Context, files []Proposed, users ...pathguard.Path) (*Preview, error) {
	if s.fleet.isClosed() {
		return nil, ErrClosed
	}
	res := &Preview{Files: make([]diag.Verdict, len(files)), after: map[string][]diag.Diagnostic{}}
	type group struct {
		c     *choice
		items []*previewItem
		users []*previewItem
	}
	groups := map[serverKey]*group{}
	var order []serverKey
	for i, f := range files {
		abs, err := s.co.Guard().Of(f.File)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", checkout.ErrBadFile, err)
		}
		path := filepath.Clean(abs)
		if _, err := s.co.Confine(path); !s.co.InRoot(path) || err != nil {
			return nil, fmt.Errorf("%w: %s is outside the root %s", checkout.ErrBadFile, abs, s.co.Root())
		}
		v := &res.Files[i]
		*v = diag.Verdict{File: s.co.Rel(path), New: []diag.Finding{}, Fixed: []diag.Finding{}}
		if len(f.Text) > langserver.MaxFileBytes {
			v.State, v.Why = diag.NoServer, fmt.Sprintf("it would be %d bytes, over the %d-byte limit for language-server files", len(f.Text), langserver.MaxFileBytes)
			continue
		}
		s.co.NoteDir(path)
		c, err := s.tools.choose(path)
		if err != nil {
			var why string
			v.State, v.Server, why = unowned(path, err)
			v.Why = s.co.RelText(why)
			continue
		}
		key := serverKey{c.spec.ID, c.root}
		if groups[key] == nil {
			groups[key] = &group{c: c}
			order = append(order, key)
		}
		groups[key].items = append(groups[key].items, &previewItem{v: v, path: path, text: string(f.Text)})
	}
	proposed := map[string]bool{}
	for _, g := range groups {
		for _, it := range g.items {
			proposed[it.path] = true
		}
	}
	var others []*previewItem
	for _, u := range users {
		abs, err := s.co.Guard().Of(u)
		if err != nil || len(others) == MaxOtherFiles {
			continue
		}
		path := filepath.Clean(abs)
		if proposed[path] || !s.co.InRoot(path) {
			continue
		}
		proposed[path] = true
		c, err := s.tools.choose(path)
		if err != nil || groups[serverKey{c.spec.ID, c.root}] == nil {
			continue
		}
		g := groups[serverKey{c.spec.ID, c.root}]
		it := &previewItem{v: &diag.Verdict{File: s.co.Rel(path), New: []diag.Finding{}, Fixed: []diag.Finding{}}, path: path}
		g.users = append(g.users, it)
		others = append(others, it)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(order))
	for i, key := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.previewOn(ctx, groups[key].c, groups[key].items, groups[key].users)
		}()
	}
	wg.Wait()
	for _, it := range others {
		if it.v.State != "" {
			res.Others = append(res.Others, *it.v)
		}
	}
	for _, key := range order {
		for _, it := range groups[key].items {
			if it.sent != nil && it.v.State == diag.Checked {
				res.after[it.v.File] = it.after
			}
			if it.v.State == diag.TimedOut {
				res.Incomplete, res.WaitMS = true, s.cfg.DiagnosticsWait.Milliseconds()
			}
		}
	}
	return res, errors.Join(errs...)
}

// previewOn previews items on c's server, holding its document sync for
// the whole preview. It returns only ctx's error; a server's failure is
// the items' verdict.
func (s *Supervisor) previewOn(ctx context.Context, c *choice, items, users []*previewItem) error {
	fail := func(state diag.State, err error) {
		for _, it := range append(slices.Clip(items), users...) {
			if it.v.State == "" {
				it.v.Server, it.v.State, it.v.Why = c.spec.ID, state, s.co.RelText(err.Error())
			}
		}
	}
	srv, err := s.fleet.serverFor(ctx, c)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fail(diag.ServerFailed, err)
		return nil
	}
	defer srv.release()
	// No other call — of this run or another sharing the server — uses it
	// while it holds the proposed text.
	if err := srv.holdAlone(ctx, s.cfg.viewBound()); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fail(diag.ServerFailed, srv.busyError("preview", true))
		return nil
	}
	defer srv.unholdAlone()
	srv.docs.syncMu.Lock()
	defer srv.docs.syncMu.Unlock()
	// Notifications go out whole even when ctx ends, so what the server
	// was sent is known and can be put back; only the waits watch ctx.
	send, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.RequestTimeout)
	defer cancel()

	// The files as on disk: what the proposal is compared with.
	for _, it := range items {
		it.v.Server = srv.spec.ID
		if _, err := s.co.Guard().Stat(it.path); errors.Is(err, fs.ErrNotExist) {
			continue // a new file: nothing to compare with
		}
		doc, _, err := srv.docs.syncFileLocked(send, it.path, c.languageID)
		if err != nil {
			it.v.State, it.v.Why = diag.ServerFailed, s.co.RelText(err.Error())
			continue
		}
		it.base = doc
	}
	for _, it := range users {
		it.v.Server = srv.spec.ID
		doc, _, err := srv.docs.syncFileLocked(send, it.path, c.languageID)
		if err != nil || doc == nil {
			it.v.State, it.v.Why = diag.ServerFailed, "it could not be opened"
			if err != nil {
				it.v.Why = s.co.RelText(err.Error())
			}
			continue
		}
		it.base, it.text = doc, doc.text
	}
	for _, it := range append(slices.Clip(items), users...) {
		if it.base == nil {
			continue
		}
		raw, err := srv.diagnosticsFor(ctx, it.base)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, ErrDiagnosticsTimeout):
			it.v.State, it.v.Why = diag.TimedOut, "the diagnostics of the file as on disk did not arrive, so nothing can be said to be new or fixed: "+s.co.RelText(err.Error())
			it.v.WaitedMS = s.cfg.DiagnosticsWait.Milliseconds()
		case err != nil:
			it.v.State, it.v.Why = diag.ServerFailed, s.co.RelText(err.Error())
		default:
			it.raw = raw
			it.before = s.co.RelMessages(diag.Convert(raw, it.path, it.base.text, srv.encoding))
		}
	}
	if srv.spec.Indexes || srv.spec.LoadedLog != nil {
		wctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
		srv.waitIndexed(wctx)
		cancel()
	}

	// From the first unsaved version on, every document is put back before
	// the sync is released, whatever happens.
	defer func() {
		restore, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.RequestTimeout)
		defer cancel()
		all := append(slices.Clip(items), users...)
		for _, it := range all {
			if it.sent != nil {
				srv.docs.restoreLocked(restore, it.path, it.base)
			}
		}
		// Every document is back to the text whose diagnostics the
		// baseline read: they are what the server will say of it again,
		// so the next wait for them (a preview's baseline) need not be.
		srv.docs.mu.Lock()
		for _, it := range all {
			if d := srv.docs.open[it.path]; d != nil && it.sent != nil && it.raw != nil && it.base != nil && d != it.base && !d.unsaved && d.text == it.base.text {
				d.known, d.knownAt = it.raw, srv.docs.changes
			}
		}
		srv.docs.mu.Unlock()
	}()
	start := time.Now()
	for _, it := range items {
		if it.v.State != "" {
			continue
		}
		doc, err := srv.docs.sendUnsaved(send, it.path, c.languageID, it.text)
		it.sent = doc
		if err != nil {
			it.v.State, it.v.Why = diag.ServerFailed, s.co.RelText(err.Error())
		}
	}
	if s.tools.hooks != nil && s.tools.hooks.previewSent != nil {
		s.tools.hooks.previewSent(srv)
	}
	timedOut := fmt.Sprintf("the diagnostics of the proposed version did not arrive within %s; the result is incomplete", s.cfg.DiagnosticsWait)
	if err := s.awaitSent(ctx, srv, items, start, srv.spec.PublishesOnce, timedOut); err != nil {
		return err
	}
	return s.previewUsers(ctx, send, srv, c, users, start)
}

// previewUsers checks, once the proposed versions are with the server,
// the files that use what they alter: each is sent again unchanged (a
// version the server must check against the proposed ones; restored with
// the rest) and its diagnostics compared with those it had with the
// disk's versions.
func (s *Supervisor) previewUsers(ctx, send context.Context, srv *server, c *choice, users []*previewItem, start time.Time) error {
	for _, it := range users {
		if it.v.State != "" || it.base == nil {
			continue
		}
		doc, err := srv.docs.sendUnsaved(send, it.path, c.languageID, it.text)
		it.sent = doc
		if err != nil {
			it.v.State, it.v.Why = diag.ServerFailed, s.co.RelText(err.Error())
		}
	}
	return s.awaitSent(ctx, srv, users, start, false,
		fmt.Sprintf("its diagnostics with the proposed versions did not arrive within %s", s.cfg.DiagnosticsWait))
}

// awaitSent awaits the diagnostics of each item's unsaved version (once:
// a server's first publish for it is the answer) and gives its verdict
// against the item's baseline: new and fixed, or timed out (what the
// server holds may be an earlier version's: none of it is reported as
// new) saying timedOut, or the server's failure. It returns only ctx's
// error.
func (s *Supervisor) awaitSent(ctx context.Context, srv *server, items []*previewItem, start time.Time, once bool, timedOut string) error {
	for _, it := range items {
		if it.v.State != "" || it.sent == nil {
			continue
		}
		it.v.Version = it.sent.version
		raw, err := srv.diagnosticsAwait(ctx, it.sent, start, once)
		it.v.WaitedMS = time.Since(start).Milliseconds()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, ErrDiagnosticsTimeout):
			it.v.State, it.v.Why = diag.TimedOut, timedOut
			continue
		case err != nil:
			it.v.State, it.v.Why = diag.ServerFailed, s.co.RelText(err.Error())
			continue
		}
		it.after = s.co.RelMessages(diag.Convert(raw, it.path, it.text, srv.encoding))
		fresh, gone := diag.Diff(it.before, it.after)
		it.v.State = diag.Checked
		it.v.New, it.v.Fixed = diag.Findings(fresh), diag.Findings(gone)
	}
	return nil
}

// sendUnsaved gives the server text for path as an unsaved version:
// didOpen when it does not have the file open, else didChange with the
// next version, never didSave. The caller holds syncMu and restores the
// document (restoreLocked) afterwards.
func (d *documents) sendUnsaved(ctx context.Context, path, languageID, text string) (*openDoc, error) {
	d.mu.Lock()
	doc := d.open[path]
	seq := d.diagSeq
	d.mu.Unlock()
	next := &openDoc{path: path, uri: protocol.FileURI(path), languageID: languageID, version: 1, text: text, syncSeq: seq, unsaved: true}
	var err error
	if doc == nil {
		err = d.send(ctx, "textDocument/didOpen", protocol.DidOpenParams{TextDocument: protocol.TextDocumentItem{
			URI: next.uri, LanguageID: languageID, Version: 1, Text: text}})
	} else {
		next.languageID, next.version = doc.languageID, doc.version+1
		p := protocol.DidChangeParams{TextDocument: protocol.VersionedTextDocumentIdentifier{URI: next.uri, Version: &next.version}}
		p.ContentChanges = append(p.ContentChanges, struct {
			Text string `json:"text"`
		}{text})
		err = d.send(ctx, "textDocument/didChange", p)
	}
	// Recorded even on an error: a notification that may have gone out is
	// put back too.
	d.mu.Lock()
	d.setDocLocked(next)
	d.mu.Unlock()
	return next, err
}

// restoreLocked puts path's document back to what is on disk after a
// preview: didChange with the disk's text (didClose when the file is not
// there, or cannot be read). base is the document as the server had it
// before, nil for a file it did not have. The caller holds syncMu.
func (d *documents) restoreLocked(ctx context.Context, path string, base *openDoc) error {
	d.mu.Lock()
	doc := d.open[path]
	seq := d.diagSeq
	d.mu.Unlock()
	if doc == nil || !doc.unsaved {
		return nil
	}
	if text, info, err := checkout.ReadText(d.guard, path); base != nil && err == nil && text == base.text {
		// The disk still holds what the server had: only the text goes
		// back. No didSave, which tells a server the file changed on disk
		// and costs gopls a reload of the package.
		next := &openDoc{path: path, uri: doc.uri, languageID: doc.languageID, version: doc.version + 1,
			text: text, modTime: info.ModTime(), size: info.Size(), syncSeq: seq}
		p := protocol.DidChangeParams{TextDocument: protocol.VersionedTextDocumentIdentifier{URI: next.uri, Version: &next.version}}
		p.ContentChanges = append(p.ContentChanges, struct {
			Text string `json:"text"`
		}{text})
		err := d.send(ctx, "textDocument/didChange", p)
		d.mu.Lock()
		d.setDocLocked(next)
		d.mu.Unlock()
		return err
	}
	got, _, err := d.syncFileLocked(ctx, path, doc.languageID)
	if err != nil {
		d.mu.Lock()
		still := d.open[path] == doc
		d.mu.Unlock()
		if still {
			return errors.Join(err, d.closeDocLocked(ctx, doc))
		}
		return err
	}
	if got == doc {
		// The disk holds the proposed text: the version stands, as saved.
		d.mu.Lock()
		doc.unsaved = false
		d.mu.Unlock()
	}
	return nil
}

// unsavedDocs counts the documents a live server holds in a preview's
// unsaved version.
func (fl *fleet) unsavedDocs() int {
	n := 0
	for _, srv := range fl.running() {
		srv.docs.mu.Lock()
		for _, d := range srv.docs.open {
			if d.unsaved {
				n++
			}
		}
		srv.docs.mu.Unlock()
	}
	return n
}

// Checker runs the contents a tool would write past the language servers
// and writes nothing (PRE-1): the lsp family provides it to other
// families' tools as a service, with the preview's text for an agent.
// Each file's Path is absolute, inside the run's root.
type Checker interface {
	CheckFiles(ctx context.Context, files []staged.File) (*Preview, string, error)
}
