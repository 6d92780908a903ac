package unidiff

import (
	"slices"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// Mismatch is a hunk that does not apply: its context and removed lines
// are nowhere in the file. The caller quotes both sides in its own terms.
type Mismatch struct {
	Lines []string // the file's lines, each with its line end
	Old   []string // the hunk's context and removed lines
	Want  int      // where the hunk says they are (0-based, moved by the lines earlier hunks added)
}

func (m *Mismatch) Error() string {
	return "its context and removed lines are not in the file"
}

// Apply replaces the fragment's old lines with its new ones in lines
// (each with its line end, as SplitLines gives them) and returns the result
// and the offset used. The old lines are looked for at the stated position
// (moved by shift, the lines earlier hunks added) first, then at growing
// distances either side; found nowhere, the error is a *Mismatch.
func Apply(lines []string, frag *gitdiff.TextFragment, shift int) ([]string, int, error) {
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
			return nil, 0, &Mismatch{Lines: lines, Old: old, Want: want}
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

// JoinLines joins lines; a line without a line end that is no longer the
// last (the file's old last line, when a patch adds after it) gets the end
// of the line before it.
func JoinLines(lines []string) string {
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

// SplitLines splits s into lines that keep their line ends, so joining them
// gives s back exactly.
func SplitLines(s string) []string {
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
