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
	temp        bool // run_to_line's one-shot breakpoint, not listed
}

// at is the line the breakpoint is on: where the adapter put it, else the
// one asked for.
func (bp *Breakpoint) at() int {
	if bp.BoundLine > 0 {
		return bp.BoundLine
	}
	return bp.Line
}

// Breakpoints is the set kept for a run.
type Breakpoints struct {
	mu     sync.Mutex
	next   int
	byFile map[string][]*Breakpoint
	funcs  []*FuncBreakpoint
}

// NewBreakpoints makes an empty set.
func NewBreakpoints() *Breakpoints { return &Breakpoints{byFile: map[string][]*Breakpoint{}} }

// LineSpec is a breakpoint asked for on one line.
type LineSpec struct {
	Line                                int
	Condition, HitCondition, LogMessage string
}

// MaxBreakpointLines caps the lines one call may set and the breakpoints
// one file may hold: every one is sent to the adapter at each change of the
// file and at every launch.
const MaxBreakpointLines = 1000

// Set adds lines to file's breakpoints, updating those already on a line
// (which keep their id and hits); clear drops the file's. remove drops
// lines. A file that would hold more than MaxBreakpointLines is refused,
// unchanged.
func (b *Breakpoints) Set(file string, lines []LineSpec, remove []int, clear bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if clear {
		delete(b.byFile, file)
		return nil
	}
	byLine := make(map[int]*Breakpoint, len(b.byFile[file])+len(lines))
	for _, bp := range b.byFile[file] {
		byLine[bp.Line] = bp
	}
	for _, l := range remove {
		delete(byLine, l)
	}
	var added []*Breakpoint
	for _, l := range lines {
		if _, ok := byLine[l.Line]; !ok {
			bp := &Breakpoint{File: file, Line: l.Line}
			byLine[l.Line] = bp
			added = append(added, bp)
		}
	}
	if len(byLine) > MaxBreakpointLines {
		return badArg("%s would hold %d breakpoints; at most %d per file are kept (each is sent to the adapter at every change and launch): remove some, or break on fewer lines", file, len(byLine), MaxBreakpointLines)
	}
	for _, bp := range added {
		b.next++
		bp.ID = fmt.Sprintf("b%d", b.next)
	}
	for _, l := range lines {
		bp := byLine[l.Line]
		bp.Condition, bp.HitCondition, bp.LogMessage = l.Condition, l.HitCondition, l.LogMessage
		bp.temp = false // asked for: yours now, kept
	}
	if len(byLine) == 0 {
		delete(b.byFile, file)
		return nil
	}
	cur := make([]*Breakpoint, 0, len(byLine))
	for _, bp := range byLine {
		cur = append(cur, bp)
	}
	slices.SortFunc(cur, func(x, y *Breakpoint) int { return x.Line - y.Line })
	b.byFile[file] = cur
	return nil
}

// files lists the files with breakpoints, sorted.
func (b *Breakpoints) files() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return sortedFiles(b.byFile)
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
	out := []Breakpoint{} // a list, never null, in a result
	for _, f := range sortedFiles(b.byFile) {
		for _, bp := range b.byFile[f] {
			if !bp.temp {
				out = append(out, *bp)
			}
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
		bp.Unsupported = unsupported(caps, bp.Condition, bp.HitCondition, bp.LogMessage)
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

// unsupported names the settings given that the adapter does not
// support, and that were therefore not sent: "condition, hit_condition".
func unsupported(caps capabilities, cond, hitCond, logMessage string) string {
	var un []string
	if cond != "" && !caps.SupportsConditionalBreakpoints {
		un = append(un, "condition")
	}
	if hitCond != "" && !caps.SupportsHitConditionalBreakpoints {
		un = append(un, "hit_condition")
	}
	if logMessage != "" && !caps.SupportsLogPoints {
		un = append(un, "log_message")
	}
	return strings.Join(un, ", ")
}

// update applies a breakpoint event (delve and lldb-dap verify late).
func (b *Breakpoints) update(g godap.Breakpoint) {
	if g.Id == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, f := range b.funcs {
		if f.adapterID == g.Id {
			f.Verified, f.Message = g.Verified, g.Message
			if g.Line > 0 && f.File != "" {
				f.Line = g.Line
			}
		}
	}
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
				match = bp.File == file && bp.at() == line
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

// cleanFile turns a path into the slash form the set is keyed by.
func cleanFile(rel string) string { return path.Clean(strings.ReplaceAll(rel, "\\", "/")) }

// reset zeroes the hit counts, and with ids the adapter's ids too: a new
// session's start (a restart in the same adapter keeps its ids).
func (b *Breakpoints) reset(ids bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, list := range b.byFile {
		for _, bp := range list {
			bp.Hits = 0
			if ids {
				bp.adapterID = 0
			}
		}
	}
	for _, f := range b.funcs {
		f.Hits = 0
		if ids {
			f.adapterID = 0
		}
	}
}

// idsAt lists breakpoints bound at file:line.
func (b *Breakpoints) idsAt(file string, line int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var ids []string
	for _, bp := range b.byFile[file] {
		if bp.at() == line {
			ids = append(ids, bp.ID)
		}
	}
	return ids
}
