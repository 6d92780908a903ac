package files

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/builtin-tools/builtin-tools/internal/atomicfile"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

type editParams struct {
	Path       string `json:"path" jsonschema:"file to change, relative to the root"`
	OldString  string `json:"old_string" jsonschema:"exact text to replace, including indentation; it must occur exactly once unless replace_all is true"`
	NewString  string `json:"new_string" jsonschema:"text to put in its place"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence instead of requiring exactly one"`
	Force      bool   `json:"force,omitempty" jsonschema:"change the file even if it is read-only, has other hard links (they keep the old content) or its owner cannot be kept; the result says what was lost"`
}

// Edit replaces exact text in a file.
var Edit = registry.Tool("edit", tiers.Write,
	"Replace exact text in a file. old_string must match the file byte for byte (whitespace included) and occur exactly once, "+
		"unless replace_all is true. If it matches nothing or several places, nothing is written and the error shows the candidate lines. "+
		"Files with CRLF line ends are matched with LF in old_string.",
	nil, editFile)

func editFile(ctx context.Context, c *registry.Call, p editParams) (*mcp.CallToolResult, error) {
	abs, err := c.Path(p.Path)
	if err != nil {
		return registry.Errorf("%v", err)
	}
	rel := c.Rel(abs)
	if p.OldString == "" {
		return registry.Errorf("old_string is empty; to create a file or replace all of it, use write")
	}
	if p.OldString == p.NewString {
		return registry.Errorf("old_string and new_string are the same; nothing to change")
	}
	unlock, err := atomicfile.Lock(ctx, abs)
	if err != nil {
		return registry.Errorf("%v; %s was not changed", err, rel)
	}
	defer unlock()
	data, err := readTextFile(c.Run.Guard(), abs, rel, "edit")
	if err != nil {
		return registry.Errorf("%v", err)
	}
	content := string(data)
	oldS, newS := p.OldString, p.NewString
	// A one-line old_string needs no change, but a multi-line new_string
	// still gets CRLF ends.
	if strings.Contains(content, "\r\n") && !strings.Contains(oldS, "\r\n") {
		oldS = strings.ReplaceAll(oldS, "\n", "\r\n")
		newS = strings.ReplaceAll(strings.ReplaceAll(newS, "\r\n", "\n"), "\n", "\r\n")
	}
	offsets := allIndexes(content, oldS)
	switch {
	case len(offsets) == 0:
		return registry.Errorf("%s", noMatch(rel, content, p.OldString))
	case len(offsets) > 1 && !p.ReplaceAll:
		return registry.Errorf("%s", manyMatches(rel, content, offsets))
	}
	var b strings.Builder
	prev := 0
	for _, off := range offsets {
		b.WriteString(content[prev:off])
		b.WriteString(newS)
		prev = off + len(oldS)
	}
	b.WriteString(content[prev:])
	updated := b.String()
	rep, err := atomicfile.Write(c.Run.Guard(), atomicfile.Change{Path: abs, Data: []byte(updated), Expect: data, Expected: true},
		atomicfile.Options{Force: p.Force})
	if err != nil {
		return registry.Errorf("%s", writeError(rel, err))
	}
	c.Wrote(abs)

	firstLine := lineOf(content, offsets[0])
	newLines := strings.Count(newS, "\n")
	what := "1 occurrence"
	if len(offsets) > 1 {
		what = fmt.Sprintf("%d occurrences", len(offsets))
	}
	return registry.Text(fmt.Sprintf("edited %s: replaced %s (first at line %d)\n%s%s",
		rel, what, firstLine, snippet(updated, firstLine, firstLine+newLines), notes(rep)))
}

func allIndexes(s, sub string) []int {
	var out []int
	for i := 0; ; {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			return out
		}
		out = append(out, i+j)
		i += j + len(sub)
	}
}

func lineOf(s string, off int) int { return strings.Count(s[:off], "\n") + 1 }

// snippet shows lines from..to with two lines of context, numbered.
func snippet(content string, from, to int) string {
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n") // no phantom line after the last newline
	lo, hi := max(from-2, 1), min(to+2, len(lines))
	if hi-lo > 30 {
		hi = lo + 30
	}
	var b strings.Builder
	for i := lo; i <= hi; i++ {
		fmt.Fprintf(&b, "%6d\t%s\n", i, strings.TrimRight(lines[i-1], "\r"))
	}
	return strings.TrimRight(b.String(), "\n")
}

func manyMatches(rel, content string, offsets []int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "old_string occurs %d times in %s, so nothing was changed. Add surrounding lines to old_string to pick one, or set replace_all to change them all. Matches start at:\n", len(offsets), rel)
	lines := strings.Split(content, "\n")
	for i, off := range offsets {
		if i == 10 {
			fmt.Fprintf(&b, "… and %d more\n", len(offsets)-10)
			break
		}
		n := lineOf(content, off)
		fmt.Fprintf(&b, "%6d\t%s\n", n, strings.TrimRight(lines[n-1], "\r"))
	}
	return strings.TrimRight(b.String(), "\n")
}

// noMatch explains a failed match: a whitespace-only difference is named as
// such; otherwise the lines most like old_string's first line are shown.
func noMatch(rel, content, old string) string {
	lines := strings.Split(content, "\n")
	if at := matchIgnoringSpace(lines, old); at > 0 {
		n := strings.Count(strings.TrimRight(old, "\n"), "\n") + 1
		return fmt.Sprintf("old_string was not found in %s as written, but it matches at line %d if whitespace is ignored: "+
			"copy the indentation and spacing exactly. The file has:\n%s", rel, at, numbered(lines, at, at+n-1))
	}
	key := ""
	for _, l := range strings.Split(old, "\n") {
		if strings.TrimSpace(l) != "" {
			key = strings.TrimSpace(l)
			break
		}
	}
	type cand struct{ line, score int }
	var cands []cand
	for i, l := range lines {
		if s := similarity(key, strings.TrimSpace(l)); s > 0 {
			cands = append(cands, cand{i + 1, s})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score > cands[j].score })
	msg := fmt.Sprintf("old_string was not found in %s, so nothing was changed. Read the file again and copy the text exactly.", rel)
	if len(cands) == 0 {
		return msg + " No line resembles its first line."
	}
	var b strings.Builder
	b.WriteString(msg + " Lines most like its first line:\n")
	for i, cd := range cands {
		if i == 5 {
			break
		}
		fmt.Fprintf(&b, "%6d\t%s\n", cd.line, strings.TrimRight(lines[cd.line-1], "\r"))
	}
	return strings.TrimRight(b.String(), "\n")
}

func numbered(lines []string, from, to int) string {
	var b strings.Builder
	for i := from; i <= to && i <= len(lines); i++ {
		fmt.Fprintf(&b, "%6d\t%s\n", i, strings.TrimRight(lines[i-1], "\r"))
	}
	return strings.TrimRight(b.String(), "\n")
}

// matchIgnoringSpace finds old in lines comparing each line with its
// whitespace collapsed, returning the 1-based first line or 0.
func matchIgnoringSpace(lines []string, old string) int {
	want := strings.Split(strings.TrimRight(old, "\n"), "\n")
	for i := range want {
		want[i] = strings.Join(strings.Fields(want[i]), " ")
	}
	if len(want) == 0 || (len(want) == 1 && want[0] == "") {
		return 0
	}
outer:
	for i := 0; i+len(want) <= len(lines); i++ {
		for j, w := range want {
			got := strings.Join(strings.Fields(lines[i+j]), " ")
			if j == 0 || j == len(want)-1 {
				// first and last lines of old_string may be partial lines
				if !strings.Contains(got, w) {
					continue outer
				}
			} else if got != w {
				continue outer
			}
		}
		return i + 1
	}
	return 0
}

// similarity scores how alike two lines are by shared words, so that the
// candidates shown are the lines the agent most likely meant.
func similarity(a, b string) int {
	if a == "" || b == "" {
		return 0
	}
	if strings.Contains(b, a) || strings.Contains(a, b) {
		return 1000 + min(len(a), len(b))
	}
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(a, splitWord) {
		words[w] = true
	}
	score := 0
	for _, w := range strings.FieldsFunc(b, splitWord) {
		if words[w] {
			score += len(w)
			words[w] = false
		}
	}
	if score < 3 {
		return 0
	}
	return score
}

func splitWord(r rune) bool {
	return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 127)
}
