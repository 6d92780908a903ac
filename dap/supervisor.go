package dap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	godap "github.com/google/go-dap"

	"github.com/builtin-tools/builtin-tools/internal/pyenv"
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
	bps *Breakpoints

	mu     sync.Mutex
	sess   *Session
	closed bool
	last   LaunchSpec // the last launch that started, for restart
}

func (s *Supervisor) ttl() time.Duration {
	if s.cfg.TTL > 0 {
		return s.cfg.TTL
	}
	return DefaultTTL
}

// NewSupervisor makes a supervisor over the run's root; it starts nothing.
func NewSupervisor(g *pathguard.Guard, cfg Config) *Supervisor {
	if cfg.ResumeWait <= 0 {
		cfg.ResumeWait = 10 * time.Second
	}
	if cfg.MaxResumeWait <= 0 {
		cfg.MaxResumeWait = 5 * time.Minute
	}
	return &Supervisor{g: g, cfg: cfg, bps: NewBreakpoints()}
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
func (s *Supervisor) Adapters(ctx context.Context) []AdapterStatus { return Statuses(ctx, s.g) }

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

// Info says where the session stands.
func (sess *Session) Info() SessionInfo {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.infoLocked()
}

func (sess *Session) infoLocked() SessionInfo {
	info := SessionInfo{Adapter: sess.Spec.ID, Program: sess.Program, PID: sess.pid,
		AgeSeconds: int(time.Since(sess.Started).Seconds()), RemainingSeconds: max(int(time.Until(sess.Deadline).Seconds()), 0)}
	switch {
	case sess.ended != "":
		info.State = "ended"
	case sess.exitCode != nil || sess.terminated:
		info.State = "exited"
	case sess.running:
		info.State = "running"
	case len(sess.stops) > 0:
		info.State = "stopped"
		info.Stop = len(sess.stops)
	default:
		info.State = "running"
	}
	return info
}

// Launch starts a session: the adapter, the handshake, the program; then it
// waits (bounded) for the first stop. A second launch while one lives is
// refused.
func (s *Supervisor) Launch(ctx context.Context, l LaunchSpec, wait time.Duration) (*StopResult, error) {
	return s.launch(ctx, l, wait, time.Time{})
}

// launch is Launch; a deadline that is not zero is the session's (a
// restart keeps the time limit of the session it replaces).
func (s *Supervisor) launch(ctx context.Context, l LaunchSpec, wait time.Duration, deadline time.Time) (*StopResult, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errors.New("the run is closed")
	}
	if cur := s.sess; cur != nil && cur.Ended() == "" {
		info := cur.Info()
		s.mu.Unlock()
		return nil, badArg("a debug session is already running %s (%s, state %s, %s old, %s left); call terminate first, or keep using it",
			info.Program, info.Adapter, info.State, time.Duration(info.AgeSeconds)*time.Second, time.Duration(info.RemainingSeconds)*time.Second)
	}
	s.mu.Unlock()

	if l.Attach && !l.Core.IsZero() {
		return nil, badArg("core goes with launch (program: the executable that crashed), not attach")
	}
	if l.Attach && l.PID > 0 {
		// Refused before any adapter starts: once attached, it is too late.
		if err := refuseAttach(l.PID); err != nil {
			return nil, err
		}
	}
	program := ""
	if !l.Program.IsZero() {
		var err error
		if program, err = s.g.Of(l.Program); err != nil {
			return nil, badArg("%v", err)
		}
	}
	if !l.Cwd.IsZero() {
		if _, err := s.g.Of(l.Cwd); err != nil {
			return nil, badArg("%v", err)
		}
	}
	var spec AdapterSpec
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
		if core, cf, exe, err = s.coreFiles(l, program); err != nil {
			return nil, err
		}
		held = []*os.File{cf, exe}
		spec, err = chooseCore(l.Adapter, exe)
		l.Exceptions = []string{} // nothing runs, nothing is raised
	} else if l.Attach {
		spec, err = chooseAttach(l.Adapter, l.Port, l.PID)
	} else {
		spec, err = chooseAdapter(s.g, l.Adapter, relOr(s.g, program), l.Module, program)
	}
	if err != nil {
		return nil, err
	}
	if l.Exceptions == nil {
		l.Exceptions = defaultExceptions(spec, l)
	}
	if err := checkExceptions(spec, l.Exceptions); err != nil {
		return nil, err
	}
	if spec.ID == "debugpy" && l.Attach && l.PID > 0 && l.Port <= 0 {
		if _, err := exec.LookPath("gdb"); err != nil {
			return nil, fmt.Errorf("debugpy attaches to a running Python program by pid with gdb, which is not installed here (apt-get install gdb); or have the program call debugpy.listen and attach with port")
		}
	}
	if spec.ID == "debugpy" && !l.Attach && l.Python == "" {
		// The checkout's interpreter; one that cannot run debugpy is said
		// now, not after the launch's bound.
		if py := pyenv.Interpreter(s.g.Root()); py != "" {
			if cmd, _ := spec.command(ctx); cmd != nil {
				if why := interpreterProblem(ctx, py, s.g.Rel(py), cmd[0]); why != "" {
					return nil, fmt.Errorf("cannot launch under debugpy: %s", why)
				}
			}
			l.Python = py
		}
	}
	args, command, err := launchArgs(s.g, spec, l)
	if core != "" {
		// The adapter opens the files checked, not their names (R10).
		args, command, err = coreArgs(spec, heldPath(held[1]), heldPath(held[0]), s.g.Root())
	}
	if err != nil {
		return nil, err
	}
	s.bps.dropTemps()
	s.bps.resetHits()
	opts := Options{TTL: s.cfg.TTL, Guard: s.g, Breakpoints: s.bps, StartTimeout: s.cfg.StartTimeout}
	if !deadline.IsZero() {
		if opts.TTL = time.Until(deadline); opts.TTL <= 0 {
			return nil, badArg("the session's time limit has passed; launch starts a new one")
		}
	}
	if l.Attach && spec.ID == "debugpy" && l.Port > 0 {
		// The program's debugpy.listen runs its own adapter on the port.
		opts.Dial = fmt.Sprintf("127.0.0.1:%d", l.Port)
	}
	sess, err := start(ctx, spec, s.g.Root(), opts)
	if err != nil {
		return nil, err
	}
	sess.held, held = held, nil // closed at the session's end
	sess.Program = describeProgram(s.g, l)
	sess.abs = program
	sess.attach = l.Attach
	sess.core = core
	sess.exceptions = l.Exceptions
	if spec.ID == "debugpy" && !l.Attach {
		sess.pyMain = pyMainModules(s.g, l)
	}
	if l.Attach && l.PID > 0 {
		sess.pid = l.PID
	}
	s.mu.Lock()
	if s.closed {
		// Close ran while the adapter started, and saw no session to end.
		s.mu.Unlock()
		sess.end("the run closed")
		return nil, errors.New("the run is closed")
	}
	if cur := s.sess; cur != nil && cur.Ended() == "" {
		// Another launch won the race (the registry serializes debug, a
		// program linking this package need not).
		s.mu.Unlock()
		sess.end("another session started first")
		return nil, badArg("a debug session is already running %s; call terminate first, or keep using it", cur.Program)
	}
	s.sess = sess
	s.mu.Unlock()
	if _, ok := args["output"]; ok {
		args["output"] = filepath.Join(sess.tmp, "__debug_bin") // removed with the session
	}
	if !deadline.IsZero() {
		sess.Deadline = deadline
	}
	ttl := sess.Deadline.Sub(sess.Started)
	limit := ttl
	if !deadline.IsZero() {
		limit = s.ttl() // the limit the first session of a restart had
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
	if err := sess.launch(ctx, l, args, command, s.cfg.LaunchTimeout); err != nil {
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
	res, err := s.waitStop(ctx, sess, 0, s.waitFor(wait))
	if res != nil {
		res.BuildMS = sess.BuildTime.Milliseconds()
		res.StartMS = sess.StartTime.Milliseconds()
		res.Exceptions = &ExceptionsSet{Kinds: nonNil(l.Exceptions), Filters: nonNil(sess.filters), Note: spec.ExceptionNote}
	}
	return res, err
}

func relOr(g *pathguard.Guard, abs string) string {
	if abs == "" {
		return ""
	}
	return g.Rel(abs)
}

func describeProgram(g *pathguard.Guard, l LaunchSpec) string {
	switch {
	case l.Attach && l.Port > 0:
		return fmt.Sprintf("port %d", l.Port)
	case l.Attach:
		return fmt.Sprintf("pid %d (%s)", l.PID, commOf(l.PID))
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

func (s *Supervisor) waitFor(d time.Duration) time.Duration {
	if d <= 0 {
		return s.cfg.ResumeWait
	}
	return min(d, s.cfg.MaxResumeWait)
}

// launchArgs builds the adapter's launch or attach arguments.
func launchArgs(g *pathguard.Guard, spec AdapterSpec, l LaunchSpec) (map[string]any, string, error) {
	cwd := l.Cwd.Abs()
	if l.Cwd.IsZero() {
		cwd = g.Root()
	}
	program := l.Program.Abs()
	args := l.Args
	if args == nil {
		args = []string{}
	}
	if l.Attach {
		switch spec.ID {
		case "debugpy":
			if l.PID > 0 && l.Port <= 0 {
				// debugpy injects itself into the process (with gdb).
				return map[string]any{"processId": l.PID, "justMyCode": true}, "attach", nil
			}
			if l.Port <= 0 {
				return nil, "", badArg("attach with debugpy needs port (the program runs debugpy.listen(port)) or pid")
			}
			return map[string]any{"connect": map[string]any{"host": "127.0.0.1", "port": l.Port}, "justMyCode": true, "redirectOutput": true}, "attach", nil
		case "lldb", "delve":
			if l.PID <= 0 {
				return nil, "", badArg("attach with %s needs pid", spec.ID)
			}
			if spec.ID == "delve" {
				return map[string]any{"mode": "local", "processId": l.PID}, "attach", nil
			}
			return map[string]any{"pid": l.PID}, "attach", nil
		}
		return nil, "", badArg("%s cannot attach here", spec.ID)
	}
	switch spec.ID {
	case "delve":
		mode := "debug"
		if l.Test != "" {
			mode = "test"
			args = append([]string{"-test.run", l.Test}, args...)
		} else if info, err := g.Stat(program); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 && filepath.Ext(program) != ".go" {
			mode = "exec"
		}
		m := map[string]any{"mode": mode, "program": program, "args": args, "cwd": cwd, "outputMode": "remote",
			"stopOnEntry": false, "hideSystemGoroutines": true}
		if mode != "exec" {
			m["output"] = "" // set by the session: its own folder
		}
		if len(l.Env) > 0 {
			m["env"] = l.Env
		}
		return m, "launch", nil
	case "debugpy":
		m := map[string]any{"console": "internalConsole", "redirectOutput": true, "justMyCode": true, "subProcess": false,
			"cwd": cwd, "args": args, "stopOnEntry": false}
		if l.Module != "" {
			m["module"] = l.Module
		} else {
			m["program"] = program
		}
		// The checkout's own interpreter (Launch sets it), as a developer's
		// shell would run it (debug is exec tier, behind approvals); else
		// the adapter's.
		if l.Python != "" {
			m["python"] = []string{l.Python}
		}
		if len(l.Env) > 0 {
			m["env"] = l.Env
		}
		return m, "launch", nil
	case "lldb":
		m := map[string]any{"program": program, "args": args, "cwd": cwd, "stopOnEntry": false}
		if len(l.Env) > 0 {
			var env []string
			for k, v := range l.Env {
				env = append(env, k+"="+v)
			}
			slices.Sort(env)
			m["env"] = env
		}
		return m, "launch", nil
	}
	return map[string]any{"program": program, "args": args, "cwd": cwd}, "launch", nil
}

// SetBreakpoints changes file's breakpoints (merging: lines are added or
// updated, remove drops lines, clear drops them all) and, with a session,
// sends the file's whole list.
func (s *Supervisor) SetBreakpoints(ctx context.Context, at pathguard.Path, lines []LineSpec, remove []int, clear bool) (*BreakpointsResult, error) {
	if _, err := s.g.Of(at); err != nil {
		return nil, badArg("%v", err)
	}
	file := cleanFile(at.Rel())
	if len(lines) > MaxBreakpointLines {
		return nil, badArg("%d lines in one call; at most %d breakpoints are set per call and kept per file", len(lines), MaxBreakpointLines)
	}
	for _, l := range lines {
		if l.Line <= 0 {
			return nil, badArg("line %d: lines are 1-based", l.Line)
		}
	}
	if err := s.bps.Set(file, lines, remove, clear); err != nil {
		return nil, err
	}
	res := &BreakpointsResult{}
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess != nil && sess.Ended() == "" && sess.core == "" {
		if err := sess.setBreakpoints(ctx, file); err != nil {
			return nil, err
		}
		info := sess.Info()
		res.Session = &info
	} else {
		res.Pending = true
		if sess != nil && sess.Ended() == "" {
			res.Note = coreBreakpointsNote
		}
	}
	res.Breakpoints = s.bps.All()
	return res, nil
}

// SetFunctionBreakpoints changes the function breakpoints (names added
// or updated with the condition and hit condition, remove dropped, clear
// drops all) and, with a session, sends the whole list.
func (s *Supervisor) SetFunctionBreakpoints(ctx context.Context, names []string, cond, hitCond string, remove []string, clear bool) (*BreakpointsResult, error) {
	for _, n := range append(slices.Clone(names), remove...) {
		if strings.TrimSpace(n) == "" {
			return nil, badArg("a function name is empty; name functions as the adapter does: pkg.Func or (*T).Method (delve), module.func (debugpy), main (lldb)")
		}
	}
	old := s.bps.Funcs()
	if err := s.bps.SetFuncs(names, cond, hitCond, remove, clear); err != nil {
		return nil, err
	}
	res := &BreakpointsResult{}
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess != nil && sess.Ended() == "" && sess.core == "" {
		if err := sess.setFunctionBreakpoints(ctx); err != nil {
			s.bps.restoreFuncs(old)
			return nil, err
		}
		info := sess.Info()
		res.Session = &info
	} else {
		res.Pending = true
		if sess != nil && sess.Ended() == "" {
			res.Note = coreBreakpointsNote
		}
	}
	res.Breakpoints = s.bps.All()
	res.Functions = s.bps.Funcs()
	return res, nil
}

// Resume continues, steps or pauses and waits (bounded) for the next stop.
// A stop that happened since the last call is reported first, without
// resuming.
func (s *Supervisor) Resume(ctx context.Context, action string, thread int, wait time.Duration) (*StopResult, error) {
	sess, err := s.live()
	if err != nil {
		return nil, err
	}
	command := map[string]string{"continue": "continue", "step_over": "next", "step_in": "stepIn", "step_out": "stepOut", "pause": "pause"}[action]
	if command == "" {
		return nil, badArg("unknown resume %q", action)
	}
	if err := sess.readOnly(strings.ReplaceAll(action, "_", " ")); err != nil {
		return nil, err
	}
	sess.mu.Lock()
	exited := sess.exitCode != nil || sess.terminated
	stopped := !sess.running && len(sess.stops) > 0
	before := len(sess.stops)
	unreported := stopped && sess.stops[before-1].N > sess.reported
	var cur *Stop
	if stopped {
		cur = sess.stops[before-1]
	}
	sess.mu.Unlock()
	if exited {
		return s.waitStop(ctx, sess, before, 0)
	}
	if !stopped && action == "continue" {
		// Already running: continue means wait for the next stop.
		return s.waitStop(ctx, sess, before, s.waitFor(wait))
	}
	if !stopped && action != "pause" {
		return nil, badArg("the program is running, so it cannot %s; pause it first, or continue to wait for a stop", strings.ReplaceAll(action, "_", " "))
	}
	if unreported && action != "pause" {
		res, err := s.stopResult(ctx, sess, cur)
		if res != nil {
			res.Earlier = true
			res.Note = "the program stopped here after your last call returned; it was not resumed — call " + action + " again to go on"
		}
		return res, err
	}
	if action == "pause" && stopped {
		// Delve answers a pause of a stopped program with no event.
		res, err := s.stopResult(ctx, sess, cur)
		if res != nil {
			res.Note = "the program was already stopped"
		}
		return res, err
	}
	if thread == 0 && cur != nil {
		thread = cur.ThreadID
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
	return s.waitStop(ctx, sess, before, s.waitFor(wait))
}

// waitStop waits up to d for a stop after the first n, the program's end,
// or the session's end, then describes what happened.
func (s *Supervisor) waitStop(ctx context.Context, sess *Session, n int, d time.Duration) (*StopResult, error) {
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
		var st *Stop
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
			res := &StopResult{Session: sess.Info(), Outcome: "running",
				Note: fmt.Sprintf("still running after %s (last stop %d); call continue again to wait longer, or pause to stop it", d.Round(time.Millisecond), n)}
			res.Output, res.OutputMore = sess.recentOutput()
			return res, nil
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

func (s *Supervisor) endResult(sess *Session) *StopResult {
	sess.mu.Lock()
	res := &StopResult{Session: sess.infoLocked(), Outcome: "exited", ExitCode: sess.exitCode, Ended: sess.ended}
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
	res.Output, res.OutputMore = sess.recentOutput()
	return res
}

// recentOutput is the output no result has shown, cut to its last 2,000
// bytes for a stop result, and how many bytes before those it left out;
// output gives those later, and never what a result showed.
func (sess *Session) recentOutput() (string, int) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	o := &sess.out
	end := o.dropped + int64(len(o.data))
	from := max(o.shown, o.dropped)
	const keep = 2000
	start := max(from, end-keep)
	data := o.data[start-o.dropped:]
	if start > from {
		// Cut: start at a line when one begins soon, else at a character.
		if i := bytes.IndexByte(data[:min(len(data), 300)], '\n'); i >= 0 && i+1 < len(data) {
			data, start = data[i+1:], start+int64(i+1)
		}
		for len(data) > 0 && data[0]&0xC0 == 0x80 {
			data, start = data[1:], start+1
		}
	}
	o.skip(from, start)
	o.shown = end
	return string(bytes.ToValidUTF8(data, []byte("\uFFFD"))), int(start - from)
}

// stopResult describes a stop: where (the frame with its source), why,
// the breakpoints hit, the frame's locals, and new output.
func (s *Supervisor) stopResult(ctx context.Context, sess *Session, st *Stop) (*StopResult, error) {
	res := &StopResult{Session: sess.Info(), Outcome: "stopped", Stop: st}
	frames, _, err := sess.frames(ctx, st, st.ThreadID, 30)
	if err == nil && st.Reason == "pause" && inRoot(frames) < 0 {
		// delve stops on the thread it interrupted, often idle in the
		// runtime (goroutine 0): show the one running the checkout's code.
		if tid, fr := sess.userThread(ctx, st); tid != 0 {
			res.Note = fmt.Sprintf("the adapter paused on thread %d in %s, outside the checkout; shown is thread %d, where the checkout's code is", st.ThreadID, frameName(frames), tid)
			sess.mu.Lock()
			st.ThreadID = tid
			sess.mu.Unlock()
			frames = fr
		}
	}
	if err == nil && len(frames) > 0 {
		pick := pickFrame(st.Reason, frames)
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
			fired, unchanged = sess.noteWatches(ctx, st)
			if st.Reason == "data breakpoint" && unchanged && len(s.bps.idsAt(frames[0].File, frames[0].Line)) > 0 {
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
			ids = s.bps.hit(st.adapterBPs, f.File, f.Line)
			ids = append(ids, s.bps.hitFunc(st.adapterBPs, st.Reason, frames[0].Name)...)
		}
		if st.Reason == "breakpoint" && len(ids) == 0 && frames[0].Line > 0 {
			ids = s.bps.idsAt(frames[0].File, frames[0].Line)
		}
		sess.mu.Lock() // status reads the stop meanwhile
		st.Breakpoints = ids
		sess.mu.Unlock()
		if locals, more, hidden, err := sess.locals(ctx, st, f.ID); err == nil {
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
	var top *Frame
	if len(frames) > 0 {
		top = &frames[0]
	}
	res.RunTo = s.settleRunTo(ctx, sess, st, top)
	res.Output, res.OutputMore = sess.recentOutput()
	return res, nil
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
		frames, _, err := sess.frames(ctx, st, st.ThreadID, 30)
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
func (sess *Session) userThread(ctx context.Context, st *Stop) (int, []Frame) {
	var body godap.ThreadsResponseBody
	if err := sess.call(ctx, "threads", nil, &body); err != nil {
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
		if fr, _, err := sess.frames(ctx, st, id, 30); err == nil && inRoot(fr) >= 0 {
			return id, fr
		}
	}
	return 0, nil
}

// firstReport marks st reported and says whether it was its first time.
func (s *Supervisor) firstReport(sess *Session, st *Stop) bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if st.N > sess.reported {
		sess.reported = st.N
		return true
	}
	return false
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
func (sess *Session) frames(ctx context.Context, st *Stop, thread, levels int) ([]Frame, int, error) {
	var body godap.StackTraceResponseBody
	if err := sess.call(ctx, "stackTrace", map[string]any{"threadId": thread, "startFrame": 0, "levels": levels}, &body); err != nil {
		return nil, 0, err
	}
	var progTime time.Time
	if info, err := sess.guard.Stat(sess.abs); err == nil && !info.IsDir() && sess.Spec.ID == "lldb" {
		progTime = info.ModTime()
	}
	sources := map[string]*source{}
	out := make([]Frame, 0, len(body.StackFrames))
	quoted := false // the first frame in the checkout is quoted with lines around
	for i, f := range body.StackFrames {
		fr := Frame{ID: ref(f.Id, st.N), Name: f.Name, Line: f.Line}
		if f.Source != nil && f.Source.Path != "" {
			abs, err := sess.guard.Resolve(f.Source.Path)
			if err != nil {
				// Outside the root (the standard library, a symlink out):
				// named, never read.
				fr.File, fr.Outside = f.Source.Path, true
			} else {
				fr.File = sess.guard.Rel(abs)
				src, ok := sources[abs]
				if !ok {
					src = sess.read(abs, progTime)
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

func (sess *Session) read(abs string, progTime time.Time) *source {
	data, info, err := sess.guard.ReadFile(abs, 8<<20)
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
func (sess *Session) locals(ctx context.Context, st *Stop, frameRef string) ([]Var, int, []string, error) {
	id, _, _ := strings.Cut(frameRef, "@")
	fid, _ := strconv.Atoi(id)
	var scopes godap.ScopesResponseBody
	if err := sess.call(ctx, "scopes", map[string]any{"frameId": fid}, &scopes); err != nil {
		return nil, 0, nil, err
	}
	for _, sc := range scopes.Scopes {
		if sc.Expensive || sc.VariablesReference == 0 {
			continue
		}
		return sess.children(ctx, st, sc.VariablesReference, 20, false)
	}
	return nil, 0, nil, nil
}

// children reads a reference's variables, at most max, values cut at 400
// characters; unless all, what noise reads as a value is left out and
// named (hidden).
func (sess *Session) children(ctx context.Context, st *Stop, vref, max int, all bool) ([]Var, int, []string, error) {
	var body godap.VariablesResponseBody
	// The groups debugpy puts first count against the page.
	if err := sess.call(ctx, "variables", map[string]any{"variablesReference": vref, "start": 0, "count": max + 3}, &body); err != nil {
		return nil, 0, nil, err
	}
	var hidden []string
	vars := body.Variables
	if !all {
		vars = slices.DeleteFunc(slices.Clone(vars), func(v godap.Variable) bool {
			if sess.noise(v) {
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

// noise is a child that reads as a value and is none: debugpy's "special
// variables" and "function variables" groups (dunders and methods, on
// every object), and delve's result slots (~r0), garbage until the
// function returns.
func (sess *Session) noise(v godap.Variable) bool {
	switch sess.Spec.ID {
	case "debugpy":
		return v.Value == "" && v.VariablesReference > 0 && (v.Name == "special variables" || v.Name == "function variables")
	case "delve":
		n, ok := strings.CutPrefix(v.Name, "~r")
		_, err := strconv.Atoi(n)
		return ok && err == nil
	}
	return false
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

// Stack returns a thread's stack, at most levels (30) frames.
func (s *Supervisor) Stack(ctx context.Context, thread int) (*StackResult, error) {
	sess, err := s.live()
	if err != nil {
		return nil, err
	}
	st, err := sess.currentStop()
	if err != nil {
		return nil, err
	}
	if thread == 0 {
		thread = st.ThreadID
	}
	frames, total, err := sess.frames(context.WithoutCancel(ctx), st, thread, 30)
	if err != nil {
		return nil, fmt.Errorf("stack of thread %d: %v", thread, err)
	}
	res := &StackResult{Session: sess.Info(), ThreadID: thread, Frames: frames}
	if total > len(frames) {
		res.Total = total
	}
	return res, nil
}

// Scopes lists a frame's scopes.
func (s *Supervisor) Scopes(ctx context.Context, frame string) (*ScopesResult, error) {
	sess, err := s.live()
	if err != nil {
		return nil, err
	}
	fid, err := sess.parseRef("frame_id", frame)
	if err != nil {
		return nil, err
	}
	st, _ := sess.currentStop()
	var body godap.ScopesResponseBody
	if err := sess.call(ctx, "scopes", map[string]any{"frameId": fid}, &body); err != nil {
		return nil, fmt.Errorf("scopes: %v", err)
	}
	res := &ScopesResult{Session: sess.Info(), Frame: frame, Scopes: []Scope{}}
	for _, sc := range body.Scopes {
		res.Scopes = append(res.Scopes, Scope{Name: sc.Name, Ref: ref(sc.VariablesReference, st.N), Count: sc.NamedVariables + sc.IndexedVariables, Expensive: sc.Expensive})
	}
	return res, nil
}

// Variables lists a reference's children: at most 50; all keeps what is
// left out as noise (see VariablesResult.Hidden).
func (s *Supervisor) Variables(ctx context.Context, r string, all bool) (*VariablesResult, error) {
	sess, err := s.live()
	if err != nil {
		return nil, err
	}
	vref, err := sess.parseRef("reference", r)
	if err != nil {
		return nil, err
	}
	st, _ := sess.currentStop()
	vars, more, hidden, err := sess.children(ctx, st, vref, 50, all)
	if err != nil {
		return nil, fmt.Errorf("variables: %v", err)
	}
	return &VariablesResult{Session: sess.Info(), Ref: r, Variables: vars, More: more, Hidden: hidden}, nil
}

// Evaluate evaluates an expression in a frame (default the one the stop
// showed: shownFrame), waiting at most wait (the resume wait when 0, capped like a
// resume). An expression that fails is a result that says so; one that
// runs out of time is a result that says what was done about it: pause is
// sent, and an evaluate still running in the program makes the next one
// wait for it (L7).
func (s *Supervisor) Evaluate(ctx context.Context, expr, frame string, wait time.Duration) (*EvalResult, error) {
	sess, err := s.live()
	if err != nil {
		return nil, err
	}
	st, err := sess.currentStop()
	if err != nil {
		return nil, err
	}
	if busy := sess.evaluating(); busy != "" {
		return nil, badArg("%s; a new evaluate would wait behind it: wait and call evaluate again, or terminate the session", busy)
	}
	args := map[string]any{"expression": expr, "context": sess.Spec.ExprContext}
	res := &EvalResult{Session: sess.Info(), Expression: expr, Frame: frame}
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
	d := s.waitFor(wait)
	late, still, err := sess.bounded(ctx, st, "evaluate", args, &body, d, "evaluate ("+textcut.Ellipsis(expr, 80)+")")
	if still {
		res.TimedOut = true
		res.Note = fmt.Sprintf("%s did not finish within %s; pause was sent and it still runs inside the program, so the next evaluate would wait behind it (a timeout_seconds up to %s waits longer); terminate ends the session and the program",
			expr, d.Round(time.Millisecond), s.cfg.MaxResumeWait)
		res.Session = sess.Info()
		return res, nil
	}
	if late && (err == nil || errors.As(err, new(*ResponseError))) {
		res.Note = fmt.Sprintf("it ran past the %s bound; pause was sent and then it ended", d.Round(time.Millisecond))
	}
	if err != nil {
		var re *ResponseError
		if errors.As(err, &re) {
			res.Error = strings.TrimPrefix(re.Error(), "evaluate: ")
			return res, nil
		}
		if errors.Is(err, ErrClosed) {
			return nil, sess.closedError()
		}
		return nil, err
	}
	v := makeVar(expr, body.Result, body.Type, body.VariablesReference, body.NamedVariables, body.IndexedVariables, st.N)
	res.Value = &v
	return res, nil
}

// Threads lists threads (goroutines), grouped by name with the id left out.
func (s *Supervisor) Threads(ctx context.Context) (*ThreadsResult, error) {
	sess, err := s.live()
	if err != nil {
		return nil, err
	}
	var body godap.ThreadsResponseBody
	if err := sess.call(ctx, "threads", nil, &body); err != nil {
		return nil, fmt.Errorf("threads: %v", err)
	}
	res := &ThreadsResult{Session: sess.Info(), Total: len(body.Threads), Groups: []ThreadGroup{}}
	index := map[string]int{}
	for _, t := range body.Threads {
		name := groupName(t.Name)
		i, ok := index[name]
		if !ok {
			i = len(res.Groups)
			index[name] = i
			res.Groups = append(res.Groups, ThreadGroup{Name: name})
		}
		res.Groups[i].IDs = append(res.Groups[i].IDs, t.Id)
		res.Groups[i].Count++
	}
	slices.SortStableFunc(res.Groups, func(a, b ThreadGroup) int { return b.Count - a.Count })
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
func (s *Supervisor) Output(limit int) (*OutputResult, error) {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess == nil {
		return nil, noSession("there has been no debug session; start one with operation launch or attach")
	}
	text, skipped, more := sess.newOutput(limit)
	return &OutputResult{Session: sess.Info(), Output: text, Skipped: skipped, More: more}, nil
}

// Status says whether a session lives, where it stands, and the
// breakpoints. It never waits on the adapter, so it answers while another
// operation runs (the debug tool lets it past its queue).
func (s *Supervisor) Status() *StatusResult {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	res := &StatusResult{Breakpoints: s.bps.All(), Functions: s.bps.Funcs()}
	if sess == nil {
		return res
	}
	if res.Previous = sess.Ended(); res.Previous == "" {
		info := sess.Info()
		res.Session = &info
		sess.mu.Lock()
		if n := len(sess.stops); n > 0 {
			// A copy: status runs while another operation changes the stop.
			st := *sess.stops[n-1]
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
func (s *Supervisor) Terminate(ctx context.Context, terminateDebuggee bool) (*TerminateResult, error) {
	sess, err := s.live()
	if err != nil {
		return nil, err
	}
	end := s.endResult(sess)
	kill := (!sess.attach || terminateDebuggee) && sess.core == "" // a core has no program to end
	pid := sess.PID()
	sess.finish("it was terminated", kill)
	res := &TerminateResult{Program: sess.Program, Attached: sess.attach, PID: pid, ExitCode: end.ExitCode, NeverHit: end.NeverHit, NeverHitFuncs: end.NeverHitFuncs, Output: end.Output}
	if sess.core != "" {
		res.Core, res.Debuggee, res.NeverHit, res.NeverHitFuncs = true, DebuggeeNone, nil, nil
		return res, nil
	}
	if pid == 0 {
		res.Debuggee = DebuggeeUnknown
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
	if !waitState(ctx, pid, 5*time.Second, gone) && sess.attach && refuseAttach(pid) == nil {
		// Asked to end it, and the adapter's disconnect did not.
		res.Killed = syscall.Kill(pid, syscall.SIGKILL) == nil
		waitState(ctx, pid, 2*time.Second, gone)
	}
	res.Debuggee = debuggeeState(pid)
	return res, nil
}

// debuggeeState is what pid is doing now, as a TerminateResult says it.
func debuggeeState(pid int) string {
	switch procState(pid) {
	case "":
		return DebuggeeEnded
	case "t", "T":
		return DebuggeeStopped
	}
	return DebuggeeRunning
}

// waitState polls pid's state until done says so or within passes; it
// reports whether done did.
func waitState(ctx context.Context, pid int, within time.Duration, done func(state string) bool) bool {
	deadline := time.Now().Add(within)
	for !done(procState(pid)) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// idsAt lists breakpoints bound at file:line.
func (b *Breakpoints) idsAt(file string, line int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var ids []string
	for _, bp := range b.byFile[file] {
		l := bp.Line
		if bp.BoundLine > 0 {
			l = bp.BoundLine
		}
		if l == line {
			ids = append(ids, bp.ID)
		}
	}
	return ids
}
