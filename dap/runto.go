package dap

import (
	"context"
	"slices"
	"time"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/breakpoint"
	"github.com/builtin-tools/builtin-tools/dap/result"
	"github.com/builtin-tools/builtin-tools/dap/stack"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// runTo is a run_to_line waiting for its stop.
type runTo struct {
	file  string
	line  int
	id    string // the one-shot breakpoint's, or a user's already there
	temp  bool   // the breakpoint is ours, to remove
	after int    // stops before the continue
}

// RunToLine sets a one-shot breakpoint at file:line and continues; the
// breakpoint is removed when it is hit or when another stop (or the
// program's end) comes first, and the result says which. The session's
// other breakpoints are untouched.
func (s *Supervisor) RunToLine(ctx context.Context, at pathguard.Path, line int, wait time.Duration) (*result.StopResult, error) {
	sess, err := s.runnable("run to a line")
	if err != nil {
		return nil, err
	}
	if _, err := s.g.Of(at); err != nil {
		return nil, adapter.BadArg("%v", err)
	}
	if line <= 0 {
		return nil, adapter.BadArg("run_to_line needs line, 1-based")
	}
	file := breakpoint.CleanFile(at.Rel())
	pos := sess.position()
	before := pos.stops
	sess.mu.Lock()
	pending := sess.runTo
	sess.mu.Unlock()
	switch {
	case pos.exited:
		return nil, adapter.BadArg("the program has exited; launch it again")
	case !pos.stopped:
		return nil, adapter.BadArg("the program is running, so run_to_line cannot start from a stop; pause it first, or continue to wait for a stop")
	case pos.unreported:
		// A stop the agent has not seen: show it, resume nothing.
		return s.Resume(ctx, "continue", 0, wait)
	}
	if pending != nil {
		s.dropRunTo(ctx, sess)
	}
	id, existed := s.bps.AddTemp(file, line)
	if !existed {
		if err := sess.setBreakpoints(ctx, file); err != nil {
			s.bps.RemoveTemp(file, id)
			return nil, err
		}
		if bp, _ := s.bps.Get(file, id); !bp.Verified {
			s.bps.RemoveTemp(file, id)
			sess.setBreakpoints(ctx, file)
			msg := bp.Message
			if msg == "" {
				msg = "it did not say why"
			}
			return nil, adapter.BadArg("%s could not place a breakpoint at %s:%d (%s); pick a line with code on it", sess.Spec.ID, file, line, msg)
		}
	}
	sess.mu.Lock()
	sess.runTo = &runTo{file: file, line: line, id: id, temp: !existed, after: before}
	sess.mu.Unlock()
	res, err := s.Resume(ctx, "continue", 0, wait)
	if err != nil {
		s.dropRunTo(ctx, sess)
		return nil, err
	}
	if res.RunTo == nil && res.Outcome == "running" {
		res.RunTo = &result.RunToResult{File: file, Line: line, Pending: true}
		if existed {
			res.RunTo.Existing = id
		}
	}
	return res, nil
}

// dropRunTo removes a pending run_to_line's breakpoint.
func (s *Supervisor) dropRunTo(ctx context.Context, sess *Session) {
	sess.mu.Lock()
	rt := sess.runTo
	sess.runTo = nil
	sess.mu.Unlock()
	if rt != nil && rt.temp {
		s.bps.RemoveTemp(rt.file, rt.id)
		if sess.Ended() == "" {
			sess.setBreakpoints(ctx, rt.file)
		}
	}
}

// settleRunTo ends a pending run_to_line at a new stop (st) or at the
// program's end (st nil): whether it was reached, its breakpoint removed.
func (s *Supervisor) settleRunTo(ctx context.Context, sess *Session, st *stop, top *stack.Frame) *result.RunToResult {
	sess.mu.Lock()
	rt := sess.runTo
	if rt == nil || (st != nil && st.N <= rt.after) {
		sess.mu.Unlock()
		return nil
	}
	sess.runTo = nil
	sess.mu.Unlock()
	out := &result.RunToResult{File: rt.file, Line: rt.line}
	if !rt.temp {
		out.Existing = rt.id
	}
	if st != nil {
		bp, _ := s.bps.Get(rt.file, rt.id)
		out.Reached = slices.Contains(st.Breakpoints, rt.id) ||
			(st.Reason == "breakpoint" && top != nil && top.File == rt.file && top.Line == bp.At())
		if rt.temp {
			sess.mu.Lock() // status reads the stop meanwhile
			st.Breakpoints = slices.DeleteFunc(slices.Clone(st.Breakpoints), func(id string) bool { return id == rt.id })
			sess.mu.Unlock()
		}
	}
	if rt.temp {
		s.bps.RemoveTemp(rt.file, rt.id)
		if st != nil && sess.Ended() == "" {
			sess.setBreakpoints(ctx, rt.file)
		}
	}
	return out
}
