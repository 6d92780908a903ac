// Package tiers names what a tool may do (read, write, exec), the modes an
// agent runs in (normal, plan, readonly), which tiers each mode sees, and the
// MCP annotations a tier implies.
//
// A tier decides visibility, not only prompting: plan mode and read-only
// subagents see read tools only, so write and exec tools are absent from
// their tool list and refused by name (REG-4, REG-5).
package tiers

import (
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// Tier is what a tool may do to the world.
type Tier string

const (
	// Read tools have no side effects.
	Read Tier = "read"
	// Write tools change files.
	Write Tier = "write"
	// Exec tools start or control a process.
	Exec Tier = "exec"
)

// All lists the tiers from least to most powerful.
var All = []Tier{Read, Write, Exec}

// ParseTier reads a tier name.
func ParseTier(s string) (Tier, error) {
	for _, t := range All {
		if string(t) == s {
			return t, nil
		}
	}
	return "", fmt.Errorf("unknown tier %q: use one of read, write, exec", s)
}

// Mode is the kind of agent a run serves.
type Mode string

const (
	// Normal sees every tier.
	Normal Mode = "normal"
	// Plan mode explores and proposes; it sees read tools only.
	Plan Mode = "plan"
	// ReadOnly is a read-only subagent; it sees read tools only.
	ReadOnly Mode = "readonly"
)

// Modes lists every mode.
var Modes = []Mode{Normal, Plan, ReadOnly}

// ParseMode reads a mode name.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown mode %q: use one of normal, plan, readonly", s)
}

// Sees reports whether a tool of tier t is visible and callable in mode m.
func (m Mode) Sees(t Tier) bool {
	switch m {
	case Normal:
		return t == Read || t == Write || t == Exec
	case Plan, ReadOnly:
		return t == Read
	}
	return false
}

// Visible lists the tiers mode m sees.
func (m Mode) Visible() []Tier {
	var out []Tier
	for _, t := range All {
		if m.Sees(t) {
			out = append(out, t)
		}
	}
	return out
}

// Refusal is the message given when a tool of tier t is called in mode m,
// which does not see it.
func (m Mode) Refusal(tool string, t Tier) string {
	names := make([]string, 0, 3)
	for _, v := range m.Visible() {
		names = append(names, string(v))
	}
	return fmt.Sprintf("tool %q (tier %s) is not available in %s mode, which sees %s tools only; "+
		"do the work with those, or hand the change to a run in normal mode",
		tool, t, m, strings.Join(names, " and "))
}

// Annotations returns the MCP hints tier t implies, every hint set
// explicitly (mcp-go's NewTool otherwise leaves a tool looking destructive
// and not read-only). openWorld says whether the tool reaches beyond the
// run's root, e.g. an interpreter or a debuggee.
func (t Tier) Annotations(title string, openWorld bool) mcp.ToolAnnotation {
	yes, no := true, false
	a := mcp.ToolAnnotation{Title: title, IdempotentHint: &no, OpenWorldHint: &no}
	switch t {
	case Read:
		a.ReadOnlyHint, a.DestructiveHint = &yes, &no
	case Write:
		a.ReadOnlyHint, a.DestructiveHint = &no, &yes
	case Exec:
		a.ReadOnlyHint, a.DestructiveHint = &no, &yes
	}
	if openWorld {
		a.OpenWorldHint = &yes
	}
	return a
}

// Agrees reports whether annotations a fit tier t: every hint present, and
// read-only and destructive as the tier says.
func (t Tier) Agrees(a mcp.ToolAnnotation) error {
	if a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil {
		return fmt.Errorf("annotations must set readOnlyHint, destructiveHint, idempotentHint and openWorldHint explicitly")
	}
	wantRO := t == Read
	if *a.ReadOnlyHint != wantRO {
		return fmt.Errorf("tier %s needs readOnlyHint %v, has %v", t, wantRO, *a.ReadOnlyHint)
	}
	if *a.DestructiveHint == wantRO {
		return fmt.Errorf("tier %s needs destructiveHint %v, has %v", t, !wantRO, *a.DestructiveHint)
	}
	return nil
}
