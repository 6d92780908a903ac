package structural

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/registry"
)

// Dump limits: nodes shown by default, at most, and the lines of a file
// dumped when end_line is not given.
const (
	defaultDumpNodes = 400
	maxDumpNodes     = 5000
	defaultDumpLines = 40
	maxDumpBytes     = astgrep.DefaultMaxFileSize
)

func dump(ctx context.Context, c *registry.Call, s *Structural, p grepParams) (GrepResult, error) {
	if p.Pattern != "" || p.Rule != nil {
		return GrepResult{}, fmt.Errorf("operation dump shows a syntax tree and takes no pattern or rule; to run one against a snippet, use operation test")
	}
	if p.MaxResults < 0 || p.MaxResults > maxDumpNodes {
		return GrepResult{}, fmt.Errorf("max_results for dump must be between 1 and %d nodes; dump fewer lines with start_line and end_line instead", maxDumpNodes)
	}
	limit := p.MaxResults
	if limit == 0 {
		limit = defaultDumpNodes
	}
	var (
		src   []byte
		lang  = p.Language
		what  = "the snippet"
		from  = p.StartLine
		to    = p.EndLine
		where string
	)
	switch {
	case p.Code != "" && p.Path != "":
		return GrepResult{}, fmt.Errorf("give code (a snippet) or path (a file), not both")
	case p.Code != "":
		if lang == "" {
			return GrepResult{}, fmt.Errorf("dumping code needs language, the snippet's grammar id (go, python, typescript, ...)")
		}
		if from != 0 || to != 0 {
			return GrepResult{}, fmt.Errorf("start_line and end_line apply to a file given by path, not to code")
		}
		src = []byte(p.Code)
	case p.Path != "":
		at, err := c.Location(p.Path)
		if err != nil {
			return GrepResult{}, err
		}
		g := at.Guard()
		data, info, err := g.ReadFile(at.Abs(), maxDumpBytes)
		if err != nil {
			return GrepResult{}, fmt.Errorf("cannot read %s: %w", at.Rel(), err)
		}
		if info.IsDir() {
			return GrepResult{}, fmt.Errorf("%s is a folder; dump takes one file", at.Rel())
		}
		if lang == "" {
			if lang = s.Engine.LanguageForFile(at.Abs()); lang == "" {
				return GrepResult{}, fmt.Errorf("cannot tell the language of %s from its name; pass language", at.Rel())
			}
		}
		src, what = data, at.Rel()
		if from <= 0 {
			from = 1
		}
		if to <= 0 {
			to = from + defaultDumpLines - 1
		}
		if to < from {
			return GrepResult{}, fmt.Errorf("end_line %d is before start_line %d", to, from)
		}
		lines := strings.Count(string(data), "\n") + 1
		if from > lines {
			return GrepResult{}, fmt.Errorf("start_line %d is past the end of %s (%d lines)", from, at.Rel(), lines)
		}
		if to > lines {
			to = lines
		}
		where = fmt.Sprintf(" lines %d-%d", from, to)
	default:
		return GrepResult{}, fmt.Errorf("operation dump needs code and language (a snippet) or path (a file, with start_line and end_line)")
	}
	d, err := s.Engine.DumpTree(ctx, lang, src, from, to, limit)
	if err != nil {
		return GrepResult{}, err
	}
	text, shown := formatDump(what+where, d, c.Budget().Chars())
	out := GrepResult{Language: d.Language, Context: "dump", Total: d.Total, Matches: []GrepMatch{}, Tree: []TreeNode{}, ParseErrors: d.Errors, text: text}
	for _, n := range d.Nodes[:shown] {
		out.Tree = append(out.Tree, TreeNode{Depth: n.Depth, Kind: n.Kind, Field: n.Field, Named: n.Named, Extra: n.Extra, Error: n.Error, Missing: n.Missing,
			StartLine: n.StartLine, StartCol: n.StartCol, EndLine: n.EndLine, EndCol: n.EndCol, Text: n.Text})
	}
	return out, nil
}

// formatDump writes one node a line, indented by depth: field name, then
// the kind (named kinds bare, unnamed tokens quoted), the range, and a
// leaf's text; shown is how many of d.Nodes fit the budget.
func formatDump(what string, d *astgrep.Dump, budget int) (text string, shown int) {
	var b strings.Builder
	fmt.Fprintf(&b, "syntax tree of %s [%s; %d nodes", what, d.Language, d.Total)
	if d.Errors > 0 {
		fmt.Fprintf(&b, "; %d ERROR or MISSING nodes: the code does not parse cleanly", d.Errors)
	}
	b.WriteString("; each line: field: kind line:col-line:col, unnamed tokens quoted]\n")
	used := utf8.RuneCountInString(b.String())
	for i, n := range d.Nodes {
		var e strings.Builder
		e.WriteString(strings.Repeat("  ", n.Depth))
		if n.Field != "" {
			e.WriteString(n.Field + ": ")
		}
		switch {
		case n.Error:
			e.WriteString("ERROR")
		case n.Missing:
			fmt.Fprintf(&e, "MISSING %q", n.Kind)
		case n.Named:
			e.WriteString(n.Kind)
		default:
			fmt.Fprintf(&e, "%q", n.Kind)
		}
		fmt.Fprintf(&e, " %d:%d-%d:%d", n.StartLine, n.StartCol, n.EndLine, n.EndCol)
		if n.Extra {
			e.WriteString(" (extra)")
		}
		if n.Named && n.Text != "" && n.Text != n.Kind {
			fmt.Fprintf(&e, " %q", n.Text)
		}
		e.WriteString("\n")
		if used+utf8.RuneCountInString(e.String()) > budget-200 {
			fmt.Fprintf(&b, "[%d more nodes left out by the output budget (%d characters); dump fewer lines with start_line and end_line]\n", d.Total-i, budget)
			return strings.TrimRight(b.String(), "\n"), i
		}
		used += utf8.RuneCountInString(e.String())
		b.WriteString(e.String())
	}
	if d.Total > len(d.Nodes) {
		fmt.Fprintf(&b, "[%d more nodes not shown; raise max_results or dump fewer lines with start_line and end_line]\n", d.Total-len(d.Nodes))
	}
	return strings.TrimRight(b.String(), "\n"), len(d.Nodes)
}
