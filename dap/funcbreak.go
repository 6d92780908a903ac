package dap

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	godap "github.com/google/go-dap"

	"github.com/builtin-tools/builtin-tools/pathguard"
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
func (s *Session) setFunctionBreakpoints(ctx context.Context) error {
	fs := s.bps.Funcs()
	if !s.caps.SupportsFunctionBreakpoints {
		if len(fs) == 0 {
			return nil
		}
		return badArg("%s does not support function breakpoints (its initialize answer has no supportsFunctionBreakpoints); remove them (breakpoints with functions: []) and break on a line with file and lines", s.Spec.ID)
	}
	list := make([]map[string]any, 0, len(fs))
	sent := make([]string, len(fs))   // the name each was sent as
	shared := make([]string, len(fs)) // why one was not sent
	byName := map[string]string{}     // a name sent → the breakpoint
	for i, f := range fs {
		name, cond := f.Name, f.Condition
		if s.Spec.ID == "debugpy" {
			name, cond = s.pyFunc(f.Name, cond)
		}
		if other, ok := byName[name]; ok {
			// pydevd keeps one breakpoint per bare name: the last would
			// silently replace the first.
			shared[i] = fmt.Sprintf("%s keeps one function breakpoint per function name, and %s already breaks on %s; remove one of them, or break on this one's line (file and lines)", s.Spec.ID, other, name)
			continue
		}
		byName[name] = f.ID + " (" + f.Name + ")"
		sent[i] = name
		m := map[string]any{"name": name}
		if cond != "" && s.caps.SupportsConditionalBreakpoints {
			m["condition"] = cond
		}
		if f.HitCondition != "" && s.caps.SupportsHitConditionalBreakpoints {
			m["hitCondition"] = f.HitCondition
		}
		list = append(list, m)
	}
	var body godap.SetFunctionBreakpointsResponseBody
	if err := s.call(ctx, "setFunctionBreakpoints", map[string]any{"breakpoints": list}, &body); err != nil {
		return fmt.Errorf("setting function breakpoints: %v", err)
	}
	s.bps.mu.Lock()
	defer s.bps.mu.Unlock()
	n := 0 // the answer's index: in the order sent
	for i, f := range s.bps.funcs {
		var un []string
		if f.Condition != "" && !s.caps.SupportsConditionalBreakpoints {
			un = append(un, "condition")
		}
		if f.HitCondition != "" && !s.caps.SupportsHitConditionalBreakpoints {
			un = append(un, "hit_condition")
		}
		f.Unsupported = strings.Join(un, ", ")
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
		s.placeFunc(f, body.Breakpoints[n])
		n++
	}
	return nil
}

// pyFunc is what debugpy is sent for a function breakpoint named name.
// pydevd (debugpy 1.6) matches a called function's bare name (its code
// object's co_name) and nothing else, so module.func never stopped.
// module.func and module.Class.method are sent as the bare name with a
// condition: the frame is in that module (__name__; the launched
// program's own module runs as __main__), and its code is that function's
// (found in the module or the class, decorators unwrapped): the nearest
// frame of that name above the condition's own is the one called, since
// pydevd evaluates it from the trace of that call. The agent's condition
// is added. The condition never raises: pydevd stops on one that does. (A
// hit_condition still counts every call of the bare name: pydevd counts
// before it evaluates the condition.)
func (s *Session) pyFunc(name, cond string) (string, string) {
	parts := strings.Split(name, ".")
	if len(parts) < 2 || slices.Contains(parts, "") {
		return name, cond
	}
	k := s.pyModuleLen(parts)
	mod, class, fn := strings.Join(parts[:k], "."), parts[k:len(parts)-1], parts[len(parts)-1]
	check := "__name__ == " + pyString(mod)
	if slices.Contains(s.pyMain, mod) {
		check = "__name__ in (" + pyString(mod) + ", '__main__')"
	}
	obj := "globals().get(" + pyString(fn) + ")"
	if len(class) > 0 {
		c := "globals().get(" + pyString(class[0]) + ")"
		for _, p := range class[1:] {
			c = "getattr(" + c + ", " + pyString(p) + ", None)"
		}
		obj = "getattr(" + c + ", '__dict__', {}).get(" + pyString(fn) + ")"
	}
	code := "(lambda o: getattr(__import__('inspect').unwrap(getattr(o, '__func__', o)), '__code__', None))(" + obj + ")"
	check += " and (lambda c, w: w(w, __import__('sys')._getframe(), 64, c))(" + code +
		", lambda w, f, n, c: f is not None and n > 0 and (f.f_code is c if f.f_code.co_name == " + pyString(fn) +
		" else w(w, f.f_back, n - 1, c)))"
	if cond != "" {
		check = "(" + check + ") and (" + cond + ")"
	}
	return fn, check
}

// pyModuleLen is how many of parts name the module: the longest prefix
// that is the launched program's module or a module file in the checkout,
// else all but the last (module.func).
func (s *Session) pyModuleLen(parts []string) int {
	for k := len(parts) - 1; k >= 1; k-- {
		mod := strings.Join(parts[:k], ".")
		if slices.Contains(s.pyMain, mod) {
			return k
		}
		if s.guard == nil {
			continue
		}
		p := filepath.Join(append([]string{s.root}, parts[:k]...)...)
		for _, f := range []string{p + ".py", filepath.Join(p, "__init__.py")} {
			if info, err := s.guard.Stat(f); err == nil && !info.IsDir() {
				return k
			}
		}
	}
	return len(parts) - 1
}

// pyString quotes s as a Python string literal.
func pyString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`).Replace(s) + "'"
}

// pyMainModules are the names a launched Python program's own module may
// be given as: its file's name and its path from the root, dotted; or
// the module run with -m.
func pyMainModules(g *pathguard.Guard, l LaunchSpec) []string {
	if l.Module != "" {
		return []string{l.Module}
	}
	if l.Program.IsZero() || filepath.Ext(l.Program.Abs()) != ".py" {
		return nil
	}
	rel := strings.TrimSuffix(filepath.ToSlash(g.Rel(l.Program.Abs())), ".py")
	out := []string{path.Base(rel)}
	if d := strings.ReplaceAll(rel, "/", "."); d != out[0] {
		out = append(out, d)
	}
	return out
}

// placeFunc records where the adapter put a function breakpoint; a file
// outside the root is left unnamed.
func (s *Session) placeFunc(f *FuncBreakpoint, g godap.Breakpoint) {
	if g.Id != 0 {
		f.adapterID = g.Id
	}
	f.Verified, f.Message, f.File, f.Line = g.Verified, g.Message, "", 0
	if g.Source != nil && g.Source.Path != "" && s.guard != nil {
		if abs, err := s.guard.Resolve(g.Source.Path); err == nil {
			f.File, f.Line = s.guard.Rel(abs), g.Line
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
