// Package files is the harness's own file tools — read, write, edit and
// apply_patch — registered with a tier like any built-in tool (REG-8), so the
// command is complete on its own and so the diagnostics-on-write wrapper has
// writes to wrap. Every path goes through the run's path guard; every write
// is atomic (temporary file and rename, mode kept), and a multi-file patch is
// all or nothing. A repository's metadata (.git/) is not written unless the
// run allows it, and then what git executes needs exec approval.
package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/builtin-tools/builtin-tools/internal/atomicfile"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/pathguard"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// Family is the harness's file tools. They need no resource: only the
// run's root and path guard.
var Family = registry.Family[registry.None]{
	Key:   registry.NewKey[registry.None]("files"),
	Doc:   "read, write, edit and apply_patch: the harness's own file tools",
	Tools: []registry.Descriptor{ReadTool, WriteTool, EditTool, ApplyPatchTool},
	// check: true runs new contents past the language servers.
	Requires: []registry.Requirement{servers},
}

// sniffLen is how much of a file decides whether it is binary, as git does.
const sniffLen = 8000

// maxTextBytes is the largest file edit and apply_patch change: they hold
// the file, the result and the diff in memory, and an edit of a bigger file
// is better done by a program.
const maxTextBytes = 16 << 20

// readTextFile loads a file a text tool will change, refusing folders,
// missing files, pipes and devices, huge files and binary content with
// messages that say what to do. It reads through the run's path guard.
func readTextFile(g *pathguard.Guard, abs, rel, tool string) ([]byte, error) {
	data, info, err := g.ReadFile(abs, maxTextBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s does not exist; use write to create it", rel)
	case info != nil && info.IsDir():
		return nil, fmt.Errorf("%s is a folder; %s works on one file", rel, tool)
	case errors.Is(err, pathguard.ErrNotRegular):
		return nil, fmt.Errorf("%s is not a regular file (%v); %s works on regular files", rel, err, tool)
	case errors.Is(err, pathguard.ErrTooLarge):
		return nil, fmt.Errorf("%s is too large for %s (%v; the limit is %d MiB): change it with a program, or use write to replace it whole", rel, tool, err, maxTextBytes>>20)
	case err != nil:
		return nil, fmt.Errorf("cannot read %s: %v", rel, err)
	}
	if textcut.Binary(data) {
		return nil, fmt.Errorf("%s is a binary file (%d bytes); %s changes text files only", rel, len(data), tool)
	}
	return data, nil
}

// writeError explains a failed write. A commit's own error (an
// *atomicfile.Error) already says whether the files were left as they
// were; any other failure happened before the commit, so nothing was
// written.
func writeError(rel string, err error) string {
	text := err.Error()
	ae, commit := errors.AsType[*atomicfile.Error](err)
	if commit && ae.Path == rel {
		text = strings.TrimPrefix(text, rel+": ")
	}
	msg := fmt.Sprintf("could not write %s: %s", rel, text)
	if errors.Is(err, fs.ErrPermission) {
		msg += " (the file or its folder is not writable)"
	}
	if errors.Is(err, atomicfile.ErrChanged) {
		msg += "; another program changed it meanwhile, so read it again"
	}
	if commit {
		return msg
	}
	return msg + "; the file was not changed"
}

// commitOptions are the commit plan's options for a call: force as asked,
// and exec approval, asked of this call's approver, for changes to what
// git executes (N3).
func commitOptions(ctx context.Context, c *registry.Call, force bool) atomicfile.Options {
	return atomicfile.Options{Force: force, ApproveExec: func(paths []string) error {
		return c.Escalate(ctx, tiers.Exec, strings.Join(paths, ", "))
	}}
}

// quoteBudget is how much of a call's output budget quoted file lines may
// take, leaving room for the sentences around them.
func quoteBudget(c *registry.Call) int {
	return c.Budget().Reserve(1000).Chars()
}

// quoteLine renders one file line for a message as read shows it: without
// its line end, cut at maxLineBytes on a character boundary.
func quoteLine(line string) string {
	line = strings.TrimSuffix(line, "\n")
	line = strings.TrimSuffix(line, "\r")
	if len(line) <= maxLineBytes {
		return line
	}
	return cutLine(line, len(line))
}

// cutLine cuts a line of full bytes (line holds at least its first
// maxLineBytes) as read and the messages show it.
func cutLine(line string, full int) string {
	return textcut.Bytes(line, maxLineBytes) + fmt.Sprintf("… [line cut: %d bytes]", full)
}

// quoter collects quoted lines for a message until its budget is spent,
// then counts the lines it leaves out, so the message can say so.
type quoter struct {
	b      strings.Builder
	budget int
	left   int // lines left out
	first  int // number of the first line left out
}

// add quotes line n (numbered like read; 0 for a line that is not the
// file's, such as a hunk's) and reports whether it fitted.
func (q *quoter) add(n int, line string) bool {
	entry := "\t" + quoteLine(line) + "\n"
	if n > 0 {
		entry = fmt.Sprintf("%6d", n) + entry
	}
	if q.left > 0 || q.b.Len()+len(entry) > q.budget {
		if q.left == 0 {
			q.first = n
		}
		q.left++
		return false
	}
	q.b.WriteString(entry)
	return true
}

// String returns the quoted lines, without the last line end.
func (q *quoter) String() string { return strings.TrimSuffix(q.b.String(), "\n") }

// lineRange returns lines from..to (1-based, inclusive) of s with their line
// ends, without splitting the whole file.
func lineRange(s string, from, to int) []string {
	var out []string
	n := 0
	for line := range strings.Lines(s) {
		n++
		if n > to {
			break
		}
		if n >= from {
			out = append(out, line)
		}
	}
	return out
}

// reportNotes returns what a commit could not keep.
func reportNotes(rep *atomicfile.Report) []string {
	if rep == nil {
		return nil
	}
	return rep.Notes
}

// noteText renders notes for the result's text.
func noteText(notes []string) string {
	if len(notes) == 0 {
		return ""
	}
	return "\nnote: " + strings.Join(notes, "\nnote: ")
}
