package files

import (
	"context"
	"fmt"
	"io/fs"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/builtin-tools/builtin-tools/internal/atomicfile"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

type patchParams struct {
	Patch string `json:"patch" jsonschema:"a unified diff (git diff or diff -u output) over one or more files; paths relative to the root, a/ and b/ prefixes allowed; /dev/null creates or deletes a file"`
	Force bool   `json:"force,omitempty" jsonschema:"change files even if they are read-only, have other hard links (they keep the old content) or their owner cannot be kept; the result says what was lost"`
}

// ApplyPatch applies a unified diff to one or more files, all or nothing.
var ApplyPatch = registry.Tool("apply_patch", tiers.Write,
	"Apply a unified diff to one or more files. Every hunk of every file is checked before anything is written; "+
		"if one does not apply, no file changes and the error shows what the hunk expected and what the file has. "+
		"Hunks whose line numbers are off are placed by their context lines (the nearest match wins). "+
		"Supports new files, deletions and git renames.",
	nil, applyPatch)

func applyPatch(ctx context.Context, c *registry.Call, p patchParams) (*mcp.CallToolResult, error) {
	if strings.TrimSpace(p.Patch) == "" {
		return registry.Errorf("patch is empty; give a unified diff with ---/+++ headers and @@ hunks")
	}
	text := p.Patch
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	parsed, gitHeader, err := parsePatch(text)
	if err != nil {
		return registry.Errorf("the patch could not be parsed: %v; give a unified diff with ---/+++ headers and @@ hunks", err)
	}
	if len(parsed) == 0 {
		return registry.Errorf("the patch names no files: a unified diff needs '--- a/FILE' and '+++ b/FILE' lines followed by '@@ -l,n +l,n @@' hunks")
	}
	// Every file the patch names is locked before the first is read, so a
	// parallel edit of one of them lands before or after, never in between.
	var touched []string
	for fi, f := range parsed {
		oldName, newName := patchNames(f, gitHeader[fi])
		for _, name := range []string{oldName, newName} {
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
		return registry.Errorf("%v (nothing was written)", err)
	}
	defer unlock()
	planned := map[string][]byte{}    // abs path -> content so far, nil = deleted
	read := map[string][]byte{}       // abs path -> content on disk, for the commit's check
	modes := map[string]fs.FileMode{} // abs path -> mode, so a moved file keeps its own
	var order []string
	var report []string
	for fi, f := range parsed {
		oldName, newName := patchNames(f, gitHeader[fi])
		if f.IsBinary {
			return registry.Errorf("the patch changes binary file %s; apply_patch handles text only (nothing was written)", firstNonEmpty(newName, oldName))
		}
		src := ""
		var srcAbs string
		if !f.IsNew {
			abs, err := c.Path(oldName)
			if err != nil {
				return registry.Errorf("%v (nothing was written)", err)
			}
			srcAbs = abs
			content, seen := planned[abs]
			if !seen {
				data, err := readTextFile(c.Run.Guard(), abs, c.Rel(abs), "apply_patch")
				if err != nil {
					return registry.Errorf("%v (nothing was written)", err)
				}
				content = data
				read[abs] = data
				if info, err := c.Run.Guard().Stat(abs); err == nil {
					modes[abs] = info.Mode().Perm()
				}
			} else if content == nil {
				return registry.Errorf("the patch changes %s after deleting it (nothing was written)", oldName)
			}
			src = string(content)
		}
		out := src
		offsets := 0
		shift := 0 // lines added so far by earlier hunks, whose positions are in the old file
		for i, frag := range f.TextFragments {
			res, off, err := applyFragment(out, frag, shift)
			if err != nil {
				name := firstNonEmpty(oldName, newName)
				return registry.Errorf("hunk %d of %d for %s (@@ -%d,%d +%d,%d @@) does not apply, so no file was changed: %v",
					i+1, len(f.TextFragments), name, frag.OldPosition, frag.OldLines, frag.NewPosition, frag.NewLines, err)
			}
			if off != 0 {
				offsets++
			}
			shift += int(frag.NewLines - frag.OldLines)
			out = res
		}
		switch {
		case f.IsDelete:
			if strings.TrimSpace(out) != "" {
				return registry.Errorf("the patch deletes %s but its hunks do not remove all of its content (nothing was written)", oldName)
			}
			planned[srcAbs] = nil
			order = appendOnce(order, srcAbs)
			report = append(report, "deleted "+c.Rel(srcAbs))
		default:
			dstAbs := srcAbs
			moved := (f.IsRename || f.IsCopy) && newName != oldName
			if f.IsNew || moved {
				abs, err := c.Path(newName)
				if err != nil {
					return registry.Errorf("%v (nothing was written)", err)
				}
				dstAbs = abs
				content, seen := planned[abs]
				if _, err := c.Run.Guard().Lstat(abs); (err == nil && !seen) || (seen && content != nil) {
					what := "creates"
					if moved {
						what = "renames or copies a file onto"
					}
					return registry.Errorf("the patch %s %s, which already exists (nothing was written); use a diff against its current content", what, newName)
				}
			}
			if moved {
				modes[dstAbs] = modes[srcAbs]
			}
			if f.IsRename && srcAbs != dstAbs {
				planned[srcAbs] = nil
				order = appendOnce(order, srcAbs)
			}
			planned[dstAbs] = []byte(out)
			order = appendOnce(order, dstAbs)
			verb := "patched"
			switch {
			case f.IsNew:
				verb = "created"
			case f.IsRename && srcAbs != dstAbs:
				verb = "renamed " + c.Rel(srcAbs) + " to"
			case f.IsCopy && srcAbs != dstAbs:
				verb = "copied " + c.Rel(srcAbs) + " to"
			}
			line := fmt.Sprintf("%s %s (%d hunks", verb, c.Rel(dstAbs), len(f.TextFragments))
			if offsets > 0 {
				line += fmt.Sprintf(", %d placed by context at other line numbers", offsets)
			}
			report = append(report, line+")")
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
		if !existed {
			ch.Perm = modes[abs]
		}
		changes = append(changes, ch)
	}
	rep, err := atomicfile.WriteAll(c.Run.Guard(), changes, atomicfile.Options{Force: p.Force})
	if err != nil {
		return registry.Errorf("could not apply the patch: %s", writeError("its files", err))
	}
	for _, ch := range changes {
		if !ch.Delete {
			c.Wrote(ch.Path)
		}
	}
	return registry.Text(fmt.Sprintf("applied the patch to %d files:\n%s%s", len(report), strings.Join(report, "\n"), notes(rep)))
}

// parsePatch parses a patch and reports which files had a git header. A
// "diff --git" line never occurs inside a hunk (hunk lines start with ' ',
// '+', '-' or '\\'), so the patch is cut at those lines: in each piece the
// first file is a git one and any after it are traditional.
func parsePatch(text string) ([]*gitdiff.File, []bool, error) {
	var files []*gitdiff.File
	var gitHeader []bool
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
					return nil, nil, fmt.Errorf("%v (line numbers counted from line %d of the patch)", err, startLine)
				}
				return nil, nil, err
			}
			for k, f := range parsed {
				files = append(files, f)
				gitHeader = append(gitHeader, k == 0 && strings.HasPrefix(piece, "diff --git "))
			}
			start, startLine = i, line
		}
		if i == len(text) {
			break
		}
		i = end
		line++
	}
	return files, gitHeader, nil
}

// patchNames returns the old and new names of one file of a patch.
func patchNames(f *gitdiff.File, gitHeader bool) (string, string) {
	if gitHeader { // gitdiff drops a/ and b/ itself only for git headers
		return f.OldName, f.NewName
	}
	return stripPrefixes(f.OldName), stripPrefixes(f.NewName)
}

// stripPrefixes drops the a/ or b/ of a traditional diff's name, which
// gitdiff keeps. For a change to one file gitdiff gives the +++ name (b/...)
// as both names, so either prefix may be on either name.
func stripPrefixes(name string) string {
	if strings.HasPrefix(name, "a/") || strings.HasPrefix(name, "b/") {
		return name[2:]
	}
	return name
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func appendOnce(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// applyFragment replaces the fragment's old lines with its new ones. The old
// lines are looked for at the stated position (moved by shift, the lines
// earlier hunks added) first, then at growing distances either side; it
// returns the offset used.
func applyFragment(src string, frag *gitdiff.TextFragment, shift int) (string, int, error) {
	lines := splitKeep(src)
	crlf := len(lines) > 0 && strings.HasSuffix(lines[0], "\r\n")
	var old, repl []string
	for _, l := range frag.Lines {
		if l.Old() {
			old = append(old, l.Line)
		}
		if l.New() {
			line := l.Line
			if crlf && strings.HasSuffix(line, "\n") && !strings.HasSuffix(line, "\r\n") {
				line = strings.TrimSuffix(line, "\n") + "\r\n"
			}
			repl = append(repl, line)
		}
	}
	want := int(frag.OldPosition) - 1 + shift
	if frag.OldLines == 0 {
		// pure insertion after line OldPosition
		want = int(frag.OldPosition) + shift
	}
	want = max(0, min(want, len(lines)))
	if len(old) == 0 {
		out := append(append(append([]string{}, lines[:want]...), repl...), lines[want:]...)
		return strings.Join(out, ""), 0, nil
	}
	at := -1
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
		return "", 0, fmt.Errorf("%s", explainMismatch(lines, old, want))
	}
	out := append(append(append([]string{}, lines[:at]...), repl...), lines[at+len(old):]...)
	return strings.Join(out, ""), at - want, nil
}

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

func explainMismatch(lines, old []string, want int) string {
	var b strings.Builder
	b.WriteString("its context and removed lines are not in the file. The hunk expects:\n")
	for _, o := range old {
		fmt.Fprintf(&b, "\t%s\n", trimEOL(o))
	}
	if want < len(lines) {
		fmt.Fprintf(&b, "but at line %d the file has:\n", want+1)
		for i := want; i < len(lines) && i < want+len(old); i++ {
			fmt.Fprintf(&b, "%6d\t%s\n", i+1, trimEOL(lines[i]))
		}
	} else {
		fmt.Fprintf(&b, "but the file has only %d lines\n", len(lines))
	}
	b.WriteString("Read the file again and make the diff from its current content")
	return b.String()
}
