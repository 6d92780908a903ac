// Package stack reads a stopped program through its debug adapter: a
// thread's frames with their source quoted (read through the run's path
// guard, a file changed since the build marked), a frame's locals, a
// reference's children with the adapter's noise left out, what a
// watchpoint's memory holds; and the frame a stop shows. References it
// makes are tied to the stop they came from ("1000@3"). It keeps no state
// between reads and knows nothing of sessions: the caller gives the
// request function and the stop's number.
package stack

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	godap "github.com/google/go-dap"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Reader reads a stopped program through its adapter: a thread's
// frames with their source quoted (read through the run's guard), a
// frame's locals, a reference's children with the noise left out, what a
// watchpoint's memory holds. It keeps no state between reads; the stop
// whose references it makes is the caller's.
type Reader struct {
	Call    func(ctx context.Context, command string, args, body any) error
	Guard   *pathguard.Guard // confines every path the adapter sends back
	Program string           // the program's absolute path, for staleness
	Spec    adapter.Spec
}

// Pick is the frame a stop shows: the top one, or for an exception, a
// panic, a pause or a crash the frame in the checkout nearest the top.
func Pick(reason string, frames []Frame) int {
	switch reason {
	case "exception", "panic", "pause", "crash":
		return max(InRoot(frames), 0)
	}
	return 0
}

// InRoot is the index of the first frame in the checkout, -1 when none is.
func InRoot(frames []Frame) int {
	return slices.IndexFunc(frames, func(f Frame) bool { return f.File != "" && !f.Outside && !f.Missing })
}

// maxThreadsLooked bounds the stacks read to find the checkout's thread.
const maxThreadsLooked = 64

// UserThread finds the thread whose stack reaches the checkout, for stop
// number stop on a thread that does not: the lowest id that does (goroutine 1 is main), at
// most maxThreadsLooked looked at; 0 when none does.
func (r *Reader) UserThread(ctx context.Context, stop, thread int) (int, []Frame) {
	var body godap.ThreadsResponseBody
	if err := r.Call(ctx, "threads", nil, &body); err != nil {
		return 0, nil
	}
	ids := make([]int, 0, len(body.Threads))
	for _, t := range body.Threads {
		if t.Id != thread {
			ids = append(ids, t.Id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids[:min(len(ids), maxThreadsLooked)] {
		if fr, _, err := r.Frames(ctx, stop, id, 30); err == nil && InRoot(fr) >= 0 {
			return id, fr
		}
	}
	return 0, nil
}

// Ref is an id tied to the stop it came from: "1000@3".
func Ref(id, stop int) string { return strconv.Itoa(id) + "@" + strconv.Itoa(stop) }

// Frames reads a thread's stack at stop number stop and quotes each
// frame's source; a file is read once however many frames are in it.
func (r *Reader) Frames(ctx context.Context, stop, thread, levels int) ([]Frame, int, error) {
	var body godap.StackTraceResponseBody
	if err := r.Call(ctx, "stackTrace", map[string]any{"threadId": thread, "startFrame": 0, "levels": levels}, &body); err != nil {
		return nil, 0, err
	}
	var progTime time.Time
	if info, err := r.Guard.Stat(r.Program); err == nil && !info.IsDir() && r.Spec.StaleSource {
		progTime = info.ModTime()
	}
	sources := map[string]*source{}
	out := make([]Frame, 0, len(body.StackFrames))
	quoted := false // the first frame in the checkout is quoted with lines around
	for i, f := range body.StackFrames {
		fr := Frame{ID: Ref(f.Id, stop), Name: f.Name, Line: f.Line}
		if f.Source != nil && f.Source.Path != "" {
			abs, err := r.Guard.Resolve(f.Source.Path)
			if err != nil {
				// Outside the root (the standard library, a symlink out):
				// named, never read.
				fr.File, fr.Outside = f.Source.Path, true
			} else {
				fr.File = r.Guard.Rel(abs)
				src, ok := sources[abs]
				if !ok {
					src = r.source(abs, progTime)
					sources[abs] = src
				}
				if src.missing {
					// A path from the build that names no file here (libc's
					// "sysdeps/…", relative to where it was compiled).
					fr.File, fr.Missing = f.Source.Path, true
					out = append(out, fr)
					continue
				}
				around := 0
				if i == 0 || !quoted {
					around, quoted = 2, true
				}
				fr.Source, fr.Newer = src.quote(f.Line, around), src.newer
			}
		}
		out = append(out, fr)
	}
	return out, body.TotalFrames, nil
}

// source is a file's lines, read through the run's path guard.
type source struct {
	lines   []string
	newer   bool // changed after the program was built
	missing bool // no such file in the checkout
}

func (r *Reader) source(abs string, progTime time.Time) *source {
	data, info, err := r.Guard.ReadFile(abs, 8<<20)
	if err != nil {
		return &source{missing: errors.Is(err, fs.ErrNotExist)}
	}
	return &source{lines: strings.Split(string(data), "\n"), newer: !progTime.IsZero() && info.ModTime().After(progTime)}
}

// quote returns line and around lines on each side.
func (src *source) quote(line, around int) []SourceLine {
	if line <= 0 {
		return nil
	}
	var out []SourceLine
	for n := max(line-around, 1); n <= min(line+around, len(src.lines)); n++ {
		text := textcut.Ellipsis(strings.TrimRight(src.lines[n-1], "\r"), 300)
		out = append(out, SourceLine{Line: n, Text: text, Current: n == line})
	}
	return out
}

// Locals reads a frame's first scope, capped, noise left out.
func (r *Reader) Locals(ctx context.Context, stop int, frameRef string) ([]Var, int, []string, error) {
	id, _, _ := strings.Cut(frameRef, "@")
	fid, _ := strconv.Atoi(id)
	vref, err := r.LocalsRef(ctx, fid)
	if err != nil || vref == 0 {
		return nil, 0, nil, err
	}
	return r.Children(ctx, stop, vref, 20, false)
}

// LocalsRef is the reference of the frame fid's first scope that is cheap
// to read (its locals), 0 when it has none.
func (r *Reader) LocalsRef(ctx context.Context, fid int) (int, error) {
	var scopes godap.ScopesResponseBody
	if err := r.Call(ctx, "scopes", map[string]any{"frameId": fid}, &scopes); err != nil {
		return 0, err
	}
	for _, sc := range scopes.Scopes {
		if !sc.Expensive && sc.VariablesReference != 0 {
			return sc.VariablesReference, nil
		}
	}
	return 0, nil
}

// Children reads a reference's variables, at most max, values cut at 400
// characters; unless all, what noise reads as a value is left out and
// named (hidden).
func (r *Reader) Children(ctx context.Context, stop, vref, max int, all bool) ([]Var, int, []string, error) {
	var body godap.VariablesResponseBody
	// The groups debugpy puts first count against the page.
	if err := r.Call(ctx, "variables", map[string]any{"variablesReference": vref, "start": 0, "count": max + 3}, &body); err != nil {
		return nil, 0, nil, err
	}
	var hidden []string
	vars := body.Variables
	if !all {
		vars = slices.DeleteFunc(slices.Clone(vars), func(v godap.Variable) bool {
			if r.Spec.Adapter.Noise(v) {
				hidden = append(hidden, v.Name)
				return true
			}
			return false
		})
	}
	more := 0
	if len(vars) > max {
		more = len(vars) - max
		vars = vars[:max]
	}
	out := make([]Var, 0, len(vars))
	for _, v := range vars {
		out = append(out, NewVar(v.Name, v.Value, v.Type, v.VariablesReference, v.NamedVariables, v.IndexedVariables, stop))
	}
	return out, more, hidden, nil
}

// NewVar is a variable as the adapter gave it, its value cut at 400
// characters and its reference tied to stop.
func NewVar(name, value, typ string, vref, named, indexed, stop int) Var {
	v := Var{Name: name, Value: value, Type: typ, Named: named, Indexed: indexed}
	if len([]rune(value)) > 400 {
		v.Value, v.Cut = string([]rune(value)[:400])+"…", true
	}
	if vref > 0 {
		v.Ref = Ref(vref, stop)
	}
	return v
}

// Memory evaluates a watchpoint's memory expression, "" when there is
// none or it fails.
func (r *Reader) Memory(ctx context.Context, expr string) string {
	if expr == "" {
		return ""
	}
	var body godap.EvaluateResponseBody
	if r.Call(ctx, "evaluate", map[string]any{"expression": expr, "context": r.Spec.ExprContext}, &body) != nil {
		return ""
	}
	return body.Result
}
