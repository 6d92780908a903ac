// Package result is the debug engine's answers as data: where a session
// stands, a stop and what a launch or a resume ended in, a stack, scopes,
// variables, an evaluation, threads, output, breakpoints and watchpoints
// after a change, a set variable, a run to a line, a core file's crash, a
// status and a terminate. Package dap returns them, dap/debugtool formats
// them, and their JSON is the debug tool's structured content.
package result

import (
	"time"

	"github.com/builtin-tools/builtin-tools/dap/breakpoint"
	"github.com/builtin-tools/builtin-tools/dap/stack"
	"github.com/builtin-tools/builtin-tools/dap/watch"
)

// NonNil is s, or an empty list for nil: a list a result's schema requires
// is [] when empty, never null, which a strict client refuses.
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// SessionInfo is where a session stands, in every result.
type SessionInfo struct {
	Adapter string `json:"adapter"`
	Program string `json:"program"`
	// State is starting, running, stopped, exited or ended.
	State            string `json:"state"`
	AgeSeconds       int    `json:"age_s"`
	RemainingSeconds int    `json:"remaining_s" jsonschema:"seconds until the session's time limit stops it"`
	PID              int    `json:"pid,omitempty" jsonschema:"the program's process id"`
	Stop             int    `json:"stop,omitempty" jsonschema:"the current stop's number"`
}

// StopResult is what a launch or a resume ended in.
type StopResult struct {
	Session SessionInfo `json:"session"`
	// Outcome is stopped, exited, running (still, after the wait) or
	// ended.
	Outcome string       `json:"outcome"`
	Stop    *Stop        `json:"stop,omitempty"`
	Frame   *stack.Frame `json:"frame,omitempty" jsonschema:"the stop's frame: the top one, or for a panic or exception the top frame in the checkout"`
	Locals  []stack.Var  `json:"locals,omitempty" jsonschema:"that frame's locals, capped"`
	// LocalsMore counts locals left out.
	LocalsMore int `json:"locals_more,omitempty"`
	// LocalsHidden names what the locals leave out as noise (see
	// VariablesResult.Hidden).
	LocalsHidden []string `json:"locals_hidden,omitempty" jsonschema:"locals left out: debugpy's variable groups, delve's unset result slots"`
	Exception    string   `json:"exception,omitempty" jsonschema:"the exception's type and message, when it stopped on one"`
	ExitCode     *int     `json:"exit_code,omitempty"`
	// NeverHit lists, when the program ended, the breakpoints that were
	// verified but never hit.
	NeverHit []breakpoint.Source `json:"never_hit,omitempty"`
	// NeverHitFuncs lists, when the program ended, the function
	// breakpoints that were verified but never hit.
	NeverHitFuncs []breakpoint.Function `json:"never_hit_functions,omitempty" jsonschema:"when the program ended: the function breakpoints verified but never hit"`
	// Earlier says the stop happened before this call: it is reported
	// first, and the program was not resumed.
	Earlier bool   `json:"earlier,omitempty"`
	Output  string `json:"output,omitempty" jsonschema:"program output no earlier result showed (the newest part)"`
	// OutputMore counts characters of new output not shown (ask output).
	OutputMore int    `json:"output_more,omitempty"`
	BuildMS    int64  `json:"build_ms,omitempty" jsonschema:"delve: time spent building the program"`
	StartMS    int64  `json:"start_ms,omitempty" jsonschema:"time from configured to running, without the build"`
	Note       string `json:"note,omitempty"`
	Ended      string `json:"ended,omitempty" jsonschema:"why the session ended, when it did"`
	// Restart says how a restart was done: RestartRequest or
	// RestartRelaunch.
	Restart string `json:"restart,omitempty" jsonschema:"restart: the adapter's restart request, or terminate and launch"`
	// RunTo says how a run_to_line ended, on the result that ends it.
	RunTo *RunToResult `json:"run_to,omitempty" jsonschema:"run_to_line: whether the line was reached, or another stop came first"`
	// Exceptions, on a launch or attach, is what the program stops on.
	Exceptions *ExceptionsSet `json:"exceptions,omitempty" jsonschema:"launch and attach: the exceptions the program stops on"`
	// Core, on a launch with core, is what the core file holds.
	Core *CoreInfo `json:"core,omitempty" jsonschema:"launch with core: the crash's threads and the top of its stack, read-only"`
}

// ExceptionsSet is what a session stops on: the kinds and names asked for
// and the adapter's filters they were sent as.
type ExceptionsSet struct {
	Kinds   []string `json:"kinds" jsonschema:"the exception kinds (uncaught, raised, user_unhandled) or filter names asked for"`
	Filters []string `json:"filters" jsonschema:"the adapter's exception filters sent for them"`
	Note    string   `json:"note,omitempty" jsonschema:"what the adapter stops on without a filter"`
}

// StackResult is a thread's stack.
type StackResult struct {
	Session  SessionInfo   `json:"session"`
	ThreadID int           `json:"thread_id"`
	Frames   []stack.Frame `json:"frames"`
	Total    int           `json:"total,omitempty" jsonschema:"frames in the whole stack, when more than shown"`
}

// Scope is one scope of a frame.
type Scope struct {
	Name      string `json:"name"`
	Ref       string `json:"ref" jsonschema:"give it to variables"`
	Count     int    `json:"count,omitempty"`
	Expensive bool   `json:"expensive,omitempty"`
}

// ScopesResult lists a frame's scopes.
type ScopesResult struct {
	Session SessionInfo `json:"session"`
	Frame   string      `json:"frame"`
	Scopes  []Scope     `json:"scopes"`
}

// VariablesResult lists a reference's children.
type VariablesResult struct {
	Session   SessionInfo `json:"session"`
	Ref       string      `json:"ref"`
	Variables []stack.Var `json:"variables"`
	// More counts children left out (at most 50 are shown).
	More int `json:"more,omitempty"`
	// Hidden names the children left out unless all is asked for:
	// debugpy's "special variables" and "function variables" groups, and
	// delve's result slots (~r0), which hold garbage until the function
	// returns.
	Hidden []string `json:"hidden,omitempty" jsonschema:"children left out: debugpy's special and function variable groups, delve's unset result slots; all: true shows them"`
}

// EvalResult is an expression's value, or the error it raised.
type EvalResult struct {
	Session    SessionInfo `json:"session"`
	Expression string      `json:"expression"`
	// Frame is the frame it was evaluated in: frame_id, or the one the
	// stop showed.
	Frame string `json:"frame_id,omitempty" jsonschema:"the frame it was evaluated in: frame_id, or by default the frame the stop showed"`
	// In says so when that frame is not the top one.
	In    string     `json:"in,omitempty" jsonschema:"where it was evaluated, when that is not the top frame"`
	Value *stack.Var `json:"value,omitempty"`
	Error string     `json:"error,omitempty" jsonschema:"what evaluating it said, when it failed"`
	// TimedOut says it did not finish in time and still runs.
	TimedOut bool   `json:"timed_out,omitempty" jsonschema:"it did not finish in time and still runs inside the program"`
	Note     string `json:"note,omitempty"`
}

// ThreadGroup is threads (goroutines) that share a top function.
type ThreadGroup struct {
	Name  string `json:"name"`
	IDs   []int  `json:"ids"`
	Count int    `json:"count"`
}

// ThreadsResult lists the program's threads.
type ThreadsResult struct {
	Session SessionInfo   `json:"session"`
	Groups  []ThreadGroup `json:"groups"`
	Total   int           `json:"total"`
}

// OutputResult is the program's output that no result has shown yet.
type OutputResult struct {
	Session SessionInfo `json:"session"`
	Output  string      `json:"output" jsonschema:"output no result showed before, oldest first; a line in brackets marks output an earlier result showed"`
	Skipped int64       `json:"skipped,omitempty" jsonschema:"bytes dropped before it for room"`
	More    int         `json:"more,omitempty" jsonschema:"bytes left for the next call"`
}

// BreakpointsResult is the run's breakpoints after a change.
type BreakpointsResult struct {
	Session     *SessionInfo          `json:"session,omitempty"`
	Breakpoints []breakpoint.Source   `json:"breakpoints"`
	Functions   []breakpoint.Function `json:"functions,omitempty" jsonschema:"the function breakpoints"`
	Pending     bool                  `json:"pending,omitempty" jsonschema:"no session runs: they are sent at the next launch"`
	Note        string                `json:"note,omitempty"`
}

// StatusResult says whether a session lives and where it stands.
type StatusResult struct {
	Session     *SessionInfo          `json:"session,omitempty"`
	LastStop    *Stop                 `json:"last_stop,omitempty"`
	Breakpoints []breakpoint.Source   `json:"breakpoints,omitempty"`
	Functions   []breakpoint.Function `json:"functions,omitempty"`
	Previous    string                `json:"previous,omitempty" jsonschema:"how the previous session ended"`
}

// TerminateResult says what terminate did, and what became of the
// program, as checked after it: a launched program is ended with the
// session; an attached one is detached from, or ended when asked.
type TerminateResult struct {
	Program string `json:"program"`
	// Attached says the session attached to a program it did not start.
	Attached bool `json:"attached,omitempty"`
	// Detached says the debugger let go of the program and left it running.
	Detached bool `json:"detached,omitempty"`
	PID      int  `json:"pid,omitempty" jsonschema:"the program's process id, when the adapter said it"`
	// Debuggee is the program's state, looked at after the teardown: ended,
	// running, stopped (held by a signal or a tracer) or unknown (no pid).
	Debuggee string `json:"debuggee"`
	// Core says the session read a core file: no program ran.
	Core bool `json:"core,omitempty" jsonschema:"the session read a core file; no program ran"`
	// Killed says the adapter's disconnect did not end an attached program
	// asked to end, so it was sent SIGKILL.
	Killed        bool                  `json:"killed,omitempty"`
	ExitCode      *int                  `json:"exit_code,omitempty"`
	NeverHit      []breakpoint.Source   `json:"never_hit,omitempty"`
	NeverHitFuncs []breakpoint.Function `json:"never_hit_functions,omitempty" jsonschema:"the function breakpoints verified but never hit"`
	Output        string                `json:"output,omitempty"`
	Note          string                `json:"note,omitempty"`
}

// What became of a program after terminate.
const (
	DebuggeeEnded   = "ended"
	DebuggeeRunning = "running"
	DebuggeeStopped = "stopped"
	DebuggeeUnknown = "unknown"
	DebuggeeNone    = "none" // a core file session: nothing ran
)

// Stop is one time the program stopped, numbered from 1 for the session.
type Stop struct {
	N           int       `json:"n" jsonschema:"the stop's number; references from other stops are refused"`
	Reason      string    `json:"reason" jsonschema:"breakpoint, step, pause, exception, entry, ..."`
	Description string    `json:"description,omitempty"`
	Text        string    `json:"text,omitempty" jsonschema:"the panic or exception message, when there is one"`
	ThreadID    int       `json:"thread_id"`
	Breakpoints []string  `json:"breakpoints,omitempty" jsonschema:"ids of the breakpoints hit"`
	At          time.Time `json:"-"`
}

// CoreInfo is what a core file session opened.
type CoreInfo struct {
	File    string        `json:"file" jsonschema:"the core file, relative to the root"`
	Threads []ThreadGroup `json:"threads,omitempty" jsonschema:"the crash's threads, grouped by where they were"`
	Total   int           `json:"total_threads,omitempty"`
	Stack   []stack.Frame `json:"stack,omitempty" jsonschema:"the crashing thread's stack, from the frame above the checkout's first"`
	// Above counts the frames above Stack (the runtime's, in a Go crash);
	// Frames is the whole stack's, as far as it was read.
	Above  int `json:"frames_above,omitempty" jsonschema:"frames above the stack shown (stack shows them)"`
	Frames int `json:"frames,omitempty" jsonschema:"frames in the whole stack"`
}

// RunToResult says how a run_to_line ended.
type RunToResult struct {
	File string `json:"file"`
	Line int    `json:"line"`
	// Reached: the program stopped there. Otherwise another stop came
	// first, the program ended, or (Pending) it still runs.
	Reached bool `json:"reached"`
	// Pending: the program still runs, and the one-shot breakpoint stays
	// until the next stop.
	Pending bool `json:"pending,omitempty"`
	// Existing is the id of a breakpoint of yours already on that line
	// (it stays); otherwise a one-shot breakpoint was set and is removed.
	Existing string `json:"existing,omitempty"`
}

// SetVarResult is a variable after set_variable, as the adapter reads it
// back.
type SetVarResult struct {
	Session SessionInfo `json:"session"`
	Name    string      `json:"name"`
	// Ref is the container it was set in (a scope or a variable's
	// reference, tied to this stop).
	Ref string `json:"ref,omitempty"`
	// Request is setVariable or setExpression, whichever was sent.
	Request string `json:"request"`
	// Value is the variable as read back from the adapter after the set.
	Value *stack.Var `json:"value,omitempty" jsonschema:"the variable as the adapter reads it back"`
	// TimedOut says the value did not finish in time and still runs.
	TimedOut bool   `json:"timed_out,omitempty" jsonschema:"the value's expression did not finish in time and still runs inside the program"`
	Note     string `json:"note,omitempty"`
}

// WatchResult is the session's watchpoints after a change.
type WatchResult struct {
	Session     SessionInfo        `json:"session"`
	Watchpoints []watch.Watchpoint `json:"watchpoints"`
}
