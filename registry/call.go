package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/builtin-tools/builtin-tools/internal/similar"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/pathguard"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
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
	reports []Report

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
func (c *Call) Budget() Budget { return Budget(c.Run.budget()) }

// Policy is the run's approval policy (a copy): what a tool that hands
// work to another agent passes on, so the gate holds there too.
func (c *Call) Policy() Policy { return maps.Clone(c.Run.cfg.Policy) }

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

// Report is what a wrapper adds to a call's result — diagnostics after a
// write, a re-index that failed — as text for the agent and data for a
// program. The registry appends the text to the result's content and the
// report to its structured content's "reports" (many tools already have a
// "notes" of their own).
type Report struct {
	Kind string         `json:"kind" jsonschema:"what added it: diagnostics, code_graph"`
	Text string         `json:"text" jsonschema:"what the agent reads"`
	Data map[string]any `json:"data,omitempty" jsonschema:"the same as data, when there is any"`
}

// Report adds a report to the call's result (wrappers call it after the
// handler). A child's reports go to the child's own result, which its
// caller receives whole.
func (c *Call) Report(kind, text string, data map[string]any) {
	if text == "" && data == nil {
		return
	}
	c.mu.Lock()
	c.reports = append(c.reports, Report{Kind: kind, Text: text, Data: data})
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
	r.mu.Lock()
	closed := r.closed
	e, known := r.tools[name]
	registered := known && r.registeredLocked(e)
	var h HandlerFunc
	if registered {
		h = r.chainLocked(e)
	}
	if !closed {
		r.calls.Add(1)
		defer r.calls.Done()
	}
	r.mu.Unlock()

	if closed {
		return Failf("%s: the run is closed; start a new run", name), nil
	}
	if !registered || !mode.Sees(e.d.Tier) {
		return Failf("%s", r.refusal(mode, name)), nil
	}
	args, msg := r.validate(e, args)
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

	if refused := r.approve(ctx, c); refused != nil {
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
		capResult(res, r.budget())
	}
	return res, err
}

func (r *Run) budget() int {
	if r.cfg.OutputBudget > 0 {
		return r.cfg.OutputBudget
	}
	return DefaultOutputBudget
}

// capResult cuts the text blocks of res to budget characters in all, on a
// character boundary, and says how much was cut (REG-12). Structured
// content is bounded by each tool's own limits (matches, references, diff
// size), not here.
func capResult(res *mcp.CallToolResult, budget int) {
	total := 0
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			total += utf8.RuneCountInString(t.Text)
		}
	}
	if total <= budget {
		return
	}
	left := budget
	out := res.Content[:0]
	for _, c := range res.Content {
		t, ok := c.(mcp.TextContent)
		if !ok {
			out = append(out, c)
			continue
		}
		if left <= 0 {
			continue
		}
		if n := utf8.RuneCountInString(t.Text); n > left {
			t.Text = textcut.Runes(t.Text, left)
		}
		left -= utf8.RuneCountInString(t.Text)
		out = append(out, t)
	}
	res.Content = append(out, mcp.NewTextContent(fmt.Sprintf(
		"[cut: this result has %d characters and the run's output budget is %d; ask for less of it]", total, budget)))
}

// refusal says why name cannot be called in mode: not in the catalog, not
// registered in this run, or outside the mode. It is the one refusal of a
// tool the caller cannot see, on every path.
func (r *Run) refusal(mode tiers.Mode, name string) string {
	var names []string
	for _, t := range r.Visible(mode) {
		names = append(names, t.Name)
	}
	list := strings.Join(names, ", ")
	r.mu.Lock()
	e, known := r.tools[name]
	registered := known && r.registeredLocked(e)
	r.mu.Unlock()
	switch {
	case known && !registered:
		return fmt.Sprintf("tool %q is not registered in this run: it needs the %s resource, which the run does not have; tools available in %s mode: %s",
			name, e.d.Needs(), mode, list)
	case known:
		return mode.Refusal(name, e.d.Tier)
	}
	msg := fmt.Sprintf("unknown tool %q", name)
	if s := closest(name, r.names); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg + fmt.Sprintf("; tools available in %s mode: %s", mode, list)
}

var printer = message.NewPrinter(language.English)

// validate checks args against the tool's schema and says, argument by
// argument, what is wrong and what the tool takes.
func (r *Run) validate(e *entry, args json.RawMessage) (json.RawMessage, string) {
	if len(strings.TrimSpace(string(args))) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(args)))
	if err != nil {
		return nil, fmt.Sprintf("arguments for %s are not valid JSON: %v", e.d.Name, err)
	}
	if _, ok := inst.(map[string]any); !ok {
		return nil, fmt.Sprintf("arguments for %s must be a JSON object such as {\"%s\": ...}", e.d.Name, first(e.d.Handler.h.params))
	}
	schema, err := e.d.Handler.h.validator(e.d.Name)
	if err != nil {
		return nil, err.Error()
	}
	err = schema.Validate(inst)
	if err == nil {
		return args, ""
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil, fmt.Sprintf("arguments for %s: %v", e.d.Name, err)
	}
	var problems []string
	collect(ve, &problems, e.d.Handler.h.params, e.d.Renamed)
	slices.Sort(problems)
	problems = slices.Compact(problems)
	return nil, fmt.Sprintf("bad arguments for %s: %s. It takes: %s", e.d.Name, strings.Join(problems, "; "), r.describeParams(e))
}

func (r *Run) describeParams(e *entry) string {
	var doc map[string]any
	_ = json.Unmarshal(e.d.InputSchema(), &doc)
	req := map[string]bool{}
	if l, ok := doc["required"].([]any); ok {
		for _, v := range l {
			if s, ok := v.(string); ok {
				req[s] = true
			}
		}
	}
	props, _ := doc["properties"].(map[string]any)
	var parts []string
	for _, p := range e.d.Handler.h.params {
		typ := ""
		if m, ok := props[p].(map[string]any); ok {
			typ = typeName(m["type"])
		}
		s := p
		if typ != "" {
			s += " (" + typ + ")"
		}
		if req[p] {
			s += " required"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func typeName(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				out = append(out, s)
			}
		}
		return strings.Join(out, " or ")
	}
	return ""
}

func collect(ve *jsonschema.ValidationError, out *[]string, params []string, renamed map[string]string) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			collect(c, out, params, renamed)
		}
		return
	}
	where := strings.Join(ve.InstanceLocation, ".")
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		for _, m := range k.Missing {
			name := m
			if where != "" {
				name = where + "." + m
			}
			*out = append(*out, fmt.Sprintf("missing required argument %q", name))
		}
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			msg := fmt.Sprintf("unknown argument %q", p)
			if now, ok := renamed[p]; ok && where == "" {
				msg += fmt.Sprintf(" (it is called %q now)", now)
			} else if s := closest(p, params); s != "" && where == "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			*out = append(*out, msg)
		}
	case *kind.Type:
		// Slices are nullable in generated schemas; null is no advice.
		want := slices.DeleteFunc(slices.Clone(k.Want), func(s string) bool { return s == "null" })
		if len(want) == 0 {
			want = k.Want
		}
		*out = append(*out, fmt.Sprintf("argument %q must be %s, not %s", where, strings.Join(want, " or "), k.Got))
	case *kind.Group, *kind.Schema, *kind.Reference:
		// containers without a leaf of their own
	default:
		if where == "" {
			*out = append(*out, ve.ErrorKind.LocalizedString(printer))
		} else {
			*out = append(*out, fmt.Sprintf("argument %q: %s", where, ve.ErrorKind.LocalizedString(printer)))
		}
	}
}

// closest suggests the known argument nearest to a misspelt one.
func closest(s string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := similar.Distance(strings.ToLower(s), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func first(s []string) string {
	if len(s) == 0 {
		return "name"
	}
	return s[0]
}

// interrupts reports whether a call of serial tool e goes past the calls
// queued before it (its Interrupts hook).
func interrupts(e *entry, c *Call) bool {
	h := e.d.Handler.h
	return h != nil && h.interrupts != nil && h.interrupts(c)
}

// approve runs the approval gate (REG-7); a non-nil result refuses the call.
func (r *Run) approve(ctx context.Context, c *Call) *mcp.CallToolResult {
	t := c.Tool.Tier
	if t == tiers.Read {
		return nil
	}
	d := r.cfg.Policy[t]
	switch d {
	case "", Allow:
		return nil
	case Ask:
		if c.Tool.Stages {
			return nil // the call that applies what it stages is asked
		}
		if h := c.entry.d.Handler.h; h.approve != nil && !c.escalation {
			needed, summary, err := h.approve(ctx, c)
			if err != nil {
				return Fail(err)
			}
			if !needed {
				return nil
			}
			c.approvalSummary = summary
		}
	case Deny:
		return mcp.NewToolResultError(fmt.Sprintf("%s is refused: this run's approval policy denies %s tools (%s=deny). Do not retry; tell the user what you would have done.", c.Tool.Name, t, t))
	}
	if r.cfg.Approver == nil {
		return mcp.NewToolResultError(fmt.Sprintf("%s is refused: %s tools need approval in this run, and no one is attached to approve (fail closed). Do not retry; tell the user what you would have done.", c.Tool.Name, t))
	}
	ok, reason, err := r.cfg.Approver.Approve(ctx, c)
	if err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("%s is refused: approval could not be obtained: %v. Do not retry; tell the user what you would have done.", c.Tool.Name, err))
	}
	if !ok {
		if reason == "" {
			reason = "the operator did not approve it"
		}
		return mcp.NewToolResultError(fmt.Sprintf("%s is refused: %s. Do not retry this call; ask for direction or do something else.", c.Tool.Name, reason))
	}
	return nil
}
