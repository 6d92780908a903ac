package lsp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/builtin-tools/builtin-tools/internal/atomicfile"
	"github.com/builtin-tools/builtin-tools/internal/staged"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// RenameResult reports what lsp_rename changed.
type RenameResult struct {
	Symbol     string     `json:"symbol"`
	Occurrence int        `json:"occurrence,omitempty" jsonschema:"which occurrence of symbol on the line, when not the first"`
	NewName    string     `json:"new_name"`
	Server     string     `json:"server"`
	Files      []FileEdit `json:"files" jsonschema:"the files changed, sorted by path"`
	Edits      int        `json:"edits" jsonschema:"text edits over all files"`
	// Notes say what the writes could not keep (see atomicfile.Report).
	Notes []string `json:"notes,omitempty" jsonschema:"what the writes could not keep (owner, links ...)"`
}

// FileEdit is one file's share of a rename.
type FileEdit struct {
	Path        string `json:"path" jsonschema:"relative to the root"`
	Edits       int    `json:"edits"`
	RenamedFrom string `json:"renamed_from,omitempty" jsonschema:"the path it had before, when moved"`
	Created     bool   `json:"created,omitempty"`
	Deleted     bool   `json:"deleted,omitempty"`
}

// What says what was done to the file: "2 edits, renamed from old.go".
func (f FileEdit) What() string {
	var what []string
	if f.Edits > 0 {
		what = append(what, textcut.Count(f.Edits, "edit", "edits"))
	}
	if f.RenamedFrom != "" {
		what = append(what, "renamed from "+f.RenamedFrom)
	}
	if f.Created {
		what = append(what, "created")
	}
	if f.Deleted {
		what = append(what, "deleted")
	}
	return strings.Join(what, ", ")
}

// Rename renames the symbol at line/symbol of file to newName across the
// workspace: it asks the server for a WorkspaceEdit and applies it (both
// `changes` and `documentChanges`, file creates, renames and deletes
// included) to every file, all or nothing, then re-syncs the server.
func (s *Supervisor) Rename(ctx context.Context, file pathguard.Path, p protocol.Place, newName string, force bool) (*RenameResult, error) {
	r, plan, err := s.planRename(ctx, file, p, newName)
	if err != nil {
		return nil, err
	}
	defer r.srv.release()
	notes, err := commit(ctx, editCheckout{s}, plan, force)
	if err != nil {
		return nil, fmt.Errorf("rename not applied: %w", err)
	}
	res := &RenameResult{Symbol: r.symbol, Occurrence: r.shownOccurrence(), NewName: newName, Server: r.srv.spec.ID,
		Notes: append(slices.Clone(plan.notes), notes...)}
	res.Files, res.Edits = s.planFiles(plan)
	// The files are written: a server that could not take them back is a
	// note on what happened, not a failure of it.
	if err := s.resyncAfterEdit(ctx, r.srv, plan); err != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("re-syncing %s after the write failed (use lsp reload): %v", r.srv.spec.ID, err))
	}
	return res, nil
}

// planRename asks the server for the rename's WorkspaceEdit and works it
// out in memory. The caller must call r.srv.release() when err is nil.
func (s *Supervisor) planRename(ctx context.Context, file pathguard.Path, p protocol.Place, newName string) (*request, *editPlan, error) {
	if strings.TrimSpace(newName) == "" {
		return nil, nil, fmt.Errorf("%w: new_name is required", ErrBadArgument)
	}
	r, err := s.at(ctx, file, p)
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
	plan, err := s.planEdit(we, r.srv)
	if err != nil {
		r.srv.release()
		return nil, nil, fmt.Errorf("rename not applied, no file changed: %w", err)
	}
	return r, plan, nil
}

// planFiles lists what a plan changes, sorted by path, and its edits.
func (s *Supervisor) planFiles(plan *editPlan) ([]FileEdit, int) {
	files, edits := []FileEdit{}, 0
	for _, f := range plan.files {
		if !f.touched {
			continue
		}
		fe := FileEdit{Path: s.rel(f.path), Edits: f.edits}
		switch {
		case !f.exists && f.existedOnDisk:
			fe.Deleted = true
		case f.from != "":
			fe.RenamedFrom = s.rel(f.from)
		case f.exists && !f.existedOnDisk:
			fe.Created = true
		}
		if !f.exists && !f.existedOnDisk {
			continue // created and removed again, or a rename's source
		}
		if f.movedAway {
			continue // reported at its new path
		}
		files = append(files, fe)
		edits += f.edits
	}
	slices.SortFunc(files, func(a, b FileEdit) int { return strings.Compare(a.Path, b.Path) })
	return files, edits
}

// StagedEdit is an edit worked out and not written, for the run's staged
// edits (internal/staged): each file's text before and after.
type StagedEdit struct {
	Server string
	Files  []staged.File
	Edits  int
}

// PlanRename works out the rename of the symbol at the place to newName
// and writes nothing: the files it changes, their text before and after.
// A rename that also creates, moves or deletes files is refused here
// (staged edits change file contents only).
func (s *Supervisor) PlanRename(ctx context.Context, file pathguard.Path, p protocol.Place, newName string) (*StagedEdit, error) {
	r, plan, err := s.planRename(ctx, file, p, newName)
	if err != nil {
		return nil, err
	}
	defer r.srv.release()
	return s.stagedEdit(r.srv, plan, "this rename")
}

// stagedEdit turns a plan of text edits into a StagedEdit; what names the
// edit in a refusal.
func (s *Supervisor) stagedEdit(srv *server, plan *editPlan, what string) (*StagedEdit, error) {
	out := &StagedEdit{Server: srv.spec.ID}
	var moves []string
	for _, path := range plan.order {
		f := plan.files[path]
		if !f.touched {
			continue
		}
		if !f.exists || !f.existedOnDisk || f.from != "" {
			moves = append(moves, s.rel(f.path))
			continue
		}
		if f.content == f.diskText {
			continue // edits that change nothing
		}
		lines := append([]int{}, slices.Compact(slices.Sorted(slices.Values(f.lines)))...)
		out.Files = append(out.Files, staged.File{File: s.rel(f.path), Path: f.real, Before: []byte(f.diskText), After: []byte(f.content),
			Edits: f.edits, Lines: lines})
		out.Edits += f.edits
	}
	if len(moves) > 0 {
		slices.Sort(moves)
		return nil, fmt.Errorf("%w: %s also creates, moves or deletes files (%s), which a staged edit cannot hold; nothing was staged: call lsp_rename without preview to apply it directly",
			ErrBadArgument, what, strings.Join(moves, ", "))
	}
	slices.SortFunc(out.Files, func(a, b staged.File) int { return strings.Compare(a.File, b.File) })
	return out, nil
}

// editPlan is a WorkspaceEdit worked out in memory, ready to be written.
type editPlan struct {
	files map[string]*plannedFile
	order []string
	// notes say what of the edit was left out as doing nothing (a file
	// renamed onto itself).
	notes []string
}

type plannedFile struct {
	path          string // as the server names it, in the root's spelling
	real          string // the file it is, symlinks resolved, inside the root
	content       string
	exists        bool
	existedOnDisk bool
	diskText      string
	touched       bool
	edits         int
	lines         []int       // 1-based start line of each text edit, in the text before
	from          string      // path this file was renamed from
	movedAway     bool        // renamed to another path
	info          fs.FileInfo // the file on disk as read, when it existed
	like          fs.FileInfo // for a moved file, its source as read
}

// planEdit works out we for srv in memory (see prepare).
func (s *Supervisor) planEdit(we *protocol.WorkspaceEdit, srv *server) (*editPlan, error) {
	enc, version := protocol.UTF16, func(string) (int, bool) { return 0, false }
	if srv != nil {
		enc = srv.encoding
		version = func(path string) (int, bool) {
			srv.mu.Lock()
			defer srv.mu.Unlock()
			if doc := srv.docs[path]; doc != nil {
				return doc.version, true
			}
			return 0, false
		}
	}
	return prepare(we, editCheckout{s}, enc, version, maxFileBytes)
}

// editCheckout is the checkout as an edit plan reads and writes it: through
// the supervisor's guard, in the root's spelling.
type editCheckout struct{ s *Supervisor }

func (e editCheckout) Guard() *pathguard.Guard { return e.s.guard }
func (e editCheckout) Rel(path string) string  { return e.s.rel(path) }

func (e editCheckout) Read(real string) (string, fs.FileInfo, error) {
	return readText(e.s.guard, real)
}

func (e editCheckout) Locate(uri string) (string, string, error) {
	s := e.s
	path, ok := uriPath(uri)
	if !ok {
		return "", "", fmt.Errorf("the server sent an edit for %s, which is not a file", uri)
	}
	path = s.canonical(path)
	if !s.inRoot(path) {
		return "", "", fmt.Errorf("the edit would change %s, outside the root %s", path, s.root)
	}
	confined, err := s.confine(path)
	if err != nil {
		return "", "", fmt.Errorf("the edit would change %s, which resolves outside the root %s (through a symbolic link)", s.rel(path), s.root)
	}
	return path, confined, nil
}

// Files is the checkout an edit plan reads and writes.
type Files interface {
	// Guard is the root every read and write goes through.
	Guard() *pathguard.Guard
	// Rel names a path as results do, relative to the root.
	Rel(path string) string
	// Locate checks the file a server's URI names: its path in the root's
	// spelling and the file it is inside the root, or why it may not be
	// edited.
	Locate(uri string) (path, real string, err error)
	// Read reads a file for editing.
	Read(real string) (string, fs.FileInfo, error)
}

// prepare applies we to in-memory copies of the files. Every path must be
// inside the root; text edits must not overlap; a versioned text edit must
// match the version the server was given (versionOf reports it for an
// open file); enc is the server's position encoding and limit the largest file
// an edit may make.
func prepare(we *protocol.WorkspaceEdit, files Files, enc string, versionOf func(path string) (int, bool), limit int) (*editPlan, error) {
	p := &editPlan{files: map[string]*plannedFile{}}
	get := func(uri string) (*plannedFile, error) {
		path, confined, err := files.Locate(uri)
		if err != nil {
			return nil, err
		}
		if f := p.files[path]; f != nil {
			return f, nil
		}
		f := &plannedFile{path: path, real: confined}
		text, info, err := files.Read(confined)
		switch {
		case err == nil:
			f.content, f.exists, f.existedOnDisk, f.diskText, f.info = text, true, true, text, info
		case errors.Is(err, fs.ErrNotExist):
		default:
			return nil, err
		}
		p.files[path] = f
		p.order = append(p.order, path)
		return f, nil
	}
	edit := func(uri string, edits []protocol.TextEdit, version *int) error {
		f, err := get(uri)
		if err != nil {
			return err
		}
		if !f.exists {
			return fmt.Errorf("the edit changes %s, which does not exist", files.Rel(f.path))
		}
		if version != nil {
			if v, open := versionOf(f.path); open && v != *version {
				return fmt.Errorf("the edit is for version %d of %s but the server has version %d; run the rename again", *version, files.Rel(f.path), v)
			}
		}
		if f.content == f.diskText {
			for _, e := range edits {
				f.lines = append(f.lines, e.Range.Start.Line+1)
			}
		}
		out, err := applyTextEdits(f.content, edits, enc, limit)
		if tl, ok := errors.AsType[*TooLargeError](err); ok {
			tl.File = files.Rel(f.path)
			return tl
		}
		if err != nil {
			return fmt.Errorf("%s: %w", files.Rel(f.path), err)
		}
		f.content = out
		f.touched = true
		f.edits += len(edits)
		return nil
	}

	for _, uri := range slices.Sorted(maps.Keys(we.Changes)) {
		if err := edit(uri, we.Changes[uri], nil); err != nil {
			return nil, err
		}
	}
	for _, raw := range we.DocumentChanges {
		var dc protocol.DocumentChange
		if err := json.Unmarshal(raw, &dc); err != nil {
			return nil, fmt.Errorf("the server sent a documentChanges entry this client cannot read: %v", err)
		}
		overwrite, ignoreExists, ignoreMissing := false, false, false
		if dc.Options != nil {
			overwrite, ignoreExists, ignoreMissing = dc.Options.Overwrite, dc.Options.IgnoreIfExists, dc.Options.IgnoreIfNotExists
		}
		switch dc.Kind {
		case "":
			if dc.TextDocument == nil {
				return nil, fmt.Errorf("the server sent a documentChanges entry with no kind and no textDocument")
			}
			if err := edit(dc.TextDocument.URI, dc.Edits, dc.TextDocument.Version); err != nil {
				return nil, err
			}
		case "create":
			f, err := get(dc.URI)
			if err != nil {
				return nil, err
			}
			if f.exists && !overwrite {
				if ignoreExists {
					continue
				}
				return nil, fmt.Errorf("the edit creates %s, which already exists", files.Rel(f.path))
			}
			f.content, f.exists, f.touched = "", true, true
		case "rename":
			from, err := get(dc.OldURI)
			if err != nil {
				return nil, err
			}
			to, err := get(dc.NewURI)
			if err != nil {
				return nil, err
			}
			if from == to || from.real == to.real {
				// Moving a file onto itself with overwrite would delete it.
				p.notes = append(p.notes, fmt.Sprintf("the edit renames %s onto itself, which changes nothing; it was skipped", files.Rel(from.path)))
				continue
			}
			if !from.exists {
				if ignoreMissing {
					continue
				}
				return nil, fmt.Errorf("the edit renames %s, which does not exist (folders cannot be renamed by this client)", files.Rel(from.path))
			}
			if to.exists && !overwrite {
				if ignoreExists {
					continue
				}
				return nil, fmt.Errorf("the edit renames %s to %s, which already exists", files.Rel(from.path), files.Rel(to.path))
			}
			to.content, to.exists, to.touched, to.edits = from.content, true, true, from.edits
			to.from, to.like = from.path, from.info
			if from.from != "" {
				to.from, to.like = from.from, from.like
			}
			from.content, from.exists, from.touched, from.movedAway = "", false, true, true
		case "delete":
			f, err := get(dc.URI)
			if err != nil {
				return nil, err
			}
			if !f.exists {
				if ignoreMissing {
					continue
				}
				return nil, fmt.Errorf("the edit deletes %s, which does not exist (folders cannot be deleted by this client)", files.Rel(f.path))
			}
			f.content, f.exists, f.touched = "", false, true
		default:
			return nil, fmt.Errorf("the server sent a documentChanges entry of unknown kind %q", dc.Kind)
		}
	}
	return p, nil
}

// commit writes every planned file all or nothing (atomicfile.WriteAll),
// then removes files renamed away or deleted. Files are first checked
// against the text read when planning, so concurrent edits are not lost.
func commit(ctx context.Context, files Files, p *editPlan, force bool) ([]string, error) {
	var touched []string
	for _, path := range p.order {
		if f := p.files[path]; f.touched {
			touched = append(touched, f.real)
		}
	}
	// Locked from the check to the last write, so a parallel edit of one of
	// these files is either seen by the check or lands after the rename.
	unlock, err := atomicfile.Lock(ctx, touched...)
	if err != nil {
		return nil, err
	}
	defer unlock()
	var changes []atomicfile.Change
	for _, path := range p.order {
		f := p.files[path]
		if !f.touched {
			continue
		}
		// Each file is checked, under its lock, against the text the plan
		// was computed from (or for absence).
		var expect []byte
		if f.existedOnDisk {
			expect = []byte(f.diskText)
		}
		switch {
		case f.exists:
			ch := atomicfile.Change{Path: f.real, Data: []byte(f.content), Expect: expect, Expected: true}
			if f.like != nil {
				// A moved file takes its source's permissions, not the
				// umask's; owner and special bits follow the commit.
				ch.Chmod = f.like.Mode().Perm()
				if err := movable(files.Rel(f.from), f.like, force); err != nil {
					return nil, err
				}
			}
			changes = append(changes, ch)
		case f.existedOnDisk:
			changes = append(changes, atomicfile.Change{Path: f.real, Delete: true, Expect: expect, Expected: true})
		}
	}
	// Writes, creations and removals all or nothing.
	rep, err := atomicfile.WriteAll(files.Guard(), changes, atomicfile.Options{Force: force})
	if errors.Is(err, atomicfile.ErrChanged) || errors.Is(err, atomicfile.ErrExists) {
		return nil, fmt.Errorf("%w; it changed on disk while the edit was being worked out: run it again", err)
	}
	if err != nil {
		return nil, err
	}
	notes := rep.Notes
	for _, path := range p.order {
		if f := p.files[path]; f.touched && f.exists && f.like != nil {
			if note := keepMetadata(files, f); note != "" {
				notes = append(notes, note)
			}
		}
	}
	return notes, nil
}

// movable refuses, unless forced, to move a file whose owner the new file
// cannot have: its owner is not this process's user, and this process may
// not give files away (it is not root).
func movable(rel string, like fs.FileInfo, force bool) error {
	st, ok := like.Sys().(*syscall.Stat_t)
	if !ok || force || os.Geteuid() == 0 || canOwn(st.Uid, st.Gid) {
		return nil
	}
	return fmt.Errorf("%s belongs to uid %d, gid %d, and the moved file, written by uid %d, would not: %w; set force to rename anyway",
		rel, st.Uid, st.Gid, os.Geteuid(), atomicfile.ErrOwner)
}

// canOwn reports whether this process may give a file it writes owner uid
// and group gid without privilege: its own user, and one of its groups.
func canOwn(uid, gid uint32) bool {
	if int(uid) != os.Geteuid() {
		return false
	}
	if int(gid) == os.Getegid() {
		return true
	}
	groups, _ := os.Getgroups()
	return slices.Contains(groups, int(gid))
}

// keepMetadata gives a moved file, now in place, its source's owner, group
// and special mode bits (setuid, setgid, sticky: a chown clears the first
// two, so the mode comes after), and says what could not be kept.
func keepMetadata(files Files, f *plannedFile) string {
	want, ok := f.like.Sys().(*syscall.Stat_t)
	name, err := files.Guard().Name(f.real)
	if !ok || err != nil {
		return ""
	}
	info, err := files.Guard().Lstat(f.real)
	if err != nil {
		return fmt.Sprintf("%s: its mode and owner could not be checked after the move (%v)", files.Rel(f.path), err)
	}
	got := info.Sys().(*syscall.Stat_t)
	var lost []string
	chowned := false
	if got.Uid != want.Uid || got.Gid != want.Gid {
		if err := files.Guard().FS().Lchown(name, int(want.Uid), int(want.Gid)); err != nil {
			lost = append(lost, fmt.Sprintf("now belongs to uid %d, gid %d (%s belonged to uid %d, gid %d, which could not be kept: %v)",
				got.Uid, got.Gid, files.Rel(f.from), want.Uid, want.Gid, err))
		} else {
			chowned = true
		}
	}
	mode := f.like.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	if chowned || info.Mode()&^fs.ModeType != mode {
		if err := files.Guard().FS().Chmod(name, mode); err != nil {
			lost = append(lost, fmt.Sprintf("has mode %v instead of %v (%v)", info.Mode()&^fs.ModeType, mode, err))
		}
	}
	if len(lost) == 0 {
		return ""
	}
	return files.Rel(f.path) + " " + strings.Join(lost, "; ")
}

// resyncAfterEdit tells the server about every file the plan changed: open
// ones through didChange/didClose, the rest as watched-file events.
func (s *Supervisor) resyncAfterEdit(ctx context.Context, srv *server, p *editPlan) error {
	var events []protocol.FileEvent
	for _, path := range p.order {
		f := p.files[path]
		if !f.touched {
			continue
		}
		srv.mu.Lock()
		doc := srv.docs[path]
		srv.mu.Unlock()
		if doc != nil {
			if _, _, err := srv.syncFile(ctx, path, doc.languageID); err != nil {
				return err
			}
		}
		typ := protocol.FileChanged
		switch {
		case !f.exists:
			typ = protocol.FileDeleted
		case !f.existedOnDisk:
			typ = protocol.FileCreated
		}
		events = append(events, protocol.FileEvent{URI: fileURI(path), Type: typ})
	}
	return srv.notifyWatched(ctx, events)
}

// TooLargeError refuses an edit after which a file would be over Limit
// bytes; nothing is written.
type TooLargeError struct {
	File        string // relative to the root, when known
	Size, Limit int
}

func (e *TooLargeError) Error() string {
	msg := fmt.Sprintf("the edit would make it %d bytes, over the %d-byte (%d MiB) limit for a file written from a language server's edit", e.Size, e.Limit, e.Limit>>20)
	if e.File != "" {
		return e.File + ": " + msg
	}
	return msg
}

// applyTextEdits applies LSP text edits (all relative to text) and returns
// the new text, refusing one longer than limit bytes before building it.
// Overlapping edits are an error; edits at the same position apply in the
// order given.
func applyTextEdits(text string, edits []protocol.TextEdit, enc string, limit int) (string, error) {
	d := protocol.NewDocument(text)
	type span struct {
		start, end, idx int
		text            string
	}
	spans := make([]span, 0, len(edits))
	for i, e := range edits {
		start, err := d.Offset(e.Range.Start, enc)
		if err != nil {
			return "", err
		}
		end, err := d.Offset(e.Range.End, enc)
		if err != nil {
			return "", err
		}
		if end < start {
			return "", fmt.Errorf("edit %d ends (%d:%d) before it starts (%d:%d)", i, e.Range.End.Line+1, e.Range.End.Character, e.Range.Start.Line+1, e.Range.Start.Character)
		}
		spans = append(spans, span{start, end, i, e.NewText})
	}
	slices.SortStableFunc(spans, func(a, b span) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.idx, b.idx))
	})
	size := len(text)
	for _, sp := range spans {
		size += len(sp.text) - (sp.end - sp.start)
	}
	if size > limit {
		return "", &TooLargeError{Size: size, Limit: limit}
	}
	var b strings.Builder
	b.Grow(len(text))
	pos := 0
	for i, sp := range spans {
		if sp.start < pos {
			return "", fmt.Errorf("the server sent overlapping edits (edit %d overlaps the one before it)", sp.idx)
		}
		if i > 0 && sp.start == spans[i-1].start && spans[i-1].end > spans[i-1].start && sp.end > sp.start {
			return "", fmt.Errorf("the server sent overlapping edits at the same place")
		}
		b.WriteString(text[pos:sp.start])
		b.WriteString(sp.text)
		pos = sp.end
	}
	b.WriteString(text[pos:])
	return b.String(), nil
}
