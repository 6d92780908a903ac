package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Call is one tool call in flight: the run, the mode of the caller, the tool
// and its raw arguments. Handlers use it to confine paths, report progress
// and record the files they wrote (which wrappers read afterwards).
type Call struct {
	Run  *Run
	Mode tiers.Mode
	Tool *Descriptor
	// Args is the JSON object of arguments, already validated.
	Args json.RawMessage

	progressToken mcp.ProgressToken

	mu      sync.Mutex
	written []string
	notes   []string
}

// Path confines a path argument to the run's root (REG-9).
func (c *Call) Path(p string) (string, error) { return c.Run.guard.Resolve(p) }

// Rel shows an absolute path relative to the root.
func (c *Call) Rel(abs string) string { return c.Run.guard.Rel(abs) }

// Wrote records files the call changed, so wrappers (diagnostics after a
// write) know what to look at.
func (c *Call) Wrote(abs ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.written = append(c.written, abs...)
}

// Written returns the files the call recorded with Wrote.
func (c *Call) Written() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.written...)
}

// Progress reports progress to an MCP client that asked for it with a
// progress token; otherwise it does nothing.
func (c *Call) Progress(ctx context.Context, done, total float64, msg string) {
	if c.progressToken == nil {
		return
	}
	s := server.ServerFromContext(ctx)
	if s == nil {
		return
	}
	params := map[string]any{"progressToken": c.progressToken, "progress": done}
	if total > 0 {
		params["total"] = total
	}
	if msg != "" {
		params["message"] = msg
	}
	_ = s.SendNotificationToClient(ctx, "notifications/progress", params)
}

// Call runs tool name for a caller in mode with JSON arguments. It is the one
// call path (REG-8): the MCP peers call it, and so will an interpreter's
// tool() bridge. Refusals and failures come back as tool error results.
func (r *Run) Call(ctx context.Context, mode tiers.Mode, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	return r.call(ctx, mode, name, args, nil)
}

func (r *Run) call(ctx context.Context, mode tiers.Mode, name string, args json.RawMessage, token mcp.ProgressToken) (res *mcp.CallToolResult, err error) {
	r.mu.Lock()
	closed := r.closed
	e, known := r.tools[name]
	var missing []ResourceKind
	if known {
		missing = r.missingLocked(e)
	}
	var wrappers []Wrapper
	if known {
		for _, w := range r.wrappers {
			if w.Applies == nil || w.Applies(&e.d) {
				wrappers = append(wrappers, w)
			}
		}
	}
	r.mu.Unlock()

	if closed {
		return Errorf("%s: the run is closed; start a new run", name)
	}
	if !known || len(missing) > 0 {
		return Errorf("%s", r.unknownTool(mode, name))
	}
	if !mode.Sees(e.d.Tier) {
		return Errorf("%s", mode.Refusal(name, e.d.Tier))
	}
	args, msg := r.validate(e, args)
	if msg != "" {
		return Errorf("%s", msg)
	}
	c := &Call{Run: r, Mode: mode, Tool: &e.d, Args: args, progressToken: token}

	if refused := r.approve(ctx, c); refused != nil {
		return refused, nil
	}
	if e.serial != nil {
		if err := e.serial.lock(ctx); err != nil {
			return Errorf("%s: gave up waiting for the previous call to this tool to finish: %v", name, err)
		}
		defer e.serial.unlock()
	}
	h := e.d.Handler
	for i := len(wrappers) - 1; i >= 0; i-- {
		h = wrappers[i].Wrap(h)
	}
	defer func() {
		if p := recover(); p != nil {
			res, err = Errorf("internal error in %s: %v (this is a bug in builtin-tools; the stack is on the server's stderr)", name, p)
			fmt.Fprintf(stderr, "builtin-tools: panic in %s: %v\n%s", name, p, debug.Stack())
		}
	}()
	res, err = h(ctx, c)
	if err == nil && res == nil {
		return Errorf("%s returned no result (this is a bug in builtin-tools)", name)
	}
	if res != nil {
		capResult(res, r.maxResultBytes())
	}
	return res, err
}

// DefaultMaxResultBytes is the run's backstop on the text of one result.
// Tools keep well inside it with their own, smaller caps and say what they
// left out; this catches a tool that did not.
const DefaultMaxResultBytes = 512 << 10

func (r *Run) maxResultBytes() int {
	if r.cfg.MaxResultBytes > 0 {
		return r.cfg.MaxResultBytes
	}
	return DefaultMaxResultBytes
}

// capResult cuts the text blocks of res to max bytes in all, on a UTF-8
// boundary, and says how much was cut.
func capResult(res *mcp.CallToolResult, max int) {
	total := 0
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			total += len(t.Text)
		}
	}
	if total <= max {
		return
	}
	left := max
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
		if len(t.Text) > left {
			cut := left
			for cut > 0 && !utf8.RuneStart(t.Text[cut]) {
				cut--
			}
			t.Text = t.Text[:cut]
		}
		left -= len(t.Text)
		out = append(out, t)
	}
	res.Content = append(out, mcp.NewTextContent(fmt.Sprintf(
		"[result cut at %d KiB of %d KiB by the run's output budget; ask for less: a narrower path, a smaller range, a more selective pattern]", max>>10, total>>10)))
}

func (r *Run) unknownTool(mode tiers.Mode, name string) string {
	var names []string
	for _, t := range r.Visible(mode) {
		names = append(names, t.Name)
	}
	r.mu.Lock()
	e, known := r.tools[name]
	var missing []ResourceKind
	if known {
		missing = r.missingLocked(e)
	}
	r.mu.Unlock()
	if known && len(missing) > 0 {
		var ks []string
		for _, k := range missing {
			ks = append(ks, string(k))
		}
		return fmt.Sprintf("tool %q is not registered in this run: it needs %s, which the run does not have; tools available in %s mode: %s",
			name, strings.Join(ks, " and "), mode, strings.Join(names, ", "))
	}
	return fmt.Sprintf("unknown tool %q; tools available in %s mode: %s", name, mode, strings.Join(names, ", "))
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
		return nil, fmt.Sprintf("arguments for %s must be a JSON object such as {\"%s\": ...}", e.d.Name, first(e.params))
	}
	err = e.schema.Validate(inst)
	if err == nil {
		return args, ""
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil, fmt.Sprintf("arguments for %s: %v", e.d.Name, err)
	}
	var problems []string
	collect(ve, &problems, e.params)
	sort.Strings(problems)
	problems = dedupe(problems)
	return nil, fmt.Sprintf("bad arguments for %s: %s. It takes: %s", e.d.Name, strings.Join(problems, "; "), r.describeParams(e))
}

func (r *Run) describeParams(e *entry) string {
	var doc map[string]any
	_ = json.Unmarshal(e.d.Schema, &doc)
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
	for _, p := range e.params {
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

func collect(ve *jsonschema.ValidationError, out *[]string, params []string) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			collect(c, out, params)
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
			if s := closest(p, params); s != "" && where == "" {
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
		if d := editDistance(strings.ToLower(s), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func first(s []string) string {
	if len(s) == 0 {
		return "name"
	}
	return s[0]
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
