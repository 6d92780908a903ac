package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/builtin-tools/builtin-tools/internal/atomicfile"
	"github.com/builtin-tools/builtin-tools/internal/staged"
	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/pathguard"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

type writeParams struct {
	Path    string `json:"path" jsonschema:"file to create or replace, relative to the root"`
	Content string `json:"content" jsonschema:"the whole new content of the file"`
	Force   bool   `json:"force,omitempty" jsonschema:"replace the file even if it is read-only, has other hard links (they keep the old content) or its owner cannot be kept; the result says what was lost"`
	Check   bool   `json:"check,omitempty" jsonschema:"write nothing: give the new contents to the file's language server as an unsaved version and report the errors and warnings writing them would introduce and fix"`
}

// Write creates or replaces a file atomically.
var WriteTool = registry.Descriptor{
	Name:  "write",
	Title: "write file",
	Tier:  tiers.Write,
	Description: "Create a file or replace its whole content. Missing parent folders are created. The write is atomic " +
		"(a reader sees the old or the new file, never half of it) and an existing file keeps its permissions. " +
		"To change part of a file, use edit or apply_patch.",
	Writes:  true,
	Handler: registry.Func(writeFile, noCheckApproval(func(p writeParams) bool { return p.Check })),
}

// WriteResult is what write did.
type WriteResult struct {
	Path    string   `json:"path" jsonschema:"the file, relative to the root"`
	Created bool     `json:"created" jsonschema:"true when the file did not exist before"`
	Lines   int      `json:"lines"`
	Bytes   int      `json:"bytes"`
	Notes   []string `json:"notes,omitempty" jsonschema:"what the write could not keep (owner, hard links) or had to change"`
	// Checked and Preview are set with check: nothing was written.
	Checked bool         `json:"checked,omitempty" jsonschema:"with check: nothing was written"`
	Preview *lsp.Preview `json:"preview,omitempty" jsonschema:"with check: the errors and warnings writing would introduce and fix"`
	preview string
}

// Text is what the agent reads.
func (r WriteResult) Text() string {
	if r.Checked {
		return fmt.Sprintf("checked %s (%d lines, %d bytes); nothing was written\n%s", r.Path, r.Lines, r.Bytes, r.preview)
	}
	verb := "replaced"
	if r.Created {
		verb = "created"
	}
	return fmt.Sprintf("%s %s (%d lines, %d bytes)%s", verb, r.Path, r.Lines, r.Bytes, noteText(r.Notes))
}

func writeFile(ctx context.Context, c *registry.Call, p writeParams) (WriteResult, error) {
	abs, err := c.Path(p.Path)
	if err != nil {
		return WriteResult{}, err
	}
	rel := c.Rel(abs)
	unlock, err := atomicfile.Lock(ctx, abs)
	if err != nil {
		return WriteResult{}, fmt.Errorf("%v; %s was not changed", err, rel)
	}
	defer unlock()
	verb := "created"
	switch info, err := c.Run.Guard().Lstat(abs); {
	case err == nil && info.IsDir():
		return WriteResult{}, fmt.Errorf("%s is a folder; give a file path", rel)
	case err == nil && info.Mode()&fs.ModeSymlink != 0:
		// The path was resolved through its links, so a link here was
		// swapped in since.
		return WriteResult{}, fmt.Errorf("cannot write %s: %v", rel, pathguard.ErrPathChanged)
	case err == nil && !info.Mode().IsRegular():
		return WriteResult{}, fmt.Errorf("%s is not a regular file (%s); write replaces regular files only", rel, info.Mode().Type())
	case err == nil:
		verb = "replaced"
	}
	// What the file held, for the check of the files using what changed.
	var before []byte
	known := verb == "created"
	if verb == "replaced" && !p.Check {
		var err error
		before, _, err = c.Run.Guard().ReadFile(abs, registry.MaxBefore)
		known = err == nil
	}
	lines := strings.Count(p.Content, "\n")
	if p.Content != "" && !strings.HasSuffix(p.Content, "\n") {
		lines++
	}
	if p.Check {
		pv, text, err := checkContents(ctx, c, []staged.File{{File: rel, Path: abs, After: []byte(p.Content)}})
		if err != nil {
			return WriteResult{}, err
		}
		return WriteResult{Path: rel, Created: verb == "created", Lines: lines, Bytes: len(p.Content), Checked: true, Preview: pv, preview: text}, nil
	}
	rep, err := atomicfile.Write(c.Run.Guard(), atomicfile.Change{Path: abs, Data: []byte(p.Content)}, commitOptions(ctx, c, p.Force))
	if err != nil {
		return WriteResult{}, errors.New(writeError(rel, err))
	}
	if known {
		c.Before(abs, before)
	}
	c.Wrote(abs)
	return WriteResult{Path: rel, Created: verb == "created", Lines: lines, Bytes: len(p.Content), Notes: reportNotes(rep)}, nil
}
