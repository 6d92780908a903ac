package structural

import (
	"context"
	"fmt"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

type grepParams struct {
	Pattern    string `json:"pattern" jsonschema:"code fragment to find, in the files' language; $NAME matches one node, $$$NAME a run of nodes (zero or more), $_ any node without binding; a $NAME used twice must match the same text"`
	Path       string `json:"path,omitempty" jsonschema:"file or folder to search, relative to the root (default: the whole root)"`
	Language   string `json:"language,omitempty" jsonschema:"grammar id (go, python, javascript, typescript, tsx, rust, c, cpp, java, ruby, dart ...); inferred from a file's name, or from the folder's files when the pattern parses in only one of their languages"`
	MaxResults int    `json:"max_results,omitempty" jsonschema:"most matches to show (default 50); the total is always counted"`
}

// maxMatches bounds max_results, so a result's data stays bounded too.
const maxMatches = 1000

// GrepTool is the ast_grep tool (AG-1..5).
var GrepTool = registry.Descriptor{
	Name:  "ast_grep",
	Title: "structural search",
	Tier:  tiers.Read,
	Description: "Find code by its shape, not its text: the pattern is parsed with the file's grammar, so spacing, line breaks and comments " +
		"do not matter and strings or comments never match. $NAME matches any one node, $$$NAME a run of sibling nodes, $_ anything; " +
		"a $NAME repeated must capture the same text (if ($X != null) $X.dispose() finds guards that dispose what they check). " +
		"Honours .gitignore; skips binary, vendored and huge files. Results: file:lines, the matched code and the captures.",
	Handler: registry.With(Key, grep),
}

// GrepResult is the search's outcome as data.
type GrepResult struct {
	Language     string      `json:"language" jsonschema:"the grammar the pattern was read with"`
	Context      string      `json:"context" jsonschema:"how the pattern was read (an expression, a statement in a function body, ...)"`
	Total        int         `json:"total" jsonschema:"every match, shown or not"`
	Matches      []GrepMatch `json:"matches"`
	FilesScanned int         `json:"files_scanned"`
	FilesParsed  int         `json:"files_parsed"`
	FilesSkipped int         `json:"files_skipped,omitempty"`
	Skipped      []Skipped   `json:"skipped,omitempty" jsonschema:"files left out, with why"`
	text         string
}

// GrepMatch is one match.
type GrepMatch struct {
	File      string `json:"file" jsonschema:"relative to the root"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	Text      string `json:"text" jsonschema:"the matched code, trimmed to a few lines"`
	// Captures maps each metavariable ($X, $$$ARGS) to what it matched.
	Captures map[string]string `json:"captures,omitempty"`
}

// Skipped is a file a search left out.
type Skipped struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
}

func grepResult(r *astgrep.Result, text string) GrepResult {
	out := GrepResult{Language: r.Language, Context: r.Context, Total: r.Total, Matches: []GrepMatch{},
		FilesScanned: r.FilesScanned, FilesParsed: r.FilesParsed, FilesSkipped: r.FilesSkipped, text: text}
	for _, m := range r.Matches {
		gm := GrepMatch{File: m.File, StartLine: m.StartLine, EndLine: m.EndLine, Text: m.Text}
		for _, name := range r.Metavariables {
			if cp, ok := capture(m.Captures, name); ok {
				if gm.Captures == nil {
					gm.Captures = map[string]string{}
				}
				gm.Captures[name] = cp.Text
			}
		}
		out.Matches = append(out.Matches, gm)
	}
	for _, s := range r.Skipped {
		out.Skipped = append(out.Skipped, Skipped{File: s.File, Reason: s.Reason})
	}
	return out
}

// Text is what the agent reads.
func (r GrepResult) Text() string { return r.text }

func grep(ctx context.Context, c *registry.Call, s *Structural, p grepParams) (GrepResult, error) {
	q, err := query(c, p.Pattern, p.Path, p.Language)
	if err != nil {
		return GrepResult{}, err
	}
	if p.MaxResults < 0 || p.MaxResults > maxMatches {
		return GrepResult{}, fmt.Errorf("max_results must be between 1 and %d; to see more, search a narrower path (the total is always counted)", maxMatches)
	}
	q.MaxResults = p.MaxResults
	q.Progress = func(done, total int) {
		c.Progress(ctx, float64(done), float64(total), "files searched")
	}
	res, err := s.Engine.Search(ctx, q)
	if err != nil {
		return GrepResult{}, err
	}
	return grepResult(res, formatResult(p.Pattern, res, c.Budget().Chars())), nil
}
