package diag

// State is what became of one file's check (WRT-4).
type State string

// The states of a check.
const (
	// Checked: the diagnostics for the file's version arrived.
	Checked State = "checked"
	// TimedOut: they did not arrive within the wait; Why says which wait.
	TimedOut State = "timed_out"
	// NoServer: no server checks the file; Why says which half is missing
	// (no server for the kind of file, no root marker, no binary).
	NoServer State = "no_server"
	// ServerFailed: the server that owns the file does not run, exited or
	// answered with an error; Why is its line.
	ServerFailed State = "server_failed"
)

// Finding is one diagnostic as a verdict reports it: keyed as the ledger
// keys it (severity, code, message), with where it starts and the line
// quoted, the severity a word.
type Finding struct {
	Severity string `json:"severity" jsonschema:"error, warning, info or hint"`
	Code     string `json:"code,omitempty" jsonschema:"the server's code for the problem"`
	Source   string `json:"source,omitempty" jsonschema:"compiler, Pyright, typescript, clang ..."`
	Message  string `json:"message"`
	Line     int    `json:"line" jsonschema:"1-based line"`
	Column   int    `json:"column" jsonschema:"1-based column, in characters"`
	LineText string `json:"line_text,omitempty" jsonschema:"the source line the diagnostic starts on"`
}

// Findings converts diagnostics to findings, in their order.
func Findings(ds []Diagnostic) []Finding {
	out := make([]Finding, 0, len(ds))
	for _, d := range ds {
		out = append(out, Finding{Severity: d.Severity.String(), Code: d.Code, Source: d.Source, Message: d.Message,
			Line: d.Line, Column: d.Column, LineText: d.LineText})
	}
	return out
}

// Verdict is what one file's check found, after a write or for a staged
// change (WRT-4): which server checked which version, how long that took,
// and the diagnostics it introduced and those it made go away. An agent
// tells "checked, clean" (State checked, New empty) from "not checked".
type Verdict struct {
	File     string    `json:"file" jsonschema:"relative to the root"`
	Server   string    `json:"server,omitempty" jsonschema:"the server that owns the file; absent when none does"`
	State    State     `json:"state" jsonschema:"checked, timed_out, no_server or server_failed"`
	Why      string    `json:"why,omitempty" jsonschema:"why the file was not checked: the wait, the missing half, the server's failure"`
	Version  int       `json:"version,omitempty" jsonschema:"the document version the server was sent and checked"`
	WaitedMS int64     `json:"waited_ms" jsonschema:"milliseconds spent syncing the file and waiting for its diagnostics"`
	New      []Finding `json:"new" jsonschema:"diagnostics not reported before in this run"`
	Fixed    []Finding `json:"fixed" jsonschema:"diagnostics reported before in this run that the file no longer has"`
	// After names the write that caused diagnostics reported on a later
	// result (they came after the wait) or in another file.
	After *WriteRef `json:"after,omitempty" jsonschema:"the write these diagnostics follow, when it was not this call's"`
}

// WriteRef names an earlier write.
type WriteRef struct {
	File       string `json:"file" jsonschema:"the file written, relative to the root"`
	Tool       string `json:"tool" jsonschema:"the tool that wrote it"`
	SecondsAgo int    `json:"seconds_ago" jsonschema:"how long before this result the write's check began"`
}

// WriteCheck is package lsp's Supervisor.CheckWritten answer: the verdict (its New
// and Fixed empty: they need the run's ledger), every diagnostic the server
// gave for the version (absolute paths, for the ledger), and, on a check
// that timed out, Late.
type WriteCheck struct {
	Verdict
	Diagnostics []Diagnostic
	// Late, when the wait timed out, receives the version's diagnostics if
	// they come within LateWait after it, and is closed then, or at once
	// when the file was synced again before they came (what a later
	// version shows is its own check's). Nil otherwise.
	Late <-chan []Diagnostic
}

// Diff returns the errors and warnings of after whose key
// (severity, code, message) before lacks, and those of before that after
// lacks, each key once, as the Ledger counts them: what a preview's
// version would introduce and fix.
func Diff(before, after []Diagnostic) (fresh, gone []Diagnostic) {
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
