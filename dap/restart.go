package dap

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/dapclient"
	"github.com/builtin-tools/builtin-tools/dap/result"
)

// How a restart was done.
const (
	RestartRequest  = "restart request"
	RestartRelaunch = "terminate and launch"
)

// Restart runs the session's program again: the same program, arguments
// and breakpoints, within the same time limit. It sends the adapter's
// restart where the adapter has one (supportsRestartRequest), else ends
// the session and launches again; an adapter that refuses its restart is
// relaunched too, and the result says so.
func (s *Supervisor) Restart(ctx context.Context, wait time.Duration) (*result.StopResult, error) {
	sess, err := s.runnable("restart")
	if err != nil {
		return nil, err
	}
	if sess.attach {
		return nil, adapter.BadArg("restart runs again a program this session launched; this one attached to %s: terminate, then attach again", sess.Program)
	}
	s.mu.Lock()
	l := s.last
	s.mu.Unlock()
	if time.Until(sess.Deadline) <= 0 {
		return nil, adapter.BadArg("the session's time limit has passed; launch starts a new one")
	}
	note := ""
	if sess.caps.SupportsRestartRequest && sess.Spec.Restart {
		res, err := s.adapterRestart(ctx, sess, wait)
		if err == nil {
			res.Restart = RestartRequest
			return res, nil
		}
		if !errors.Is(err, errRestartRefused) {
			return nil, err
		}
		note = err.Error() + "; so it was ended and launched again"
	}
	deadline := sess.Deadline
	s.dropRunTo(ctx, sess)
	sess.finish("it was restarted", true)
	res, err := s.launch(ctx, l, wait, deadline)
	if err != nil {
		return nil, fmt.Errorf("restart: the old session ended, and the new launch failed: %w", err)
	}
	res.Restart = RestartRelaunch
	if note != "" {
		res.Note = joinNote(note, res.Note)
	}
	return res, nil
}

var errRestartRefused = errors.New("restart refused")

type refused struct{ msg string }

func (r refused) Error() string   { return r.msg }
func (r refused) Is(e error) bool { return e == errRestartRefused }

// adapterRestart sends restart with the launch's arguments and waits for
// the program's first stop, as a launch does.
func (s *Supervisor) adapterRestart(ctx context.Context, sess *Session, wait time.Duration) (*result.StopResult, error) {
	sess.mu.Lock()
	before := len(sess.stops)
	args := sess.launched
	sess.mu.Unlock()
	s.dropRunTo(ctx, sess)
	s.bps.Reset(false)
	err := sess.call(ctx, "restart", map[string]any{"arguments": args}, nil)
	if err != nil {
		var re *dapclient.ResponseError
		if errors.As(err, &re) {
			return nil, refused{fmt.Sprintf("%s refused its restart request (%s)", sess.Spec.ID, re.Error())}
		}
		return nil, err
	}
	sess.mu.Lock()
	if len(sess.stops) == before {
		sess.running, sess.resumed = true, before
	}
	sess.exitCode, sess.terminated = nil, false
	sess.mu.Unlock()
	return s.waitStop(ctx, sess, before, s.cfg.waitFor(wait))
}

func joinNote(a, b string) string {
	if b == "" {
		return a
	}
	return a + "; " + b
}
