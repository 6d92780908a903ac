// Package answer holds what package lsp's operations return, as data with
// JSON names: locations, hover, symbols, code actions, call sites, a
// file's diagnostics, a project checker's report, what a rename or a fix
// wrote, and the status of the servers and the pool. Package lsptool
// renders them for the agent and publishes them as structured content, so
// their field names are the tools' output schemas. It knows no server.
package answer

import (
	"time"

	"github.com/builtin-tools/builtin-tools/lsp/diag"
)

// Every field has a snake_case JSON name. Paths are relative to the supervisor root and
// slash-separated unless a field says otherwise; lines and columns are
// 1-based.

// Result caps (LSP-4): how many entries a result holds at most. Total
// fields say how many the server gave.
const (
	MaxReferences       = 50
	MaxLocations        = 50
	MaxWorkspaceSymbols = 100
	MaxDocumentSymbols  = 200
	MaxHoverBytes       = 4000
)

// Location is one place a server named.
type Location struct {
	// Path is relative to the root; a file outside the root keeps its
	// absolute path, and a location that is not a file its URI.
	Path string `json:"path" jsonschema:"file, relative to the root (absolute when outside it)"`
	Line int    `json:"line" jsonschema:"1-based line"`
	// Column counts characters; for a file outside the root it is in the
	// server's position units, since the file is not read. 0 when the
	// file could not be read, or the location is not a file.
	Column  int `json:"column,omitempty" jsonschema:"1-based column in characters, 0 when unknown"`
	EndLine int `json:"end_line,omitempty" jsonschema:"1-based last line of the range"`
	// Text is the source line, trimmed and cut at 200 bytes.
	Text string `json:"text,omitempty" jsonschema:"the source line, empty outside the root or when unreadable"`
	// Outside: the file is outside the root (a dependency, the standard
	// library, a link out of the checkout), so it was not read.
	Outside bool `json:"outside,omitempty" jsonschema:"the file is outside the root and was not read"`
}

// Query operations, as [Locations.Operation] names them.
const (
	OpDefinition     = "definition"
	OpTypeDefinition = "type_definition"
	OpImplementation = "implementation"
	OpReferences     = "references"
)

// Locations answers definition, type_definition, implementation and
// references.
type Locations struct {
	Operation  string `json:"operation" jsonschema:"definition, type_definition, implementation or references"`
	Symbol     string `json:"symbol" jsonschema:"the symbol asked about"`
	Occurrence int    `json:"occurrence,omitempty" jsonschema:"which occurrence of symbol on the line, when not the first"`
	File       string `json:"file" jsonschema:"the file asked about"`
	Line       int    `json:"line" jsonschema:"the line asked about"`
	Server     string `json:"server" jsonschema:"the language server that answered"`
	// Locations are sorted by path and position, at most MaxReferences or
	// MaxLocations of them.
	Locations []Location `json:"locations" jsonschema:"what the server found, sorted, cut at 50"`
	Total     int        `json:"total" jsonschema:"how many the server found"`
	// Loading says the server had not loaded its workspace when it
	// answered (within StartTimeout): the answer may be incomplete.
	Loading string `json:"loading,omitempty" jsonschema:"the server had not finished loading the workspace: the answer may be incomplete; ask again"`
}

// Hover is the server's signature and documentation for a symbol.
type Hover struct {
	Symbol     string `json:"symbol"`
	Occurrence int    `json:"occurrence,omitempty" jsonschema:"which occurrence of symbol on the line, when not the first"`
	File       string `json:"file"`
	Line       int    `json:"line"`
	Server     string `json:"server"`
	// Contents is markdown or plain text as the server sent it, "" when
	// it had nothing; cut at MaxHoverBytes.
	Contents  string `json:"contents" jsonschema:"signature and documentation, markdown or plain text"`
	Truncated bool   `json:"truncated,omitempty" jsonschema:"contents were cut at 4000 bytes"`
	// Withheld says why the server's text is not given (Contents is ""):
	// the symbol is declared outside the root, whose files are not quoted.
	Withheld string `json:"withheld,omitempty" jsonschema:"why the server's text is not quoted (declared outside the root)"`
}

// Symbol is one entry of an outline or a workspace search.
type Symbol struct {
	Name string `json:"name"`
	Kind string `json:"kind" jsonschema:"function, method, class, struct, variable ..."`
	// Detail is the server's detail (a signature or type), outlines only.
	Detail string `json:"detail,omitempty" jsonschema:"signature or type, in outlines"`
	// Container is the enclosing symbol, workspace searches only.
	Container string `json:"container,omitempty" jsonschema:"enclosing symbol, in workspace searches"`
	// Depth is the nesting in an outline, 0 at the top level.
	Depth int `json:"depth,omitempty" jsonschema:"nesting in an outline"`
	// Location is quoted in a workspace search; in an outline it has the
	// path and line only.
	Location Location `json:"location"`
}

// Symbols is a file's outline (File set) or a workspace search.
type Symbols struct {
	Query  string `json:"query,omitempty" jsonschema:"the name searched for, or the outline's filter"`
	File   string `json:"file,omitempty" jsonschema:"the outlined file; empty for a workspace search"`
	Server string `json:"server,omitempty" jsonschema:"the server that outlined the file"`
	// Symbols are in the server's order, at most MaxDocumentSymbols or
	// MaxWorkspaceSymbols of them.
	Symbols []Symbol `json:"symbols"`
	Total   int      `json:"total" jsonschema:"how many matched"`
	// Failures are the servers whose workspace search failed while others
	// answered.
	Failures []string `json:"failures,omitempty" jsonschema:"errors of servers that failed while others answered"`
	// Loading names the servers that had not loaded their workspace when
	// they answered a workspace search: the answer may be incomplete.
	Loading string `json:"loading,omitempty" jsonschema:"servers that had not finished loading the workspace: the answer may be incomplete; ask again"`
}

// CodeAction is one fix or refactoring a server offers. Nothing is applied.
type CodeAction struct {
	// ID addresses an enabled action for lsp_fix, for the rest of the run.
	ID             string `json:"id,omitempty" jsonschema:"give it to lsp_fix; disabled actions have none"`
	Title          string `json:"title"`
	Kind           string `json:"kind,omitempty" jsonschema:"quickfix, refactor.extract ..."`
	Preferred      bool   `json:"preferred,omitempty"`
	Disabled       bool   `json:"disabled,omitempty"`
	DisabledReason string `json:"disabled_reason,omitempty"`
	// Files are the files its edit touches.
	Files []string `json:"files,omitempty" jsonschema:"files its edit would change"`
	// RunsCommand: it has no edit but runs a server command.
	RunsCommand bool `json:"runs_command,omitempty" jsonschema:"it runs a server command instead of an edit"`
	// Withheld says why Title is empty: its edit changes a file outside
	// the root, which the title may quote.
	Withheld string `json:"withheld,omitempty" jsonschema:"why the title is not quoted (its edit changes a file outside the root)"`
}

// CodeActions lists what the server offers at a symbol.
type CodeActions struct {
	Symbol     string       `json:"symbol"`
	Occurrence int          `json:"occurrence,omitempty" jsonschema:"which occurrence of symbol on the line, when not the first"`
	File       string       `json:"file"`
	Line       int          `json:"line"`
	Server     string       `json:"server"`
	Actions    []CodeAction `json:"actions"`
	// HiddenDisabled counts disabled actions left out of Actions (lsptool
	// lists them only when asked).
	HiddenDisabled int `json:"hidden_disabled,omitempty" jsonschema:"disabled actions not listed; include_disabled lists them"`
}

// FileDiagnostics is what the owning server reports for one file.
type FileDiagnostics struct {
	File        string            `json:"file"`
	Server      string            `json:"server"`
	Diagnostics []diag.Diagnostic `json:"diagnostics" jsonschema:"sorted by position"`
	// Incomplete: the server had not finished within WaitMS
	// (DiagnosticsWait); asking again may give more.
	Incomplete bool  `json:"incomplete,omitempty" jsonschema:"the server had not finished; ask again"`
	WaitMS     int64 `json:"wait_ms,omitempty" jsonschema:"how long was waited, when incomplete"`
}

// Why a project checker did not run ([CheckRun.Skipped]).
const (
	SkipNoChecker    = "no_checker"    // the language has none; Reason says what to do
	SkipRunsCode     = "runs_code"     // it runs the checkout's code, which is not trusted; Reason says how
	SkipNotInstalled = "not_installed" // the checker is not installed; Reason says how to install it
)

// CheckRun is one project checker run (or the reason there was none), for
// one language in one marker folder.
type CheckRun struct {
	Language string `json:"language"`
	// Dirs are the marker folders; a run or a missing checker has one.
	Dirs    []string `json:"dirs" jsonschema:"marker folders, relative to the root"`
	Command []string `json:"command,omitempty" jsonschema:"the checker and its arguments"`
	Skipped string   `json:"skipped,omitempty" jsonschema:"why it did not run: no_checker, runs_code or not_installed"`
	Reason  string   `json:"reason,omitempty" jsonschema:"what to do, how it runs code, or how to install it"`
	// ExitCode is set when the checker exited (-1 for a signal).
	ExitCode  *int  `json:"exit_code,omitempty"`
	TimedOut  bool  `json:"timed_out,omitempty" jsonschema:"stopped after CheckerTimeout"`
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
	// Error says why it could not be run or waited for.
	Error      string `json:"error,omitempty"`
	DurationMS int64  `json:"duration_ms,omitempty"`
	// Output holds at most 200 lines, each cut at 400 bytes; MoreLines
	// counts the rest.
	Output    []string `json:"output,omitempty" jsonschema:"its output lines, cut at 200"`
	MoreLines int      `json:"more_lines,omitempty"`
}

// CheckReport is diagnostics "*": every project checker of the checkout.
type CheckReport struct {
	Runs []CheckRun `json:"runs"`
}

// ServerState says where a server stands in the marker/binary
// intersection (LSP-2).
type ServerState string

// Server states, in [ServerStatus.State].
const (
	StateRunning          ServerState = "running"
	StateAvailable        ServerState = "available"           // marker and binary found, not started
	StateBroken           ServerState = "broken"              // marker and binary found, but the binary does not run
	StateNoBinary         ServerState = "no_binary"           // marker found, binary missing
	StateNoMarker         ServerState = "no_marker"           // binary found, no marker in the checkout
	StateNoMarkerNoBinary ServerState = "no_marker_no_binary" // neither
)

// Status is the state of every server in the table; it starts nothing.
type Status struct {
	Root    string         `json:"root" jsonschema:"the checkout root, absolute"`
	Trusted bool           `json:"trusted" jsonschema:"programs and code inside the checkout may run"`
	Servers []ServerStatus `json:"servers"`
	// Pool is every server of the pool this run's servers go to, this
	// run's and other runs' (LSP-8).
	Pool *PoolStatus `json:"pool,omitempty"`
}

// PoolStatus is the servers a pool holds and its memory budget.
type PoolStatus struct {
	BudgetKB int64 `json:"budget_kb" jsonschema:"the memory budget of all its servers together in KiB, 0 for none"`
	UsedKB   int64 `json:"used_kb" jsonschema:"the resident memory of its servers in KiB"`
	// Shared: the pool is shared with the process's other runs; else it
	// holds this run's servers only (a private run).
	Shared  bool               `json:"shared" jsonschema:"other runs of this process use the pool; false for a run with servers of its own"`
	Servers []PoolServerStatus `json:"servers" jsonschema:"every server it holds, starting or running"`
	Stopped []BudgetStopStatus `json:"stopped_for_budget,omitempty" jsonschema:"idle servers stopped to keep within the budget before another started, latest last"`
	Broker  *BrokerStatus      `json:"broker,omitempty" jsonschema:"through the broker (serve's default): every server it holds, for all processes of the user"`
}

// BrokerStatus is what the broker holds (LSP-8, LSP-9).
type BrokerStatus struct {
	BudgetKB int64              `json:"budget_kb" jsonschema:"the memory budget of all the broker's servers together in KiB, 0 for none"`
	UsedKB   int64              `json:"used_kb" jsonschema:"the resident memory of the broker's servers in KiB"`
	Servers  []PoolServerStatus `json:"servers" jsonschema:"every server the broker holds"`
}

// PoolServerStatus is one server of a pool, or of the broker (which is
// the pool of every process of the user): the broker's list leaves out
// this_run and clients, which only this process knows.
type PoolServerStatus struct {
	Server      string `json:"server"`
	Root        string `json:"root,omitempty" jsonschema:"its root folder relative to this run's root, . for the root; empty for another folder"`
	OtherFolder bool   `json:"other_folder,omitempty" jsonschema:"it serves a folder outside this run's root"`
	ThisRun     bool   `json:"this_run,omitempty" jsonschema:"this run uses it; absent in the broker's list"`
	Trusted     bool   `json:"trusted" jsonschema:"it was started for a trusted checkout"`
	State       string `json:"state" jsonschema:"starting, in_use (a call is under way), previewing (a preview holds it alone) or idle"`
	Clients     int    `json:"clients,omitempty" jsonschema:"runs of this process holding it; absent when none, and in the broker's list"`
	Processes   int    `json:"processes,omitempty" jsonschema:"processes sharing it through the broker, this one included; absent for a server of this process's own"`
	PID         int    `json:"pid,omitempty"`
	MemoryKB    int64  `json:"memory_kb" jsonschema:"resident memory of it and its child processes in KiB, 0 when unknown"`
	IdleSeconds int64  `json:"idle_s" jsonschema:"seconds since any run or process last used it"`
	OverBudget  bool   `json:"over_budget,omitempty" jsonschema:"it alone uses the whole budget or more"`
}

// BudgetStopStatus is a server stopped to keep within the budget.
type BudgetStopStatus struct {
	Server      string    `json:"server"`
	Root        string    `json:"root,omitempty" jsonschema:"its root folder relative to this run's root; empty for another folder"`
	OtherFolder bool      `json:"other_folder,omitempty"`
	MemoryKB    int64     `json:"memory_kb" jsonschema:"its resident memory when stopped"`
	UsedKB      int64     `json:"used_kb" jsonschema:"the pool's servers' memory before the stop"`
	BudgetKB    int64     `json:"budget_kb"`
	For         string    `json:"for" jsonschema:"the server whose start needed the room, as server and root"`
	At          time.Time `json:"at"`
}

// ServerStatus is one row of the server table.
type ServerStatus struct {
	ID          string          `json:"id"`
	Language    string          `json:"language"`
	Extensions  []string        `json:"extensions"`
	State       ServerState     `json:"state" jsonschema:"running, available, broken, no_binary, no_marker or no_marker_no_binary"`
	RootMarkers []string        `json:"root_markers" jsonschema:"files whose folder is a server root"`
	MarkerDirs  []string        `json:"marker_dirs,omitempty" jsonschema:"folders holding a root marker"`
	Program     string          `json:"program" jsonschema:"the program the server runs as"`
	Binary      string          `json:"binary,omitempty" jsonschema:"where the program resolved"`
	Install     string          `json:"install" jsonschema:"how to install it"`
	RunError    string          `json:"run_error,omitempty" jsonschema:"why the installed program does not run"`
	Running     []RunningServer `json:"running,omitempty"`
	// Crashes are the last unexpected exit per root.
	Crashes       []Crash        `json:"crashes,omitempty"`
	StartFailures []StartFailure `json:"start_failures,omitempty"`
	// PassedOver are programs in the checkout not run because it is not
	// trusted.
	PassedOver []string `json:"passed_over,omitempty" jsonschema:"programs in the checkout not run because it is not trusted"`
	// CheckerSkipped says how Checker runs the checkout's code, when
	// diagnostics "*" skips it in an untrusted checkout.
	Checker        []string `json:"checker,omitempty"`
	CheckerSkipped string   `json:"checker_skipped,omitempty" jsonschema:"why diagnostics \"*\" skips the checker here"`
}

// RunningServer is one server process.
type RunningServer struct {
	Root          string `json:"root" jsonschema:"its root folder, . for the checkout root"`
	PID           int    `json:"pid"`
	UptimeSeconds int64  `json:"uptime_s"`
	OpenFiles     int    `json:"open_files"`
	Encoding      string `json:"encoding" jsonschema:"the position encoding it negotiated"`
	// Clients is how many runs of this process use it (LSP-7).
	Clients     int   `json:"clients" jsonschema:"how many runs of this process use it, this one included"`
	MemoryKB    int64 `json:"memory_kb" jsonschema:"resident memory of it and its child processes in KiB, 0 when unknown"`
	IdleSeconds int64 `json:"idle_s" jsonschema:"seconds since a run last used it"`
	OverBudget  bool  `json:"over_budget,omitempty" jsonschema:"it alone uses the pool's whole memory budget or more"`
}

// Crash is a server's last unexpected exit for a root.
type Crash struct {
	Root  string    `json:"root"`
	Error string    `json:"error"`
	At    time.Time `json:"at"`
}

// StartFailure is a server that failed to start and is not retried until
// RetryAt (or reload).
type StartFailure struct {
	Root    string    `json:"root"`
	Error   string    `json:"error"`
	RetryAt time.Time `json:"retry_at"`
}

// ReloadResult says which servers reload stopped and started.
type ReloadResult struct {
	// All: no file was given, so every running server was restarted.
	All     bool       `json:"all"`
	Servers []Reloaded `json:"servers" jsonschema:"empty when nothing ran"`
}

// Reloaded is one server reload started.
type Reloaded struct {
	Server     string `json:"server"`
	Root       string `json:"root"`
	WasRunning bool   `json:"was_running" jsonschema:"a running server was stopped first"`
	PID        int    `json:"pid"`
	ReadyMS    int64  `json:"ready_ms" jsonschema:"time from start to ready"`
}

// OthersCheck is what a write did to other files (CheckOthers): a verdict
// per file, its New and Fixed measured against the same files with the
// written file as it was before, and every diagnostic each had after, by
// absolute path, for the ledger.
type OthersCheck struct {
	Files       []diag.Verdict
	Diagnostics map[string][]diag.Diagnostic
	// New and Fixed are the verdicts' New and Fixed as diagnostics
	// (absolute paths), for the text.
	New, Fixed []diag.Diagnostic
}
