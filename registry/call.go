package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/builtin-tools/builtin-tools/pathguard"
	"github.com/builtin-tools/builtin-tools/registry/textfit"
	"github.com/builtin-tools/builtin-tools/registry/toolschema"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

// Call is one tool call in flight: the run, the mode of the caller, the tool
// and its raw arguments. Handlers use it to confine paths, report progress,
// record the files they wrote (which wrappers read afterwards) and call
// other tools as children of their own call.
type Call struct {
	Run  *Run
	Mode tiers.Mode
	Tool *Descriptor
	// Args is the JSON object of arguments, already validated.
	Args json.RawMessage
	// Parent is the call this one was made from (Call.Call), nil for a call
	// from a peer or a harness.
	Parent *Call
	// Origin says, for a child call, where it came from in its parent's
	// terms ("an eval cell"); approval prompts show it.
	Origin string

	entry *entry
	peer  *Peer // the peer the root call came from; nil on the direct path

	mu      sync.Mutex
	written []string
	// before holds files' contents before the call first changed them
	// (Before), by absolute path.
	before  map[string][]byte
	reports []toolschema.Report

	approvalSummary string
	// escalation marks a Call.Escalate's call: its card is what the
	// escalation names, not what the tool's Approve hook says.
	escalation bool
	// params is the arguments decoded into the handler's params, shared by
	// its hooks (paramsOf).
	params any
}

// ApprovalSummary is what the tool says of this call for an approval card
// (its Approve hook, or what a Call.Escalate shows), "" when it says
// nothing beyond its arguments.
func (c *Call) ApprovalSummary() string { return c.approvalSummary }

type callKey struct{}

// CallOf returns the call whose handler ctx belongs to, or nil.
func CallOf(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	return c
}

// Path confines a path argument to the run's root (REG-9).
func (c *Call) Path(p string) (string, error) { return c.Run.guard.Resolve(p) }

// Location confines a path argument to the run's root as a
// pathguard.Path, the form engines take (REG-9).
func (c *Call) Location(p string) (pathguard.Path, error) { return c.Run.guard.Path(p) }

// Rel shows an absolute path relative to the root.
func (c *Call) Rel(abs string) string { return c.Run.guard.Rel(abs) }

// Budget is the output budget of this call's result in characters
// (REG-12): a tool sizes what it shows by it and says what it left out.
func (c *Call) Budget() textfit.Budget { return textfit.Budget(c.Run.cfg.OutputBudget) }

// Policy is the run's approval policy (a copy): what a tool that hands
// work to another agent passes on, so the gate holds there too.
func (c *Call) Policy() Policy { return maps.Clone(c.Run.gate.policy) }

// Wrote records files the call changed, so wrappers (diagnostics after a
// write) know what to look at. A child's files reach its parents too.
func (c *Call) Wrote(abs ...string) {
	for x := c; x != nil; x = x.Parent {
		x.mu.Lock()
		x.written = append(x.written, abs...)
		x.mu.Unlock()
	}
}

// MaxBefore bounds the size of a file Before keeps.
const MaxBefore = 1 << 20

// Before records what the file abs held before the call changed it (nil
// for a file it creates), so a wrapper can tell what the change altered
// (the definitions whose signature changed, for the check of the files
// using them). The first record of a file stands: a call that writes one
// file twice is compared with what it found. Files over MaxBefore are not
// kept. A child's records reach its parents too.
func (c *Call) Before(abs string, data []byte) {
	if len(data) > MaxBefore {
		return
	}
	data = slices.Clone(data)
	for x := c; x != nil; x = x.Parent {
		x.mu.Lock()
		if _, ok := x.before[abs]; !ok {
			if x.before == nil {
				x.before = map[string][]byte{}
			}
			x.before[abs] = data
		}
		x.mu.Unlock()
	}
}

// BeforeOf returns what Before recorded for abs.
func (c *Call) BeforeOf(abs string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.before[abs]
	return b, ok
}

// Report adds a report to the call's result (wrappers call it after the
// handler). A child's reports go to the child's own result, which its
// caller receives whole.
func (c *Call) Report(kind, text string, data map[string]any) {
	if text == "" && data == nil {
		return
	}
	c.mu.Lock()
	c.reports = append(c.reports, toolschema.Report{Kind: kind, Text: text, Data: data})
	c.mu.Unlock()
}

// mergeReports puts the call's reports into res: each text as a block of
// its own, and the reports in the structured content.
func (c *Call) mergeReports(res *mcp.CallToolResult) {
	c.mu.Lock()
	reports := slices.Clone(c.reports)
	c.mu.Unlock()
	if len(reports) == 0 || res == nil {
		return
	}
	for _, r := range reports {
		if r.Text != "" {
			res.Content = append(res.Content, mcp.NewTextContent(r.Text))
		}
	}
	if res.StructuredContent == nil {
		if res.IsError {
			return
		}
		res.StructuredContent = map[string]any{"reports": reports}
		return
	}
	b, err := json.Marshal(res.StructuredContent)
	var m map[string]any
	if err != nil || json.Unmarshal(b, &m) != nil || m == nil {
		return
	}
	m["reports"] = reports
	res.StructuredContent = m
}

// Written returns the files the call and its children recorded with Wrote.
func (c *Call) Written() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Compact(slices.Sorted(slices.Values(c.written)))
}

// Peer returns the MCP peer the call came from (through its parents), nil
// for a call on the direct path. It stays usable after the call returns,
// for notifications about work the call started.
func (c *Call) Peer() *Peer { return c.peer }

// Progress reports progress to the peer of the call if it asked for it
// with a progress token; otherwise it does nothing. A child reports to its
// parent's token.
func (c *Call) Progress(ctx context.Context, done, total float64, msg string) {
	c.peer.Progress(done, total, msg)
}

// Call runs tool name as a child of c (REG-11): in c's mode, through the
// same tier check, validation, approval and wrappers; its written files
// reach c, its progress goes to c's token, and an approval prompt names
// origin. A serial tool already running in c's chain is refused at once
// instead of waiting on itself.
func (c *Call) Call(ctx context.Context, origin, name string, args json.RawMessage) *mcp.CallToolResult {
	res, err := c.Run.call(ctx, c.Mode, name, args, c, origin, c.peer)
	if err != nil {
		return Fail(err)
	}
	return res
}

// Chain describes where a call came from, outermost first ("eval (an eval
// cell) → write"), for prompts and messages.
func (c *Call) Chain() string {
	var parts []string
	for x := c; x != nil; x = x.Parent {
		s := x.Tool.Name
		if x.Origin != "" {
			s = x.Origin + ": " + s
		}
		parts = append(parts, s)
	}
	slices.Reverse(parts)
	return strings.Join(parts, " → ")
}

// Call runs tool name for a caller in mode with JSON arguments. It is the
// direct path of the one call path (REG-8): no JSON-RPC round trip, the same
// checks as the peers. Refusals and failures come back as tool error
// results; the error is non-nil only for a handler's protocol fault.
func (r *Run) Call(ctx context.Context, mode tiers.Mode, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	return r.call(ctx, mode, name, args, nil, "", nil)
}

func (r *Run) call(ctx context.Context, mode tiers.Mode, name string, args json.RawMessage, parent *Call, origin string, peer *Peer) (res *mcp.CallToolResult, err error) {
	e, h, registered, closed := r.table.admit(name)
	if closed {
		return Failf("%s: the run is closed; start a new run", name), nil
	}
	defer r.table.calls.Done()
	if !registered || !mode.Sees(e.d.Tier) {
		return Failf("%s", r.table.refusal(mode, name)), nil
	}
	args, msg := e.validate(args)
	if msg != "" {
		return Failf("%s", msg), nil
	}
	c := &Call{Run: r, Mode: mode, Tool: &e.d, Args: args, Parent: parent, Origin: origin, entry: e, peer: peer}
	if e.serial != nil {
		for p := parent; p != nil; p = p.Parent {
			if p.entry == e {
				return Failf("%s cannot be called from inside its own call (%s): its calls run one at a time, so it would wait on itself. Call it after this call returns.", name, c.Chain()), nil
			}
		}
	}
	// The call ends with the caller's context or the run's, whichever first.
	ctx, cancel := context.WithCancelCause(context.WithValue(ctx, callKey{}, c))
	defer cancel(nil)
	stop := context.AfterFunc(r.ctx, func() { cancel(ErrClosed) })
	defer stop()

	if refused := r.gate.approve(ctx, c); refused != nil {
		return refused, nil
	}
	if e.serial != nil && !interrupts(e, c) {
		if err := e.serial.lock(ctx); err != nil {
			return Failf("%s: gave up waiting for the previous call to this tool to finish: %v", name, context.Cause(ctx)), nil
		}
		defer e.serial.unlock()
	}
	defer func() {
		if p := recover(); p != nil {
			res, err = Failf("internal error in %s: %v (this is a bug in builtin-tools; the stack is on the server's stderr)", name, p), nil
			fmt.Fprintf(stderr, "builtin-tools: panic in %s: %v\n%s", name, p, debug.Stack())
		}
	}()
	res, err = h(ctx, c)
	if err == nil && res == nil {
		return Failf("%s returned no result (this is a bug in builtin-tools)", name), nil
	}
	c.mergeReports(res)
	if ctx.Err() != nil && (err != nil || res.IsError) {
		// Cancellation is a result on every path, saying why.
		return Failf("%s was cancelled: %v", name, context.Cause(ctx)), nil
	}
	if res != nil {
		textfit.Budget(r.cfg.OutputBudget).Cap(res)
	}
	return res, err
}

// interrupts reports whether a call of serial tool e goes past the calls
// queued before it (its Interrupts hook).
func interrupts(e *entry, c *Call) bool {
	h := e.d.Handler.h
	return h != nil && h.interrupts != nil && h.interrupts(c)
}
