package dap

import (
	"context"
	"errors"
	"fmt"
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

// How a session reads a stop: its frames with their source quoted, a
// frame's locals and a reference's children (noise left out), the frame a
// stop shows, and references tied to the stop they came from.

// stackReader reads a stopped program through its adapter: a thread's
// frames with their source quoted (read through the run's guard), a
// frame's locals, a reference's children with the noise left out, what a
// watchpoint's memory holds. It keeps no state between reads; the stop
// whose references it makes is the caller's.
type stackReader struct {
	call    func(ctx context.Context, command string, args, body any) error
	guard   *pathguard.Guard // confines every path the adapter sends back
	program string           // the program's absolute path, for staleness
	spec    adapter.Spec
}

// pickFrame is the frame a stop shows: the top one, or for an exception, a
// panic, a pause or a crash the frame in the checkout nearest the top.
func pickFrame(reason string, frames []Frame) int {
	switch reason {
	case "exception", "panic", "pause", "crash":
		return max(inRoot(frames), 0)
	}
	return 0
}

// shownFrame is the frame the agent was shown as the stop's, which
// evaluate, set_variable and watch default to (for a crash, the crashing
// frame, not the signal handler above it): the one its result showed, else
// the one it would show. It returns the adapter's frame id, 0 when the
// stack cannot be read, and whether the frame is not the top one.
func (sess *Session) shownFrame(ctx context.Context, st *Stop) (int, *Frame, bool) {
	sess.mu.Lock()
	f, below := st.shown, st.below
	sess.mu.Unlock()
	if f == nil {
		frames, _, err := sess.stack.frames(ctx, st, st.ThreadID, 30)
		if err != nil || len(frames) == 0 {
			return 0, nil, false
		}
		i := pickFrame(st.Reason, frames)
		f, below = &frames[i], i > 0
	}
	id, _, _ := strings.Cut(f.ID, "@")
	fid, _ := strconv.Atoi(id)
	return fid, f, below
}

// frameAt names a frame and its line: "main.walk (main.go:12)".
func frameAt(f *Frame) string {
	if f.File == "" {
		return f.Name
	}
	return fmt.Sprintf("%s (%s:%d)", f.Name, f.File, f.Line)
}

// inRoot is the index of the first frame in the checkout, -1 when none is.
func inRoot(frames []Frame) int {
	return slices.IndexFunc(frames, func(f Frame) bool { return f.File != "" && !f.Outside && !f.Missing })
}

func frameName(frames []Frame) string {
	if len(frames) == 0 {
		return "no frame"
	}
	return frames[0].Name
}

// maxThreadsLooked bounds the stacks read to find the checkout's thread.
const maxThreadsLooked = 64

// userThread finds the thread whose stack reaches the checkout, for a stop
// on one that does not: the lowest id that does (goroutine 1 is main), at
// most maxThreadsLooked looked at; 0 when none does.
func (r *stackReader) userThread(ctx context.Context, st *Stop) (int, []Frame) {
	var body godap.ThreadsResponseBody
	if err := r.call(ctx, "threads", nil, &body); err != nil {
		return 0, nil
	}
	ids := make([]int, 0, len(body.Threads))
	for _, t := range body.Threads {
		if t.Id != st.ThreadID {
			ids = append(ids, t.Id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids[:min(len(ids), maxThreadsLooked)] {
		if fr, _, err := r.frames(ctx, st, id, 30); err == nil && inRoot(fr) >= 0 {
			return id, fr
		}
	}
	return 0, nil
}

// ref is an id tied to the stop it came from: "1000@3".
func ref(id, stop int) string { return strconv.Itoa(id) + "@" + strconv.Itoa(stop) }

// parseRef checks a reference against the current stop.
func (sess *Session) parseRef(what, r string) (int, error) {
	id, at, ok := strings.Cut(r, "@")
	n, err1 := strconv.Atoi(id)
	stop, err2 := strconv.Atoi(at)
	if !ok || err1 != nil || err2 != nil {
		return 0, badArg("%s %q is not one this tool gave: they look like 1000@3 (an id and the stop it came from)", what, r)
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.running || len(sess.stops) == 0 {
		return 0, badArg("%s %s is from stop %d, and the program is running now; pause it, then call stack again", what, r, stop)
	}
	if cur := len(sess.stops); stop != cur {
		return 0, badArg("%s %s is from stop %d; the program is now at stop %d — call stack again", what, r, stop, cur)
	}
	return n, nil
}

// position is where the program stands, read at once, for a call that
// resumes it.
type position struct {
	exited, stopped bool
	stops           int   // how many so far
	cur             *Stop // the stop it is at; nil unless stopped
	unreported      bool  // cur is a stop no result has shown
}

func (sess *Session) position() position {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	p := position{exited: sess.exitCode != nil || sess.terminated, stopped: !sess.running && len(sess.stops) > 0, stops: len(sess.stops)}
	if p.stopped {
		p.cur = sess.stops[p.stops-1]
		p.unreported = p.cur.N > sess.reported
	}
	return p
}

// currentStop is the stop the program is at, nil while it runs.
func (sess *Session) currentStop() (*Stop, error) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.exitCode != nil || sess.terminated {
		return nil, badArg("the program has exited; launch it again")
	}
	if sess.running || len(sess.stops) == 0 {
		return nil, badArg("the program is running; pause it (or wait for a breakpoint with continue) first")
	}
	return sess.stops[len(sess.stops)-1], nil
}

// frames reads a thread's stack and quotes each frame's source; a file is
// read once however many frames are in it.
func (r *stackReader) frames(ctx context.Context, st *Stop, thread, levels int) ([]Frame, int, error) {
	var body godap.StackTraceResponseBody
	if err := r.call(ctx, "stackTrace", map[string]any{"threadId": thread, "startFrame": 0, "levels": levels}, &body); err != nil {
		return nil, 0, err
	}
	var progTime time.Time
	if info, err := r.guard.Stat(r.program); err == nil && !info.IsDir() && r.spec.StaleSource {
		progTime = info.ModTime()
	}
	sources := map[string]*source{}
	out := make([]Frame, 0, len(body.StackFrames))
	quoted := false // the first frame in the checkout is quoted with lines around
	for i, f := range body.StackFrames {
		fr := Frame{ID: ref(f.Id, st.N), Name: f.Name, Line: f.Line}
		if f.Source != nil && f.Source.Path != "" {
			abs, err := r.guard.Resolve(f.Source.Path)
			if err != nil {
				// Outside the root (the standard library, a symlink out):
				// named, never read.
				fr.File, fr.Outside = f.Source.Path, true
			} else {
				fr.File = r.guard.Rel(abs)
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

func (r *stackReader) source(abs string, progTime time.Time) *source {
	data, info, err := r.guard.ReadFile(abs, 8<<20)
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

// locals reads a frame's first scope, capped, noise left out.
func (r *stackReader) locals(ctx context.Context, st *Stop, frameRef string) ([]Var, int, []string, error) {
	id, _, _ := strings.Cut(frameRef, "@")
	fid, _ := strconv.Atoi(id)
	vref, err := r.localsRef(ctx, fid)
	if err != nil || vref == 0 {
		return nil, 0, nil, err
	}
	return r.children(ctx, st, vref, 20, false)
}

// localsRef is the reference of the frame fid's first scope that is cheap
// to read (its locals), 0 when it has none.
func (r *stackReader) localsRef(ctx context.Context, fid int) (int, error) {
	var scopes godap.ScopesResponseBody
	if err := r.call(ctx, "scopes", map[string]any{"frameId": fid}, &scopes); err != nil {
		return 0, err
	}
	for _, sc := range scopes.Scopes {
		if !sc.Expensive && sc.VariablesReference != 0 {
			return sc.VariablesReference, nil
		}
	}
	return 0, nil
}

// children reads a reference's variables, at most max, values cut at 400
// characters; unless all, what noise reads as a value is left out and
// named (hidden).
func (r *stackReader) children(ctx context.Context, st *Stop, vref, max int, all bool) ([]Var, int, []string, error) {
	var body godap.VariablesResponseBody
	// The groups debugpy puts first count against the page.
	if err := r.call(ctx, "variables", map[string]any{"variablesReference": vref, "start": 0, "count": max + 3}, &body); err != nil {
		return nil, 0, nil, err
	}
	var hidden []string
	vars := body.Variables
	if !all {
		vars = slices.DeleteFunc(slices.Clone(vars), func(v godap.Variable) bool {
			if r.spec.Adapter.Noise(v) {
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
		out = append(out, makeVar(v.Name, v.Value, v.Type, v.VariablesReference, v.NamedVariables, v.IndexedVariables, st.N))
	}
	return out, more, hidden, nil
}

func makeVar(name, value, typ string, vref, named, indexed, stop int) Var {
	v := Var{Name: name, Value: value, Type: typ, Named: named, Indexed: indexed}
	if len([]rune(value)) > 400 {
		v.Value, v.Cut = string([]rune(value)[:400])+"…", true
	}
	if vref > 0 {
		v.Ref = ref(vref, stop)
	}
	return v
}

// memory evaluates a watchpoint's memory expression, "" when there is
// none or it fails.
func (r *stackReader) memory(ctx context.Context, expr string) string {
	if expr == "" {
		return ""
	}
	var body godap.EvaluateResponseBody
	if r.call(ctx, "evaluate", map[string]any{"expression": expr, "context": r.spec.ExprContext}, &body) != nil {
		return ""
	}
	return body.Result
}
