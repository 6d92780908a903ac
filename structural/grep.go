package structural

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/astgrep/rule"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

type grepParams struct {
	Operation   string         `json:"operation,omitempty" jsonschema:"search (the default) finds matches under path; dump shows the syntax tree of code, or of path's lines start_line..end_line: each node's kind, field and whether it is named, so a rule can name them; test runs pattern or rule against code only, reading no file" enum:"search,dump,test"`
	Pattern     string         `json:"pattern,omitempty" jsonschema:"code fragment to find, in the files' language; $NAME matches one node, $$$NAME a run of nodes (zero or more), $_ any node without binding; a $NAME used twice must match the same text"`
	Rule        map[string]any `json:"rule,omitempty" jsonschema:"instead of pattern, an ast-grep rule object: atomic keys pattern, kind (a node kind), regex (on the node's text); relational keys inside, has, precedes, follows, each a rule object that may add stopBy (neighbor, the default: only the parent, children or adjacent sibling; end: all the way; or a rule object: up to the first node it matches) and, for inside and has, field; composite keys all, any (lists of rules), not (a rule) and matches (the name of a rule in utils). Keys of one object must all hold. Example: {\"pattern\": \"$F($$$A)\", \"inside\": {\"kind\": \"for_statement\", \"stopBy\": \"end\"}, \"not\": {\"inside\": {\"kind\": \"func_literal\", \"stopBy\": \"end\"}}}"`
	Constraints map[string]any `json:"constraints,omitempty" jsonschema:"with rule: metavariable name (A or $A) to a rule object its capture must match, e.g. {\"A\": {\"regex\": \"^err\"}}"`
	Utils       map[string]any `json:"utils,omitempty" jsonschema:"with rule: named rule objects that matches refers to"`
	Code        string         `json:"code,omitempty" jsonschema:"for dump and test: a snippet in language (dump without code reads path's lines)"`
	Path        string         `json:"path,omitempty" jsonschema:"file or folder to search, relative to the root (default: the whole root); for dump, the file"`
	Language    string         `json:"language,omitempty" jsonschema:"grammar id (go, python, javascript, typescript, tsx, rust, c, cpp, java, ruby, dart ...); inferred from a file's name, or from the folder's files when the pattern parses in only one of their languages; required with code"`
	StartLine   int            `json:"start_line,omitempty" jsonschema:"dump of a file: first line (default 1)"`
	EndLine     int            `json:"end_line,omitempty" jsonschema:"dump of a file: last line (default start_line + 40)"`
	MaxResults  int            `json:"max_results,omitempty" jsonschema:"most matches (or, for dump, nodes) to show (default 50, dump 400); the total is always counted"`
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
		"Or give rule, an ast-grep rule object (kind, regex, inside, has, precedes, follows with stopBy, all, any, not, matches, with constraints and utils), to say \"a call inside a loop, not inside a goroutine\". " +
		"operation dump shows a snippet's or a file's syntax tree (the kinds and fields rules name); operation test runs a pattern or rule on a snippet. " +
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
	Tree         []TreeNode  `json:"tree,omitempty" jsonschema:"operation dump: the syntax tree's nodes the text shows, in preorder (total counts every node in the range)"`
	ParseErrors  int         `json:"parse_errors,omitempty" jsonschema:"operation dump: ERROR and MISSING nodes in the whole source (it does not parse cleanly)"`
	text         string
}

// TreeNode is one node of a dumped syntax tree.
type TreeNode struct {
	Depth     int    `json:"depth" jsonschema:"nesting below the root of the tree (0)"`
	Kind      string `json:"kind" jsonschema:"the node kind a rule's kind names; for an unnamed token, its text"`
	Field     string `json:"field,omitempty" jsonschema:"the field by which it is its parent's child, as a rule's field names it"`
	Named     bool   `json:"named" jsonschema:"a named node (false: an unnamed token such as a keyword or bracket)"`
	Extra     bool   `json:"extra,omitempty" jsonschema:"a comment or other node the grammar allows anywhere"`
	Error     bool   `json:"error,omitempty" jsonschema:"an ERROR node: the code does not parse here"`
	Missing   bool   `json:"missing,omitempty" jsonschema:"a MISSING node the parser put in to recover"`
	StartLine int    `json:"start_line"`
	StartCol  int    `json:"start_col" jsonschema:"1-based byte column"`
	EndLine   int    `json:"end_line"`
	EndCol    int    `json:"end_col"`
	Text      string `json:"text,omitempty" jsonschema:"a leaf's text (cut at 80 bytes)"`
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
	switch p.Operation {
	case "", "search":
	case "dump":
		return dump(ctx, c, s, p)
	case "test":
		return test(ctx, c, s, p)
	default:
		return GrepResult{}, fmt.Errorf("unknown operation %q: use search (the default), dump or test", p.Operation)
	}
	if p.Code != "" {
		return GrepResult{}, fmt.Errorf("code is for operation dump or test; to search files, leave code out and give path")
	}
	q, err := grepQuery(c, p)
	if err != nil {
		return GrepResult{}, err
	}
	q.Progress = func(done, total int) {
		c.Progress(ctx, float64(done), float64(total), "files searched")
	}
	res, err := s.Engine.Search(ctx, q)
	if err != nil {
		return GrepResult{}, err
	}
	return grepResult(res, formatResult(describe(p.Pattern, q.Rule), res, c.Budget().Chars())), nil
}

// grepQuery builds the engine query of a search or a test.
func grepQuery(c *registry.Call, p grepParams) (astgrep.Query, error) {
	if p.MaxResults < 0 || p.MaxResults > maxMatches {
		return astgrep.Query{}, fmt.Errorf("max_results must be between 1 and %d; to see more, search a narrower path (the total is always counted)", maxMatches)
	}
	spec, err := ruleSpec(p.Pattern, p.Rule, p.Constraints, p.Utils)
	if err != nil {
		return astgrep.Query{}, err
	}
	var q astgrep.Query
	if p.Operation == "test" {
		q = astgrep.Query{Pattern: p.Pattern, Language: p.Language}
	} else if q, err = query(c, p.Pattern, p.Path, p.Language); err != nil {
		return astgrep.Query{}, err
	}
	q.Rule = spec
	q.MaxResults = p.MaxResults
	return q, nil
}

// ruleSpec checks how pattern and rule are given and returns the rule, if any.
func ruleSpec(pattern string, obj, constraints, utils map[string]any) (*rule.Spec, error) {
	if obj == nil {
		if constraints != nil || utils != nil {
			return nil, fmt.Errorf("constraints and utils go with rule; put the pattern in a rule: {\"pattern\": ...}")
		}
		if pattern == "" {
			return nil, fmt.Errorf("the pattern is empty: give pattern (a code fragment) or rule (an ast-grep rule object)")
		}
		return nil, nil
	}
	if pattern != "" {
		return nil, astgrep.ErrRuleAndPattern
	}
	return &rule.Spec{Rule: obj, Constraints: constraints, Utils: utils}, nil
}

// describe names the query in a result's first line.
func describe(pattern string, spec *rule.Spec) string {
	if spec == nil {
		return fmt.Sprintf("%q", pattern)
	}
	b, _ := json.Marshal(spec.Rule)
	return "rule " + textcut.Ellipsis(string(b), 160)
}

func test(ctx context.Context, c *registry.Call, s *Structural, p grepParams) (GrepResult, error) {
	if p.Code == "" {
		return GrepResult{}, fmt.Errorf("operation test needs code (a snippet) and language; to search files, use operation search")
	}
	if p.Language == "" {
		return GrepResult{}, fmt.Errorf("operation test needs language, the snippet's grammar id (go, python, typescript, ...)")
	}
	if p.Path != "" {
		return GrepResult{}, fmt.Errorf("operation test reads no file, so path does not apply; to search path, use operation search")
	}
	q, err := grepQuery(c, p)
	if err != nil {
		return GrepResult{}, err
	}
	res, err := s.Engine.MatchSnippet(ctx, q, []byte(p.Code))
	if err != nil {
		return GrepResult{}, err
	}
	return grepResult(res, formatTest(describe(p.Pattern, q.Rule), res, c.Budget().Chars())), nil
}
