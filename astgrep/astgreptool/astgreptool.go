// Package astgreptool puts structural search and staged rewrites on a run's
// tool surface: ast_grep (read), ast_edit and resolve (write). The engines
// are packages astgrep and astedit; this package turns their results into
// text for an agent and keeps one Structural resource per run.
package astgreptool

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/builtin-tools/builtin-tools/astedit"
	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/internal/atomicfile"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

// Structural is the run's tree-sitter resource (registry.TreeSitter): the
// engine with its parse cache, and the edits staged by ast_edit, which die
// with the run.
type Structural struct {
	Engine *astgrep.Engine
	Stager *astedit.Stager
}

// New makes the resource.
func New(opts astgrep.Options) *Structural {
	e := astgrep.NewEngine(opts)
	return &Structural{Engine: e, Stager: astedit.NewStager(e)}
}

// Close frees the engine; staged edits are dropped unwritten.
func (s *Structural) Close() error { return s.Engine.Close() }

// Tools returns the descriptors of ast_grep, ast_edit and resolve.
func Tools() []registry.Descriptor { return []registry.Descriptor{Grep, Edit, Resolve} }

var needs = []registry.ResourceKind{registry.TreeSitter}

type grepParams struct {
	Pattern    string `json:"pattern" jsonschema:"code fragment to find, in the files' language; $NAME matches one node, $$$NAME a run of nodes (zero or more), $_ any node without binding; a $NAME used twice must match the same text"`
	Path       string `json:"path,omitempty" jsonschema:"file or folder to search, relative to the root (default: the whole root)"`
	Language   string `json:"language,omitempty" jsonschema:"grammar id (go, python, javascript, typescript, tsx, rust, c, cpp, java, ruby, dart ...); inferred from a file's name, or from the folder's files when the pattern parses in only one of their languages"`
	MaxResults int    `json:"max_results,omitempty" jsonschema:"most matches to show (default 50); the total is always counted"`
}

// Grep is the ast_grep tool (AG-1..5).
var Grep = func() registry.Descriptor {
	d := registry.Tool("ast_grep", tiers.Read,
		"Find code by its shape, not its text: the pattern is parsed with the file's grammar, so spacing, line breaks and comments "+
			"do not matter and strings or comments never match. $NAME matches any one node, $$$NAME a run of sibling nodes, $_ anything; "+
			"a $NAME repeated must capture the same text (if ($X != null) $X.dispose() finds guards that dispose what they check). "+
			"Honours .gitignore; skips binary, vendored and huge files. Results: file:lines, the matched code and the captures.",
		needs, grep)
	d.Title = "structural search"
	return d
}()

func grep(ctx context.Context, c *registry.Call, p grepParams) (*mcp.CallToolResult, error) {
	s, q, fail := query(c, p.Pattern, p.Path, p.Language)
	if fail != nil {
		return fail, nil
	}
	if p.MaxResults < 0 {
		return registry.Errorf("max_results must be positive")
	}
	q.MaxResults = p.MaxResults
	q.Progress = func(done, total int) {
		c.Progress(ctx, float64(done), float64(total), "files searched")
	}
	res, err := s.Engine.Search(ctx, q)
	if err != nil {
		return failure(ctx, err)
	}
	return registry.Text(formatResult(p.Pattern, res))
}

func query(c *registry.Call, pattern, path, language string) (*Structural, astgrep.Query, *mcp.CallToolResult) {
	s, ok := registry.Resource[*Structural](c.Run, registry.TreeSitter)
	if !ok {
		return nil, astgrep.Query{}, mcp.NewToolResultError("this run has no tree-sitter engine")
	}
	if path == "" {
		path = "."
	}
	abs, err := c.Path(path)
	if err != nil {
		return nil, astgrep.Query{}, mcp.NewToolResultError(err.Error())
	}
	return s, astgrep.Query{Root: c.Run.Root(), Guard: c.Run.Guard(), Path: abs, Pattern: pattern, Language: language}, nil
}

func failure(ctx context.Context, err error) (*mcp.CallToolResult, error) {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil, ctx.Err()
	}
	return registry.Errorf("%v", err)
}

func formatResult(pattern string, r *astgrep.Result) string {
	var b strings.Builder
	switch {
	case r.Total == 0:
		fmt.Fprintf(&b, "no matches for %q in %d %s files", pattern, r.FilesScanned, r.Language)
	case r.Total > len(r.Matches):
		fmt.Fprintf(&b, "%d matches for %q, showing the first %d (raise max_results for more)", r.Total, pattern, len(r.Matches))
	default:
		fmt.Fprintf(&b, "%s for %q", plural(r.Total, "match", "matches"), pattern)
	}
	fmt.Fprintf(&b, " [%s, pattern read as %s; %d files scanned, %d parsed]\n", r.Language, r.Context, r.FilesScanned, r.FilesParsed)
	for _, m := range r.Matches {
		if m.StartLine == m.EndLine {
			fmt.Fprintf(&b, "%s:%d: ", m.File, m.StartLine)
		} else {
			fmt.Fprintf(&b, "%s:%d-%d: ", m.File, m.StartLine, m.EndLine)
		}
		b.WriteString(indentAfterFirst(m.Text, "    "))
		b.WriteString("\n")
		if caps := captures(r.Metavariables, m.Captures); caps != "" {
			b.WriteString("    " + caps + "\n")
		}
	}
	if len(r.Skipped) > 0 || r.FilesSkipped > 0 {
		var names []string
		for _, s := range r.Skipped {
			names = append(names, s.File+" ("+s.Reason+")")
		}
		fmt.Fprintf(&b, "%s not searched: %s\n", plural(r.FilesSkipped, "file", "files"), strings.Join(names, ", "))
	}
	return strings.TrimRight(b.String(), "\n")
}

// captures lists a match's captures in the pattern's order: $X = text.
func captures(order []string, caps map[string]astgrep.Capture) string {
	var parts []string
	for _, name := range order {
		key := strings.TrimLeft(name, "$")
		cp, ok := caps[key]
		if !ok {
			cp, ok = caps[name]
		}
		if !ok {
			continue
		}
		text := strings.Join(strings.Fields(cp.Text), " ")
		if len(text) > 120 {
			text = text[:117] + "…"
		}
		parts = append(parts, fmt.Sprintf("%s = %s", name, text))
	}
	return strings.Join(parts, "; ")
}

func indentAfterFirst(s, indent string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+indent)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

type editParams struct {
	Pattern  string `json:"pattern" jsonschema:"what to match, as for ast_grep"`
	Rewrite  string `json:"rewrite" jsonschema:"what each match becomes; $NAME and $$$NAME are replaced by what they captured"`
	Path     string `json:"path,omitempty" jsonschema:"file or folder to rewrite in, relative to the root (default: the whole root)"`
	Language string `json:"language,omitempty" jsonschema:"grammar id, as for ast_grep"`
}

// Edit is the ast_edit tool (AE-1, AE-4): it stages and writes nothing.
var Edit = func() registry.Descriptor {
	d := registry.Tool("ast_edit", tiers.Write,
		"Stage a structural rewrite: every match of pattern becomes rewrite, with $NAME and $$$NAME substituted. Nothing is written: "+
			"the result is the count, the files and lines, a unified diff and an edit_id; call resolve with that edit_id to accept or discard. "+
			"A rewrite that would leave a file unparsable is refused here. "+
			fmt.Sprintf("Resolve each edit before staging many: at most %d stay pending, and older ones are dropped.", astedit.DefaultMaxPending),
		needs, edit)
	d.Title = "stage structural rewrite"
	return d
}()

func edit(ctx context.Context, c *registry.Call, p editParams) (*mcp.CallToolResult, error) {
	s, q, fail := query(c, p.Pattern, p.Path, p.Language)
	if fail != nil {
		return fail, nil
	}
	q.Progress = func(done, total int) {
		c.Progress(ctx, float64(done), float64(total), "files searched")
	}
	prop, err := s.Stager.Stage(ctx, q, p.Rewrite)
	if err != nil {
		return failure(ctx, err)
	}
	return registry.Text(prop.Summary())
}

type resolveParams struct {
	EditID string `json:"edit_id" jsonschema:"the id from ast_edit's (proposed) result, such as edit_1"`
	Action string `json:"action" jsonschema:"accept (write every file, or none if any changed since staging) or discard" enum:"accept,discard"`
	Force  bool   `json:"force,omitempty" jsonschema:"on accept, write files even if they are read-only, have other hard links (they keep the old content) or their owner cannot be kept; the result says what was lost"`
}

// Resolve is the resolve tool (AE-2, AE-3).
var Resolve = func() registry.Descriptor {
	d := registry.Tool("resolve", tiers.Write,
		"Accept or discard an edit staged by ast_edit. Accept first checks every file against what was staged: if any changed, "+
			"nothing is written and the edit is dropped. Otherwise every file is written atomically, all or nothing.",
		needs, resolve)
	d.Title = "apply or drop staged rewrite"
	return d
}()

func resolve(ctx context.Context, c *registry.Call, p resolveParams) (*mcp.CallToolResult, error) {
	s, ok := registry.Resource[*Structural](c.Run, registry.TreeSitter)
	if !ok {
		return registry.Errorf("this run has no tree-sitter engine")
	}
	var accept bool
	switch p.Action {
	case "accept":
		accept = true
	case "discard":
	default:
		return registry.Errorf("action must be accept or discard, not %q", p.Action)
	}
	out, err := s.Stager.Resolve(ctx, p.EditID, accept, atomicfile.Options{Force: p.Force})
	if err != nil {
		return registry.Errorf("%v", err)
	}
	if !accept {
		return registry.Text(fmt.Sprintf("discarded %s: nothing was written", out.ID))
	}
	for _, f := range out.Files {
		if abs, err := c.Path(f); err == nil {
			c.Wrote(abs)
		}
	}
	text := fmt.Sprintf("accepted %s: %s in %s written: %s", out.ID,
		plural(out.Replacements, "replacement", "replacements"), plural(len(out.Files), "file", "files"), strings.Join(out.Files, ", "))
	for _, n := range out.Notes {
		text += "\nnote: " + n
	}
	return registry.Text(text)
}
