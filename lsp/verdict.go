package lsp

// The per-file verdict a preview gives (and, in the same shape, a write):
// which server checked the file, whether its diagnostics for the version
// arrived, and what is new and what went away, keyed as the Ledger keys.

// Verdict states.
const (
	StateChecked      = "checked"       // diagnostics for the version arrived
	StateTimedOut     = "timed_out"     // they did not within the wait
	StateNoServer     = "no_server"     // no server owns the file (Why says why)
	StateServerFailed = "server_failed" // the server would not start or answer
)

// Verdict is what a server said of one file's version.
type Verdict struct {
	File     string `json:"file" jsonschema:"relative to the root"`
	Server   string `json:"server,omitempty" jsonschema:"the server that checked it; absent when none did"`
	State    string `json:"state" jsonschema:"checked, timed_out, no_server or server_failed" enum:"checked,timed_out,no_server,server_failed"`
	Why      string `json:"why,omitempty" jsonschema:"for no_server, server_failed and timed_out: why, in one line"`
	Version  int    `json:"version,omitempty" jsonschema:"the document version the server was given"`
	WaitedMS int64  `json:"waited_ms" jsonschema:"milliseconds spent waiting for the version's diagnostics"`
	// New and Fixed are errors and warnings, keyed like the ledger
	// (severity, code, message; not the position).
	New   []VerdictDiagnostic `json:"new" jsonschema:"diagnostics the version has that the file on disk has not"`
	Fixed []VerdictDiagnostic `json:"fixed" jsonschema:"diagnostics the file on disk has that the version has not"`
}

// VerdictDiagnostic is a diagnostic in a verdict: its severity a word.
type VerdictDiagnostic struct {
	Line     int    `json:"line" jsonschema:"1-based line, in the version it was found in"`
	Column   int    `json:"column" jsonschema:"1-based column, in characters"`
	Severity string `json:"severity" jsonschema:"error, warning, info or hint" enum:"error,warning,info,hint"`
	Code     string `json:"code,omitempty"`
	Source   string `json:"source,omitempty"`
	Message  string `json:"message"`
	LineText string `json:"line_text,omitempty" jsonschema:"the source line, as that version has it"`
}

func verdictDiagnostics(ds []Diagnostic) []VerdictDiagnostic {
	out := make([]VerdictDiagnostic, 0, len(ds))
	for _, d := range ds {
		out = append(out, VerdictDiagnostic{Line: d.Line, Column: d.Column, Severity: d.Severity.String(),
			Code: d.Code, Source: d.Source, Message: d.Message, LineText: d.LineText})
	}
	return out
}

// diffDiagnostics returns the errors and warnings of after whose key
// (severity, code, message) before lacks, and those of before that after
// lacks, each key once, as the Ledger counts them.
func diffDiagnostics(before, after []Diagnostic) (fresh, gone []Diagnostic) {
	keys := func(ds []Diagnostic) map[ledgerKey]bool {
		m := map[ledgerKey]bool{}
		for _, d := range ds {
			m[ledgerKey{d.Severity, d.Code, d.Message}] = true
		}
		return m
	}
	pick := func(ds []Diagnostic, other map[ledgerKey]bool) []Diagnostic {
		seen := map[ledgerKey]bool{}
		var out []Diagnostic
		for _, d := range ds {
			k := ledgerKey{d.Severity, d.Code, d.Message}
			if d.Severity > SeverityWarning || other[k] || seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, d)
		}
		return out
	}
	return pick(after, keys(before)), pick(before, keys(after))
}
