package breakpoint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	godap "github.com/google/go-dap"
)

// Function is a breakpoint on a function by name (pkg.Func,
// (*T).Method for delve; module.func for debugpy; main for lldb), kept by
// the supervisor across sessions like line breakpoints.
type Function struct {
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

// MaxFunctions caps the function breakpoints kept: all are sent at
// each change and launch.
const MaxFunctions = 200

// SetFuncs adds names (updating one already set, which keeps its id and
// hits) with the condition and hit condition, and drops remove; clear
// drops them all.
func (b *Table) SetFuncs(names []string, cond, hitCond string, remove []string, clear bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if clear {
		b.funcs = nil
		return nil
	}
	for _, r := range remove {
		if !slices.ContainsFunc(b.funcs, func(f *Function) bool { return f.Name == r }) {
			return adapter.BadArg("no function breakpoint on %q to remove; the function breakpoints are %s", r, orNone(funcNames(b.funcs)))
		}
	}
	kept := slices.DeleteFunc(slices.Clone(b.funcs), func(f *Function) bool { return slices.Contains(remove, f.Name) })
	var added []*Function
	for _, n := range names {
		i := slices.IndexFunc(kept, func(f *Function) bool { return f.Name == n })
		if i < 0 {
			f := &Function{Name: n}
			kept = append(kept, f)
			added = append(added, f)
			i = len(kept) - 1
		}
		kept[i].Condition, kept[i].HitCondition = cond, hitCond
	}
	if len(kept) > MaxFunctions {
		return adapter.BadArg("%d function breakpoints would be kept; at most %d are (each is sent to the adapter at every change and launch): remove some", len(kept), MaxFunctions)
	}
	for _, f := range added {
		b.next++
		f.ID = fmt.Sprintf("f%d", b.next)
	}
	b.funcs = kept
	return nil
}

func funcNames(fs []*Function) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}

// Funcs returns copies of the function breakpoints, in the order set.
func (b *Table) Funcs() []Function {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Function, 0, len(b.funcs))
	for _, f := range b.funcs {
		out = append(out, *f)
	}
	return out
}

// HitFunc counts a stop at function breakpoints: by the adapter's ids,
// else (a "function breakpoint" stop without them) by the frame's name.
func (b *Table) HitFunc(adapterIDs []int, reason, frame string) []string {
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

// FuncsAnswered records the adapter's answer to a setFunctionBreakpoints
// sent for the list Funcs gave: sent[i] is the name the i-th was sent as,
// shared[i] why it was not sent, got the answers in the order sent; place
// says where the adapter put one ("" for a file outside the root).
func (b *Table) FuncsAnswered(sent, shared []string, got []godap.Breakpoint, s Support, place func(godap.Breakpoint) (file string, line int)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0 // the answer's index: in the order sent
	for i, f := range b.funcs {
		f.Unsupported = unsupported(s, f.Condition, f.HitCondition, "")
		f.sent = ""
		if i < len(sent) && sent[i] != f.Name {
			f.sent = sent[i]
		}
		if i < len(shared) && shared[i] != "" {
			f.Verified, f.Message, f.File, f.Line, f.adapterID = false, shared[i], "", 0, 0
			continue
		}
		if n >= len(got) {
			f.Verified, f.Message = false, "the adapter did not answer for it"
			continue
		}
		g := got[n]
		if g.Id != 0 {
			f.adapterID = g.Id
		}
		f.Verified, f.Message = g.Verified, g.Message
		f.File, f.Line = place(g)
		n++
	}
}

// RestoreFuncs puts back a list the adapter refused.
func (b *Table) RestoreFuncs(old []Function) {
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
