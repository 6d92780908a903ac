// Package wsedit turns a language server's WorkspaceEdit into an
// all-or-nothing write: [Prepare] applies text edits and file creates,
// renames and deletes to in-memory copies (every path inside the root, no
// overlapping edits, a versioned edit only for the version the server has,
// no file over the limit), and [Commit] writes the [Plan] through
// internal/atomicfile, each file checked against the text it was planned
// from, a moved file given its source's mode and owner. It reaches the
// checkout only through [Files], which package lsp gives it; it knows the
// LSP types of package protocol and nothing of servers.
package wsedit

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
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Plan is a WorkspaceEdit worked out in memory, ready to be written: the
// files it touches by path, in the order the edit named them.
type Plan struct {
	Files map[string]*File
	Order []string
	// Notes say what of the edit was left out as doing nothing (a file
	// renamed onto itself).
	Notes []string
}

// File is one file of a plan: its text before and after, and what the
// edit does to it.
type File struct {
	Path          string // as the server names it, in the root's spelling
	Real          string // the file it is, symlinks resolved, inside the root
	Content       string
	Exists        bool
	ExistedOnDisk bool
	DiskText      string
	Touched       bool
	Edits         int
	Lines         []int       // 1-based start line of each text edit, in the text before
	From          string      // path this file was renamed from
	MovedAway     bool        // renamed to another path
	info          fs.FileInfo // the file on disk as read, when it existed
	like          fs.FileInfo // for a moved file, its source as read
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

// Prepare applies we to in-memory copies of the files. Every path must be
// inside the root; text edits must not overlap; a versioned text edit must
// match the version the server was given (versionOf reports it for an
// open file); enc is the server's position encoding and limit the largest file
// an edit may make.
func Prepare(we *protocol.WorkspaceEdit, files Files, enc string, versionOf func(path string) (int, bool), limit int) (*Plan, error) {
	p := &Plan{Files: map[string]*File{}}
	get := func(uri string) (*File, error) {
		path, confined, err := files.Locate(uri)
		if err != nil {
			return nil, err
		}
		if f := p.Files[path]; f != nil {
			return f, nil
		}
		f := &File{Path: path, Real: confined}
		text, info, err := files.Read(confined)
		switch {
		case err == nil:
			f.Content, f.Exists, f.ExistedOnDisk, f.DiskText, f.info = text, true, true, text, info
		case errors.Is(err, fs.ErrNotExist):
		default:
			return nil, err
		}
		p.Files[path] = f
		p.Order = append(p.Order, path)
		return f, nil
	}
	edit := func(uri string, edits []protocol.TextEdit, version *int) error {
		f, err := get(uri)
		if err != nil {
			return err
		}
		if !f.Exists {
			return fmt.Errorf("the edit changes %s, which does not exist", files.Rel(f.Path))
		}
		if version != nil {
			if v, open := versionOf(f.Path); open && v != *version {
				return fmt.Errorf("the edit is for version %d of %s but the server has version %d; run the rename again", *version, files.Rel(f.Path), v)
			}
		}
		if f.Content == f.DiskText {
			for _, e := range edits {
				f.Lines = append(f.Lines, e.Range.Start.Line+1)
			}
		}
		out, err := applyTextEdits(f.Content, edits, enc, limit)
		if tl, ok := errors.AsType[*TooLargeError](err); ok {
			tl.File = files.Rel(f.Path)
			return tl
		}
		if err != nil {
			return fmt.Errorf("%s: %w", files.Rel(f.Path), err)
		}
		f.Content = out
		f.Touched = true
		f.Edits += len(edits)
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
			if f.Exists && !overwrite {
				if ignoreExists {
					continue
				}
				return nil, fmt.Errorf("the edit creates %s, which already exists", files.Rel(f.Path))
			}
			f.Content, f.Exists, f.Touched = "", true, true
		case "rename":
			from, err := get(dc.OldURI)
			if err != nil {
				return nil, err
			}
			to, err := get(dc.NewURI)
			if err != nil {
				return nil, err
			}
			if from == to || from.Real == to.Real {
				// Moving a file onto itself with overwrite would delete it.
				p.Notes = append(p.Notes, fmt.Sprintf("the edit renames %s onto itself, which changes nothing; it was skipped", files.Rel(from.Path)))
				continue
			}
			if !from.Exists {
				if ignoreMissing {
					continue
				}
				return nil, fmt.Errorf("the edit renames %s, which does not exist (folders cannot be renamed by this client)", files.Rel(from.Path))
			}
			if to.Exists && !overwrite {
				if ignoreExists {
					continue
				}
				return nil, fmt.Errorf("the edit renames %s to %s, which already exists", files.Rel(from.Path), files.Rel(to.Path))
			}
			to.Content, to.Exists, to.Touched, to.Edits = from.Content, true, true, from.Edits
			to.From, to.like = from.Path, from.info
			if from.From != "" {
				to.From, to.like = from.From, from.like
			}
			from.Content, from.Exists, from.Touched, from.MovedAway = "", false, true, true
		case "delete":
			f, err := get(dc.URI)
			if err != nil {
				return nil, err
			}
			if !f.Exists {
				if ignoreMissing {
					continue
				}
				return nil, fmt.Errorf("the edit deletes %s, which does not exist (folders cannot be deleted by this client)", files.Rel(f.Path))
			}
			f.Content, f.Exists, f.Touched = "", false, true
		default:
			return nil, fmt.Errorf("the server sent a documentChanges entry of unknown kind %q", dc.Kind)
		}
	}
	return p, nil
}

// Commit writes every planned file all or nothing (atomicfile.WriteAll),
// then removes files renamed away or deleted. Files are first checked
// against the text read when planning, so concurrent edits are not lost.
func Commit(ctx context.Context, files Files, p *Plan, force bool) ([]string, error) {
	var touched []string
	for _, path := range p.Order {
		if f := p.Files[path]; f.Touched {
			touched = append(touched, f.Real)
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
	for _, path := range p.Order {
		f := p.Files[path]
		if !f.Touched {
			continue
		}
		// Each file is checked, under its lock, against the text the plan
		// was computed from (or for absence).
		var expect []byte
		if f.ExistedOnDisk {
			expect = []byte(f.DiskText)
		}
		switch {
		case f.Exists:
			ch := atomicfile.Change{Path: f.Real, Data: []byte(f.Content), Expect: expect, Expected: true}
			if f.like != nil {
				// A moved file takes its source's permissions, not the
				// umask's; owner and special bits follow the commit.
				ch.Chmod = f.like.Mode().Perm()
				if err := movable(files.Rel(f.From), f.like, force); err != nil {
					return nil, err
				}
			}
			changes = append(changes, ch)
		case f.ExistedOnDisk:
			changes = append(changes, atomicfile.Change{Path: f.Real, Delete: true, Expect: expect, Expected: true})
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
	for _, path := range p.Order {
		if f := p.Files[path]; f.Touched && f.Exists && f.like != nil {
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
func keepMetadata(files Files, f *File) string {
	want, ok := f.like.Sys().(*syscall.Stat_t)
	name, err := files.Guard().Name(f.Real)
	if !ok || err != nil {
		return ""
	}
	info, err := files.Guard().Lstat(f.Real)
	if err != nil {
		return fmt.Sprintf("%s: its mode and owner could not be checked after the move (%v)", files.Rel(f.Path), err)
	}
	got := info.Sys().(*syscall.Stat_t)
	var lost []string
	chowned := false
	if got.Uid != want.Uid || got.Gid != want.Gid {
		if err := files.Guard().FS().Lchown(name, int(want.Uid), int(want.Gid)); err != nil {
			lost = append(lost, fmt.Sprintf("now belongs to uid %d, gid %d (%s belonged to uid %d, gid %d, which could not be kept: %v)",
				got.Uid, got.Gid, files.Rel(f.From), want.Uid, want.Gid, err))
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
	return files.Rel(f.Path) + " " + strings.Join(lost, "; ")
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

// Changes reports whether writing the plan changes any byte on disk.
func (p *Plan) Changes() bool {
	for _, f := range p.Files {
		if f.Touched && (f.Content != f.DiskText || f.Exists != f.ExistedOnDisk || f.From != "") {
			return true
		}
	}
	return false
}
