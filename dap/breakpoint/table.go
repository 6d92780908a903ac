// Package breakpoint is the table of breakpoints a debugging run keeps
// across its sessions: line breakpoints by file (with run_to_line's
// one-shot ones) and function breakpoints, each with a stable id, its
// settings, the adapter's last answer and its hits. It counts hits by the
// adapter's ids or by place and knows what the adapter said it supports;
// it sends nothing and knows nothing of connections or sessions.
package breakpoint

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	godap "github.com/google/go-dap"
)

// Source is one line breakpoint, kept by the supervisor across
// sessions: set before a launch, merged per file before every
// setBreakpoints, with a stable id and its own hit count.
type Source struct {
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

// At is the line the breakpoint is on: where the adapter put it, else the
// one asked for.
func (bp *Source) At() int {
	if bp.BoundLine > 0 {
		return bp.BoundLine
	}
	return bp.Line
}

// Table is the breakpoints kept for a run.
type Table struct {
	mu     sync.Mutex
	next   int
	byFile map[string][]*Source
	funcs  []*Function
}

// NewTable makes an empty table.
func NewTable() *Table { return &Table{byFile: map[string][]*Source{}} }

// LineSpec is a breakpoint asked for on one line.
type LineSpec struct {
	Line                                int
	Condition, HitCondition, LogMessage string
}

// MaxLines caps the lines one call may set and the breakpoints
// one file may hold: every one is sent to the adapter at each change of the
// file and at every launch.
const MaxLines = 1000

// Set adds lines to file's breakpoints, updating those already on a line
// (which keep their id and hits); clear drops the file's. remove drops
// lines. A file that would hold more than MaxLines is refused,
// unchanged.
func (b *Table) Set(file string, lines []LineSpec, remove []int, clear bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if clear {
		delete(b.byFile, file)
		return nil
	}
	byLine := make(map[int]*Source, len(b.byFile[file])+len(lines))
	for _, bp := range b.byFile[file] {
		byLine[bp.Line] = bp
	}
	for _, l := range remove {
		delete(byLine, l)
	}
	var added []*Source
	for _, l := range lines {
		if _, ok := byLine[l.Line]; !ok {
			bp := &Source{File: file, Line: l.Line}
			byLine[l.Line] = bp
			added = append(added, bp)
		}
	}
	if len(byLine) > MaxLines {
		return adapter.BadArg("%s would hold %d breakpoints; at most %d per file are kept (each is sent to the adapter at every change and launch): remove some, or break on fewer lines", file, len(byLine), MaxLines)
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
	cur := make([]*Source, 0, len(byLine))
	for _, bp := range byLine {
		cur = append(cur, bp)
	}
	slices.SortFunc(cur, func(x, y *Source) int { return x.Line - y.Line })
	b.byFile[file] = cur
	return nil
}

// Files lists the files with breakpoints, sorted.
func (b *Table) Files() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return sortedFiles(b.byFile)
}

func (b *Table) InFile(file string) []*Source {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.byFile[file])
}

// All returns copies of every breakpoint, by file then line.
func (b *Table) All() []Source {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := []Source{} // a list, never null, in a result
	for _, f := range sortedFiles(b.byFile) {
		for _, bp := range b.byFile[f] {
			if !bp.temp {
				out = append(out, *bp)
			}
		}
	}
	return out
}

func sortedFiles(m map[string][]*Source) []string {
	var out []string
	for f := range m {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// Bound records the adapter's answer to a setBreakpoints, in request order.
func (b *Table) Bound(file string, got []godap.Breakpoint, s Support) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, bp := range b.byFile[file] {
		bp.Unsupported = unsupported(s, bp.Condition, bp.HitCondition, bp.LogMessage)
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

// Support is what the adapter's initialize answer says it supports of a
// breakpoint's settings; a setting it does not support is not sent.
type Support struct{ Condition, HitCondition, LogMessage bool }

// unsupported names the settings given that the adapter does not
// support, and that were therefore not sent: "condition, hit_condition".
func unsupported(s Support, cond, hitCond, logMessage string) string {
	var un []string
	if cond != "" && !s.Condition {
		un = append(un, "condition")
	}
	if hitCond != "" && !s.HitCondition {
		un = append(un, "hit_condition")
	}
	if logMessage != "" && !s.LogMessage {
		un = append(un, "log_message")
	}
	return strings.Join(un, ", ")
}

// Update applies a breakpoint event (delve and lldb-dap verify late).
func (b *Table) Update(g godap.Breakpoint) {
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

// Hit counts a stop at breakpoints: by the adapter's ids when it gives
// them, else by the stop's file and line. It returns the ids hit.
func (b *Table) Hit(adapterIDs []int, file string, line int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var ids []string
	for _, list := range b.byFile {
		for _, bp := range list {
			match := false
			if len(adapterIDs) > 0 {
				match = bp.adapterID != 0 && slices.Contains(adapterIDs, bp.adapterID)
			} else {
				match = bp.File == file && bp.At() == line
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

// CleanFile turns a path into the slash form the set is keyed by.
func CleanFile(rel string) string { return path.Clean(strings.ReplaceAll(rel, "\\", "/")) }

// Reset zeroes the hit counts, and with ids the adapter's ids too: a new
// session's start (a restart in the same adapter keeps its ids).
func (b *Table) Reset(ids bool) {
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

// IDsAt lists breakpoints bound at file:line.
func (b *Table) IDsAt(file string, line int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var ids []string
	for _, bp := range b.byFile[file] {
		if bp.At() == line {
			ids = append(ids, bp.ID)
		}
	}
	return ids
}

// AddTemp puts a one-shot breakpoint on file:line, or finds one there.
func (b *Table) AddTemp(file string, line int) (id string, existed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, bp := range b.byFile[file] {
		if bp.Line == line {
			return bp.ID, true
		}
	}
	b.next++
	bp := &Source{ID: fmt.Sprintf("t%d", b.next), File: file, Line: line, temp: true}
	list := append(b.byFile[file], bp)
	slices.SortFunc(list, func(x, y *Source) int { return x.Line - y.Line })
	b.byFile[file] = list
	return bp.ID, false
}

// RemoveTemp drops a one-shot breakpoint.
func (b *Table) RemoveTemp(file, id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	list := slices.DeleteFunc(slices.Clone(b.byFile[file]), func(bp *Source) bool { return bp.temp && bp.ID == id })
	if len(list) == 0 {
		delete(b.byFile, file)
		return
	}
	b.byFile[file] = list
}

func (b *Table) Get(file, id string) (Source, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, bp := range b.byFile[file] {
		if bp.ID == id {
			return *bp, true
		}
	}
	return Source{}, false
}

// DropTemps removes one-shot breakpoints a session that ended left.
func (b *Table) DropTemps() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for f, list := range b.byFile {
		list = slices.DeleteFunc(list, func(bp *Source) bool { return bp.temp })
		if len(list) == 0 {
			delete(b.byFile, f)
		} else {
			b.byFile[f] = list
		}
	}
}
