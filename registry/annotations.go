package registry

import (
	"fmt"

	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

// Annotations returns the MCP hints tier t implies, every hint set
// explicitly (mcp-go's NewTool otherwise leaves a tool looking destructive
// and not read-only). openWorld says whether the tool reaches beyond the
// run's root, e.g. an interpreter or a debuggee.
func Annotations(t tiers.Tier, title string, openWorld bool) mcp.ToolAnnotation {
	yes, no := true, false
	a := mcp.ToolAnnotation{Title: title, IdempotentHint: &no, OpenWorldHint: &openWorld,
		ReadOnlyHint: &no, DestructiveHint: &yes}
	if t == tiers.Read {
		a.ReadOnlyHint, a.DestructiveHint = &yes, &no
	}
	return a
}

// CheckAnnotations says why annotations a do not fit tier t (REG-6): every
// hint present, read-only and destructive as the tier says; nil when they
// fit.
func CheckAnnotations(t tiers.Tier, a mcp.ToolAnnotation) error {
	if a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil {
		return fmt.Errorf("annotations must set readOnlyHint, destructiveHint, idempotentHint and openWorldHint explicitly")
	}
	wantRO := t == tiers.Read
	if *a.ReadOnlyHint != wantRO {
		return fmt.Errorf("tier %s needs readOnlyHint %v, has %v", t, wantRO, *a.ReadOnlyHint)
	}
	if *a.DestructiveHint == wantRO {
		return fmt.Errorf("tier %s needs destructiveHint %v, has %v", t, !wantRO, *a.DestructiveHint)
	}
	return nil
}
