package structural

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/astedit"
	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
)

// formatTest is formatResult for a snippet: no files and no paths.
func formatTest(what string, r *astgrep.Result, budget int) string {
	text := formatResult(what, r, budget)
	_, rest, _ := strings.Cut(text, "\n")
	head := fmt.Sprintf("%s for %s in the snippet", textcut.Count(r.Total, "match", "matches"), what)
	if r.Total == 0 {
		head = fmt.Sprintf("no matches for %s in the snippet", what)
	}
	head += fmt.Sprintf(" [%s, %s; nothing read from disk]", r.Language, how(r.Context))
	if rest == "" {
		return head
	}
	return head + "\n" + rest
}

// formatResult writes a search's result; what is the quoted pattern or
// the rule.
func formatResult(what string, r *astgrep.Result, budget int) string {
	var b strings.Builder
	switch {
	case r.Total == 0:
		fmt.Fprintf(&b, "no matches for %s in %d %s files", what, r.FilesScanned, r.Language)
	case r.Total > len(r.Matches):
		fmt.Fprintf(&b, "%d matches for %s, showing the first %d (raise max_results for more)", r.Total, what, len(r.Matches))
	default:
		fmt.Fprintf(&b, "%s for %s", textcut.Count(r.Total, "match", "matches"), what)
	}
	fmt.Fprintf(&b, " [%s, %s; %s scanned, %d parsed]\n", r.Language, how(r.Context), textcut.Count(r.FilesScanned, "file", "files"), r.FilesParsed)
	var tail strings.Builder
	if len(r.Skipped) > 0 || r.FilesSkipped > 0 {
		var names []string
		for _, s := range r.Skipped {
			names = append(names, s.File+" ("+s.Reason+")")
		}
		fmt.Fprintf(&tail, "%s not searched: %s\n", textcut.Count(r.FilesSkipped, "file", "files"), textcut.Ellipsis(strings.Join(names, ", "), 600))
	}
	// Matches fill the output budget, leaving room for the last lines.
	room := budget - utf8.RuneCountInString(tail.String()) - 200
	used := utf8.RuneCountInString(b.String())
	for i, m := range r.Matches {
		var e strings.Builder
		if m.StartLine == m.EndLine {
			fmt.Fprintf(&e, "%s:%d: ", m.File, m.StartLine)
		} else {
			fmt.Fprintf(&e, "%s:%d-%d: ", m.File, m.StartLine, m.EndLine)
		}
		e.WriteString(indentAfterFirst(m.Text, "    "))
		e.WriteString("\n")
		if caps := captures(r.Metavariables, m.Captures); caps != "" {
			e.WriteString("    " + caps + "\n")
		}
		n := utf8.RuneCountInString(e.String())
		if used+n > room && i > 0 {
			fmt.Fprintf(&b, "[%d more of the matches found are left out by the output budget (%d characters); search a narrower path or a more selective pattern, or page with max_results]\n", len(r.Matches)-i, budget)
			break
		}
		used += n
		b.WriteString(e.String())
	}
	b.WriteString(tail.String())
	return strings.TrimRight(b.String(), "\n")
}

// how says how the query was read: a pattern in a scaffold, or a rule.
func how(context string) string {
	if context == "a rule" {
		return "rule"
	}
	return "pattern read as " + context
}

// captures lists a match's captures in the pattern's order: $X = text.
func captures(order []string, caps map[string]astgrep.Capture) string {
	var parts []string
	for _, name := range order {
		cp, ok := capture(caps, name)
		if !ok {
			continue
		}
		text := textcut.Ellipsis(strings.Join(strings.Fields(cp.Text), " "), 120)
		parts = append(parts, fmt.Sprintf("%s = %s", name, text))
	}
	return strings.Join(parts, "; ")
}

// capture finds a metavariable's capture, keyed with or without its $.
func capture(caps map[string]astgrep.Capture, name string) (astgrep.Capture, bool) {
	if cp, ok := caps[strings.TrimLeft(name, "$")]; ok {
		return cp, true
	}
	cp, ok := caps[name]
	return cp, ok
}

func indentAfterFirst(s, indent string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+indent)
}

// formatProposal says what an ast_edit staged: counts, files and lines, what
// was left out, and the diff, within the output budget.
func formatProposal(p *astedit.Proposal, budget int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "(proposed) %s in %s. Nothing is written yet: call resolve with edit_id %q and action \"accept\" to apply it, or \"discard\".\n",
		textcut.Count(len(p.Replacements), "replacement", "replacements"), textcut.Count(len(p.Files), "file", "files"), p.ID)
	if p.Rule != "" {
		fmt.Fprintf(&b, "rule %s -> rewrite %q (%s)\n", textcut.Ellipsis(p.Rule, 300), p.Rewrite, p.Language)
	} else {
		fmt.Fprintf(&b, "pattern %q -> rewrite %q (%s, read as %s)\n", p.Pattern, p.Rewrite, p.Language, p.Context)
	}
	b.WriteString("files:\n")
	const maxFiles = 50
	for i, f := range p.Files {
		if i == maxFiles {
			fmt.Fprintf(&b, "  … %d more files\n", len(p.Files)-maxFiles)
			break
		}
		word := "line"
		if len(f.Lines) > 1 {
			word = "lines"
		}
		more := ""
		if len(f.Lines) > 20 {
			more = ", …"
		}
		fmt.Fprintf(&b, "  %s: %s at %s %s%s\n", f.File, textcut.Count(f.Replacements, "replacement", "replacements"), word, joinInts(capInts(f.Lines, 20)), more)
	}
	if len(p.Dropped) > 0 {
		var locs []string
		for i, d := range p.Dropped {
			if i == 20 {
				locs = append(locs, fmt.Sprintf("… %d more", len(p.Dropped)-20))
				break
			}
			locs = append(locs, fmt.Sprintf("%s:%d", d.File, d.StartLine))
		}
		fmt.Fprintf(&b, "left out %s nested in or overlapping another match (the outermost wins; run ast_edit again after this one to rewrite them): %s\n",
			textcut.Count(len(p.Dropped), "match", "matches"), strings.Join(locs, ", "))
	}
	if len(p.Evicted) > 0 {
		fmt.Fprintf(&b, "dropped older unresolved edits to make room (resolving them now fails; stage them again if still wanted): %s\n", strings.Join(p.Evicted, ", "))
	}
	if len(p.Skipped) > 0 {
		var names []string
		for _, s := range p.Skipped {
			names = append(names, s.File+" ("+s.Reason+")")
		}
		fmt.Fprintf(&b, "not searched: %s\n", strings.Join(names, ", "))
	}
	b.WriteString("diff:\n")
	// The diff fills what the budget leaves, whole lines only.
	room := budget - utf8.RuneCountInString(b.String()) - 200
	lines := strings.SplitAfter(p.Diff, "\n")
	used := 0
	for i, l := range lines {
		n := utf8.RuneCountInString(l)
		if used+n > room {
			fmt.Fprintf(&b, "… diff cut at %d of %d lines by the output budget (%d characters); stage a narrower path to see all of it, or accept and read the files\n", i, len(lines), budget)
			break
		}
		used += n
		b.WriteString(l)
	}
	return b.String()
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

func capInts(xs []int, n int) []int {
	if len(xs) > n {
		return xs[:n]
	}
	return xs
}
