package files

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/builtin-tools/builtin-tools/files/unidiff"
	"github.com/builtin-tools/builtin-tools/internal/atomicfile"
	"github.com/builtin-tools/builtin-tools/internal/staged"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/pathguard"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

type patchParams struct {
	Patch string `json:"patch" jsonschema:"a unified diff (git diff or diff -u output) over one or more files; paths relative to the root, a/ and b/ prefixes allowed; /dev/null creates or deletes a file"`
	Force bool   `json:"force,omitempty" jsonschema:"change files even if they are read-only, have other hard links (they keep the old content) or their owner cannot be kept; the result says what was lost"`
	Check bool   `json:"check,omitempty" jsonschema:"write nothing: give the patched contents to the files' language servers as unsaved versions and report the errors and warnings applying it would introduce and fix"`
}

// ApplyPatch applies a unified diff to one or more files, all or nothing.
var ApplyPatchTool = registry.Descriptor{
	Name:  "apply_patch",
	Title: "apply patch",
	Tier:  tiers.Write,
	Description: "Apply a unified diff to one or more files. Every hunk of every file is checked before anything is written; " +
		"if one does not apply, no file changes and the error shows what the hunk expected and what the file has. " +
		"Hunks whose line numbers are off are placed by their context lines (the nearest match wins). " +
		"Supports new files, deletions, git renames and git mode changes (100644/100755); symbolic links and submodules are refused. " +
		"Without \"diff --git\" lines, a/ and b/ are read as prefixes unless only the name with them exists.",
	Writes:  true,
	Handler: registry.Func(applyPatch, noCheckApproval(func(p patchParams) bool { return p.Check })),
}

// PatchResult is what apply_patch changed.
type PatchResult struct {
	Files   int      `json:"files" jsonschema:"how many files the patch names"`
	Changed []string `json:"changed" jsonschema:"files written, relative to the root"`
	Deleted []string `json:"deleted,omitempty" jsonschema:"files removed"`
	Report  []string `json:"report" jsonschema:"one line per file of the patch: what was done to it"`
	Notes   []string `json:"notes,omitempty"`
	// Checked and Preview are set with check: nothing was written.
	Checked bool         `json:"checked,omitempty" jsonschema:"with check: nothing was written; changed and report say what applying would do"`
	Preview *lsp.Preview `json:"preview,omitempty" jsonschema:"with check: the errors and warnings applying would introduce and fix"`
	preview string
}

// Text is what the agent reads.
func (r PatchResult) Text() string {
	noun := "files"
	if r.Files == 1 {
		noun = "file"
	}
	if r.Checked {
		return fmt.Sprintf("checked the patch of %d %s; nothing was written:\n%s\n%s", r.Files, noun, strings.Join(r.Report, "\n"), r.preview)
	}
	return fmt.Sprintf("applied the patch to %d %s:\n%s%s", r.Files, noun, strings.Join(r.Report, "\n"), noteText(r.Notes))
}

func applyPatch(ctx context.Context, c *registry.Call, p patchParams) (PatchResult, error) {
	if strings.TrimSpace(p.Patch) == "" {
		return PatchResult{}, fmt.Errorf("patch is empty; give a unified diff with ---/+++ headers and @@ hunks")
	}
	text := p.Patch
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	parsed, err := unidiff.Parse(text)
	if err != nil {
		return PatchResult{}, fmt.Errorf("the patch could not be parsed: %v; give a unified diff with ---/+++ headers and @@ hunks", err)
	}
	if len(parsed) == 0 {
		return PatchResult{}, fmt.Errorf("the patch names no files: a unified diff needs '--- a/FILE' and '+++ b/FILE' lines followed by '@@ -l,n +l,n @@' hunks")
	}
	secs, err := unidiff.Sections(parsed, c.Path, func(abs string) bool {
		_, err := c.Run.Guard().Lstat(abs)
		return err == nil
	})
	if err != nil {
		return PatchResult{}, err
	}
	// Every file the patch names is locked before the first is read, so a
	// parallel edit of one of them lands before or after, never in between.
	var touched []string
	for _, s := range secs {
		for _, name := range []string{s.OldName, s.NewName} {
			if name == "" {
				continue
			}
			if abs, err := c.Path(name); err == nil {
				touched = append(touched, abs)
			}
		}
	}
	unlock, err := atomicfile.Lock(ctx, touched...)
	if err != nil {
		return PatchResult{}, fmt.Errorf("%v (nothing was written)", err)
	}
	defer unlock()
	planned := map[string][]byte{}     // abs path -> content so far, nil = deleted
	read := map[string][]byte{}        // abs path -> content on disk, for the commit's check
	modes := map[string]fs.FileMode{}  // abs path -> permission, so a moved file keeps its own
	chmods := map[string]fs.FileMode{} // abs path -> permission a mode change sets on an existing file
	files := map[string]bool{}         // the files the report names, each once
	var order []string                 // the files to commit, each once, in the patch's order
	addOrder := func(abs string) {
		if !slices.Contains(order, abs) {
			order = append(order, abs)
		}
	}
	var report []string
	type patchedLine struct{ idx, hunks, offsets int }
	patchedAt := map[string]*patchedLine{} // plain "patched" lines, to merge a file's sections
	held := int64(0)                       // bytes read and planned so far (N5)
	for _, s := range secs {
		f, oldName, newName := s.File, s.OldName, s.NewName
		if f.IsBinary {
			return PatchResult{}, fmt.Errorf("the patch changes binary file %s; apply_patch handles text only (nothing was written)", cmp.Or(newName, oldName))
		}
		src := ""
		var srcAbs string
		if !f.IsNew {
			abs, err := patchPath(c, oldName)
			if err != nil {
				return PatchResult{}, err
			}
			srcAbs = abs
			content, seen := planned[abs]
			if !seen {
				data, err := readTextFile(c.Run.Guard(), abs, c.Rel(abs), "apply_patch")
				if err != nil {
					return PatchResult{}, fmt.Errorf("%v (nothing was written)", err)
				}
				content = data
				read[abs] = data
				if held += int64(len(data)); held > maxPatchBytes {
					return PatchResult{}, patchTooLarge(held)
				}
				if info, err := c.Run.Guard().Stat(abs); err == nil {
					modes[abs] = info.Mode().Perm()
				}
			} else if content == nil {
				return PatchResult{}, fmt.Errorf("the patch changes %s after deleting it (nothing was written)", oldName)
			}
			src = string(content)
		}
		lines := unidiff.SplitLines(src)
		offsets := 0
		shift := 0 // lines added so far by earlier hunks, whose positions are in the old file
		for i, frag := range f.TextFragments {
			res, off, err := unidiff.Apply(lines, frag, shift)
			if m, ok := errors.AsType[*unidiff.Mismatch](err); ok {
				err = errors.New(explainMismatch(m, quoteBudget(c)))
			}
			if err != nil {
				name := cmp.Or(oldName, newName)
				return PatchResult{}, fmt.Errorf("hunk %d of %d for %s (@@ -%d,%d +%d,%d @@) does not apply, so no file was changed: %v",
					i+1, len(f.TextFragments), name, frag.OldPosition, frag.OldLines, frag.NewPosition, frag.NewLines, err)
			}
			if off != 0 {
				offsets++
			}
			shift += int(frag.NewLines - frag.OldLines)
			lines = res
		}
		// The result's size is known before it is built (N5).
		size := int64(0)
		for _, l := range lines {
			size += int64(len(l)) + 2 // a line end JoinLines may add
		}
		if size > maxTextBytes {
			return PatchResult{}, fmt.Errorf("the patch would make %s about %d bytes, over the %d MiB limit for a file apply_patch changes, so nothing was written; split the file, or make it with a program",
				cmp.Or(newName, oldName), size, maxTextBytes>>20)
		}
		if held += size; held > maxPatchBytes {
			return PatchResult{}, patchTooLarge(held)
		}
		out := unidiff.JoinLines(lines)
		switch {
		case f.IsDelete:
			if strings.TrimSpace(out) != "" {
				return PatchResult{}, fmt.Errorf("the patch deletes %s but its hunks do not remove all of its content (nothing was written)", oldName)
			}
			planned[srcAbs] = nil
			addOrder(srcAbs)
			files[srcAbs] = true
			report = append(report, "deleted "+c.Rel(srcAbs))
		default:
			dstAbs := srcAbs
			moved := (f.IsRename || f.IsCopy) && newName != oldName
			if f.IsNew || moved {
				abs, err := patchPath(c, newName)
				if err != nil {
					return PatchResult{}, err
				}
				dstAbs = abs
				content, seen := planned[abs]
				if _, err := c.Run.Guard().Lstat(abs); (err == nil && !seen) || (seen && content != nil) {
					what := "creates"
					if moved {
						what = "renames or copies a file onto"
					}
					return PatchResult{}, fmt.Errorf("the patch %s %s, which already exists (nothing was written); use a diff against its current content", what, newName)
				}
			}
			if moved {
				modes[dstAbs] = modes[srcAbs]
			}
			if f.IsRename && srcAbs != dstAbs {
				planned[srcAbs] = nil
				addOrder(srcAbs)
				delete(files, srcAbs)
			}
			planned[dstAbs] = []byte(out)
			addOrder(dstAbs)
			files[dstAbs] = true
			verb := "patched"
			switch {
			case f.IsNew:
				verb = "created"
			case f.IsRename && srcAbs != dstAbs:
				verb = "renamed " + c.Rel(srcAbs) + " to"
			case f.IsCopy && srcAbs != dstAbs:
				verb = "copied " + c.Rel(srcAbs) + " to"
			}
			line := fmt.Sprintf("%s %s (%s", verb, c.Rel(dstAbs), textcut.Count(len(f.TextFragments), "hunk", "hunks"))
			if offsets > 0 {
				line += fmt.Sprintf(", %d placed by context at other line numbers", offsets)
			}
			exec, change := unidiff.ModeChange(f)
			switch {
			case change && f.IsNew:
				if exec {
					modes[dstAbs] = 0o777 // less the umask, as git makes it
					line += ", executable"
				}
				line += ")"
			case change:
				base := modes[srcAbs]
				_, existed := read[dstAbs]
				if !existed && base == 0 {
					base = 0o666 // a file an earlier section created
				}
				perm := unidiff.WithExec(base, exec)
				if existed {
					chmods[dstAbs] = perm
				} else {
					modes[dstAbs] = perm
				}
				if len(f.TextFragments) == 0 && !moved {
					line = fmt.Sprintf("changed mode of %s to %o", c.Rel(dstAbs), perm)
				} else {
					line += fmt.Sprintf(") and changed its mode to %o", perm)
				}
			default:
				line += ")"
				// Two sections for one file are one file in the report.
				if at, ok := patchedAt[dstAbs]; ok && verb == "patched" {
					at.hunks += len(f.TextFragments)
					at.offsets += offsets
					report[at.idx] = fmt.Sprintf("patched %s (%s", c.Rel(dstAbs), textcut.Count(at.hunks, "hunk", "hunks"))
					if at.offsets > 0 {
						report[at.idx] += fmt.Sprintf(", %d placed by context at other line numbers", at.offsets)
					}
					report[at.idx] += ")"
					continue
				}
				if verb == "patched" {
					patchedAt[dstAbs] = &patchedLine{idx: len(report), hunks: len(f.TextFragments), offsets: offsets}
				}
			}
			report = append(report, line)
		}
	}
	changes := make([]atomicfile.Change, 0, len(order))
	for _, abs := range order {
		content := planned[abs]
		old, existed := read[abs]
		if content == nil && !existed {
			continue // created and deleted again by the patch
		}
		// Every file is checked against what was read (or for absence) just
		// before the rename; a moved file takes its source's mode.
		ch := atomicfile.Change{Path: abs, Data: content, Delete: content == nil, Expect: old, Expected: true}
		if existed && !ch.Delete {
			if perm, ok := chmods[abs]; ok && perm != modes[abs] {
				ch.Chmod = perm
			}
			if ch.Chmod == 0 && bytes.Equal(content, old) {
				continue // nothing to change
			}
		}
		if !existed {
			ch.Perm = modes[abs]
		}
		changes = append(changes, ch)
	}
	if p.Check {
		res := PatchResult{Files: len(files), Changed: []string{}, Report: report, Checked: true}
		var proposed []staged.File
		for _, ch := range changes {
			if ch.Delete {
				res.Deleted = append(res.Deleted, c.Rel(ch.Path))
				continue
			}
			res.Changed = append(res.Changed, c.Rel(ch.Path))
			proposed = append(proposed, staged.File{File: c.Rel(ch.Path), Path: ch.Path, Before: ch.Expect, After: ch.Data})
		}
		pv, text, err := checkContents(ctx, c, proposed)
		if err != nil {
			return PatchResult{}, err
		}
		res.Preview, res.preview = pv, text
		return res, nil
	}
	rep, err := atomicfile.WriteAll(c.Run.Guard(), changes, commitOptions(ctx, c, p.Force))
	if err != nil {
		return PatchResult{}, fmt.Errorf("could not apply the patch: %s", writeError("its files", err))
	}
	res := PatchResult{Files: len(files), Changed: []string{}, Report: report, Notes: reportNotes(rep)}
	for _, ch := range changes {
		if ch.Delete {
			res.Deleted = append(res.Deleted, c.Rel(ch.Path))
		} else {
			c.Before(ch.Path, ch.Expect)
			c.Wrote(ch.Path)
			res.Changed = append(res.Changed, c.Rel(ch.Path))
		}
	}
	return res, nil
}

// maxPatchBytes bounds what one patch holds in memory: the files it reads
// and their new contents.
const maxPatchBytes = 256 << 20

func patchTooLarge(held int64) error {
	return fmt.Errorf("the files the patch reads and writes come to %d bytes so far, over the %d MiB limit for one patch, so nothing was written; apply it in parts of fewer or smaller files",
		held, maxPatchBytes>>20)
}

// patchPath confines a name the patch gives; an absolute one outside the
// root is refused as such, so the refusal does not read as a missing file.
func patchPath(c *registry.Call, name string) (string, error) {
	abs, err := c.Path(name)
	if err != nil && filepath.IsAbs(name) && errors.Is(err, pathguard.ErrOutside) {
		return "", fmt.Errorf("the patch names an absolute path, %s, which is outside the root %s; name files relative to the root (nothing was written)",
			pathguard.Clip(name), c.Run.Root())
	}
	if err != nil {
		return "", fmt.Errorf("%v (nothing was written)", err)
	}
	return abs, nil
}

// explainMismatch shows what the hunk expected and what the file has, each
// line cut and each side within half the result budget.
func explainMismatch(m *unidiff.Mismatch, budget int) string {
	lines, old, want := m.Lines, m.Old, m.Want
	var b strings.Builder
	b.WriteString("its context and removed lines are not in the file. The hunk expects:\n")
	hq := quoter{budget: budget / 2}
	for _, o := range old {
		hq.add(0, o)
	}
	b.WriteString(hq.String() + "\n")
	if hq.left > 0 {
		fmt.Fprintf(&b, "[and %d more lines of the hunk]\n", hq.left)
	}
	if want < len(lines) {
		fmt.Fprintf(&b, "but at line %d the file has:\n", want+1)
		fq := quoter{budget: budget / 2}
		for i := want; i < len(lines) && i < want+len(old); i++ {
			fq.add(i+1, lines[i])
		}
		b.WriteString(fq.String() + "\n")
		if fq.left > 0 {
			fmt.Fprintf(&b, "[%d more lines not shown (output budget); call read with offset %d to see them]\n", fq.left, fq.first)
		}
	} else {
		fmt.Fprintf(&b, "but the file has only %d lines\n", len(lines))
	}
	b.WriteString("Read the file again and make the diff from its current content")
	return b.String()
}
