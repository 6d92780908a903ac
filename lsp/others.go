package lsp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/checkout"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Dependents names the other files that use what a change of one file
// altered — definitions removed, renamed or given another signature — so
// a write can check them too (WRT-6). The code graph provides it to the
// lsp family as a service. rel is relative to the root; so are the files.
type Dependents interface {
	Dependents(ctx context.Context, rel string, before, after []byte, max int) (changed, files []string, more int, err error)
}

// MaxOtherFiles bounds the other files one write has checked.
const MaxOtherFiles = 20

// CheckOthers checks the files others (which use what the write of file
// changed) as the server sees them with file as written and as it was
// (before): it opens them, gives the server file's old text as an unsaved
// version, awaits the others' diagnostics, puts file back to the disk's
// text and awaits theirs again. What the second set has and the first
// lacks the write broke; the reverse it fixed. Files a server reports
// by itself in the meantime (gopls publishes the packages that import a
// changed one, whether open or not) are added with what they newly have.
// The whole check holds the server's document sync, as a preview does, and
// puts every document back on any exit; its waits are bounded by one
// DiagnosticsWait. Others owned by another server are left out.
func (s *Supervisor) CheckOthers(ctx context.Context, file pathguard.Path, before []byte, others []pathguard.Path) (*answer.OthersCheck, error) {
	out := &answer.OthersCheck{Files: []diag.Verdict{}, Diagnostics: map[string][]diag.Diagnostic{}}
	abs, err := s.co.Guard().Of(file)
	if err != nil {
		return out, fmt.Errorf("%w: %v", checkout.ErrBadFile, err)
	}
	path := filepath.Clean(abs)
	c, err := s.tools.choose(path)
	if err != nil {
		return out, nil // no server checks the written file: nothing to compare
	}
	type other struct {
		path           string
		v              diag.Verdict
		base           *openDoc
		before, after_ []protocol.Diagnostic
		got            bool
	}
	var oth []*other
	seen := map[string]bool{path: true}
	for _, o := range others {
		a, err := s.co.Guard().Of(o)
		if err != nil {
			continue
		}
		a = filepath.Clean(a)
		if seen[a] || !s.co.InRoot(a) || len(oth) == MaxOtherFiles {
			continue
		}
		seen[a] = true
		if oc, err := s.tools.choose(a); err != nil || oc.spec.ID != c.spec.ID || oc.root != c.root {
			continue
		}
		oth = append(oth, &other{path: a, v: diag.Verdict{File: s.co.Rel(a), Server: c.spec.ID, New: []diag.Finding{}, Fixed: []diag.Finding{}}})
	}
	srv, err := s.fleet.serverFor(ctx, c)
	if err != nil {
		return out, nil // the written file's verdict says why
	}
	defer srv.release()
	// The old text is given as an unsaved version: no other call, of this
	// run or another sharing the server, uses it meanwhile (as a preview).
	if err := srv.holdAlone(ctx, s.cfg.viewBound()); err != nil {
		return out, nil
	}
	defer srv.unholdAlone()
	srv.docs.syncMu.Lock()
	defer srv.docs.syncMu.Unlock()
	send, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.RequestTimeout)
	defer cancel()

	start := time.Now()
	base, _, err := srv.docs.syncFileLocked(send, path, c.languageID)
	if err != nil || base == nil {
		return out, nil
	}
	for _, o := range oth {
		if o.base, _, err = srv.docs.syncFileLocked(send, o.path, c.languageID); err != nil {
			o.v.State, o.v.Why = diag.ServerFailed, s.co.RelText(err.Error())
		}
	}
	// From the old text's version on, every document goes back to the
	// disk's text before the sync is released.
	restored := false
	defer func() {
		if restored {
			return
		}
		restore, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.RequestTimeout)
		defer cancel()
		srv.docs.restoreLocked(restore, path, base)
		for _, o := range oth {
			srv.docs.restoreLocked(restore, o.path, o.base)
		}
	}()
	if _, err := srv.docs.sendUnsaved(send, path, c.languageID, string(before)); err != nil {
		return out, nil
	}
	// await sends each other's text again (a version the server must
	// check with the written file as it now has it) and reads its
	// diagnostics.
	await := func(get func(*other) *[]protocol.Diagnostic, touch func(*other) (*openDoc, error)) error {
		var docs []*openDoc
		for _, o := range oth {
			var d *openDoc
			if o.v.State == "" {
				if d, err = touch(o); err != nil {
					o.v.State, o.v.Why = diag.ServerFailed, s.co.RelText(err.Error())
				}
			}
			docs = append(docs, d)
		}
		for i, o := range oth {
			if o.v.State != "" || docs[i] == nil {
				continue
			}
			raw, err := srv.diagnosticsAwait(ctx, docs[i], start, false)
			switch {
			case ctx.Err() != nil:
				return ctx.Err()
			case errors.Is(err, ErrDiagnosticsTimeout):
				o.v.State = diag.TimedOut
				o.v.Why = fmt.Sprintf("its diagnostics did not arrive within %s of the write's check", s.cfg.DiagnosticsWait)
			case err != nil:
				o.v.State, o.v.Why = diag.ServerFailed, s.co.RelText(err.Error())
			default:
				*get(o) = raw
				o.v.Version = docs[i].version
			}
		}
		return nil
	}
	err = await(func(o *other) *[]protocol.Diagnostic { return &o.before },
		func(o *other) (*openDoc, error) {
			return srv.docs.sendUnsaved(send, o.path, c.languageID, o.base.text)
		})
	if err != nil {
		return out, err
	}
	// What the server publishes on its own from here on follows the
	// written file's return to its new text.
	srv.docs.mu.Lock()
	mark := srv.docs.diagSeq
	stored := map[string][]protocol.Diagnostic{}
	for uri, st := range srv.docs.diags {
		stored[uri] = st.items
	}
	srv.docs.mu.Unlock()
	restored = true
	if err := srv.docs.restoreLocked(send, path, base); err != nil {
		return out, nil
	}
	err = await(func(o *other) *[]protocol.Diagnostic { o.got = true; return &o.after_ },
		func(o *other) (*openDoc, error) {
			if err := srv.docs.restoreLocked(send, o.path, o.base); err != nil {
				return nil, err
			}
			return srv.docs.doc(o.path), nil
		})
	// Anything still unsaved (an error or ctx's end above) goes back.
	for _, o := range oth {
		srv.docs.restoreLocked(send, o.path, o.base)
	}
	if err != nil {
		return out, err
	}
	for _, o := range oth {
		if o.v.State == "" && o.got {
			o.v.State = diag.Checked
			was := s.co.RelMessages(diag.Convert(o.before, o.path, o.base.text, srv.encoding))
			now := s.co.RelMessages(diag.Convert(o.after_, o.path, o.base.text, srv.encoding))
			fresh, gone := diag.Diff(was, now)
			o.v.New, o.v.Fixed = diag.Findings(fresh), diag.Findings(gone)
			out.Diagnostics[o.path] = now
			out.New, out.Fixed = append(out.New, fresh...), append(out.Fixed, gone...)
		}
		o.v.WaitedMS = time.Since(start).Milliseconds()
		out.Files = append(out.Files, o.v)
	}
	// Files the server published by itself, not asked for: what each
	// newly has (what it lost may be its own earlier publish catching up,
	// so nothing is said to be fixed).
	srv.docs.mu.Lock()
	var extra []string
	for uri, st := range srv.docs.diags {
		if st.seq > mark {
			extra = append(extra, uri)
		}
	}
	items := map[string][]protocol.Diagnostic{}
	for _, uri := range extra {
		items[uri] = srv.docs.diags[uri].items
	}
	srv.docs.mu.Unlock()
	slices.Sort(extra)
	for _, uri := range extra {
		p, ok := protocol.URIPath(uri)
		if !ok {
			continue
		}
		if p = filepath.Clean(p); seen[p] || !s.co.InRoot(p) {
			continue
		}
		text, _, err := checkout.ReadText(s.co.Guard(), p)
		if err != nil {
			continue
		}
		was := s.co.RelMessages(diag.Convert(stored[uri], p, text, srv.encoding))
		now := s.co.RelMessages(diag.Convert(items[uri], p, text, srv.encoding))
		fresh, _ := diag.Diff(was, now)
		if len(fresh) == 0 {
			continue
		}
		out.Files = append(out.Files, diag.Verdict{File: s.co.Rel(p), Server: c.spec.ID, State: diag.Checked,
			New: diag.Findings(fresh), Fixed: []diag.Finding{}, WaitedMS: time.Since(start).Milliseconds()})
		out.Diagnostics[p] = now
		out.New = append(out.New, fresh...)
	}
	return out, nil
}
