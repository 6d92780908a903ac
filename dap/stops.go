package dap

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/stack"
)

// A session's stops as calls see them: the frame a stop shows, a reference
// checked against the current stop, where the program stands. Package
// dap/stack reads the frames and variables.

// shownFrame is the frame the agent was shown as the stop's, which
// evaluate, set_variable and watch default to (for a crash, the crashing
// frame, not the signal handler above it): the one its result showed, else
// the one it would show. It returns the adapter's frame id, 0 when the
// stack cannot be read, and whether the frame is not the top one.
func (sess *Session) shownFrame(ctx context.Context, st *stop) (int, *stack.Frame, bool) {
	sess.mu.Lock()
	f, below := st.shown, st.below
	sess.mu.Unlock()
	if f == nil {
		frames, _, err := sess.stack.Frames(ctx, st.N, st.ThreadID, 30)
		if err != nil || len(frames) == 0 {
			return 0, nil, false
		}
		i := stack.Pick(st.Reason, frames)
		f, below = &frames[i], i > 0
	}
	id, _, _ := strings.Cut(f.ID, "@")
	fid, _ := strconv.Atoi(id)
	return fid, f, below
}

// frameAt names a frame and its line: "main.walk (main.go:12)".
func frameAt(f *stack.Frame) string {
	if f.File == "" {
		return f.Name
	}
	return fmt.Sprintf("%s (%s:%d)", f.Name, f.File, f.Line)
}

func frameName(frames []stack.Frame) string {
	if len(frames) == 0 {
		return "no frame"
	}
	return frames[0].Name
}

// parseRef checks a reference against the current stop.
func (sess *Session) parseRef(what, r string) (int, error) {
	id, at, ok := strings.Cut(r, "@")
	n, err1 := strconv.Atoi(id)
	stop, err2 := strconv.Atoi(at)
	if !ok || err1 != nil || err2 != nil {
		return 0, adapter.BadArg("%s %q is not one this tool gave: they look like 1000@3 (an id and the stop it came from)", what, r)
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.running || len(sess.stops) == 0 {
		return 0, adapter.BadArg("%s %s is from stop %d, and the program is running now; pause it, then call stack again", what, r, stop)
	}
	if cur := len(sess.stops); stop != cur {
		return 0, adapter.BadArg("%s %s is from stop %d; the program is now at stop %d — call stack again", what, r, stop, cur)
	}
	return n, nil
}

// position is where the program stands, read at once, for a call that
// resumes it.
type position struct {
	exited, stopped bool
	stops           int   // how many so far
	cur             *stop // the stop it is at; nil unless stopped
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
func (sess *Session) currentStop() (*stop, error) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.exitCode != nil || sess.terminated {
		return nil, adapter.BadArg("the program has exited; launch it again")
	}
	if sess.running || len(sess.stops) == 0 {
		return nil, adapter.BadArg("the program is running; pause it (or wait for a breakpoint with continue) first")
	}
	return sess.stops[len(sess.stops)-1], nil
}
