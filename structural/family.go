// Package structural puts structural search and staged rewrites on a run's
// tool surface: ast_grep (read), ast_edit and resolve (write). The engines
// are packages astgrep and astedit; this package keeps one Structural
// resource per run and turns the engines' results into text for an agent.
package structural

import (
	"github.com/builtin-tools/builtin-tools/astedit"
	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/internal/staged"
	"github.com/builtin-tools/builtin-tools/pathguard"
	"github.com/builtin-tools/builtin-tools/registry"
)

// Structural is the run's tree-sitter resource: the engine with its parse
// cache, and the edits staged by ast_edit, which die with the run.
type Structural struct {
	Engine *astgrep.Engine
	Stager *astedit.Stager
}

// New makes the resource.
func New(opts astgrep.Options) *Structural {
	e := astgrep.NewEngine(opts)
	return &Structural{Engine: e, Stager: astedit.NewStager(e)}
}

// StageChange stages an edit worked out elsewhere (lsp_rename's preview)
// among ast_edit's, for resolve to accept or discard (staged.Stager).
func (s *Structural) StageChange(g *pathguard.Guard, c staged.Change) (staged.Staged, error) {
	return s.Stager.StageChange(g, c)
}

// Close frees the engine; staged edits are dropped unwritten.
func (s *Structural) Close() error { return s.Engine.Close() }

// Key is the tree-sitter resource's key.
var Key = registry.NewKey[*Structural]("structural")

// Family is ast_grep, ast_edit and resolve. Its setting is an
// astgrep.Options.
var Family = registry.Family[*Structural]{
	Key: Key,
	Doc: "ast_grep, ast_edit, resolve: search code by its shape and stage rewrites (tree-sitter)",
	Open: registry.Configured(Key, func(env *registry.Env, opts astgrep.Options) (*Structural, error) {
		return New(opts), nil
	}),
	Tools:    []registry.Descriptor{GrepTool, EditTool, ResolveTool, SymbolTool},
	Requires: []registry.Requirement{codeGraph, servers},
	// lsp_rename's preview stages among ast_edit's edits.
	Provides: []registry.Provision[*Structural]{registry.Provide(func(s *Structural) staged.Stager { return s })},
}

func query(c *registry.Call, pattern, path, language string) (astgrep.Query, error) {
	if path == "" {
		path = "."
	}
	at, err := c.Location(path)
	if err != nil {
		return astgrep.Query{}, err
	}
	return astgrep.Query{Path: at, Pattern: pattern, Language: language}, nil
}
