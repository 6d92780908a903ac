package dap

import (
	"context"
	"time"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/result"
	"github.com/builtin-tools/builtin-tools/dap/stack"
)

// A core file is a crash's memory, opened read-only: delve's core mode
// (launch with mode core, program and coreFilePath) or lldb-dap's attach
// with coreFile. Nothing runs, so nothing resumes.

// errCoreReadOnly is the error of an operation that would run the
// program of a core file session.
const errCoreReadOnly = "a core file is read-only: nothing runs, so it cannot %s; stack, threads, scopes, variables and evaluate read the crash; to run the program, terminate and launch it without core"

// readOnly refuses what would run the program of a core file session.
func (sess *Session) readOnly(what string) error {
	if sess.core == "" {
		return nil
	}
	return adapter.BadArg(errCoreReadOnly, what)
}

// coreHook, set by a test, runs once a core launch's files are checked and
// open (target.CoreFiles), before the adapter starts: where a swap of their
// names lands.
var coreHook func()

// openCore describes a core file session once open: the crash's stop (the
// thread that crashed, its frame quoted, its locals), its threads and the
// top of that thread's stack.
func (s *Supervisor) openCore(ctx context.Context, sess *Session, wait time.Duration) (*result.StopResult, error) {
	res, err := s.waitStop(ctx, sess, 0, s.cfg.waitFor(wait))
	if err != nil {
		return nil, err
	}
	info := &result.CoreInfo{File: s.g.Rel(sess.core)}
	res.Core = info
	if res.Outcome != "stopped" {
		return res, nil
	}
	if th, err := s.Threads(ctx); err == nil {
		info.Threads, info.Total = th.Groups, th.Total
	}
	if frames, total, err := sess.stack.Frames(ctx, res.Stop.N, res.Stop.ThreadID, 30); err == nil {
		// From the frame above the checkout's first: a Go crash's top
		// frames are the runtime's signal handling.
		start := max(stack.InRoot(frames)-1, 0)
		info.Above = start
		info.Stack = frames[start:min(start+coreFrames, len(frames))]
		info.Frames = max(total, len(frames))
	}
	return res, nil
}

// coreFrames is how much of the crashing thread's stack a core's result
// shows; stack gives the rest.
const coreFrames = 8

// coreBreakpointsNote says why breakpoints set in a core session wait.
const coreBreakpointsNote = "the session reads a core file, where nothing runs: they are kept and sent at the next launch"
