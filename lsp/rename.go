package lsp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/builtin-tools/builtin-tools/internal/staged"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/checkout"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/lsp/wsedit"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Rename renames the symbol at line/symbol of file to newName across the
// workspace: it asks the server for a WorkspaceEdit and applies it (both
// `changes` and `documentChanges`, file creates, renames and deletes
// included) to every file, all or nothing, then re-syncs the server.
func (s *Supervisor) Rename(ctx context.Context, file pathguard.Path, p protocol.Place, newName string, force bool) (*answer.RenameResult, error) {
	r, plan, err := s.planRename(ctx, file, p, newName)
	if err != nil {
		return nil, err
	}
	defer r.srv.release()
	notes, err := wsedit.Commit(ctx, s.co, plan, force)
	if err != nil {
		return nil, fmt.Errorf("rename not applied: %w", err)
	}
	res := &answer.RenameResult{Symbol: r.symbol, Occurrence: r.shownOccurrence(), NewName: newName, Server: r.srv.spec.ID,
		Notes: append(slices.Clone(plan.Notes), notes...)}
	res.Files, res.Edits = planFiles(s.co, plan)
	// The files are written: a server that could not take them back is a
	// note on what happened, not a failure of it.
	if err := resyncAfterEdit(ctx, r.srv, plan); err != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("re-syncing %s after the write failed (use lsp reload): %v", r.srv.spec.ID, err))
	}
	return res, nil
}

// planRename asks the server for the rename's WorkspaceEdit and works it
// out in memory. The caller must call r.srv.release() when err is nil.
func (s *Supervisor) planRename(ctx context.Context, file pathguard.Path, p protocol.Place, newName string) (*request, *wsedit.Plan, error) {
	if strings.TrimSpace(newName) == "" {
		return nil, nil, fmt.Errorf("%w: new_name is required", ErrBadArgument)
	}
	r, err := s.fleet.at(ctx, file, p)
	if err != nil {
		return nil, nil, err
	}
	if note := r.srv.stillLoading(); note != "" {
		// A rename from a partial view of the workspace misses files.
		r.srv.release()
		return nil, nil, fmt.Errorf("%w: %s; nothing was renamed", ErrServerTimeout, strings.Replace(note, "the answer may be incomplete; ask again", "a rename now could miss files: try again", 1))
	}
	var we *protocol.WorkspaceEdit
	params := protocol.RenameParams{TextDocumentPositionParams: r.params(), NewName: newName}
	if err := r.srv.call(ctx, "textDocument/rename", params, &we); err != nil {
		r.srv.release()
		return nil, nil, err
	}
	if we == nil || (len(we.Changes) == 0 && len(we.DocumentChanges) == 0) {
		r.srv.release()
		return nil, nil, fmt.Errorf("%s found nothing to rename for %s; point at the symbol's name", r.srv.spec.ID, r.where())
	}
	plan, err := planEdit(s.co, we, r.srv)
	if err != nil {
		r.srv.release()
		return nil, nil, fmt.Errorf("rename not applied, no file changed: %w", err)
	}
	return r, plan, nil
}

// planFiles lists what a plan changes, sorted by path, and its edits.
func planFiles(co *checkout.Checkout, plan *wsedit.Plan) ([]answer.FileEdit, int) {
	files, edits := []answer.FileEdit{}, 0
	for _, f := range plan.Files {
		if !f.Touched {
			continue
		}
		fe := answer.FileEdit{Path: co.Rel(f.Path), Edits: f.Edits}
		switch {
		case !f.Exists && f.ExistedOnDisk:
			fe.Deleted = true
		case f.From != "":
			fe.RenamedFrom = co.Rel(f.From)
		case f.Exists && !f.ExistedOnDisk:
			fe.Created = true
		}
		if !f.Exists && !f.ExistedOnDisk {
			continue // created and removed again, or a rename's source
		}
		if f.MovedAway {
			continue // reported at its new path
		}
		files = append(files, fe)
		edits += f.Edits
	}
	slices.SortFunc(files, func(a, b answer.FileEdit) int { return strings.Compare(a.Path, b.Path) })
	return files, edits
}

// PlanRename works out the rename of the symbol at the place to newName
// and writes nothing: the files it changes, their text before and after.
// A rename that also creates, moves or deletes files is refused here
// (staged edits change file contents only).
func (s *Supervisor) PlanRename(ctx context.Context, file pathguard.Path, p protocol.Place, newName string) (*answer.StagedEdit, error) {
	r, plan, err := s.planRename(ctx, file, p, newName)
	if err != nil {
		return nil, err
	}
	defer r.srv.release()
	return stagedEdit(s.co, r.srv, plan, "this rename")
}

// stagedEdit turns a plan of text edits into a StagedEdit; what names the
// edit in a refusal.
func stagedEdit(co *checkout.Checkout, srv *server, plan *wsedit.Plan, what string) (*answer.StagedEdit, error) {
	out := &answer.StagedEdit{Server: srv.spec.ID}
	var moves []string
	for _, path := range plan.Order {
		f := plan.Files[path]
		if !f.Touched {
			continue
		}
		if !f.Exists || !f.ExistedOnDisk || f.From != "" {
			moves = append(moves, co.Rel(f.Path))
			continue
		}
		if f.Content == f.DiskText {
			continue // edits that change nothing
		}
		lines := append([]int{}, slices.Compact(slices.Sorted(slices.Values(f.Lines)))...)
		out.Files = append(out.Files, staged.File{File: co.Rel(f.Path), Path: f.Real, Before: []byte(f.DiskText), After: []byte(f.Content),
			Edits: f.Edits, Lines: lines})
		out.Edits += f.Edits
	}
	if len(moves) > 0 {
		slices.Sort(moves)
		return nil, fmt.Errorf("%w: %s also creates, moves or deletes files (%s), which a staged edit cannot hold; nothing was staged: call lsp_rename without preview to apply it directly",
			ErrBadArgument, what, strings.Join(moves, ", "))
	}
	slices.SortFunc(out.Files, func(a, b staged.File) int { return strings.Compare(a.File, b.File) })
	return out, nil
}

// planEdit works out we for srv in memory (see wsedit.Prepare).
func planEdit(co *checkout.Checkout, we *protocol.WorkspaceEdit, srv *server) (*wsedit.Plan, error) {
	enc, version := protocol.UTF16, func(string) (int, bool) { return 0, false }
	if srv != nil {
		enc = srv.encoding
		version = func(path string) (int, bool) {
			if doc := srv.docs.doc(path); doc != nil {
				return doc.version, true
			}
			return 0, false
		}
	}
	return wsedit.Prepare(we, co, enc, version, langserver.MaxFileBytes)
}

// resyncAfterEdit tells the server about every file the plan changed: open
// ones through didChange/didClose, the rest as watched-file events.
func resyncAfterEdit(ctx context.Context, srv *server, p *wsedit.Plan) error {
	var events []protocol.FileEvent
	for _, path := range p.Order {
		f := p.Files[path]
		if !f.Touched {
			continue
		}
		doc := srv.docs.doc(path)
		if doc != nil {
			if _, _, err := srv.docs.syncFile(ctx, path, doc.languageID); err != nil {
				return err
			}
		}
		typ := protocol.FileChanged
		switch {
		case !f.Exists:
			typ = protocol.FileDeleted
		case !f.ExistedOnDisk:
			typ = protocol.FileCreated
		}
		events = append(events, protocol.FileEvent{URI: protocol.FileURI(path), Type: typ})
	}
	return srv.docs.notifyWatched(ctx, events)
}
