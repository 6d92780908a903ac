package debugtool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/builtin-tools/builtin-tools/dap"
	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/breakpoint"
	"github.com/builtin-tools/builtin-tools/dap/result"
	"github.com/builtin-tools/builtin-tools/pathguard"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

type debugParams struct {
	Operation  string            `json:"operation" jsonschema:"what to do"`
	Adapter    string            `json:"adapter,omitempty" jsonschema:"launch/attach: delve, debugpy, lldb or dart; chosen from the program (launch) or from port or pid (attach) when omitted"`
	Program    string            `json:"program,omitempty" jsonschema:"launch: the program, relative to the root: a .py file, a Go package folder or .go file, or an executable"`
	Module     string            `json:"module,omitempty" jsonschema:"launch: a Python module to run instead of a program, such as pytest (with args like -k name)"`
	Args       []string          `json:"args,omitempty" jsonschema:"launch: the program's arguments"`
	Cwd        string            `json:"cwd,omitempty" jsonschema:"launch: working folder, relative to the root (default the root)"`
	Env        map[string]string `json:"env,omitempty" jsonschema:"launch: extra environment variables"`
	Test       string            `json:"test,omitempty" jsonschema:"launch (Go): debug the package's tests matching this -test.run pattern"`
	Exceptions []string          `json:"exceptions,omitempty" jsonschema:"launch and attach: exceptions to stop on: uncaught (the default), raised, user_unhandled (raised in your code, caught by a library: pytest's failing assert; the default for -m pytest), or the adapter's own filter names (lldb: cpp_catch); [] stops on none; adapters lists what each has"`
	Core       string            `json:"core,omitempty" jsonschema:"launch: a core file to open read-only (delve, lldb), relative to the root, with program the executable that crashed: its threads, stacks and variables, nothing runs"`
	Port       int               `json:"port,omitempty" jsonschema:"attach (debugpy): the port the program called debugpy.listen on"`
	PID        int               `json:"pid,omitempty" jsonschema:"attach: the process id of a running program (Go: delve, Python: debugpy, other native code: lldb)"`
	File       string            `json:"file,omitempty" jsonschema:"breakpoints: the file, relative to the root"`
	Line       int               `json:"line,omitempty" jsonschema:"run_to_line: the 1-based line to run to, in file"`
	Lines      []int             `json:"lines,omitempty" jsonschema:"breakpoints: 1-based lines to break at (added to the file's others); an empty list clears the file"`
	Remove     []int             `json:"remove,omitempty" jsonschema:"breakpoints: lines whose breakpoints to remove"`
	Functions  []string          `json:"functions,omitempty" jsonschema:"breakpoints: functions to break at, by name: pkg.Func or (*T).Method (delve), module.func or module.Class.method, or a bare function name (debugpy), main (lldb); with condition and hit_condition; an empty list clears them; the program's end names those never hit"`
	RemoveFns  []string          `json:"remove_functions,omitempty" jsonschema:"breakpoints: functions whose breakpoints to remove"`
	Condition  string            `json:"condition,omitempty" jsonschema:"breakpoints: stop only when this expression is true"`
	HitCond    string            `json:"hit_condition,omitempty" jsonschema:"breakpoints: stop only on these hits, such as >= 3"`
	LogMessage string            `json:"log_message,omitempty" jsonschema:"breakpoints: a logpoint: print this (with {expressions}) instead of stopping"`
	ThreadID   int               `json:"thread_id,omitempty" jsonschema:"resumes and stack: the thread (goroutine); default the stopped one"`
	FrameID    string            `json:"frame_id,omitempty" jsonschema:"scopes, evaluate and set_variable: a frame id from this stop, such as 1000@3; evaluate, set_variable and watch default to the frame the stop showed (a crash's or an exception's frame in the checkout, not the top one)"`
	Reference  string            `json:"reference,omitempty" jsonschema:"variables: a reference from this stop, such as 1001@3"`
	All        bool              `json:"all,omitempty" jsonschema:"variables: also list what is left out as noise (debugpy's special and function variable groups, delve's unset result slots ~r0)"`
	Name       string            `json:"name,omitempty" jsonschema:"set_variable: the variable to set"`
	Value      string            `json:"value,omitempty" jsonschema:"set_variable: its new value, an expression in the program's language"`
	Access     string            `json:"access,omitempty" jsonschema:"watch: write (default), read or readWrite"`
	Unwatch    bool              `json:"unwatch,omitempty" jsonschema:"watch: remove the watchpoint on name"`
	Expression string            `json:"expression,omitempty" jsonschema:"evaluate: the expression, in the program's language"`
	Timeout    int               `json:"timeout_seconds,omitempty" jsonschema:"launch and resumes: how long to wait for the program to stop; evaluate and set_variable: how long to wait for the value (default 10, at most 300)"`
	// A pointer: unset and false differ for a launched program.
	TerminateDebuggee *bool `json:"terminate_debuggee,omitempty" jsonschema:"terminate after attach: also end the program (default: detach and leave it running); a launched program always ends"`
}

// An operation of the debug tool; the table is the one place operations
// are declared: the schema's enum, the description and the dispatch.
type action struct {
	name string
	doc  string
	run  func(ctx context.Context, c *registry.Call, sup *dap.Supervisor, p debugParams, out *DebugResult) error
}

func resume(name string) func(context.Context, *registry.Call, *dap.Supervisor, debugParams, *DebugResult) error {
	return func(ctx context.Context, c *registry.Call, sup *dap.Supervisor, p debugParams, out *DebugResult) error {
		return fill(out, &out.Stop, formatStop)(sup.Resume(ctx, name, p.ThreadID, seconds(p.Timeout)))
	}
}

var actions = []action{
	{"adapters", "adapters (which debuggers work here, and why others do not)", func(ctx context.Context, c *registry.Call, sup *dap.Supervisor, p debugParams, out *DebugResult) error {
		out.Adapters = sup.Adapters(ctx)
		out.text = formatAdapters(out.Adapters)
		return nil
	}},
	{"status", "status (answers at once, also while another operation runs)", func(ctx context.Context, c *registry.Call, sup *dap.Supervisor, p debugParams, out *DebugResult) error {
		out.Status = sup.Status()
		out.text = formatStatus(out.Status)
		return nil
	}},
	{"breakpoints", "breakpoints (file, lines[], remove[], condition, hit_condition, log_message; or functions[], remove_functions[] by name; kept across sessions, may be set before launch)", setBreakpoints},
	{"launch", "launch (program or module, args[], cwd, env, test, exceptions[]; stops at your breakpoints and on uncaught exceptions; with core: opens that core file of program's crash read-only)", launch},
	{"attach", "attach (port: a Python program that called debugpy.listen; pid: a running Go, Python or native program; the adapter follows from which)", launch},
	{"continue", "continue", resume("continue")},
	{"pause", "pause", resume("pause")},
	{"step_over", "step_over", resume("step_over")},
	{"step_in", "step_in", resume("step_in")},
	{"step_out", "step_out (thread_id optional; resumes wait up to timeout_seconds for the next stop)", resume("step_out")},
	{"run_to_line", "run_to_line (file, line: a one-shot breakpoint there, then continue; it is removed when hit or when another stop comes first, and the result says which)", func(ctx context.Context, c *registry.Call, sup *dap.Supervisor, p debugParams, out *DebugResult) error {
		if p.File == "" || p.Line <= 0 {
			return errors.New("run_to_line needs file (relative to the root) and line (1-based)")
		}
		at, err := c.Location(p.File)
		if err != nil {
			return err
		}
		if info, err := c.Run.Guard().Stat(at.Abs()); err != nil || info.IsDir() {
			return fmt.Errorf("%s is not a file here (paths are relative to the root)", at.Rel())
		}
		return fill(out, &out.Stop, formatStop)(sup.RunToLine(ctx, at, p.Line, seconds(p.Timeout)))
	}},
	{"restart", "restart (the same program, args and breakpoints again, within the session's time limit: the adapter's restart where it has one, else terminate and launch)", func(ctx context.Context, c *registry.Call, sup *dap.Supervisor, p debugParams, out *DebugResult) error {
		return fill(out, &out.Stop, formatStop)(sup.Restart(ctx, seconds(p.Timeout)))
	}},
	{"threads", "threads (goroutines grouped by where they are)", func(ctx context.Context, c *registry.Call, sup *dap.Supervisor, p debugParams, out *DebugResult) error {
		return fill(out, &out.Threads, formatThreads)(sup.Threads(ctx))
	}},
	{"stack", "stack (thread_id; at most 30 frames)", func(ctx context.Context, c *registry.Call, sup *dap.Supervisor, p debugParams, out *DebugResult) error {
		return fill(out, &out.Stack, formatStack)(sup.Stack(ctx, p.ThreadID))
	}},
	{"scopes", "scopes (frame_id)", func(ctx context.Context, c *registry.Call, sup *dap.Supervisor, p debugParams, out *DebugResult) error {
		if p.FrameID == "" {
			return errors.New("scopes needs frame_id, from a stop or from stack")
		}
		return fill(out, &out.Scopes, formatScopes)(sup.Scopes(ctx, p.FrameID))
	}},
	{"variables", "variables (reference; at most 50 children)", func(ctx context.Context, c *registry.Call, sup *dap.Supervisor, p debugParams, out *DebugResult) error {
		if p.Reference == "" {
			return errors.New("variables needs reference, from scopes or from a variable with children")
		}
		format := func(r *result.VariablesResult) string { return formatVariables(r, c.Budget().Chars()) }
		return fill(out, &out.Variables, format)(sup.Variables(ctx, p.Reference, p.All))
	}},
	{"evaluate", "evaluate (expression; frame_id, default the frame the stop showed)", func(ctx context.Context, c *registry.Call, sup *dap.Supervisor, p debugParams, out *DebugResult) error {
		if strings.TrimSpace(p.Expression) == "" {
			return errors.New("evaluate needs expression")
		}
		return fill(out, &out.Eval, formatEval)(sup.Evaluate(ctx, p.Expression, p.FrameID, seconds(p.Timeout)))
	}},
	{"set_variable", "set_variable (name, value; reference: the container from this stop, or frame_id: its locals, default the frame the stop showed; shows the value read back)", func(ctx context.Context, c *registry.Call, sup *dap.Supervisor, p debugParams, out *DebugResult) error {
		return fill(out, &out.SetVar, formatSetVar)(sup.SetVariable(ctx, p.Reference, p.FrameID, p.Name, p.Value, seconds(p.Timeout)))
	}},
	{"watch", "watch (name, reference or the locals of the frame the stop showed, access; unwatch: true removes it; a data breakpoint for this session, where the adapter has them: adapters says)", func(ctx context.Context, c *registry.Call, sup *dap.Supervisor, p debugParams, out *DebugResult) error {
		return fill(out, &out.Watch, formatWatch)(sup.Watch(ctx, p.Reference, p.Name, p.Access, p.Unwatch))
	}},
	{"output", "output (the program's output that no result has shown yet: what stop results left out, then what came since)", func(ctx context.Context, c *registry.Call, sup *dap.Supervisor, p debugParams, out *DebugResult) error {
		return fill(out, &out.Output, formatOutput)(sup.Output(c.Budget().Reserve(500).Chars()))
	}},
	{"terminate", "terminate (ends a launched program; after attach, detaches and leaves the program running unless terminate_debuggee is true)", func(ctx context.Context, c *registry.Call, sup *dap.Supervisor, p debugParams, out *DebugResult) error {
		res, err := sup.Terminate(ctx, p.TerminateDebuggee != nil && *p.TerminateDebuggee)
		if err != nil {
			return err
		}
		if p.TerminateDebuggee != nil && !*p.TerminateDebuggee && !res.Attached {
			res.Note = "terminate_debuggee: false applies to a program attached to; one the session launched ends with it"
		}
		out.Terminated, out.text = res, formatTerminate(res)
		return nil
	}},
}

func (a action) ChoiceName() string { return a.name }
func (a action) ChoiceDoc() string  { return a.doc }

// DebugTool is the `debug` tool (DBG-1..5).
var DebugTool = registry.Descriptor{
	Name:  "debug",
	Title: "debugger",
	Tier:  tiers.Exec,
	// The debuggee is a program that reaches anything the machine does.
	OpenWorld: true,
	Description: "Drive a debugger (delve for Go, debugpy for Python, lldb-dap for C, C++ and Rust): one session per conversation, with a time limit. " +
		"Set breakpoints, launch, then continue or step: each waits for the next stop and says where and why, quoting the source line with the frame's locals. " +
		"frame_id and reference values belong to one stop; after the program moves, call stack again. Operations: " + registry.ChoiceDocs(actions) + ".",
	Serial:  true,
	Renamed: map[string]string{"action": "operation"},
	// pause and terminate must reach a resume that is waiting; status
	// never waits on the adapter, and answers while another operation
	// runs (R11).
	Handler: registry.With(Key, debug, registry.Interrupts(func(_ *dap.Supervisor, p debugParams) bool {
		return p.Operation == "pause" || p.Operation == "terminate" || p.Operation == "status"
	})).WithEnum("operation", registry.ChoiceNames(actions)),
}

// DebugResult is the answer to one operation: the operation and the one
// field it fills.
type DebugResult struct {
	Operation   string                    `json:"operation"`
	Adapters    []adapter.Status          `json:"adapters,omitempty"`
	Status      *result.StatusResult      `json:"status,omitempty"`
	Breakpoints *result.BreakpointsResult `json:"breakpoints,omitempty"`
	Stop        *result.StopResult        `json:"stop,omitempty" jsonschema:"launch and resumes: where the program stopped, or that it exited or still runs"`
	Threads     *result.ThreadsResult     `json:"threads,omitempty"`
	Stack       *result.StackResult       `json:"stack,omitempty"`
	Scopes      *result.ScopesResult      `json:"scopes,omitempty"`
	Variables   *result.VariablesResult   `json:"variables,omitempty"`
	Eval        *result.EvalResult        `json:"eval,omitempty"`
	SetVar      *result.SetVarResult      `json:"set_variable,omitempty"`
	Watch       *result.WatchResult       `json:"watch,omitempty"`
	Output      *result.OutputResult      `json:"output,omitempty"`
	Terminated  *result.TerminateResult   `json:"terminated,omitempty"`
	text        string
}

// Text is what the agent reads.
func (r DebugResult) Text() string { return r.text }

func debug(ctx context.Context, c *registry.Call, sup *dap.Supervisor, p debugParams) (DebugResult, error) {
	if a, ok := registry.FindChoice(actions, p.Operation); ok {
		out := DebugResult{Operation: a.name}
		if err := a.run(ctx, c, sup, p, &out); err != nil {
			return DebugResult{}, explain(err)
		}
		return out, nil
	}
	return DebugResult{}, fmt.Errorf("unknown operation %q; use one of %s", p.Operation, strings.Join(registry.ChoiceNames(actions), ", "))
}

// explain gives the agent an engine error's own sentence: a *adapter.Error
// reads as one whatever wrapped it; its kind stays for errors.Is.
func explain(err error) error {
	if e, ok := errors.AsType[*adapter.Error](err); ok {
		return e
	}
	return err
}

// fill puts an operation's result in its field of out, with the text
// format makes of it; an error is returned as it is.
func fill[T any](out *DebugResult, field *T, format func(T) string) func(T, error) error {
	return func(res T, err error) error {
		if err != nil {
			return err
		}
		*field, out.text = res, format(res)
		return nil
	}
}

func seconds(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	return time.Duration(min(n, 300)) * time.Second
}

func setBreakpoints(ctx context.Context, c *registry.Call, sup *dap.Supervisor, p debugParams, out *DebugResult) error {
	if p.Functions != nil || p.RemoveFns != nil {
		if p.File != "" || p.Lines != nil || p.Remove != nil || p.LogMessage != "" {
			return errors.New("breakpoints takes functions (and remove_functions) or file and lines, not both in one call; a function breakpoint has no log_message")
		}
		clearAll := p.Functions != nil && len(p.Functions) == 0 && len(p.RemoveFns) == 0
		return fill(out, &out.Breakpoints, formatBreakpoints)(sup.SetFunctionBreakpoints(ctx, p.Functions, p.Condition, p.HitCond, p.RemoveFns, clearAll))
	}
	if p.File == "" {
		return errors.New("breakpoints needs file (relative to the root) and lines, or functions; lines: [] clears the file")
	}
	at, err := c.Location(p.File)
	if err != nil {
		return err
	}
	abs := at.Abs()
	info, err := c.Run.Guard().Stat(abs)
	if err != nil {
		return fmt.Errorf("%s does not exist", c.Rel(abs))
	}
	if info.IsDir() {
		return fmt.Errorf("%s is a folder; breakpoints go in a file", c.Rel(abs))
	}
	var lines []breakpoint.LineSpec
	for _, l := range p.Lines {
		lines = append(lines, breakpoint.LineSpec{Line: l, Condition: p.Condition, HitCondition: p.HitCond, LogMessage: p.LogMessage})
	}
	clearAll := p.Lines != nil && len(p.Lines) == 0 && len(p.Remove) == 0
	return fill(out, &out.Breakpoints, formatBreakpoints)(sup.SetBreakpoints(ctx, at, lines, p.Remove, clearAll))
}

func launch(ctx context.Context, c *registry.Call, sup *dap.Supervisor, p debugParams, out *DebugResult) error {
	l := adapter.LaunchSpec{Adapter: p.Adapter, Module: p.Module, Args: p.Args, Env: p.Env, Test: p.Test,
		Attach: p.Operation == "attach", Port: p.Port, PID: p.PID, Exceptions: p.Exceptions}
	if !l.Attach && p.Program == "" && p.Module == "" {
		return errors.New("launch needs program (relative to the root) or module (Python)")
	}
	var err error
	if p.Program != "" {
		if l.Program, err = existing(c, "program", p.Program); err != nil {
			return err
		}
	}
	if p.Core != "" {
		if l.Attach {
			return errors.New("core goes with launch (program: the executable that crashed), not attach")
		}
		if l.Core, err = existing(c, "core", p.Core); err != nil {
			return err
		}
	}
	if p.Cwd != "" {
		at, err := c.Location(p.Cwd)
		if err != nil {
			return err
		}
		l.Cwd = at
	}
	return fill(out, &out.Stop, formatStop)(sup.Launch(ctx, l, seconds(p.Timeout)))
}

// existing is the path arg, which must exist, of what (program, core).
func existing(c *registry.Call, what, arg string) (pathguard.Path, error) {
	at, err := c.Location(arg)
	if err != nil {
		return pathguard.Path{}, err
	}
	if _, err := c.Run.Guard().Stat(at.Abs()); err != nil {
		return pathguard.Path{}, fmt.Errorf("%s %s does not exist (paths are relative to the root)", what, at.Rel())
	}
	return at, nil
}
