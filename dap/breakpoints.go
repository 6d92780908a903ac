package dap

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	godap "github.com/google/go-dap"
)

// Breakpoint is one line breakpoint, kept by the supervisor across
// sessions: set before a launch, merged per file before every
// setBreakpoints, with a stable id and its own hit count.
type Breakpoint struct {
	ID           string `json:"id" jsonschema:"stable id, b1, b2, ..."`
	File         string `json:"file" jsonschema:"relative to the root"`
	Line         int    `json:"line" jsonschema:"the line asked for"`
	Condition    string `json:"condition,omitempty"`
	HitCondition string `json:"hit_condition,omitempty"`
	LogMessage   string `json:"log_message,omitempty" jsonschema:"a logpoint: printed, not stopped at"`
	// Verified, BoundLine and Message are the adapter's answer.
	Verified  bool   `json:"verified"`
	BoundLine int    `json:"bound_line,omitempty" jsonschema:"the line the adapter put it on, when not the one asked for"`
	Message   string `json:"message,omitempty" jsonschema:"the adapter's reason, when unverified"`
	Hits      int    `json:"hits"`
	// Unsupported names a setting the adapter does not support and that was
	// therefore not sent.
	Unsupported string `json:"unsupported,omitempty"`
	adapterID   int
}

// Breakpoints is the set kept for a run.
type Breakpoints struct {
	mu     sync.Mutex
	next   int
	byFile map[string][]*Breakpoint
}

// NewBreakpoints makes an empty set.
func NewBreakpoints() *Breakpoints { return &Breakpoints{byFile: map[string][]*Breakpoint{}} }

// LineSpec is a breakpoint asked for on one line.
type LineSpec struct {
	Line                                int
	Condition, HitCondition, LogMessage string
}

// Set adds lines to file's breakpoints, updating those already on a line
// (which keep their id and hits); no line given clears the file. remove
// drops lines.
func (b *Breakpoints) Set(file string, lines []LineSpec, remove []int, clear bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if clear {
		delete(b.byFile, file)
		return
	}
	cur := b.byFile[file]
	cur = slices.DeleteFunc(cur, func(bp *Breakpoint) bool { return slices.Contains(remove, bp.Line) })
	for _, l := range lines {
		i := slices.IndexFunc(cur, func(bp *Breakpoint) bool { return bp.Line == l.Line })
		if i < 0 {
			b.next++
			cur = append(cur, &Breakpoint{ID: fmt.Sprintf("b%d", b.next), File: file, Line: l.Line})
			i = len(cur) - 1
		}
		cur[i].Condition, cur[i].HitCondition, cur[i].LogMessage = l.Condition, l.HitCondition, l.LogMessage
	}
	slices.SortFunc(cur, func(x, y *Breakpoint) int { return x.Line - y.Line })
	if len(cur) == 0 {
		delete(b.byFile, file)
	} else {
		b.byFile[file] = cur
	}
}

func (b *Breakpoints) files() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for f := range b.byFile {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

func (b *Breakpoints) inFile(file string) []*Breakpoint {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.byFile[file])
}

// All returns copies of every breakpoint, by file then line.
func (b *Breakpoints) All() []Breakpoint {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Breakpoint
	for _, f := range sortedFiles(b.byFile) {
		for _, bp := range b.byFile[f] {
			out = append(out, *bp)
		}
	}
	return out
}

func sortedFiles(m map[string][]*Breakpoint) []string {
	var out []string
	for f := range m {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// bound records the adapter's answer to a setBreakpoints, in request order.
func (b *Breakpoints) bound(file string, got []godap.Breakpoint, caps capabilities) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, bp := range b.byFile[file] {
		var un []string
		if bp.Condition != "" && !caps.SupportsConditionalBreakpoints {
			un = append(un, "condition")
		}
		if bp.HitCondition != "" && !caps.SupportsHitConditionalBreakpoints {
			un = append(un, "hit_condition")
		}
		if bp.LogMessage != "" && !caps.SupportsLogPoints {
			un = append(un, "log_message")
		}
		bp.Unsupported = strings.Join(un, ", ")
		if i >= len(got) {
			bp.Verified, bp.Message = false, "the adapter did not answer for it"
			continue
		}
		g := got[i]
		bp.adapterID, bp.Verified, bp.Message, bp.BoundLine = g.Id, g.Verified, g.Message, 0
		if g.Line > 0 && g.Line != bp.Line {
			bp.BoundLine = g.Line
		}
	}
}

// update applies a breakpoint event (delve and lldb-dap verify late).
func (b *Breakpoints) update(g godap.Breakpoint) {
	if g.Id == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, list := range b.byFile {
		for _, bp := range list {
			if bp.adapterID == g.Id {
				bp.Verified, bp.Message = g.Verified, g.Message
				if g.Line > 0 && g.Line != bp.Line {
					bp.BoundLine = g.Line
				}
			}
		}
	}
}

// hit counts a stop at breakpoints: by the adapter's ids when it gives
// them, else by the stop's file and line. It returns the ids hit.
func (b *Breakpoints) hit(adapterIDs []int, file string, line int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var ids []string
	for _, list := range b.byFile {
		for _, bp := range list {
			match := false
			if len(adapterIDs) > 0 {
				match = bp.adapterID != 0 && slices.Contains(adapterIDs, bp.adapterID)
			} else {
				l := bp.Line
				if bp.BoundLine > 0 {
					l = bp.BoundLine
				}
				match = bp.File == file && l == line
			}
			if match {
				bp.Hits++
				ids = append(ids, bp.ID)
			}
		}
	}
	slices.Sort(ids)
	return ids
}

// resetHits starts a new session's counts.
func (b *Breakpoints) resetHits() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, list := range b.byFile {
		for _, bp := range list {
			bp.Hits, bp.adapterID = 0, 0
		}
	}
}

// cleanFile turns a path into the slash form the set is keyed by.
func cleanFile(rel string) string { return path.Clean(strings.ReplaceAll(rel, "\\", "/")) }
