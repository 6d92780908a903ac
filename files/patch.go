package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/builtin-tools/builtin-tools/internal/atomicfile"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

type patchParams struct {
	Patch string `json:"patch" jsonschema:"a unified diff (git diff or diff -u output) over one or more files; paths relative to the root, a/ and b/ prefixes allowed; /dev/null creates or deletes a file"`
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
	parsed, _, err := gitdiff.Parse(strings.NewReader(text))
	if err != nil {
		return registry.Errorf("the patch could not be parsed: %v; give a unified diff with ---/+++ headers and @@ hunks", err)
	}
	if len(parsed) == 0 {
		return registry.Errorf("the patch names no files: a unified diff needs '--- a/FILE' and '+++ b/FILE' lines followed by '@@ -l,n +l,n @@' hunks")
	}
	planned := map[string][]byte{} // abs path -> content so far, nil = deleted
	perms := map[string]fs.FileMode{}
	var order []string
	var report []string
	for _, f := range parsed {
		oldName, newName := stripPrefixes(f)
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
				data, info, err := readTextFile(abs, c.Rel(abs), "apply_patch")
				if err != nil {
					return registry.Errorf("%v (nothing was written)", err)
				}
				content = data
				perms[abs] = info.Mode().Perm()
			} else if content == nil {
				return registry.Errorf("the patch changes %s after deleting it (nothing was written)", oldName)
			}
			src = string(content)
		}
		out := src
		offsets := 0
		for i, frag := range f.TextFragments {
			res, off, err := applyFragment(out, frag)
			if err != nil {
				name := firstNonEmpty(oldName, newName)
				return registry.Errorf("hunk %d of %d for %s (@@ -%d,%d +%d,%d @@) does not apply, so no file was changed: %v",
					i+1, len(f.TextFragments), name, frag.OldPosition, frag.OldLines, frag.NewPosition, frag.NewLines, err)
			}
			if off != 0 {
				offsets++
			}
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
			if f.IsNew || (f.IsRename && newName != oldName) {
				abs, err := c.Path(newName)
				if err != nil {
					return registry.Errorf("%v (nothing was written)", err)
				}
				dstAbs = abs
				if _, err := os.Stat(abs); err == nil && f.IsNew {
					if content, seen := planned[abs]; !seen || content != nil {
						return registry.Errorf("the patch creates %s, which already exists (nothing was written); use a diff against its current content", newName)
					}
				}
			}
			if f.IsRename && srcAbs != dstAbs {
				planned[srcAbs] = nil
				order = appendOnce(order, srcAbs)
				perms[dstAbs] = perms[srcAbs]
			}
			planned[dstAbs] = []byte(out)
			order = appendOnce(order, dstAbs)
			verb := "patched"
			switch {
			case f.IsNew:
				verb = "created"
			case f.IsRename && srcAbs != dstAbs:
				verb = "renamed " + c.Rel(srcAbs) + " to"
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
		ch := atomicfile.Change{Path: abs, Data: content, Perm: perms[abs], Delete: content == nil}
		if ch.Delete {
			if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
				continue
			}
		}
		changes = append(changes, ch)
	}
	if err := atomicfile.WriteAll(changes); err != nil {
		return registry.Errorf("could not apply the patch: %v", err)
	}
	for _, ch := range changes {
		if !ch.Delete {
			c.Wrote(ch.Path)
		}
	}
	return registry.Text(fmt.Sprintf("applied the patch to %d files:\n%s", len(report), strings.Join(report, "\n")))
}

// stripPrefixes drops the a/ and b/ of a traditional diff's names, which
// gitdiff keeps (it drops them only for git headers).
func stripPrefixes(f *gitdiff.File) (string, string) {
	oldName, newName := f.OldName, f.NewName
	hasA := oldName == "" || strings.HasPrefix(oldName, "a/")
	hasB := newName == "" || strings.HasPrefix(newName, "b/")
	if hasA && hasB && (oldName != "" || newName != "") {
		oldName = strings.TrimPrefix(oldName, "a/")
		newName = strings.TrimPrefix(newName, "b/")
	}
	return oldName, newName
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
// lines are looked for at the stated position first, then at growing
// distances either side; it returns the offset used.
func applyFragment(src string, frag *gitdiff.TextFragment) (string, int, error) {
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
	want := int(frag.OldPosition) - 1
	if frag.OldLines == 0 {
		// pure insertion after line OldPosition
		want = int(frag.OldPosition)
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
