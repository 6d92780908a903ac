// Package unidiff is the unified-diff layer under apply_patch: a patch read
// into its files (gitdiff's reading, with the names a traditional file's
// ---/+++ lines give as written, which gitdiff drops), each file's names
// resolved and its git modes checked, and a hunk placed on a file's lines
// in memory and applied with each line's own line end kept. It reads and
// writes no file: package files reads the checkout, plans the writes and
// says in its tool's words what did not apply.
//
// Parsing is gitdiff's (github.com/bluekeyes/go-gitdiff); placing a hunk by
// its context at the nearest offset and keeping mixed line ends is ours,
// since gitdiff applies only at the stated line.
package unidiff

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// File is one file of a patch as gitdiff reads it, with whether it had a
// "diff --git" header and, if not, the names its ---/+++ lines give as
// written (both empty when it cannot be told which lines are whose).
type File struct {
	*gitdiff.File
	Git bool
	Raw [2]string
}

// Parse parses a patch. gitdiff keeps one name of a traditional file,
// which cannot tell "--- a/x +++ b/x" from "--- b/x +++ b/x", so the raw
// names are read too. A "diff --git" line never occurs inside a hunk (hunk
// lines start with ' ', '+', '-' or '\\'), so the patch is cut at those
// lines: in each piece the first file is a git one and any after it are
// traditional.
func Parse(text string) ([]File, error) {
	var files []File
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
					return nil, fmt.Errorf("%v (line numbers counted from line %d of the patch)", err, startLine)
				}
				return nil, err
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
				var names [2]string
				switch {
				case git:
					names = gitNames
				case heads != nil:
					names = heads[k-(len(parsed)-traditional)]
				}
				files = append(files, File{File: f, Git: git, Raw: names})
			}
			start, startLine = i, line
		}
		if i == len(text) {
			break
		}
		i = end
		line++
	}
	return files, nil
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
