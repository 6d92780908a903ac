// Package tiers names what a tool may do (read, write, exec), the modes an
// agent runs in (normal, plan, readonly) and which tiers each mode sees. It
// knows nothing of MCP: the registry turns a tier into MCP's annotations.
//
// A tier decides visibility, not only prompting: plan mode and read-only
// subagents see read tools only, so write and exec tools are absent from
// their tool list and refused by name (REG-4, REG-5).
package tiers

import (
	"fmt"
	"slices"
	"strings"
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
func ParseTier(s string) (Tier, error) { return parse("tier", All, s) }

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
func ParseMode(s string) (Mode, error) { return parse("mode", Modes, s) }

// parse finds s among names; what says what a name names, for the error.
func parse[T ~string](what string, names []T, s string) (T, error) {
	if i := slices.Index(names, T(s)); i >= 0 {
		return names[i], nil
	}
	list := make([]string, len(names))
	for i, n := range names {
		list[i] = string(n)
	}
	return "", fmt.Errorf("unknown %s %q: use one of %s", what, s, strings.Join(list, ", "))
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
