package lsp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/lsp/checkout"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// documents keeps a server's copy of the files it is sent in step with
// the disk (didOpen, then didChange with the full text, didClose), and
// holds what the server published about them. The notifications go out
// through send, the server's notify.
type documents struct {
	guard *pathguard.Guard // every file read for the server goes through it
	send  func(ctx context.Context, method string, params any) error

	syncMu sync.Mutex // orders document notifications with their versions

	mu      sync.Mutex
	open    map[string]*openDoc   // by absolute path
	diags   map[string]*diagState // by URI
	diagSeq uint64
	// changes counts the document notifications sent (didOpen,
	// didChange, didClose, watched files: server.notify): diagnostics
	// known for a document hold while it is unchanged (openDoc.known).
	changes uint64
	// changedAt is when the last of them was sent.
	changedAt time.Time
	// sent holds the text of the last versions sent, by path
	// (setDocLocked).
	sent map[string][]sentText
}

// doc is the server's copy of path, nil when it has none open.
func (d *documents) doc(path string) *openDoc {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.open[path]
}

// count is how many documents the server has open.
func (d *documents) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.open)
}

// syncFile makes the server's copy of path match the disk: didOpen on first
// touch, didChange with the full text and the next version when it
// changed. It returns the document and whether a notification went out.
func (d *documents) syncFile(ctx context.Context, path, languageID string) (*openDoc, bool, error) {
	d.syncMu.Lock()
	defer d.syncMu.Unlock()
	return d.syncFileLocked(ctx, path, languageID)
}

// syncFileLocked is syncFile for a caller holding syncMu (a preview).
func (d *documents) syncFileLocked(ctx context.Context, path, languageID string) (*openDoc, bool, error) {
	d.mu.Lock()
	doc := d.open[path]
	d.mu.Unlock()

	info, err := d.guard.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && doc != nil {
			return nil, false, d.closeDocLocked(ctx, doc)
		}
		return nil, false, err
	}
	if doc != nil && info.ModTime().Equal(doc.modTime) && info.Size() == doc.size {
		return doc, false, nil
	}
	text, info, err := checkout.ReadText(d.guard, path)
	if err != nil {
		return nil, false, err
	}
	if doc != nil && text == doc.text {
		d.mu.Lock()
		doc.modTime, doc.size = info.ModTime(), info.Size()
		d.mu.Unlock()
		return doc, false, nil
	}

	d.mu.Lock()
	seq := d.diagSeq
	d.mu.Unlock()
	next := &openDoc{path: path, uri: protocol.FileURI(path), languageID: languageID, version: 1,
		text: text, modTime: info.ModTime(), size: info.Size(), syncSeq: seq}
	if doc == nil {
		err = d.send(ctx, "textDocument/didOpen", protocol.DidOpenParams{TextDocument: protocol.TextDocumentItem{
			URI: next.uri, LanguageID: languageID, Version: 1, Text: text}})
	} else {
		next.languageID = doc.languageID
		next.version = doc.version + 1
		p := protocol.DidChangeParams{TextDocument: protocol.VersionedTextDocumentIdentifier{URI: next.uri, Version: &next.version}}
		p.ContentChanges = append(p.ContentChanges, struct {
			Text string `json:"text"`
		}{text})
		err = d.send(ctx, "textDocument/didChange", p)
	}
	if err != nil {
		return nil, false, err
	}
	if err := d.send(ctx, "textDocument/didSave", protocol.DidSaveParams{TextDocument: protocol.TextDocumentIdentifier{URI: next.uri}}); err != nil {
		return nil, false, err
	}
	d.mu.Lock()
	d.setDocLocked(next)
	d.mu.Unlock()
	return next, true, nil
}

func (d *documents) closeDocLocked(ctx context.Context, doc *openDoc) error {
	d.mu.Lock()
	delete(d.open, doc.path)
	delete(d.sent, doc.path)
	delete(d.diags, doc.uri)
	d.mu.Unlock()
	return d.send(ctx, "textDocument/didClose", protocol.DidCloseParams{TextDocument: protocol.TextDocumentIdentifier{URI: doc.uri}})
}

// resyncOpen re-syncs every open document that changed on disk since it
// was sent (by another tool, or the user), so no answer is computed on
// stale text.
func (d *documents) resyncOpen(ctx context.Context) error {
	d.mu.Lock()
	docs := make([]*openDoc, 0, len(d.open))
	for _, doc := range d.open {
		docs = append(docs, doc)
	}
	d.mu.Unlock()
	for _, doc := range docs {
		info, err := d.guard.Stat(doc.path)
		if err == nil && info.ModTime().Equal(doc.modTime) && info.Size() == doc.size {
			continue
		}
		if _, _, err := d.syncFile(ctx, doc.path, doc.languageID); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// notifyWatched tells the server about files changed on disk that it may
// not have open (after a rename touched them).
func (d *documents) notifyWatched(ctx context.Context, events []protocol.FileEvent) error {
	if len(events) == 0 {
		return nil
	}
	return d.send(ctx, "workspace/didChangeWatchedFiles", protocol.DidChangeWatchedFilesParams{Changes: events})
}

// diagnosticsFor returns the server's diagnostics for doc's version: pulled
// when the server offers textDocument/diagnostic or its row a pull of its
// own (langserver.Spec.Pull), otherwise the published ones: the first publish
// for this version from a server that publishes once (PublishesOnce), else
// once a publish for it arrived and no further publish came for
// DiagnosticsSettle. The wait is bounded by DiagnosticsWait; on timeout
// the last known diagnostics are returned with ErrDiagnosticsTimeout.
func (s *server) diagnosticsFor(ctx context.Context, doc *openDoc) ([]protocol.Diagnostic, error) {
	return s.diagnosticsForSince(ctx, doc, time.Now())
}

func (s *server) diagnosticsForSince(ctx context.Context, doc *openDoc, start time.Time) ([]protocol.Diagnostic, error) {
	return s.diagnosticsAwait(ctx, doc, start, s.spec.PublishesOnce)
}

// hookDoc is doc as its row's hooks (langserver.Spec.Pull, Confirm) see it.
func (s *server) hookDoc(doc *openDoc) langserver.Doc {
	return langserver.Doc{URI: doc.uri, Text: doc.text, Encoding: s.encoding}
}

// diagnosticsAwait is diagnosticsForSince; once false waits for the
// publishes to settle even on a server that publishes once per version
// (a file the server re-checks because another changed may be published
// more than once under load).
func (s *server) diagnosticsAwait(ctx context.Context, doc *openDoc, start time.Time, once bool) ([]protocol.Diagnostic, error) {
	s.docs.mu.Lock()
	if doc.known != nil && doc.knownAt == s.docs.changes {
		items := doc.known
		s.docs.mu.Unlock()
		return items, nil
	}
	s.docs.mu.Unlock()
	if s.spec.Pull != nil {
		items, err := s.spec.Pull(ctx, s.call, s.hookDoc(doc))
		var se *ServerError
		if err == nil || !(errors.Is(err, langserver.ErrRefused) || errors.As(err, &se) && se.Kind == ErrServerFailed) {
			return items, err
		}
		// The server refused it (an older version): wait for a publish.
	}
	s.mu.Lock()
	pull := s.pull
	s.mu.Unlock()
	if pull {
		var rep protocol.DocumentDiagnosticReport
		err := s.call(ctx, "textDocument/diagnostic", protocol.DocumentDiagnosticParams{TextDocument: protocol.TextDocumentIdentifier{URI: doc.uri}}, &rep)
		if err == nil && rep.Kind == "full" {
			return rep.Items, nil
		}
		var se *ServerError
		if err != nil && !(errors.As(err, &se) && se.Kind == ErrServerFailed) {
			return nil, err
		}
		// The server refused the pull: fall back to what it publishes.
	}

	deadline := time.NewTimer(s.cfg.DiagnosticsWait - time.Since(start))
	defer deadline.Stop()
	var settle, grace *time.Timer
	defer func() {
		if settle != nil {
			settle.Stop()
		}
		if grace != nil {
			grace.Stop()
		}
	}()
	var graceC <-chan time.Time
	confirmed := false // asked the server to confirm a cleared publish
	for {
		// The signal is read before what it signals: a publish after
		// this closes ch.
		s.mu.Lock()
		ch := s.changed
		pull := s.pull
		s.mu.Unlock()
		s.docs.mu.Lock()
		st := s.docs.diags[doc.uri]
		// later: another file changed after doc's version went out (a
		// rename's or a fix's other files). A server that publishes once
		// per version may have published doc's before it read that change,
		// and publish it again after: the publish is waited on to settle,
		// counted from that change.
		later, changedAt := s.docs.changedSince(doc)
		// same: the last publish is for an earlier version sent with this
		// very text. clangd, given back the text of a version it built
		// (a preview's, then written), takes the inputs for unchanged
		// when the restore between them was never processed, and
		// publishes nothing: what it said of that text is the answer,
		// unless a publish for this version comes within the settle.
		got, same := false, false
		if st != nil {
			if st.version != nil {
				same = *st.version < doc.version && s.docs.sameText(doc, *st.version)
				got = *st.version >= doc.version || same && st.seq > doc.syncSeq
			} else {
				got = st.seq > doc.syncSeq
			}
		}
		s.docs.mu.Unlock()
		if pull {
			// Pull diagnostics were registered while waiting.
			return s.diagnosticsAwait(ctx, doc, start, once)
		}
		if same && !got && grace == nil {
			grace = time.NewTimer(s.cfg.DiagnosticsSettle)
			graceC = grace.C
		}
		var settleC <-chan time.Time
		if got && once && st.version != nil && !later {
			if !st.cleared {
				return st.items, nil
			}
			if !confirmed && s.spec.Confirm != nil {
				// An empty first publish that may be no answer: the server
				// says when its diagnosis of what it holds is out, and its
				// last publish is then the answer; else the publishes are
				// awaited to settle.
				confirmed = true
				if s.spec.Confirm(ctx, s.call, s.hookDoc(doc)) == nil {
					s.docs.mu.Lock()
					last := s.docs.diags[doc.uri]
					s.docs.mu.Unlock()
					if last != nil && last.version != nil && *last.version >= doc.version {
						return last.items, nil
					}
				}
			}
		}
		if got {
			from := st.at
			if later && changedAt.After(from) {
				from = changedAt
			}
			quiet := time.Since(from)
			if quiet >= s.cfg.DiagnosticsSettle {
				return st.items, nil
			}
			if settle == nil {
				settle = time.NewTimer(s.cfg.DiagnosticsSettle - quiet)
			} else {
				settle.Reset(s.cfg.DiagnosticsSettle - quiet)
			}
			settleC = settle.C
		}
		select {
		case <-ch:
		case <-settleC:
		case <-graceC:
			s.docs.mu.Lock()
			st := s.docs.diags[doc.uri]
			ok := st != nil && st.version != nil && (*st.version >= doc.version || s.docs.sameText(doc, *st.version))
			s.docs.mu.Unlock()
			if ok {
				return st.items, nil
			}
		case <-deadline.C:
			var items []protocol.Diagnostic
			if st != nil {
				items = st.items
			}
			if err := s.exitError("textDocument/publishDiagnostics"); err != nil {
				return items, err
			}
			return items, fmt.Errorf("%w: %s published no diagnostics for %s version %d within %s",
				ErrDiagnosticsTimeout, s.spec.ID, s.relText(doc.path), doc.version, s.cfg.DiagnosticsWait)
		case <-s.exited:
			return nil, s.exitError("textDocument/publishDiagnostics")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// sentVersions bounds the versions of a document whose text is kept for
// sameText.
const sentVersions = 4

// setDocLocked makes doc the server's copy of its file and keeps its
// text by version. d.mu is held.
func (d *documents) setDocLocked(doc *openDoc) {
	d.open[doc.path] = doc
	h := append(d.sent[doc.path], sentText{doc.version, doc.text, d.changes})
	if len(h) > sentVersions {
		h = h[len(h)-sentVersions:]
	}
	d.sent[doc.path] = h
}

// sameText reports whether version of doc's file was sent with doc's
// text and nothing but that file changed since: a server that answers
// doc with a result it kept for that version (clangd reuses the syntax
// tree it built for a preview's version when the file is written with
// that text) is speaking of the same inputs. A file sent again unchanged
// while another file changed (CheckOthers) is not. d.mu is held.
func (d *documents) sameText(doc *openDoc, version int) bool {
	var old, cur *sentText
	for i := range d.sent[doc.path] {
		switch v := &d.sent[doc.path][i]; v.version {
		case version:
			old = v
		case doc.version:
			cur = v
		}
	}
	return old != nil && cur != nil && old.text == doc.text &&
		cur.changes-old.changes == uint64(doc.version-version)
}

// changedSince reports whether a document notification went to the
// server after doc's own version, and when the last one did. d.mu is held.
func (d *documents) changedSince(doc *openDoc) (bool, time.Time) {
	for _, v := range d.sent[doc.path] {
		if v.version == doc.version {
			return d.changes > v.changes, d.changedAt
		}
	}
	return false, d.changedAt
}

// storedDiagnostics returns the last diagnostics the server gave for uri.
func (d *documents) storedDiagnostics(uri string) []protocol.Diagnostic {
	d.mu.Lock()
	defer d.mu.Unlock()
	if st := d.diags[uri]; st != nil {
		return st.items
	}
	return nil
}

// settle lets a server that indexes catch up after doc was (re)sent: it
// waits for the document's diagnostics — by then the server has loaded the
// file and its project, and announced any indexing that follows — and then
// for that indexing to end. Both waits are bounded; failures are left to
// the query that follows.
func (s *server) settle(ctx context.Context, doc *openDoc, changed bool) {
	if !s.spec.Indexes && s.spec.LoadedLog == nil {
		return
	}
	if changed {
		_, _ = s.diagnosticsFor(ctx, doc)
	}
	wctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	s.waitIndexed(wctx)
	cancel()
}
