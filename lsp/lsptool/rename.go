package lsptool

import (
	"context"
	"errors"
	"strings"

	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

type renameParams struct {
	File       string `json:"file" jsonschema:"file where the symbol appears, relative to the root"`
	Line       int    `json:"line" jsonschema:"1-based line of the symbol"`
	Symbol     string `json:"symbol" jsonschema:"the symbol's text on that line; a qualified name (pkg.Func, obj.method, Type::method) points at its last part"`
	Occurrence int    `json:"occurrence,omitempty" jsonschema:"which occurrence of symbol on the line, when it appears there more than once (1-based; default 1)"`
	NewName    string `json:"new_name" jsonschema:"the new name"`
	Force      bool   `json:"force,omitempty" jsonschema:"change files even if they are read-only, have other hard links (they keep the old content) or their owner cannot be kept; the result says what was lost"`
}

// RenameTool is the `lsp_rename` tool (REN-1).
var RenameTool = registry.Descriptor{
	Name:  "lsp_rename",
	Title: "rename symbol",
	Tier:  tiers.Write,
	Description: "Rename a symbol across the project with its language server: every file the server names is changed, all or nothing, " +
		"including files the server moves. Reports the files and edit counts.",
	Writes:  true,
	Handler: registry.With(Key, rename),
}

// RenameResult is what lsp_rename changed.
type RenameResult struct {
	*lsp.RenameResult
	text string
}

// Text is what the agent reads.
func (r RenameResult) Text() string { return r.text }

func rename(ctx context.Context, c *registry.Call, s *Servers, p renameParams) (RenameResult, error) {
	at, err := c.Location(p.File)
	if err != nil {
		return RenameResult{}, err
	}
	if p.Line <= 0 || strings.TrimSpace(p.Symbol) == "" || strings.TrimSpace(p.NewName) == "" {
		return RenameResult{}, errors.New("lsp_rename needs file, line (1-based), symbol (its text on that line) and new_name")
	}
	res, err := s.Sup.Rename(ctx, at, lsp.Place{Line: p.Line, Symbol: p.Symbol, Occurrence: p.Occurrence}, p.NewName, p.Force)
	if err != nil {
		return RenameResult{}, errors.New(s.Sup.RelText(err.Error()))
	}
	for _, f := range res.Files {
		if abs, err := c.Path(f.Path); err == nil {
			c.Wrote(abs)
		}
	}
	return RenameResult{RenameResult: res, text: FormatRename(res)}, nil
}
