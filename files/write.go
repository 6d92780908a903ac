package files

import (
	"context"
	"fmt"
	"strings"

	"github.com/builtin-tools/builtin-tools/internal/atomicfile"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

type writeParams struct {
	Path    string `json:"path" jsonschema:"file to create or replace, relative to the root"`
	Content string `json:"content" jsonschema:"the whole new content of the file"`
	Force   bool   `json:"force,omitempty" jsonschema:"replace the file even if it is read-only, has other hard links (they keep the old content) or its owner cannot be kept; the result says what was lost"`
}

// Write creates or replaces a file atomically.
var Write = registry.Tool("write", tiers.Write,
	"Create a file or replace its whole content. Missing parent folders are created. The write is atomic "+
		"(a reader sees the old or the new file, never half of it) and an existing file keeps its permissions. "+
		"To change part of a file, use edit or apply_patch.",
	nil, writeFile)

func writeFile(ctx context.Context, c *registry.Call, p writeParams) (*mcp.CallToolResult, error) {
	abs, err := c.Path(p.Path)
	if err != nil {
		return registry.Errorf("%v", err)
	}
	rel := c.Rel(abs)
	unlock, err := atomicfile.Lock(ctx, abs)
	if err != nil {
		return registry.Errorf("%v; %s was not changed", err, rel)
	}
	defer unlock()
	verb := "created"
	switch info, err := c.Run.Guard().Lstat(abs); {
	case err == nil && info.IsDir():
		return registry.Errorf("%s is a folder; give a file path", rel)
	case err == nil && !info.Mode().IsRegular():
		return registry.Errorf("%s is not a regular file (%s); write replaces regular files only", rel, info.Mode().Type())
	case err == nil:
		verb = "replaced"
	}
	rep, err := atomicfile.Write(c.Run.Guard(), atomicfile.Change{Path: abs, Data: []byte(p.Content)}, atomicfile.Options{Force: p.Force})
	if err != nil {
		return registry.Errorf("%s", writeError(rel, err))
	}
	c.Wrote(abs)
	lines := strings.Count(p.Content, "\n")
	if p.Content != "" && !strings.HasSuffix(p.Content, "\n") {
		lines++
	}
	return registry.Text(fmt.Sprintf("%s %s (%d lines, %d bytes)%s", verb, rel, lines, len(p.Content), notes(rep)))
}
