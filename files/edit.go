package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/internal/atomicfile"
	"github.com/builtin-tools/builtin-tools/internal/staged"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

type editParams struct {
	Path       string `json:"path" jsonschema:"file to change, relative to the root"`
	OldString  string `json:"old_string" jsonschema:"exact text to replace, including indentation; it must occur exactly once unless replace_all is true"`
	NewString  string `json:"new_string" jsonschema:"text to put in its place"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence instead of requiring exactly one"`
	Force      bool   `json:"force,omitempty" jsonschema:"change the file even if it is read-only, has other hard links (they keep the old content) or its owner cannot be kept; the result says what was lost"`
	Check      bool   `json:"check,omitempty" jsonschema:"write nothing: give the new contents to the file's language server as an unsaved version and report the errors and warnings writing them would introduce and fix"`
}

// Edit replaces exact text in a file.
var EditTool = registry.Descriptor{
	Name:  "edit",
	Title: "edit file",
	Tier:  tiers.Write,
	Description: "Replace exact text in a file. old_string must match the file byte for byte (whitespace included) and occur exactly once, " +
		"unless replace_all is true. If it matches nothing or several places, nothing is written and the error shows the candidate lines. " +
		"old_string is matched byte for byte first; in a file with CRLF line ends, LF in old_string also matches CRLF. " +
		"new_string takes the line ends of the text it replaces.",
	Writes:  true,
	Handler: registry.Func(editFile, noCheckApproval(func(p editParams) bool { return p.Check })),
}

// EditResult is what edit changed.
type EditResult struct {
	Path         string   `json:"path" jsonschema:"the file, relative to the root"`
	Replacements int      `json:"replacements" jsonschema:"how many occurrences were replaced"`
	FirstLine    int      `json:"first_line" jsonschema:"1-based line of the first replacement"`
	Snippet      string   `json:"snippet" jsonschema:"the changed lines as they are now, numbered"`
	Notes        []string `json:"notes,omitempty"`
	// Checked and Preview are set with check: nothing was written.
	Checked bool         `json:"checked,omitempty" jsonschema:"with check: nothing was written; snippet shows the lines as they would be"`
	Preview *lsp.Preview `json:"preview,omitempty" jsonschema:"with check: the errors and warnings writing would introduce and fix"`
	preview string
}

// Text is what the agent reads.
func (r EditResult) Text() string {
	if r.Checked {
		return fmt.Sprintf("checked an edit of %s: %s (first at line %d); nothing was written\n%s\n%s", r.Path,
			textcut.Count(r.Replacements, "occurrence", "occurrences"), r.FirstLine, r.Snippet, r.preview)
	}
	what := "1 occurrence"
	if r.Replacements > 1 {
		what = fmt.Sprintf("%d occurrences", r.Replacements)
	}
	return fmt.Sprintf("edited %s: replaced %s (first at line %d)\n%s%s", r.Path, what, r.FirstLine, r.Snippet, noteText(r.Notes))
}

func editFile(ctx context.Context, c *registry.Call, p editParams) (EditResult, error) {
	abs, err := c.Path(p.Path)
	if err != nil {
		return EditResult{}, err
	}
	rel := c.Rel(abs)
	if p.OldString == "" {
		return EditResult{}, fmt.Errorf("old_string is empty; to create a file or replace all of it, use write")
	}
	if p.OldString == p.NewString {
		return EditResult{}, fmt.Errorf("old_string and new_string are the same; nothing to change")
	}
	unlock, err := atomicfile.Lock(ctx, abs)
	if err != nil {
		return EditResult{}, fmt.Errorf("%v; %s was not changed", err, rel)
	}
	defer unlock()
	data, err := readTextFile(c.Run.Guard(), abs, rel, "edit")
	if err != nil {
		return EditResult{}, err
	}
	content := string(data)
	oldS := p.OldString
	offsets := allIndexes(content, oldS)
	if len(offsets) == 0 && strings.Contains(content, "\r\n") && strings.Contains(oldS, "\n") {
		// LF stands for the file's CRLF only when nothing matches byte for
		// byte, so the LF lines of a mixed file can still be matched.
		if crlf := toCRLF(oldS); crlf != oldS {
			oldS = crlf
			offsets = allIndexes(content, oldS)
		}
	}
	switch {
	case len(offsets) == 0:
		return EditResult{}, errors.New(noMatch(rel, content, p.OldString, quoteBudget(c)))
	case len(offsets) > 1 && !p.ReplaceAll:
		return EditResult{}, errors.New(manyMatches(rel, content, offsets, quoteBudget(c)))
	}
	// The result's size is known before it is built (N5): each match
	// takes new_string with LF or CRLF line ends.
	newLF, newCRLF := p.NewString, p.NewString
	if strings.Contains(p.NewString, "\n") {
		newCRLF = toCRLF(p.NewString)
	}
	crlfs := make([]bool, len(offsets))
	size := int64(len(content))
	for i, off := range offsets {
		crlfs[i] = crlfAt(content, off, off+len(oldS))
		size += int64(len(newLF) - len(oldS))
		if crlfs[i] {
			size += int64(len(newCRLF) - len(newLF))
		}
	}
	if size > maxTextBytes {
		what := "1 occurrence"
		if len(offsets) > 1 {
			what = fmt.Sprintf("%d occurrences", len(offsets))
		}
		return EditResult{}, fmt.Errorf("replacing %s of old_string (%d bytes) with new_string (%d bytes) would make %s %d bytes, over the %d MiB limit for a file edit changes, so nothing was written; replace fewer occurrences, or make the file with a program",
			what, len(oldS), len(p.NewString), rel, size, maxTextBytes>>20)
	}
	var b strings.Builder
	b.Grow(int(size))
	prev := 0
	for i, off := range offsets {
		b.WriteString(content[prev:off])
		if crlfs[i] {
			b.WriteString(newCRLF)
		} else {
			b.WriteString(newLF)
		}
		prev = off + len(oldS)
	}
	b.WriteString(content[prev:])
	updated := b.String()
	firstLine := lineOf(content, offsets[0])
	newLines := strings.Count(strings.TrimSuffix(p.NewString, "\n"), "\n") // a final line end starts no new line
	if p.Check {
		pv, text, err := checkContents(ctx, c, []staged.File{{File: rel, Path: abs, Before: data, After: []byte(updated)}})
		if err != nil {
			return EditResult{}, err
		}
		return EditResult{Path: rel, Replacements: len(offsets), FirstLine: firstLine,
			Snippet: snippet(updated, firstLine, firstLine+newLines, c.Budget().Reserve(1000+utf8.RuneCountInString(text)).Chars()), Checked: true, Preview: pv, preview: text}, nil
	}
	rep, err := atomicfile.Write(c.Run.Guard(), atomicfile.Change{Path: abs, Data: []byte(updated), Expect: data, Expected: true},
		commitOptions(ctx, c, p.Force))
	if err != nil {
		return EditResult{}, errors.New(writeError(rel, err))
	}
	c.Before(abs, data)
	c.Wrote(abs)
	return EditResult{Path: rel, Replacements: len(offsets), FirstLine: firstLine,
		Snippet: snippet(updated, firstLine, firstLine+newLines, quoteBudget(c)), Notes: reportNotes(rep)}, nil
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

func toCRLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

// crlfAt reports whether new_string, put in place of content[start:end],
// takes CRLF line ends: when that text's lines end in CRLF (for a match
// inside one line, when that line does).
func crlfAt(content string, start, end int) bool {
	region := content[start:end]
	if n := strings.Count(region, "\n"); n > 0 {
		pairs := strings.Count(region, "\r\n")
		if region[0] == '\n' && start > 0 && content[start-1] == '\r' {
			pairs++
		}
		return pairs == n
	}
	if i := strings.IndexByte(content[end:], '\n'); i >= 0 {
		return end+i > 0 && content[end+i-1] == '\r'
	}
	return false
}

// snippet shows lines from..to with two lines of context, numbered and
// cut as read cuts them; lines of the change that do not fit (past 30
// lines or the result budget) are named with the read call that shows them.
func snippet(content string, from, to, budget int) string {
	lo, hi := max(from-2, 1), to+2
	if hi-lo > 30 {
		hi = lo + 30
	}
	ls := lineRange(content, lo, hi)
	if last := lo + len(ls) - 1; last < hi {
		to = min(to, last) // the file ends here
	}
	q := quoter{budget: budget}
	shown := lo - 1
	for i, l := range ls {
		if !q.add(lo+i, l) {
			break
		}
		shown = lo + i
	}
	out := q.String()
	if shown < to {
		out += fmt.Sprintf("\n[lines %d-%d are not shown (a result shows at most 30 lines and one output budget); call read with offset %d to see them]", shown+1, to, shown+1)
	}
	return out
}

// lineAt returns the line holding content[off], with its line end.
func lineAt(content string, off int) string {
	start := strings.LastIndexByte(content[:off], '\n') + 1
	end := len(content)
	if j := strings.IndexByte(content[off:], '\n'); j >= 0 {
		end = off + j + 1
	}
	return content[start:end]
}

func manyMatches(rel, content string, offsets []int, budget int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "old_string occurs %d times in %s, so nothing was changed. Add surrounding lines to old_string to pick one, or set replace_all to change them all. Matches start at:\n", len(offsets), rel)
	q := quoter{budget: budget}
	line, pos, shown := 1, 0, 0
	for _, off := range offsets[:min(len(offsets), 10)] {
		line += strings.Count(content[pos:off], "\n")
		pos = off
		if !q.add(line, lineAt(content, off)) {
			break
		}
		shown++
	}
	b.WriteString(q.String())
	if rest := len(offsets) - shown; rest > 0 {
		fmt.Fprintf(&b, "\n… and %d more", rest)
	}
	return b.String()
}

// noMatch explains a failed match: a whitespace-only difference is named as
// such; otherwise the lines most like old_string's first line are shown.
// It walks the file line by line, holding no copy of it.
func noMatch(rel, content, old string, budget int) string {
	if at, n := matchIgnoringSpace(content, old); at > 0 {
		q := quoter{budget: budget}
		for i, l := range lineRange(content, at, at+n-1) {
			q.add(at+i, l)
		}
		msg := fmt.Sprintf("old_string was not found in %s as written, but it matches at line %d if whitespace is ignored: "+
			"copy the indentation and spacing exactly. The file has:\n%s", rel, at, q.String())
		if q.left > 0 {
			msg += fmt.Sprintf("\n[%d more lines not shown (output budget); call read with offset %d to see them]", q.left, q.first)
		}
		return msg
	}
	key := ""
	for _, l := range strings.Split(old, "\n") {
		if strings.TrimSpace(l) != "" {
			key = strings.TrimSpace(l)
			break
		}
	}
	type cand struct {
		line, score int
		text        string
	}
	var best []cand // the five best, best first; equal scores keep file order
	n := 0
	for l := range strings.Lines(content) {
		n++
		s := similarity(key, strings.TrimSpace(l))
		if s == 0 {
			continue
		}
		i := len(best)
		for i > 0 && best[i-1].score < s {
			i--
		}
		if i < 5 {
			best = slices.Insert(best, i, cand{n, s, l})
			best = best[:min(len(best), 5)]
		}
	}
	msg := fmt.Sprintf("old_string was not found in %s, so nothing was changed. Read the file again and copy the text exactly.", rel)
	if len(best) == 0 {
		return msg + " No line resembles its first line."
	}
	q := quoter{budget: budget}
	for _, cd := range best {
		q.add(cd.line, cd.text)
	}
	return msg + " Lines most like its first line:\n" + q.String()
}

// matchIgnoringSpace finds old in content comparing each line with its
// whitespace collapsed, returning the 1-based first line and the number of
// lines, or 0.
func matchIgnoringSpace(content, old string) (int, int) {
	var want [][]byte
	for _, l := range strings.Split(strings.TrimRight(old, "\n"), "\n") {
		want = append(want, collapse(nil, l))
	}
	if len(want) == 1 && len(want[0]) == 0 {
		return 0, 0
	}
	var buf []byte
	n := 0
	for pos := 0; pos < len(content); n++ {
		rest := content[pos:]
		ok := true
		for j, w := range want {
			if rest == "" {
				ok = false
				break
			}
			line, next, _ := strings.Cut(rest, "\n")
			buf = collapse(buf, line)
			if j == 0 || j == len(want)-1 {
				// first and last lines of old_string may be partial lines
				ok = bytes.Contains(buf, w)
			} else {
				ok = bytes.Equal(buf, w)
			}
			if !ok {
				break
			}
			rest = next
		}
		if ok {
			return n + 1, len(want)
		}
		if i := strings.IndexByte(content[pos:], '\n'); i >= 0 {
			pos += i + 1
		} else {
			pos = len(content)
		}
	}
	return 0, 0
}

// collapse appends s to buf[:0] with each run of white space made one
// space and none at either end.
func collapse(buf []byte, s string) []byte {
	buf = buf[:0]
	space := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			space = len(buf) > 0
		} else {
			if space {
				buf = append(buf, ' ')
				space = false
			}
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return buf
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
