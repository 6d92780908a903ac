package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
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
	parsed, gitHeader, raw, err := parsePatch(text)
	if err != nil {
		return PatchResult{}, fmt.Errorf("the patch could not be parsed: %v; give a unified diff with ---/+++ headers and @@ hunks", err)
	}
	if len(parsed) == 0 {
		return PatchResult{}, fmt.Errorf("the patch names no files: a unified diff needs '--- a/FILE' and '+++ b/FILE' lines followed by '@@ -l,n +l,n @@' hunks")
	}
	secs, err := resolveSections(c, parsed, gitHeader, raw)
	if err != nil {
		return PatchResult{}, err
	}
	// Every file the patch names is locked before the first is read, so a
	// parallel edit of one of them lands before or after, never in between.
	var touched []string
	for _, s := range secs {
		for _, name := range []string{s.oldName, s.newName} {
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
		f, oldName, newName := s.f, s.oldName, s.newName
		if f.IsBinary {
			return PatchResult{}, fmt.Errorf("the patch changes binary file %s; apply_patch handles text only (nothing was written)", firstNonEmpty(newName, oldName))
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
		lines := splitKeep(src)
		offsets := 0
		shift := 0 // lines added so far by earlier hunks, whose positions are in the old file
		for i, frag := range f.TextFragments {
			res, off, err := applyFragment(lines, frag, shift, quoteBudget(c))
			if err != nil {
				name := firstNonEmpty(oldName, newName)
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
			size += int64(len(l)) + 2 // a line end joinLines may add
		}
		if size > maxTextBytes {
			return PatchResult{}, fmt.Errorf("the patch would make %s about %d bytes, over the %d MiB limit for a file apply_patch changes, so nothing was written; split the file, or make it with a program",
				firstNonEmpty(newName, oldName), size, maxTextBytes>>20)
		}
		if held += size; held > maxPatchBytes {
			return PatchResult{}, patchTooLarge(held)
		}
		out := joinLines(lines)
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
			exec, change := modeChange(f)
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
				perm := withExec(base, exec)
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

// section is one file of a patch with the names it is applied under.
type section struct {
	f                *gitdiff.File
	oldName, newName string
}

// resolveSections names each file of the patch and refuses the entries
// apply_patch cannot write (links, submodules) before anything is read.
// A traditional file's a/ or b/ is read against the checkout and against
// what earlier sections create or delete.
func resolveSections(c *registry.Call, parsed []*gitdiff.File, gitHeader []bool, raw [][2]string) ([]section, error) {
	g := c.Run.Guard()
	state := map[string]bool{} // abs path -> exists after the sections so far
	exists := func(rel string) bool {
		abs, err := c.Path(rel)
		if err != nil {
			return false
		}
		if v, ok := state[abs]; ok {
			return v
		}
		_, err = g.Lstat(abs)
		return err == nil
	}
	mark := func(rel string, v bool) {
		if abs, err := c.Path(rel); err == nil {
			state[abs] = v
		}
	}
	secs := make([]section, 0, len(parsed))
	for i, f := range parsed {
		s := section{f: f, oldName: f.OldName, newName: f.NewName}
		if !gitHeader[i] {
			// gitdiff gives a traditional file one name (both, for a change)
			name, err := pickName(firstNonEmpty(f.NewName, f.OldName), raw[i], f.IsNew, exists)
			if err != nil {
				return nil, err
			}
			switch {
			case f.IsNew:
				s.newName = name
			case f.IsDelete:
				s.oldName = name
			default:
				s.oldName, s.newName = name, name
			}
		}
		// A prefix and an absolute path ("a//tmp/f.go"): the parser drops
		// the path's leading slash, which is put back so the name reads as
		// the absolute path it is.
		if s.oldName != "" && absoluteHeader(raw[i][0]) {
			s.oldName = "/" + strings.TrimLeft(s.oldName, "/")
		}
		if s.newName != "" && absoluteHeader(raw[i][1]) {
			s.newName = "/" + strings.TrimLeft(s.newName, "/")
		}
		if err := checkModes(f, firstNonEmpty(s.newName, s.oldName)); err != nil {
			return nil, err
		}
		switch {
		case f.IsDelete:
			mark(s.oldName, false)
		case f.IsNew || f.IsCopy:
			mark(s.newName, true)
		case f.IsRename:
			mark(s.oldName, false)
			mark(s.newName, true)
		}
		secs = append(secs, s)
	}
	return secs, nil
}

// pickName reads a traditional diff's name, whose a/ or b/ may be the
// diff's prefix or a real folder. The prefix is dropped unless only the
// name with it exists; if both exist, only the usual "--- a/… +++ b/…"
// form says it is a prefix, and anything else is refused.
func pickName(name string, raw [2]string, creating bool, exists func(string) bool) (string, error) {
	if (!strings.HasPrefix(name, "a/") && !strings.HasPrefix(name, "b/")) || len(name) == 2 {
		return name, nil
	}
	bare := name[2:]
	conventional := prefixed(raw[0], "a/") && prefixed(raw[1], "b/")
	withPrefix, without := exists(name), exists(bare)
	why := "both exist"
	if creating {
		// a new file exists under neither name; the name is unclear only
		// if the folder the prefix names is there
		withPrefix, without = exists(name[:1]), true
		why = "a folder " + name[:1] + " exists"
	}
	switch {
	case withPrefix && without && !conventional:
		return "", fmt.Errorf("the patch names %s, which could mean %s or %s (%s), so nothing was written: "+
			"give a git-style diff (a \"diff --git a/PATH b/PATH\" line before ---/+++) or name the old file a/PATH and the new one b/PATH",
			name, name, bare, why)
	case withPrefix && !without:
		return name, nil
	}
	return bare, nil
}

// absoluteHeader reports whether a ---/+++ name as written is a diff
// prefix followed by an absolute path.
func absoluteHeader(raw string) bool {
	raw = strings.TrimPrefix(raw, `"`)
	return strings.HasPrefix(raw, "a//") || strings.HasPrefix(raw, "b//")
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

// prefixed reports whether a header name has the prefix the usual form
// gives that side; /dev/null fits either side.
func prefixed(raw, prefix string) bool {
	raw = strings.TrimPrefix(raw, `"`)
	return raw == "/dev/null" || strings.HasPrefix(raw, prefix)
}

// Git's file types in a patch's mode lines.
const (
	gitTypeMask   = 0o170000
	gitRegular    = 0o100000
	gitSymlink    = 0o120000
	gitSubmodule  = 0o160000
	gitExecutable = 0o100
)

// checkModes refuses a patch entry that is not a regular file in git's
// terms: apply_patch writes file contents, and a link written as a file
// (its target as text) would be wrong.
func checkModes(f *gitdiff.File, name string) error {
	for _, m := range []fs.FileMode{f.OldMode, f.NewMode} {
		switch m & gitTypeMask {
		case 0, gitRegular:
		case gitSymlink:
			return fmt.Errorf("the patch says %s is a symbolic link (mode 120000); apply_patch writes regular files only, so nothing was written: "+
				"make or change the link with a command (ln -sf), and leave it out of the patch", name)
		case gitSubmodule:
			return fmt.Errorf("the patch says %s is a submodule (mode 160000); apply_patch changes files, not submodules, so nothing was written: "+
				"update the submodule with git, and leave it out of the patch", name)
		default:
			return fmt.Errorf("the patch gives %s mode %o, which is not a regular file's, so nothing was written", name, uint32(m))
		}
	}
	return nil
}

// modeChange reports whether a git entry sets the file's mode (a new file's
// mode line, or old mode/new mode lines that differ) and if so whether the
// new mode is executable.
func modeChange(f *gitdiff.File) (exec, change bool) {
	if f.NewMode == 0 || !f.IsNew && f.NewMode == f.OldMode {
		return false, false
	}
	return f.NewMode&gitExecutable != 0, true
}

// withExec turns a file's permission executable by those who may read it,
// or not executable by anyone, so a private file stays private.
func withExec(perm fs.FileMode, exec bool) fs.FileMode {
	if exec {
		return perm | (perm&0o444)>>2
	}
	return perm &^ 0o111
}

// parsePatch parses a patch and reports which files had a git header and,
// for the others, the names their ---/+++ lines give (gitdiff keeps one
// name, which cannot tell "--- a/x +++ b/x" from "--- b/x +++ b/x"). A
// "diff --git" line never occurs inside a hunk (hunk lines start with ' ',
// '+', '-' or '\\'), so the patch is cut at those lines: in each piece the
// first file is a git one and any after it are traditional.
func parsePatch(text string) ([]*gitdiff.File, []bool, [][2]string, error) {
	var files []*gitdiff.File
	var gitHeader []bool
	var raw [][2]string
	start, startLine, line := 0, 1, 1
	for i := 0; i <= len(text); {
		end := len(text)
		if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
			end = i + j + 1
		}
		if i == len(text) || (i > start && strings.HasPrefix(text[i:], "diff --git ")) {
			piece := text[start:i]
			parsed, _, err := gitdiff.Parse(strings.NewReader(piece))
			if err != nil {
				if startLine > 1 {
					return nil, nil, nil, fmt.Errorf("%v (line numbers counted from line %d of the patch)", err, startLine)
				}
				return nil, nil, nil, err
			}
			isGit := strings.HasPrefix(piece, "diff --git ")
			heads := traditionalHeaders(piece)
			traditional := len(parsed)
			var gitNames [2]string // the git file's names as written
			if isGit && len(parsed) > 0 {
				traditional--
				if len(heads) == traditional+1 {
					gitNames = heads[0] // the git file's own ---/+++ lines
					heads = heads[1:]
				} else if line, _, _ := strings.Cut(piece, "\n"); strings.HasPrefix(line, "diff --git a//") || strings.Contains(line, " b//") {
					gitNames = [2]string{"a//", "b//"} // only whether they are absolute matters
				}
			}
			if len(heads) != traditional {
				heads = nil // cannot tell which is whose: the names stay unclear
			}
			for k, f := range parsed {
				git := k == 0 && isGit
				files = append(files, f)
				gitHeader = append(gitHeader, git)
				var names [2]string
				switch {
				case git:
					names = gitNames
				case heads != nil:
					names = heads[k-(len(parsed)-traditional)]
				}
				raw = append(raw, names)
			}
			start, startLine = i, line
		}
		if i == len(text) {
			break
		}
		i = end
		line++
	}
	return files, gitHeader, raw, nil
}

// traditionalHeaders returns the names of every "--- NAME" / "+++ NAME"
// pair followed by a hunk, in order, skipping hunk bodies by their line
// counts as a patch reader does (a removed line "-- x" is not a header).
func traditionalHeaders(piece string) [][2]string {
	ls := strings.SplitAfter(piece, "\n")
	var out [][2]string
	for i := 0; i < len(ls); i++ {
		l := ls[i]
		if strings.HasPrefix(l, "@@ -") {
			oldN, newN := hunkCounts(l)
		body:
			for (oldN > 0 || newN > 0) && i+1 < len(ls) && ls[i+1] != "" {
				switch ls[i+1][0] {
				case ' ', '\n', '\r':
					oldN--
					newN--
				case '-':
					oldN--
				case '+':
					newN--
				case '\\':
				default:
					break body
				}
				i++
			}
			continue
		}
		if strings.HasPrefix(l, "--- ") && i+2 < len(ls) && strings.HasPrefix(ls[i+1], "+++ ") && strings.HasPrefix(ls[i+2], "@@ -") {
			out = append(out, [2]string{headerName(l[4:]), headerName(ls[i+1][4:])})
			i++
		}
	}
	return out
}

// hunkCounts reads the old and new line counts of "@@ -l,n +l,n @@".
func hunkCounts(header string) (int, int) {
	count := func(r string) int {
		_, n, found := strings.Cut(r, ",")
		if !found {
			return 1
		}
		v, _ := strconv.Atoi(n)
		return v
	}
	ranges, _, _ := strings.Cut(strings.TrimPrefix(header, "@@ -"), " @@")
	oldR, newR, _ := strings.Cut(ranges, " +")
	return count(oldR), count(newR)
}

// headerName is the name of a ---/+++ line, without its timestamp.
func headerName(s string) string {
	s, _, _ = strings.Cut(s, "\t")
	return strings.TrimRight(s, "\r\n")
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// applyFragment replaces the fragment's old lines with its new ones in
// lines (each with its line end) and returns the result and the offset
// used. The old lines are looked for at the stated position (moved by
// shift, the lines earlier hunks added) first, then at growing distances
// either side.
func applyFragment(lines []string, frag *gitdiff.TextFragment, shift, budget int) ([]string, int, error) {
	var old []string
	for _, l := range frag.Lines {
		if l.Old() {
			old = append(old, l.Line)
		}
	}
	want := int(frag.OldPosition) - 1 + shift
	if frag.OldLines == 0 {
		// pure insertion after line OldPosition
		want = int(frag.OldPosition) + shift
	}
	want = max(0, min(want, len(lines)))
	at := want
	if len(old) > 0 {
		at = -1
		for d := 0; d <= len(lines); d++ {
			if want-d >= 0 && matchesAt(lines, old, want-d) {
				at = want - d
				break
			}
			if d > 0 && want+d < len(lines) && matchesAt(lines, old, want+d) {
				at = want + d
				break
			}
			if want-d < 0 && want+d >= len(lines) {
				break
			}
		}
		if at < 0 {
			return nil, 0, fmt.Errorf("%s", explainMismatch(lines, old, want, budget))
		}
	}
	return slices.Replace(lines, at, at+len(old), newLines(lines, at, frag)...), at - want, nil
}

// newLines is what the fragment puts in place of its old lines at
// lines[at]: context lines as the file has them, and each added line with
// the line end of the line it replaces (the removed line at the same place
// in its run of changes) or, if it replaces none, of the line before it
// (after it, at the top of the file). A mixed file keeps each line's end.
func newLines(lines []string, at int, frag *gitdiff.TextFragment) []string {
	var out, removed []string
	i, added := at, 0
	for _, l := range frag.Lines {
		switch l.Op {
		case gitdiff.OpContext:
			out = append(out, lines[i])
			i++
			removed, added = removed[:0], 0
		case gitdiff.OpDelete:
			removed = append(removed, lines[i])
			i++
		case gitdiff.OpAdd:
			eol := ""
			if len(removed) > 0 {
				eol = lineEnd(removed[min(added, len(removed)-1)])
			}
			// the line before: only the file's last line lacks an end, so
			// this looks back one or two lines
			for k := len(out) - 1; eol == "" && k >= -at; k-- {
				if k >= 0 {
					eol = lineEnd(out[k])
				} else {
					eol = lineEnd(lines[at+k])
				}
			}
			if eol == "" && i < len(lines) {
				eol = lineEnd(lines[i])
			}
			line := l.Line
			if eol != "" && lineEnd(line) != "" {
				line = dropLineEnd(line) + eol
			}
			out = append(out, line)
			added++
		}
	}
	return out
}

// joinLines joins lines; a line without a line end that is no longer the
// last (the file's old last line, when a patch adds after it) gets the end
// of the line before it.
func joinLines(lines []string) string {
	var b strings.Builder
	eol := "\n"
	for i, l := range lines {
		b.WriteString(l)
		if e := lineEnd(l); e != "" {
			eol = e
		} else if i < len(lines)-1 {
			b.WriteString(eol)
		}
	}
	return b.String()
}

// lineEnd returns "\r\n", "\n" or "" for a line.
func lineEnd(l string) string {
	switch {
	case strings.HasSuffix(l, "\r\n"):
		return "\r\n"
	case strings.HasSuffix(l, "\n"):
		return "\n"
	}
	return ""
}

func dropLineEnd(l string) string { return strings.TrimSuffix(l, lineEnd(l)) }

// splitKeep splits s into lines that keep their line ends, so joining them
// gives s back exactly.
func splitKeep(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// matchesAt compares lines ignoring only the line end, so a hunk's missing
// final newline or a CRLF file still matches.
func matchesAt(lines, old []string, at int) bool {
	if at+len(old) > len(lines) {
		return false
	}
	for i, o := range old {
		if trimEOL(lines[at+i]) != trimEOL(o) {
			return false
		}
	}
	return true
}

func trimEOL(s string) string { return strings.TrimRight(s, "\r\n") }

// explainMismatch shows what the hunk expected and what the file has, each
// line cut and each side within half the result budget.
func explainMismatch(lines, old []string, want, budget int) string {
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
