package dap

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	godap "github.com/google/go-dap"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/breakpoint"
	"github.com/builtin-tools/builtin-tools/dap/dapclient"
	"github.com/builtin-tools/builtin-tools/dap/progout"
	"github.com/builtin-tools/builtin-tools/dap/result"
	"github.com/builtin-tools/builtin-tools/dap/stack"
	"github.com/builtin-tools/builtin-tools/dap/target"
	"github.com/builtin-tools/builtin-tools/internal/lifetime"
	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Config bounds a run's debugging.
type Config struct {
	// TTL is a session's hard time limit (default 30 minutes).
	TTL time.Duration
	// ResumeWait is how long a resume waits for the program to stop when
	// the call gives no timeout (default 10 s); MaxResumeWait caps what a
	// call may ask (default 5 minutes).
	ResumeWait, MaxResumeWait time.Duration
	// LaunchTimeout bounds a launch, build included (default 2 minutes).
	LaunchTimeout time.Duration
	// StartTimeout bounds an adapter's start: its connection and its
	// answer to initialize (default 20 s).
	StartTimeout time.Duration
}

// Supervisor is a run's debugger: at most one session, for the run's
// conversation (DBG-2), and the breakpoints, which outlive sessions. Safe
// for concurrent use.
type Supervisor struct {
	g   *pathguard.Guard
	cfg Config
	bps *breakpoint.Table

	mu     sync.Mutex
	sess   *Session
	closed bool
	last   adapter.LaunchSpec // the last launch that started, for restart
}

// NewSupervisor makes a supervisor over the run's root; it starts nothing.
func NewSupervisor(g *pathguard.Guard, cfg Config) *Supervisor {
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.ResumeWait <= 0 {
		cfg.ResumeWait = 10 * time.Second
	}
	if cfg.MaxResumeWait <= 0 {
		cfg.MaxResumeWait = 5 * time.Minute
	}
	return &Supervisor{g: g, cfg: cfg, bps: breakpoint.NewTable()}
}

// Close ends the session, if any.
func (s *Supervisor) Close() error {
	s.mu.Lock()
	s.closed = true
	sess := s.sess
	s.mu.Unlock()
	if sess != nil {
		sess.end("the run closed")
	}
	return nil
}

// Adapters checks every adapter against the checkout.
func (s *Supervisor) Adapters(ctx context.Context) []adapter.Status {
	return adapter.Statuses(ctx, s.g)
}

// live returns the session, or an error saying there is none and how to
// start one (and how the last one ended).
func (s *Supervisor) live() (*Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess != nil && s.sess.Ended() == "" {
		return s.sess, nil
	}
	msg := "there is no debug session; start one with operation launch (program, args) or attach (port or pid)"
	// The last session stays in s.sess once it has ended: its reason is
	// set the moment it ends, before the teardown.
	if s.sess != nil && s.sess.Ended() != "" {
		msg = "the debug session ended: " + s.sess.Ended() + "; start a new one with operation launch or attach"
	}
	return nil, noSession("%s", msg)
}

// runnable is the live session for an operation that runs the program
// (what it does, for the refusal): a core file's session is refused.
func (s *Supervisor) runnable(what string) (*Session, error) {
	sess, err := s.live()
	if err != nil {
		return nil, err
	}
	if err := sess.readOnly(what); err != nil {
		return nil, err
	}
	return sess, nil
}

// Launch starts a session: the adapter, the handshake, the program; then it
// waits (bounded) for the first stop. A second launch while one lives is
// refused.
func (s *Supervisor) Launch(ctx context.Context, l adapter.LaunchSpec, wait time.Duration) (*result.StopResult, error) {
	return s.launch(ctx, l, wait, time.Time{})
}

// launch is Launch; a deadline that is not zero is the session's (a
// restart keeps the time limit of the session it replaces).
func (s *Supervisor) launch(ctx context.Context, l adapter.LaunchSpec, wait time.Duration, deadline time.Time) (*result.StopResult, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, lifetime.ErrClosed
	}
	if cur := s.sess; cur != nil && cur.Ended() == "" {
		info := cur.Info()
		s.mu.Unlock()
		return nil, adapter.BadArg("a debug session is already running %s (%s, state %s, %s old, %s left); call terminate first, or keep using it",
			info.Program, info.Adapter, info.State, time.Duration(info.AgeSeconds)*time.Second, time.Duration(info.RemainingSeconds)*time.Second)
	}
	s.mu.Unlock()

	if l.Attach && !l.Core.IsZero() {
		return nil, adapter.BadArg("core goes with launch (program: the executable that crashed), not attach")
	}
	if l.Attach && l.PID > 0 {
		// Refused before any adapter starts: once attached, it is too late.
		if err := target.RefuseAttach(l.PID); err != nil {
			return nil, err
		}
	}
	program := ""
	if !l.Program.IsZero() {
		var err error
		if program, err = s.g.Of(l.Program); err != nil {
			return nil, adapter.BadArg("%v", err)
		}
	}
	if !l.Cwd.IsZero() {
		if _, err := s.g.Of(l.Cwd); err != nil {
			return nil, adapter.BadArg("%v", err)
		}
	}
	var spec adapter.Spec
	var err error
	core := ""
	var held []*os.File // the files checked, which the adapter opens: kept open
	defer func() {
		for _, f := range held {
			f.Close()
		}
	}()
	if !l.Core.IsZero() {
		var cf, exe *os.File
		if core, cf, exe, err = target.CoreFiles(s.g, l, program); err != nil {
			return nil, err
		}
		if coreHook != nil {
			coreHook()
		}
		held = []*os.File{cf, exe}
		spec, err = target.ChooseCore(l.Adapter, exe)
		l.Exceptions = []string{} // nothing runs, nothing is raised
	} else if l.Attach {
		spec, err = adapter.ForAttach(l.Adapter, l.Port, l.PID)
	} else {
		spec, err = adapter.ForProgram(s.g, l.Adapter, relOr(s.g, program), l.Module, program)
	}
	if err != nil {
		return nil, err
	}
	if l.Exceptions == nil {
		l.Exceptions = spec.DefaultExceptions(l)
	}
	if err := spec.CheckExceptions(l.Exceptions); err != nil {
		return nil, err
	}
	if err := spec.Adapter.Preflight(ctx, spec, s.g, &l); err != nil {
		return nil, err
	}
	tmp, err := proc.TempDir("dap-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if tmp != "" { // not handed to a session
			os.RemoveAll(tmp)
		}
	}()
	t := adapter.Target{LaunchSpec: l, Guard: s.g, Cwd: l.Cwd.Abs(), Dir: tmp}
	if l.Cwd.IsZero() {
		t.Cwd = s.g.Root()
	}
	heldCore, heldExe := "", ""
	if core != "" {
		// The adapter opens the files checked, not their names (R10).
		heldCore, heldExe = target.HeldPath(held[0]), target.HeldPath(held[1])
	}
	var term *progout.Terminal
	if spec.OwnTerminal && !l.Attach && core == "" {
		if term, err = progout.NewTerminal(); err == nil {
			t.Terminal = term.Path
		} // else the adapter relays the output, slower
	}
	defer func() { term.Close() }() // unless handed to the session
	command, args, dial, err := request(spec, t, heldCore, heldExe)
	if err != nil {
		return nil, err
	}
	s.bps.DropTemps()
	s.bps.Reset(true)
	opts := Options{TTL: s.cfg.TTL, Guard: s.g, Breakpoints: s.bps, StartTimeout: s.cfg.StartTimeout, Dial: dial}
	if !deadline.IsZero() {
		if opts.TTL = time.Until(deadline); opts.TTL <= 0 {
			return nil, adapter.BadArg("the session's time limit has passed; launch starts a new one")
		}
	}
	sess, err := start(ctx, spec, s.g.Root(), tmp, opts)
	if err != nil {
		return nil, err
	}
	tmp = ""                    // the session's: removed at its end
	sess.held, held = held, nil // closed at the session's end
	sess.term, term = term, nil
	sess.term.Start(&sess.out)
	sess.Program = describeProgram(s.g, l)
	sess.stack.Program = program
	sess.attach = l.Attach
	sess.core = core
	sess.exceptions = l.Exceptions
	sess.target = t
	if l.Attach && l.PID > 0 {
		sess.pid = l.PID
	}
	s.mu.Lock()
	if s.closed {
		// Close ran while the adapter started, and saw no session to end.
		s.mu.Unlock()
		sess.end("the run closed")
		return nil, lifetime.ErrClosed
	}
	if cur := s.sess; cur != nil && cur.Ended() == "" {
		// Another launch won the race (the registry serializes debug, a
		// program linking this package need not).
		s.mu.Unlock()
		sess.end("another session started first")
		return nil, adapter.BadArg("a debug session is already running %s; call terminate first, or keep using it", cur.Program)
	}
	s.sess = sess
	s.mu.Unlock()
	if !deadline.IsZero() {
		sess.Deadline = deadline
	}
	ttl := sess.Deadline.Sub(sess.Started)
	limit := ttl
	if !deadline.IsZero() {
		limit = s.cfg.TTL // the limit the first session of a restart had
	}
	expire := time.AfterFunc(ttl, func() {
		if sess.core != "" {
			sess.end(fmt.Sprintf("it reached its time limit of %s, so the adapter was stopped (the core file is unchanged)", limit))
			return
		}
		if sess.attach {
			sess.end(fmt.Sprintf("it reached its time limit of %s, so the debugger detached from the program and the adapter was stopped", limit))
			return
		}
		sess.end(fmt.Sprintf("it reached its time limit of %s, so the adapter and the program were stopped", limit))
	})
	sess.stopTimer = expire.Stop
	if err := sess.launch(ctx, args, command, s.cfg.LaunchTimeout); err != nil {
		sess.end("its launch failed")
		return nil, err
	}
	sess.mu.Lock()
	sess.launched, sess.launchCmd = args, command
	sess.mu.Unlock()
	s.mu.Lock()
	s.last = l
	s.mu.Unlock()
	if core != "" {
		return s.openCore(ctx, sess, wait)
	}
	res, err := s.waitStop(ctx, sess, 0, s.cfg.waitFor(wait))
	if res != nil {
		res.BuildMS = sess.BuildTime.Milliseconds()
		res.StartMS = sess.StartTime.Milliseconds()
		res.Exceptions = &result.ExceptionsSet{Kinds: result.NonNil(l.Exceptions), Filters: result.NonNil(sess.filters), Note: spec.ExceptionNote}
	}
	return res, err
}

func relOr(g *pathguard.Guard, abs string) string {
	if abs == "" {
		return ""
	}
	return g.Rel(abs)
}

func describeProgram(g *pathguard.Guard, l adapter.LaunchSpec) string {
	switch {
	case l.Attach && l.Port > 0:
		return fmt.Sprintf("port %d", l.Port)
	case l.Attach:
		return fmt.Sprintf("pid %d (%s)", l.PID, target.Comm(l.PID))
	case l.Module != "":
		return strings.TrimSpace("-m " + l.Module + " " + strings.Join(l.Args, " "))
	case !l.Core.IsZero():
		return l.Program.Rel() + " (core " + l.Core.Rel() + ")"
	}
	p := l.Program.Rel()
	if l.Test != "" {
		p += " (tests " + l.Test + ")"
	}
	return p
}

// waitFor is how long a call that asked for d waits: the default resume
// wait for none, at most MaxResumeWait.
func (c Config) waitFor(d time.Duration) time.Duration {
	if d <= 0 {
		return c.ResumeWait
	}
	return min(d, c.MaxResumeWait)
}

// request is the request that starts a session for t, and its arguments:
// the opening of core (the crash of exe) when core is set, an attach, or a
// launch; dial is an address to connect to instead of starting the
// adapter.
func request(spec adapter.Spec, t adapter.Target, core, exe string) (command string, args any, dial string, err error) {
	switch {
	case core != "":
		c, ok := spec.Adapter.(adapter.CoreOpener)
		if !ok {
			return "", nil, "", target.OpensCores(spec)
		}
		command, args = c.Core(exe, core, t.Guard.Root())
		return command, args, "", nil
	case t.Attach:
		a, ok := spec.Adapter.(adapter.Attacher)
		if !ok {
			return "", nil, "", adapter.BadArg("%s cannot attach here", spec.ID)
		}
		args, dial, err = a.Attach(t)
		return "attach", args, dial, err
	}
	args, err = spec.Adapter.Launch(t)
	return "launch", args, "", err
}

// SetBreakpoints changes file's breakpoints (merging: lines are added or
// updated, remove drops lines, clear drops them all) and, with a session,
// sends the file's whole list.
func (s *Supervisor) SetBreakpoints(ctx context.Context, at pathguard.Path, lines []breakpoint.LineSpec, remove []int, clear bool) (*result.BreakpointsResult, error) {
	if _, err := s.g.Of(at); err != nil {
		return nil, adapter.BadArg("%v", err)
	}
	file := breakpoint.CleanFile(at.Rel())
	if len(lines) > breakpoint.MaxLines {
		return nil, adapter.BadArg("%d lines in one call; at most %d breakpoints are set per call and kept per file", len(lines), breakpoint.MaxLines)
	}
	for _, l := range lines {
		if l.Line <= 0 {
			return nil, adapter.BadArg("line %d: lines are 1-based", l.Line)
		}
	}
	if err := s.bps.Set(file, lines, remove, clear); err != nil {
		return nil, err
	}
	res := &result.BreakpointsResult{}
	if err := s.send(res, func(sess *Session) error { return sess.setBreakpoints(ctx, file) }); err != nil {
		return nil, err
	}
	res.Breakpoints = s.bps.All()
	return res, nil
}

// send sends a change of the kept breakpoints to the live session, if
// any, and says in res where they stand: sent to that session, or kept
// for the next launch (a core file's session runs nothing).
func (s *Supervisor) send(res *result.BreakpointsResult, to func(*Session) error) error {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess == nil || sess.Ended() != "" || sess.core != "" {
		res.Pending = true
		if sess != nil && sess.Ended() == "" {
			res.Note = coreBreakpointsNote
		}
		return nil
	}
	if err := to(sess); err != nil {
		return err
	}
	info := sess.Info()
	res.Session = &info
	return nil
}

// SetFunctionBreakpoints changes the function breakpoints (names added
// or updated with the condition and hit condition, remove dropped, clear
// drops all) and, with a session, sends the whole list.
func (s *Supervisor) SetFunctionBreakpoints(ctx context.Context, names []string, cond, hitCond string, remove []string, clear bool) (*result.BreakpointsResult, error) {
	for _, n := range append(slices.Clone(names), remove...) {
		if strings.TrimSpace(n) == "" {
			return nil, adapter.BadArg("a function name is empty; name functions as the adapter does: pkg.Func or (*T).Method (delve), module.func (debugpy), main (lldb)")
		}
	}
	old := s.bps.Funcs()
	if err := s.bps.SetFuncs(names, cond, hitCond, remove, clear); err != nil {
		return nil, err
	}
	res := &result.BreakpointsResult{}
	if err := s.send(res, func(sess *Session) error { return sess.setFunctionBreakpoints(ctx) }); err != nil {
		s.bps.RestoreFuncs(old)
		return nil, err
	}
	res.Breakpoints = s.bps.All()
	res.Functions = s.bps.Funcs()
	return res, nil
}

// Resume continues, steps or pauses and waits (bounded) for the next stop.
// A stop that happened since the last call is reported first, without
// resuming.
func (s *Supervisor) Resume(ctx context.Context, action string, thread int, wait time.Duration) (*result.StopResult, error) {
	sess, err := s.live()
	if err != nil {
		return nil, err
	}
	command := map[string]string{"continue": "continue", "step_over": "next", "step_in": "stepIn", "step_out": "stepOut", "pause": "pause"}[action]
	if command == "" {
		return nil, adapter.BadArg("unknown resume %q", action)
	}
	if err := sess.readOnly(strings.ReplaceAll(action, "_", " ")); err != nil {
		return nil, err
	}
	pos := sess.position()
	before := pos.stops
	if pos.exited {
		return s.waitStop(ctx, sess, before, 0)
	}
	if !pos.stopped && action == "continue" {
		// Already running: continue means wait for the next stop.
		return s.waitStop(ctx, sess, before, s.cfg.waitFor(wait))
	}
	if !pos.stopped && action != "pause" {
		return nil, adapter.BadArg("the program is running, so it cannot %s; pause it first, or continue to wait for a stop", strings.ReplaceAll(action, "_", " "))
	}
	if pos.unreported && action != "pause" {
		res, err := s.stopResult(ctx, sess, pos.cur)
		if res != nil {
			res.Earlier = true
			res.Note = "the program stopped here after your last call returned; it was not resumed — call " + action + " again to go on"
		}
		return res, err
	}
	if action == "pause" && pos.stopped {
		// Delve answers a pause of a stopped program with no event.
		res, err := s.stopResult(ctx, sess, pos.cur)
		if res != nil {
			res.Note = "the program was already stopped"
		}
		return res, err
	}
	if thread == 0 && pos.cur != nil {
		thread = pos.cur.ThreadID
	}
	if thread == 0 {
		thread = 1
	}
	sess.mu.Lock()
	if action == "pause" {
		sess.pausing = true
	} else {
		sess.running = true
		sess.resumed = before
		sess.pausing = false
	}
	sess.mu.Unlock()
	if err := sess.call(ctx, command, map[string]any{"threadId": thread}, nil); err != nil {
		if action != "pause" {
			sess.mu.Lock()
			if len(sess.stops) == before {
				sess.running = false
			}
			sess.mu.Unlock()
		}
		return nil, fmt.Errorf("%s: %v", action, err)
	}
	return s.waitStop(ctx, sess, before, s.cfg.waitFor(wait))
}

// waitStop waits up to d for a stop after the first n, the program's end,
// or the session's end, then describes what happened.
func (s *Supervisor) waitStop(ctx context.Context, sess *Session, n int, d time.Duration) (*result.StopResult, error) {
	var timer <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	for {
		sess.mu.Lock()
		newStop := len(sess.stops) > n && !sess.running
		done := sess.exitCode != nil || sess.terminated || sess.ended != ""
		var st *stop
		if newStop {
			st = sess.stops[len(sess.stops)-1]
		}
		changed := sess.changed
		sess.mu.Unlock()
		switch {
		case newStop:
			if sess.Spec.StopBursts {
				sess.settle()
				sess.mu.Lock()
				st = sess.stops[len(sess.stops)-1]
				sess.mu.Unlock()
			}
			return s.stopResult(ctx, sess, st)
		case done:
			return s.endResult(sess), nil
		}
		select {
		case <-changed:
		case <-timer:
			res := &result.StopResult{Session: sess.Info(), Outcome: "running",
				Note: fmt.Sprintf("still running after %s (last stop %d); call continue again to wait longer, or pause to stop it", d.Round(time.Millisecond), n)}
			res.Output, res.OutputMore = sess.out.Recent()
			return res, nil
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

func (s *Supervisor) endResult(sess *Session) *result.StopResult {
	sess.mu.Lock()
	res := &result.StopResult{Session: sess.infoLocked(), Outcome: "exited", ExitCode: sess.exitCode, Ended: sess.ended}
	if sess.ended != "" && sess.exitCode == nil && !sess.terminated {
		res.Outcome = "ended"
	}
	sess.mu.Unlock()
	for _, b := range s.bps.All() {
		if b.Verified && b.Hits == 0 && b.LogMessage == "" {
			res.NeverHit = append(res.NeverHit, b)
		}
	}
	for _, f := range s.bps.Funcs() {
		if f.Verified && f.Hits == 0 {
			res.NeverHitFuncs = append(res.NeverHitFuncs, f)
		}
	}
	res.RunTo = s.settleRunTo(context.Background(), sess, nil, nil)
	res.Output, res.OutputMore = sess.out.Recent()
	return res
}

// stopResult describes a stop: where (the frame with its source), why,
// the breakpoints hit, the frame's locals, and new output.
func (s *Supervisor) stopResult(ctx context.Context, sess *Session, st *stop) (*result.StopResult, error) {
	res := &result.StopResult{Session: sess.Info(), Outcome: "stopped", Stop: &st.Stop}
	frames, _, err := sess.stack.Frames(ctx, st.N, st.ThreadID, 30)
	if err == nil && st.Reason == "pause" && stack.InRoot(frames) < 0 {
		// delve stops on the thread it interrupted, often idle in the
		// runtime (goroutine 0): show the one running the checkout's code.
		if tid, fr := sess.stack.UserThread(ctx, st.N, st.ThreadID); tid != 0 {
			res.Note = fmt.Sprintf("the adapter paused on thread %d in %s, outside the checkout; shown is thread %d, where the checkout's code is", st.ThreadID, frameName(frames), tid)
			sess.mu.Lock()
			st.ThreadID = tid
			sess.mu.Unlock()
			frames = fr
		}
	}
	if err == nil && len(frames) > 0 {
		pick := stack.Pick(st.Reason, frames)
		f := frames[pick]
		res.Frame = &f
		sess.mu.Lock()
		shown := f
		st.shown, st.below = &shown, pick > 0
		sess.mu.Unlock()
		sess.mu.Lock()
		ids := st.Breakpoints
		sess.mu.Unlock()
		first := s.firstReport(sess, st)
		var fired []string
		if first {
			var unchanged bool
			fired, unchanged = sess.watches.Fired(st.adapterBPs, func(expr string) string { return sess.stack.Memory(ctx, expr) })
			if st.Reason == "data breakpoint" && unchanged && len(s.bps.IDsAt(frames[0].File, frames[0].Line)) > 0 {
				// No watched value changed, and a breakpoint is where it
				// stopped: that breakpoint's stop, mislabelled.
				sess.mu.Lock()
				st.Reason = "breakpoint"
				sess.mu.Unlock()
				res.Note = strings.TrimPrefix(res.Note+"; "+sess.Spec.ID+" reported a data breakpoint, but no watched value changed: it stopped at the breakpoint there", "; ")
			}
		}
		switch {
		case first && st.Reason == "data breakpoint":
			// A watchpoint's stop: a line breakpoint where it landed was
			// not hit (the write was the line before).
			ids = fired
		case first:
			ids = s.bps.Hit(st.adapterBPs, f.File, f.Line)
			ids = append(ids, s.bps.HitFunc(st.adapterBPs, st.Reason, frames[0].Name)...)
		}
		if st.Reason == "breakpoint" && len(ids) == 0 && frames[0].Line > 0 {
			ids = s.bps.IDsAt(frames[0].File, frames[0].Line)
		}
		sess.mu.Lock() // status reads the stop meanwhile
		st.Breakpoints = ids
		sess.mu.Unlock()
		if locals, more, hidden, err := sess.stack.Locals(ctx, st.N, f.ID); err == nil {
			res.Locals, res.LocalsMore, res.LocalsHidden = locals, more, hidden
		}
	} else if err != nil {
		res.Note = "the stack could not be read: " + err.Error()
	}
	if (st.Reason == "exception" || st.Reason == "panic") && sess.caps.SupportsExceptionInfoRequest {
		var info godap.ExceptionInfoResponseBody
		if sess.call(ctx, "exceptionInfo", map[string]any{"threadId": st.ThreadID}, &info) == nil {
			res.Exception = strings.TrimSpace(info.ExceptionId + ": " + info.Description)
		}
	}
	if res.Exception == "" && st.Text != "" && (st.Reason == "exception" || st.Reason == "panic") {
		res.Exception = st.Text
	}
	var top *stack.Frame
	if len(frames) > 0 {
		top = &frames[0]
	}
	res.RunTo = s.settleRunTo(ctx, sess, st, top)
	res.Output, res.OutputMore = sess.out.Recent()
	return res, nil
}

// firstReport marks st reported and says whether it was its first time.
func (s *Supervisor) firstReport(sess *Session, st *stop) bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if st.N > sess.reported {
		sess.reported = st.N
		return true
	}
	return false
}

// Stack returns a thread's stack, at most levels (30) frames.
func (s *Supervisor) Stack(ctx context.Context, thread int) (*result.StackResult, error) {
	sess, st, err := s.stopped()
	if err != nil {
		return nil, err
	}
	if thread == 0 {
		thread = st.ThreadID
	}
	frames, total, err := sess.stack.Frames(context.WithoutCancel(ctx), st.N, thread, 30)
	if err != nil {
		return nil, fmt.Errorf("stack of thread %d: %v", thread, err)
	}
	res := &result.StackResult{Session: sess.Info(), ThreadID: thread, Frames: frames}
	if total > len(frames) {
		res.Total = total
	}
	return res, nil
}

// Scopes lists a frame's scopes.
func (s *Supervisor) Scopes(ctx context.Context, frame string) (*result.ScopesResult, error) {
	sess, st, fid, err := s.refAt("frame_id", frame)
	if err != nil {
		return nil, err
	}
	var body godap.ScopesResponseBody
	if err := sess.call(ctx, "scopes", map[string]any{"frameId": fid}, &body); err != nil {
		return nil, fmt.Errorf("scopes: %v", err)
	}
	res := &result.ScopesResult{Session: sess.Info(), Frame: frame, Scopes: []result.Scope{}}
	for _, sc := range body.Scopes {
		res.Scopes = append(res.Scopes, result.Scope{Name: sc.Name, Ref: stack.Ref(sc.VariablesReference, st.N), Count: sc.NamedVariables + sc.IndexedVariables, Expensive: sc.Expensive})
	}
	return res, nil
}

// Variables lists a reference's children: at most 50; all keeps what is
// left out as noise (see VariablesResult.Hidden).
func (s *Supervisor) Variables(ctx context.Context, r string, all bool) (*result.VariablesResult, error) {
	sess, st, vref, err := s.refAt("reference", r)
	if err != nil {
		return nil, err
	}
	vars, more, hidden, err := sess.stack.Children(ctx, st.N, vref, 50, all)
	if err != nil {
		return nil, fmt.Errorf("variables: %v", err)
	}
	return &result.VariablesResult{Session: sess.Info(), Ref: r, Variables: vars, More: more, Hidden: hidden}, nil
}

// stopped is the live session and the stop it is at; an error when the
// program runs or has exited.
func (s *Supervisor) stopped() (*Session, *stop, error) {
	sess, err := s.live()
	if err != nil {
		return nil, nil, err
	}
	st, err := sess.currentStop()
	if err != nil {
		return nil, nil, err
	}
	return sess, st, nil
}

// refAt is the live session, the stop it is at, and the adapter's id in r,
// a reference (what: frame_id, reference) that must come from that stop.
func (s *Supervisor) refAt(what, r string) (*Session, *stop, int, error) {
	sess, err := s.live()
	if err != nil {
		return nil, nil, 0, err
	}
	id, err := sess.parseRef(what, r)
	if err != nil {
		return nil, nil, 0, err
	}
	st, _ := sess.currentStop()
	return sess, st, id, nil
}

// Evaluate evaluates an expression in a frame (default the one the stop
// showed: shownFrame), waiting at most wait (the resume wait when 0, capped like a
// resume). An expression that fails is a result that says so; one that
// runs out of time is a result that says what was done about it: pause is
// sent, and an evaluate still running in the program makes the next one
// wait for it (L7).
func (s *Supervisor) Evaluate(ctx context.Context, expr, frame string, wait time.Duration) (*result.EvalResult, error) {
	sess, st, err := s.stopped()
	if err != nil {
		return nil, err
	}
	if busy := sess.busy.note(); busy != "" {
		return nil, adapter.BadArg("%s; a new evaluate would wait behind it: wait and call evaluate again, or terminate the session", busy)
	}
	args := map[string]any{"expression": expr, "context": sess.Spec.ExprContext}
	res := &result.EvalResult{Session: sess.Info(), Expression: expr, Frame: frame}
	if frame != "" {
		fid, err := sess.parseRef("frame_id", frame)
		if err != nil {
			return nil, err
		}
		args["frameId"] = fid
	} else if fid, f, below := sess.shownFrame(ctx, st); f != nil {
		args["frameId"] = fid
		res.Frame = f.ID
		if below {
			res.In = "evaluated in " + frameAt(f) + ", the frame the stop showed (not the top frame); frame_id picks another"
		}
	}
	var body godap.EvaluateResponseBody
	d := s.cfg.waitFor(wait)
	late, still, err := sess.bounded(ctx, st, "evaluate", args, &body, d, "evaluate ("+textcut.Ellipsis(expr, 80)+")")
	if still {
		res.TimedOut = true
		res.Note = fmt.Sprintf("%s did not finish within %s; pause was sent and it still runs inside the program, so the next evaluate would wait behind it (a timeout_seconds up to %s waits longer); terminate ends the session and the program",
			expr, d.Round(time.Millisecond), s.cfg.MaxResumeWait)
		res.Session = sess.Info()
		return res, nil
	}
	if late && (err == nil || errors.As(err, new(*dapclient.ResponseError))) {
		res.Note = fmt.Sprintf("it ran past the %s bound; pause was sent and then it ended", d.Round(time.Millisecond))
	}
	if err != nil {
		var re *dapclient.ResponseError
		if errors.As(err, &re) {
			res.Error = strings.TrimPrefix(re.Error(), "evaluate: ")
			return res, nil
		}
		if errors.Is(err, dapclient.ErrClosed) {
			return nil, sess.closedError()
		}
		return nil, err
	}
	v := stack.NewVar(expr, body.Result, body.Type, body.VariablesReference, body.NamedVariables, body.IndexedVariables, st.N)
	res.Value = &v
	return res, nil
}

// Threads lists threads (goroutines), grouped by name with the id left out.
func (s *Supervisor) Threads(ctx context.Context) (*result.ThreadsResult, error) {
	sess, err := s.live()
	if err != nil {
		return nil, err
	}
	var body godap.ThreadsResponseBody
	if err := sess.call(ctx, "threads", nil, &body); err != nil {
		return nil, fmt.Errorf("threads: %v", err)
	}
	res := &result.ThreadsResult{Session: sess.Info(), Total: len(body.Threads), Groups: []result.ThreadGroup{}}
	index := map[string]int{}
	for _, t := range body.Threads {
		name := groupName(t.Name)
		i, ok := index[name]
		if !ok {
			i = len(res.Groups)
			index[name] = i
			res.Groups = append(res.Groups, result.ThreadGroup{Name: name})
		}
		res.Groups[i].IDs = append(res.Groups[i].IDs, t.Id)
		res.Groups[i].Count++
	}
	slices.SortStableFunc(res.Groups, func(a, b result.ThreadGroup) int { return b.Count - a.Count })
	return res, nil
}

// groupName drops the thread's own id from its name ("* [Go 7] main.work
// (…)" → "main.work (…)") so goroutines in one place group together.
func groupName(name string) string {
	name = strings.TrimPrefix(strings.TrimSpace(name), "* ")
	if strings.HasPrefix(name, "[Go ") {
		if i := strings.Index(name, "] "); i > 0 {
			name = name[i+2:]
		}
	}
	// and the OS thread it happens to run on
	if i := strings.LastIndex(name, " (Thread "); i > 0 && strings.HasSuffix(name, ")") {
		name = name[:i]
	}
	return name
}

// Output returns the program's output no result has shown yet (what stop
// results left out for room, then what came since), at most limit bytes.
func (s *Supervisor) Output(limit int) (*result.OutputResult, error) {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess == nil {
		return nil, noSession("there has been no debug session; start one with operation launch or attach")
	}
	text, skipped, more := sess.out.Unshown(limit)
	return &result.OutputResult{Session: sess.Info(), Output: text, Skipped: skipped, More: more}, nil
}

// Status says whether a session lives, where it stands, and the
// breakpoints. It never waits on the adapter, so it answers while another
// operation runs (the debug tool lets it past its queue).
func (s *Supervisor) Status() *result.StatusResult {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	res := &result.StatusResult{Breakpoints: s.bps.All(), Functions: s.bps.Funcs()}
	if sess == nil {
		return res
	}
	if res.Previous = sess.Ended(); res.Previous == "" {
		info := sess.Info()
		res.Session = &info
		sess.mu.Lock()
		if n := len(sess.stops); n > 0 {
			// A copy: status runs while another operation changes the stop.
			st := sess.stops[n-1].Stop
			st.Breakpoints = slices.Clone(st.Breakpoints)
			res.LastStop = &st
		}
		sess.mu.Unlock()
	}
	return res
}

// Terminate ends the session: the adapter and its files, and a program it
// launched. A program it attached to is detached from and left running,
// unless terminateDebuggee asks to end it (the adapter is asked; if the
// program outlives that, it is sent SIGKILL). What became of the program
// is looked at afterwards, never assumed.
func (s *Supervisor) Terminate(ctx context.Context, terminateDebuggee bool) (*result.TerminateResult, error) {
	sess, err := s.live()
	if err != nil {
		return nil, err
	}
	end := s.endResult(sess)
	kill := (!sess.attach || terminateDebuggee) && sess.core == "" // a core has no program to end
	pid := sess.PID()
	sess.finish("it was terminated", kill)
	res := &result.TerminateResult{Program: sess.Program, Attached: sess.attach, PID: pid, ExitCode: end.ExitCode, NeverHit: end.NeverHit, NeverHitFuncs: end.NeverHitFuncs, Output: end.Output}
	if sess.core != "" {
		res.Core, res.Debuggee, res.NeverHit, res.NeverHitFuncs = true, result.DebuggeeNone, nil, nil
		return res, nil
	}
	if pid == 0 {
		res.Debuggee = result.DebuggeeUnknown
		return res, nil
	}
	if !kill {
		res.Detached = true
		// A tracer's stop clears once the adapter has let go.
		waitState(ctx, pid, 2*time.Second, func(st string) bool { return st != "t" && st != "T" })
		res.Debuggee = debuggeeState(pid)
		return res, nil
	}
	gone := func(st string) bool { return st == "" }
	if !waitState(ctx, pid, 5*time.Second, gone) && sess.attach && target.RefuseAttach(pid) == nil {
		// Asked to end it, and the adapter's disconnect did not.
		res.Killed = syscall.Kill(pid, syscall.SIGKILL) == nil
		waitState(ctx, pid, 2*time.Second, gone)
	}
	res.Debuggee = debuggeeState(pid)
	return res, nil
}

// debuggeeState is what pid is doing now, as a TerminateResult says it.
func debuggeeState(pid int) string {
	switch target.State(pid) {
	case "":
		return result.DebuggeeEnded
	case "t", "T":
		return result.DebuggeeStopped
	}
	return result.DebuggeeRunning
}

// waitState polls pid's state until done says so or within passes; it
// reports whether done did.
func waitState(ctx context.Context, pid int, within time.Duration, done func(state string) bool) bool {
	deadline := time.Now().Add(within)
	for !done(target.State(pid)) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}
