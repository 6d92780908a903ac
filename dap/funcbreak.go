package dap

import (
	"context"
	"fmt"
	"slices"
	"strings"

	godap "github.com/google/go-dap"
)

// FuncBreakpoint is a breakpoint on a function by name (pkg.Func,
// (*T).Method for delve; module.func for debugpy; main for lldb), kept by
// the supervisor across sessions like line breakpoints.
type FuncBreakpoint struct {
	ID           string `json:"id" jsonschema:"stable id, f1, f2, ..."`
	Name         string `json:"name" jsonschema:"the function, as the adapter names it"`
	Condition    string `json:"condition,omitempty"`
	HitCondition string `json:"hit_condition,omitempty"`
	// Verified, File, Line and Message are the adapter's answer.
	Verified bool   `json:"verified"`
	File     string `json:"file,omitempty" jsonschema:"where the adapter put it, relative to the root, when it said and it is inside"`
	Line     int    `json:"line,omitempty"`
	Message  string `json:"message,omitempty" jsonschema:"the adapter's reason, when unverified"`
	Hits     int    `json:"hits"`
	// Unsupported names a setting the adapter does not support and that
	// was therefore not sent.
	Unsupported string `json:"unsupported,omitempty"`
	adapterID   int
	// sent is the name the adapter was given, when not Name (debugpy's
	// bare function name for module.func).
	sent string
}

// MaxFuncBreakpoints caps the function breakpoints kept: all are sent at
// each change and launch.
const MaxFuncBreakpoints = 200

// SetFuncs adds names (updating one already set, which keeps its id and
// hits) with the condition and hit condition, and drops remove; clear
// drops them all.
func (b *Breakpoints) SetFuncs(names []string, cond, hitCond string, remove []string, clear bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if clear {
		b.funcs = nil
		return nil
	}
	for _, r := range remove {
		if !slices.ContainsFunc(b.funcs, func(f *FuncBreakpoint) bool { return f.Name == r }) {
			return badArg("no function breakpoint on %q to remove; the function breakpoints are %s", r, orNone(funcNames(b.funcs)))
		}
	}
	kept := slices.DeleteFunc(slices.Clone(b.funcs), func(f *FuncBreakpoint) bool { return slices.Contains(remove, f.Name) })
	var added []*FuncBreakpoint
	for _, n := range names {
		i := slices.IndexFunc(kept, func(f *FuncBreakpoint) bool { return f.Name == n })
		if i < 0 {
			f := &FuncBreakpoint{Name: n}
			kept = append(kept, f)
			added = append(added, f)
			i = len(kept) - 1
		}
		kept[i].Condition, kept[i].HitCondition = cond, hitCond
	}
	if len(kept) > MaxFuncBreakpoints {
		return badArg("%d function breakpoints would be kept; at most %d are (each is sent to the adapter at every change and launch): remove some", len(kept), MaxFuncBreakpoints)
	}
	for _, f := range added {
		b.next++
		f.ID = fmt.Sprintf("f%d", b.next)
	}
	b.funcs = kept
	return nil
}

func funcNames(fs []*FuncBreakpoint) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}

// Funcs returns copies of the function breakpoints, in the order set.
func (b *Breakpoints) Funcs() []FuncBreakpoint {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]FuncBreakpoint, 0, len(b.funcs))
	for _, f := range b.funcs {
		out = append(out, *f)
	}
	return out
}

// hitFunc counts a stop at function breakpoints: by the adapter's ids,
// else (a "function breakpoint" stop without them) by the frame's name.
func (b *Breakpoints) hitFunc(adapterIDs []int, reason, frame string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var ids []string
	for _, f := range b.funcs {
		match := false
		if len(adapterIDs) > 0 {
			match = f.adapterID != 0 && slices.Contains(adapterIDs, f.adapterID)
		} else if reason == "function breakpoint" {
			match = frame == f.Name || strings.HasSuffix(frame, "."+f.Name) || strings.HasPrefix(frame, f.Name+"(") ||
				f.sent != "" && (frame == f.sent || strings.HasSuffix(frame, "."+f.sent))
		}
		if match {
			f.Hits++
			ids = append(ids, f.ID)
		}
	}
	return ids
}

// setFunctionBreakpoints sends the whole list (DAP's request replaces it)
// and records the adapter's answer.
func (sess *Session) setFunctionBreakpoints(ctx context.Context) error {
	fs := sess.bps.Funcs()
	if !sess.caps.SupportsFunctionBreakpoints {
		if len(fs) == 0 {
			return nil
		}
		return badArg("%s does not support function breakpoints (its initialize answer has no supportsFunctionBreakpoints); remove them (breakpoints with functions: []) and break on a line with file and lines", sess.Spec.ID)
	}
	list := make([]map[string]any, 0, len(fs))
	sent := make([]string, len(fs))   // the name each was sent as
	shared := make([]string, len(fs)) // why one was not sent
	byName := map[string]string{}     // a name sent → the breakpoint
	for i, f := range fs {
		name, cond := f.Name, f.Condition
		name, cond = sess.Spec.Adapter.Function(sess.target, name, cond)
		if other, ok := byName[name]; ok {
			// pydevd keeps one breakpoint per bare name: the last would
			// silently replace the first.
			shared[i] = fmt.Sprintf("%s keeps one function breakpoint per function name, and %s already breaks on %s; remove one of them, or break on this one's line (file and lines)", sess.Spec.ID, other, name)
			continue
		}
		byName[name] = f.ID + " (" + f.Name + ")"
		sent[i] = name
		m := map[string]any{"name": name}
		if cond != "" && sess.caps.SupportsConditionalBreakpoints {
			m["condition"] = cond
		}
		if f.HitCondition != "" && sess.caps.SupportsHitConditionalBreakpoints {
			m["hitCondition"] = f.HitCondition
		}
		list = append(list, m)
	}
	var body godap.SetFunctionBreakpointsResponseBody
	if err := sess.call(ctx, "setFunctionBreakpoints", map[string]any{"breakpoints": list}, &body); err != nil {
		return fmt.Errorf("setting function breakpoints: %v", err)
	}
	sess.bps.mu.Lock()
	defer sess.bps.mu.Unlock()
	n := 0 // the answer's index: in the order sent
	for i, f := range sess.bps.funcs {
		f.Unsupported = unsupported(sess.caps, f.Condition, f.HitCondition, "")
		f.sent = ""
		if i < len(sent) && sent[i] != f.Name {
			f.sent = sent[i]
		}
		if i < len(shared) && shared[i] != "" {
			f.Verified, f.Message, f.File, f.Line, f.adapterID = false, shared[i], "", 0, 0
			continue
		}
		if n >= len(body.Breakpoints) {
			f.Verified, f.Message = false, "the adapter did not answer for it"
			continue
		}
		sess.placeFunc(f, body.Breakpoints[n])
		n++
	}
	return nil
}

// placeFunc records where the adapter put a function breakpoint; a file
// outside the root is left unnamed.
func (sess *Session) placeFunc(f *FuncBreakpoint, g godap.Breakpoint) {
	if g.Id != 0 {
		f.adapterID = g.Id
	}
	f.Verified, f.Message, f.File, f.Line = g.Verified, g.Message, "", 0
	if g.Source != nil && g.Source.Path != "" && sess.guard != nil {
		if abs, err := sess.guard.Resolve(g.Source.Path); err == nil {
			f.File, f.Line = sess.guard.Rel(abs), g.Line
		}
	}
}

// restoreFuncs puts back a list the adapter refused.
func (b *Breakpoints) restoreFuncs(old []FuncBreakpoint) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.funcs = b.funcs[:0]
	for i := range old {
		f := old[i]
		b.funcs = append(b.funcs, &f)
	}
}

// orNone is xs listed, or "none".
func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}
