package lang

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/builtin-tools/builtin-tools/astgrep"
)

// Shapes is what an editor of definitions (edit_symbol) needs of a
// language beyond where its definitions are: shapes.scm, a tree-sitter
// query for the parts of a definition tags.scm does not capture, and the
// language.json keys that say how the language's source is laid out. A
// language without shapes.scm has none, and edit_symbol does not edit it.
type Shapes struct {
	// Grammar is the astgrep language id Query is written for.
	Grammar string
	// Query is shapes.scm's text (checked when the language loaded), for
	// the caller's engine to compile: @def with @body (a definition and its
	// body), @outer around @inner (a declaration that wraps a definition
	// alone: Go's type around a type spec, Python's decorators, export, a
	// C++ template) and @doc (a body's docstring statement). Captures
	// named _x are for predicates.
	Query string
	// Indent is one level of indentation where a file shows none
	// ("indent"; default four spaces).
	Indent string
	// Comments are how a comment's line starts ("comments": "//", "/*",
	// "*", "#"), and CommentEnds how a block comment's last line ends
	// ("comment_ends": "*/"): the doc comment above a definition, and a
	// generated file's header.
	Comments, CommentEnds []string
	// Attributes are how a line starts that decorates the definition below
	// it ("attributes": "@" for decorators and annotations, "#[", "[[").
	Attributes []string
	// BracedBodies says a @body holds its braces, which replace_body keeps
	// ("braced_bodies", default true); false: the @body node is the body
	// itself, replaced whole (Python's block, Ruby's body_statement).
	BracedBodies bool
	// Docstring matches how a string starts that, first in a body (@doc),
	// is the body's docstring ("docstring"; nil: new text is never taken
	// as a docstring).
	Docstring *regexp.Regexp
}

// Shapes is the language's Shapes, or nil when it has no shapes.scm.
func (l *Language) Shapes() *Shapes { return l.shapes }

// shapeConfig is the language.json keys Shapes reads.
type shapeConfig struct {
	// ShapeFiles are the shape query files, read in order as one query
	// (paths as in "queries"). Default: shapes.scm if the folder has one,
	// else the extended language's.
	ShapeFiles   []string `json:"shapes"`
	Indent       string   `json:"indent"`
	Comments     []string `json:"comments"`
	CommentEnds  []string `json:"comment_ends"`
	Attributes   []string `json:"attributes"`
	BracedBodies *bool    `json:"braced_bodies"`
	Docstring    string   `json:"docstring"`
}

// inherit takes from base (the language named by extends) what c leaves
// out.
func (c *shapeConfig) inherit(base shapeConfig, extends string) {
	inheritFiles(&c.ShapeFiles, base.ShapeFiles, extends)
	inherit(&c.Indent, base.Indent)
	inheritList(&c.Comments, base.Comments)
	inheritList(&c.CommentEnds, base.CommentEnds)
	inheritList(&c.Attributes, base.Attributes)
	inherit(&c.BracedBodies, base.BracedBodies)
	inherit(&c.Docstring, base.Docstring)
}

var shapeCaptures = []string{"def", "body", "outer", "inner", "doc"}

// load reads and checks the language's shape files; nil when it lists
// none.
func (c *shapeConfig) load(e *astgrep.Engine, fsys fs.FS, id, grammar string) (*Shapes, error) {
	if len(c.ShapeFiles) == 0 {
		return nil, nil
	}
	s := &Shapes{Grammar: grammar, Indent: c.Indent, Comments: c.Comments, CommentEnds: c.CommentEnds, Attributes: c.Attributes,
		BracedBodies: c.BracedBodies == nil || *c.BracedBodies}
	if s.Indent == "" {
		s.Indent = "    "
	}
	if strings.Trim(s.Indent, " ") != "" && s.Indent != "\t" {
		return nil, fmt.Errorf("language %s: indent %q is neither spaces nor one tab", id, s.Indent)
	}
	for key, list := range map[string][]string{"comments": s.Comments, "comment_ends": s.CommentEnds, "attributes": s.Attributes} {
		for _, p := range list {
			if strings.TrimSpace(p) != p || p == "" {
				return nil, fmt.Errorf("language %s: %s lists %q; each is the text a line starts or ends with, without spaces around it", id, key, p)
			}
		}
	}
	if c.Docstring != "" {
		re, err := regexp.Compile(c.Docstring)
		if err != nil {
			return nil, fmt.Errorf("language %s: docstring: %w", id, err)
		}
		s.Docstring = re
	}
	var src []byte
	for _, name := range c.ShapeFiles {
		part, err := fs.ReadFile(fsys, path.Join(id, name))
		if err != nil {
			return nil, fmt.Errorf("language %s: %w", id, err)
		}
		q, err := e.CompileCaptureQuery(grammar, string(part))
		if err != nil {
			return nil, fmt.Errorf("language %s: %s: %w", id, name, err)
		}
		for _, n := range q.Names {
			if !strings.HasPrefix(n, "_") && !slices.Contains(shapeCaptures, n) {
				return nil, fmt.Errorf("language %s: %s: capture @%s is none of @def, @body, @outer, @inner, @doc (or @_name, for a predicate)", id, name, n)
			}
		}
		src = append(append(src, part...), '\n')
	}
	s.Query = string(src)
	return s, nil
}
