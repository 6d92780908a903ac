// Package diag is what package lsp reports of a file's diagnostics, as
// data: a [Diagnostic] in agent terms (a 1-based line, a byte column,
// the line quoted, paths relative to the root) converted from what a
// server sent; the run's [Ledger] of what the agent was already shown, so
// a write reports only what is new and what went away; and the [Verdict]
// on one written or staged file (WRT-4), with its [Finding]s. It knows the
// LSP types of package protocol and nothing of servers.
package diag

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/lsp/protocol"
)

// Severity is an LSP diagnostic severity.
type Severity int

// Severities, as numbered by the protocol.
const (
	SeverityError       Severity = 1
	SeverityWarning     Severity = 2
	SeverityInformation Severity = 3
	SeverityHint        Severity = 4
)

func (s Severity) String() string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	case SeverityInformation:
		return "info"
	case SeverityHint:
		return "hint"
	}
	return "error"
}

// Diagnostic is one problem a server reported, in agent terms.
type Diagnostic struct {
	// File is absolute: the ledger and the write wrapper key on it.
	File     string   `json:"file" jsonschema:"absolute path of the file"`
	Line     int      `json:"line" jsonschema:"1-based line"`
	Column   int      `json:"column" jsonschema:"1-based column, in characters"`
	Severity Severity `json:"severity" jsonschema:"1 error, 2 warning, 3 information, 4 hint"`
	Code     string   `json:"code,omitempty" jsonschema:"the server's code for the problem"`
	Source   string   `json:"source,omitempty" jsonschema:"compiler, Pyright, ts, clang ..."`
	Message  string   `json:"message"`
	LineText string   `json:"line_text,omitempty" jsonschema:"the source line the diagnostic starts on"`
}

// Convert maps a server's diagnostics on doc to Diagnostics.
// A missing severity counts as an error, as clients usually show it.
func Convert(items []protocol.Diagnostic, path, text, enc string) []Diagnostic {
	d := protocol.NewDocument(text)
	out := make([]Diagnostic, 0, len(items))
	for _, it := range items {
		line := d.Line(it.Range.Start.Line)
		col := utf8.RuneCountInString(line[:protocol.ByteColumn(line, it.Range.Start.Character, enc)]) + 1
		sev := Severity(it.Severity)
		if sev < SeverityError || sev > SeverityHint {
			sev = SeverityError
		}
		out = append(out, Diagnostic{
			File: path, Line: it.Range.Start.Line + 1, Column: col, Severity: sev,
			Code: codeString(it.Code), Source: it.Source, Message: it.Message, LineText: line,
		})
	}
	sortDiagnostics(out)
	return out
}

// codeString reads a diagnostic code sent as a number or a string.
func codeString(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return string(raw)
}

func sortDiagnostics(ds []Diagnostic) {
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
}

// Ledger remembers, for one run, which diagnostics the agent was already
// shown — after a write or by a diagnostics listing — so the write wrapper
// appends only new ones (WRT-2), and says which of them a later check no
// longer finds. The key is file, severity, code and
// message, deliberately not the position: an error that merely moved is
// not new. The ledger holds what the file showed the last time it was
// checked, so an error that went away and came back is new again. Safe
// for concurrent use.
type Ledger struct {
	mu   sync.Mutex
	seen map[string]map[ledgerKey]Diagnostic // by file: as last seen
}

type ledgerKey struct {
	severity Severity
	code     string
	message  string
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger {
	return &Ledger{seen: map[string]map[ledgerKey]Diagnostic{}}
}

// Fresh records diags as the current diagnostics of file and returns those
// not present the previous time file was recorded (see Record).
func (l *Ledger) Fresh(file string, diags []Diagnostic, includeInfo bool) []Diagnostic {
	fresh, _ := l.Record(file, diags, includeInfo)
	return fresh
}

// Record records diags as the current diagnostics of file and returns
// those not present the previous time file was recorded, and those
// present then and gone now (as they were last seen), sorted. Errors and
// warnings count; information and hints only when includeInfo is true
// (otherwise they are neither returned nor remembered).
func (l *Ledger) Record(file string, diags []Diagnostic, includeInfo bool) (fresh, gone []Diagnostic) {
	l.mu.Lock()
	defer l.mu.Unlock()
	prev := l.seen[file]
	now := map[ledgerKey]Diagnostic{}
	for _, d := range diags {
		if !includeInfo && d.Severity > SeverityWarning {
			continue
		}
		k := ledgerKey{d.Severity, d.Code, d.Message}
		if _, seen := prev[k]; !seen {
			if _, dup := now[k]; !dup {
				fresh = append(fresh, d)
			}
		}
		if _, dup := now[k]; !dup {
			now[k] = d
		}
	}
	for k, d := range prev {
		if _, still := now[k]; !still {
			gone = append(gone, d)
		}
	}
	sortDiagnostics(gone)
	l.seen[file] = now
	return fresh, gone
}

// Add records diags as shown for file, keeping what it held (a listing
// known to be incomplete says nothing of what went away).
func (l *Ledger) Add(file string, diags []Diagnostic, includeInfo bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	held := l.seen[file]
	if held == nil {
		held = map[ledgerKey]Diagnostic{}
		l.seen[file] = held
	}
	for _, d := range diags {
		if !includeInfo && d.Severity > SeverityWarning {
			continue
		}
		if k := (ledgerKey{d.Severity, d.Code, d.Message}); !hasKey(held, k) {
			held[k] = d
		}
	}
}

func hasKey(m map[ledgerKey]Diagnostic, k ledgerKey) bool {
	_, ok := m[k]
	return ok
}

// Forget drops what the ledger holds for file (it was deleted).
func (l *Ledger) Forget(file string) {
	l.mu.Lock()
	delete(l.seen, file)
	l.mu.Unlock()
}
