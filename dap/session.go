package dap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	godap "github.com/google/go-dap"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// LaunchSpec says what to debug.
type LaunchSpec struct {
	Adapter string
	// Program is a file, a Go package folder, or an executable, from the
	// run's guard.
	Program pathguard.Path
	// Module is a Python module to run instead of a program (pytest).
	Module string
	Args   []string
	Cwd    pathguard.Path // default the root
	Env    map[string]string
	// Test names Go tests to run under delve's test mode (-test.run).
	Test string
	// Python, when set, is the interpreter debugpy runs the program with;
	// by default the checkout's own (internal/pyenv), else the adapter's.
	Python string
	// Exceptions are the exception kinds (uncaught, raised,
	// user_unhandled) or the adapter's own filter names to stop on; nil
	// is the default (defaultExceptions), empty stops on none.
	Exceptions []string
	// Attach: connect to a running program instead (debugpy: Port or
	// PID; delve and lldb: PID).
	Attach bool
	Port   int
	PID    int
	// Core, with Program the executable that crashed, opens a core file
	// read-only instead of running the program (delve, lldb).
	Core pathguard.Path
}

// Session is one live debug session: an adapter process, its connection,
// and what the program did. Safe for concurrent use; actions that resume
// the program wait without a lock, so pause and terminate can interrupt.
type Session struct {
	Spec      AdapterSpec
	Program   string // as the agent named it
	Started   time.Time
	Deadline  time.Time
	BuildTime time.Duration // delve builds inside launch
	StartTime time.Duration // launch to configured, less the build

	root   string
	guard  *pathguard.Guard // confines every path the adapter sends back
	abs    string           // the program's absolute path, for staleness
	attach bool
	core   string        // the core file's absolute path, for a post-mortem session
	held   []*os.File    // files checked and handed to the adapter by descriptor
	p      *proc.Process // the adapter; nil for one we dialled
	tmp    string        // the session's folder: delve's build, the socket
	client *Client
	caps   capabilities
	// exceptions are the kinds and filter names asked for; filters what
	// was sent for them.
	exceptions, filters []string
	endOnce             sync.Once
	stopTimer           func() bool
	// quiet: the adapter let a request run out its bound, so the teardown
	// does not wait on it for a disconnect answer.
	quiet atomic.Bool

	mu         sync.Mutex
	stops      []*Stop
	running    bool
	resumed    int    // stops before the last resume; a later stopped event is a new stop
	reported   int    // the last stop a result showed
	configured bool   // configurationDone was sent
	launchOut  string // what the adapter said before that
	exitCode   *int
	terminated bool
	ended      string // why the session ended, "" while it lives
	pid        int    // the debuggee's, from the process event
	pgid       int    // its process group, killed at the end
	out        outBuf
	bps        *Breakpoints
	changed    chan struct{}
	// lastStopped is when the last stopped event came, for adapters whose
	// stops come in bursts.
	lastStopped time.Time
	// launched and launchCmd are the launch (or attach) request sent.
	launched  map[string]any
	launchCmd string
	// watches are the session's data breakpoints.
	watches   []Watchpoint
	nextWatch int
	// runTo is a run_to_line waiting for its stop.
	runTo *runTo
	// pausing: a pause was sent and the program has not run since.
	pausing bool
	// pyMain are the names of a launched Python program's own module,
	// which runs as __main__ (debugpy's function breakpoints).
	pyMain []string
	// busy is an evaluate or set_variable that ran out of time and still
	// runs, since busySince.
	busy      string
	busySince time.Time
}

type capabilities struct {
	SupportsConfigurationDoneRequest  bool                               `json:"supportsConfigurationDoneRequest"`
	SupportsConditionalBreakpoints    bool                               `json:"supportsConditionalBreakpoints"`
	SupportsHitConditionalBreakpoints bool                               `json:"supportsHitConditionalBreakpoints"`
	SupportsLogPoints                 bool                               `json:"supportsLogPoints"`
	SupportsExceptionInfoRequest      bool                               `json:"supportsExceptionInfoRequest"`
	SupportsTerminateRequest          bool                               `json:"supportsTerminateRequest"`
	SupportsFunctionBreakpoints       bool                               `json:"supportsFunctionBreakpoints"`
	SupportsSetVariable               bool                               `json:"supportsSetVariable"`
	SupportsSetExpression             bool                               `json:"supportsSetExpression"`
	SupportsRestartRequest            bool                               `json:"supportsRestartRequest"`
	SupportsDataBreakpoints           bool                               `json:"supportsDataBreakpoints"`
	ExceptionBreakpointFilters        []godap.ExceptionBreakpointsFilter `json:"exceptionBreakpointFilters"`
}

// Stop is one time the program stopped, numbered from 1 for the session.
type Stop struct {
	N           int       `json:"n" jsonschema:"the stop's number; references from other stops are refused"`
	Reason      string    `json:"reason" jsonschema:"breakpoint, step, pause, exception, entry, ..."`
	Description string    `json:"description,omitempty"`
	Text        string    `json:"text,omitempty" jsonschema:"the panic or exception message, when there is one"`
	ThreadID    int       `json:"thread_id"`
	Breakpoints []string  `json:"breakpoints,omitempty" jsonschema:"ids of the breakpoints hit"`
	At          time.Time `json:"-"`
	adapterBPs  []int
	// shown is the frame the stop's result showed, which evaluate,
	// set_variable and watch default to; nil before it was shown. below:
	// it is not the top frame.
	shown *Frame
	below bool
}

// outBuf keeps the debuggee's output, at least the newest maxOutput bytes,
// with one cursor of what the agent has been shown, whatever result showed
// it: output shown once is never shown again.
type outBuf struct {
	data    []byte
	dropped int64 // bytes dropped from the front
	// shown: every byte before it was shown, except the gaps, which a stop
	// result left out for room (it shows the newest part) and output gives.
	shown int64
	gaps  []span
	// lost counts gap bytes forgotten for room (more than maxGaps).
	lost int64
}

// span is output from..to, absolute offsets.
type span struct{ from, to int64 }

// maxGaps bounds the gaps kept: a stop result that cut its output adds
// one, and only output takes them.
const maxGaps = 64

// skip records output from..to as left out of a result.
func (o *outBuf) skip(from, to int64) {
	if from >= to {
		return
	}
	if n := len(o.gaps); n > 0 && o.gaps[n-1].to == from {
		o.gaps[n-1].to = to
		return
	}
	if len(o.gaps) == maxGaps {
		o.lost += o.gaps[0].to - o.gaps[0].from
		o.gaps = o.gaps[1:]
	}
	o.gaps = append(o.gaps, span{from, to})
}

const maxOutput = 1 << 20

// add appends s. The buffer grows to twice maxOutput before its oldest
// half goes, in one copy: each byte is copied at most once more however
// the output comes, where trimming at every event copied the whole
// buffer each time (M4).
func (o *outBuf) add(s string) {
	if len(s) >= maxOutput {
		o.dropped += int64(len(o.data) + len(s) - maxOutput)
		o.data = append(o.data[:0], s[len(s)-maxOutput:]...)
		return
	}
	if len(o.data)+len(s) > 2*maxOutput {
		over := len(o.data) - maxOutput
		o.data = append(o.data[:0], o.data[over:]...)
		o.dropped += int64(over)
	}
	if o.data == nil {
		o.data = make([]byte, 0, 2*maxOutput)
	}
	o.data = append(o.data, s...)
}

// Options bound a session.
type Options struct {
	TTL time.Duration
	// Guard confines every path the adapter sends back before it is read.
	Guard       *pathguard.Guard
	Breakpoints *Breakpoints
	// Dial, when set, connects to an adapter already listening there
	// (the one debugpy.listen starts inside a program) instead of
	// starting one.
	Dial string
	// StartTimeout bounds the adapter's start: its connection (or the
	// dial) and its answer to initialize (default DefaultStartTimeout).
	StartTimeout time.Duration
}

// DefaultStartTimeout bounds an adapter's start when Config gives none.
const DefaultStartTimeout = 20 * time.Second

func (o Options) startTimeout() time.Duration {
	if o.StartTimeout > 0 {
		return o.StartTimeout
	}
	return DefaultStartTimeout
}

// start runs the adapter and connects to it.
func start(ctx context.Context, spec AdapterSpec, root string, opts Options) (*Session, error) {
	if opts.Dial != "" {
		return dial(ctx, spec, root, opts)
	}
	cmdline, why := spec.command(ctx)
	if cmdline == nil {
		if why != "" {
			why = " (" + why + ")"
		}
		return nil, fmt.Errorf("%s is not installed: none of %s works here%s; %s", spec.ID, commandNames(spec), why, spec.Install)
	}
	tmp, err := proc.TempDir("dap-")
	if err != nil {
		return nil, err
	}
	s := &Session{Spec: spec, root: root, guard: opts.Guard, tmp: tmp, changed: make(chan struct{}), bps: opts.Breakpoints}
	fail := func(err error) (*Session, error) {
		s.kill()
		os.RemoveAll(tmp)
		return nil, err
	}
	// failNote: the adapter is stopped first, so what it wrote is complete
	// at once (an adapter that hangs would otherwise be waited on).
	failNote := func(format string, args ...any) (*Session, error) {
		s.kill()
		os.RemoveAll(tmp)
		return nil, fmt.Errorf(format+"%s", append(args, s.exitNote())...)
	}
	var ln net.Listener
	if spec.Transport == UnixClient {
		sock := filepath.Join(tmp, "s")
		if ln, err = net.Listen("unix", sock); err != nil {
			return fail(err)
		}
		for i := range cmdline {
			cmdline[i] = strings.ReplaceAll(cmdline[i], "{addr}", "unix:"+sock)
		}
	}
	cmd := exec.Command(cmdline[0], cmdline[1:]...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PYTHONUNBUFFERED=1")
	popts := proc.Options{TailBytes: 8 << 10}
	if spec.Transport == Stdio {
		// DAP on stdin and stdout: our end of stdout is read to EOF, which
		// comes after the adapter's last message even when it exits at once.
		popts.PipeStdin, popts.PipeStdout = true, true
	} else {
		popts.TailStdout = true // dlv's own chatter; the program's output comes as events
	}
	p, err := proc.Start(cmd, popts)
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		return fail(fmt.Errorf("starting %s: %v", spec.ID, err))
	}
	s.p = p
	var rw io.ReadWriteCloser
	if spec.Transport == Stdio {
		rw = pipeRW{p.Stdout(), p.Stdin()}
	}
	if ln != nil {
		conn, err := accept(ctx, ln, p.Exited(), opts.startTimeout())
		ln.Close()
		if err != nil {
			return failNote("%s did not connect: %v", spec.ID, err)
		}
		rw = conn
	}
	return s.connect(ctx, rw, opts)
}

// dial connects to a listening adapter (debugpy.listen in the program).
func dial(ctx context.Context, spec AdapterSpec, root string, opts Options) (*Session, error) {
	s := &Session{Spec: spec, root: root, guard: opts.Guard, changed: make(chan struct{}), bps: opts.Breakpoints, attach: true}
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, opts.startTimeout())
	defer cancel()
	conn, err := d.DialContext(dctx, "tcp", opts.Dial)
	if err != nil {
		return nil, fmt.Errorf("nothing answers on %s: %v (the program must call debugpy.listen on that port)", opts.Dial, err)
	}
	return s.connect(ctx, conn, opts)
}

// connect starts the client on rw and initializes the adapter.
func (s *Session) connect(ctx context.Context, rw io.ReadWriteCloser, opts Options) (*Session, error) {
	spec := s.Spec
	fail := func(format string, args ...any) (*Session, error) {
		if s.client != nil {
			s.client.Close()
		}
		s.kill()
		if s.tmp != "" {
			os.RemoveAll(s.tmp)
		}
		return nil, fmt.Errorf(format+"%s", append(args, s.exitNote())...)
	}
	s.client = NewClient(rw)
	s.client.OnEvent = s.event
	s.client.Start()
	go s.watch()

	var caps capabilities
	init := map[string]any{
		"clientID": "builtin-tools", "clientName": "builtin-tools", "adapterID": spec.ID, "locale": "en",
		"pathFormat": "path", "linesStartAt1": true, "columnsStartAt1": true,
		"supportsVariableType": true, "supportsRunInTerminalRequest": false,
	}
	ictx, cancel := context.WithTimeout(ctx, opts.startTimeout())
	defer cancel()
	if err := s.client.Call(ictx, "initialize", init, &caps); err != nil {
		if ictx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("no answer within %s", opts.startTimeout())
		}
		return fail("%s failed to initialize: %v", spec.ID, err)
	}
	s.caps = caps
	ttl := opts.TTL
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	s.Started = time.Now()
	s.Deadline = s.Started.Add(ttl)
	return s, nil
}

func commandNames(a AdapterSpec) string {
	var names []string
	for _, c := range a.Commands {
		names = append(names, c[0])
	}
	return strings.Join(names, ", ")
}

// exitNote is stderrNote for an adapter that failed to start: its error
// output is complete only once it has exited (the connection can close
// first), so it waits for that, briefly.
func (s *Session) exitNote() string {
	if s.p != nil {
		select {
		case <-s.p.Done():
		case <-time.After(time.Second):
		}
	}
	return s.stderrNote()
}

// stderrNote is how the adapter ended, when it did, and the end of what it
// wrote to stderr.
func (s *Session) stderrNote() string {
	if s.p == nil {
		return ""
	}
	note := ""
	if st := s.p.ExitStatus(); st != "" && !s.p.StoppedByUs() {
		note = " (" + st + ")"
	}
	if t := s.p.Tail().String(); t != "" {
		note += "; it said: " + lastLines(t, 5)
	}
	return note
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

func accept(ctx context.Context, ln net.Listener, exited <-chan struct{}, d time.Duration) (net.Conn, error) {
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() { c, err := ln.Accept(); ch <- res{c, err} }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case r := <-ch:
		return r.c, r.err
	case <-exited:
		return nil, errors.New("it exited")
	case <-t.C:
		return nil, fmt.Errorf("no connection within %s", d)
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

type pipeRW struct {
	io.ReadCloser
	w io.WriteCloser
}

func (p pipeRW) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p pipeRW) Close() error {
	p.w.Close()
	return p.ReadCloser.Close()
}

// watch ends the session when the adapter goes away on its own: once its
// connection has been read to the end, so that the events it sent last
// (the program's exit) count.
func (s *Session) watch() {
	var exited <-chan struct{} // a dialled adapter: only its connection tells
	if s.p != nil {
		exited = s.p.Exited()
	}
	select {
	case <-s.client.Done():
	case <-exited:
		// What it wrote is still in the pipe or the socket; the pipe ends
		// (proc closes it after Drain) even if a process it left holds it.
		t := time.NewTimer(3 * time.Second)
		select {
		case <-s.client.Done():
		case <-t.C:
		}
		t.Stop()
	}
	if s.p != nil {
		select {
		case <-s.p.Done(): // its stderr, complete
		case <-time.After(time.Second):
		}
	}
	s.mu.Lock()
	over := s.exitCode != nil || s.terminated
	s.mu.Unlock()
	if over {
		s.end(fmt.Sprintf("the program ended and the %s adapter exited", s.Spec.ID))
		return
	}
	s.end(fmt.Sprintf("the %s adapter exited unexpectedly%s", s.Spec.ID, s.stderrNote()))
}

// DefaultTTL is a session's hard time limit.
const DefaultTTL = 30 * time.Minute

// event updates the session's state; it runs on the client's reader.
func (s *Session) event(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e.Name {
	case "stopped":
		var b godap.StoppedEventBody
		json.Unmarshal(e.Body, &b)
		s.lastStopped = e.At
		if s.pausing && b.Reason == "exception" && strings.Contains(b.Description+" "+b.Text, "SIGSTOP") {
			// lldb-dap pauses with SIGSTOP and reports the signal as an
			// exception: it is the pause we asked for.
			b.Reason, b.Description, b.Text = "pause", "", ""
		}
		if b.Reason == "breakpoint" && strings.HasPrefix(b.Description, "watchpoint") {
			// lldb-dap's watchpoint stop.
			b.Reason = "data breakpoint"
		}
		if s.core != "" {
			// The crash a core holds. delve, opening one, tries to run it and
			// reports that it cannot: its own attempt, not the crash.
			b.Reason = "crash"
			if strings.Contains(b.Text, "can not continue execution of core process") {
				b.Description, b.Text = "", ""
			}
		}
		st := &Stop{Reason: b.Reason, Description: b.Description, Text: b.Text, ThreadID: b.ThreadId, At: e.At, adapterBPs: b.HitBreakpointIds}
		if !s.running && len(s.stops) > s.resumed {
			// A burst: lldb-dap sends one stopped event per thread. Keep one
			// stop, focused on the thread with the most telling reason.
			cur := s.stops[len(s.stops)-1]
			if rank(st.Reason) > rank(cur.Reason) {
				st.N = cur.N
				s.stops[len(s.stops)-1] = st
			}
			break
		}
		st.N = len(s.stops) + 1
		s.stops = append(s.stops, st)
		s.running = false
	case "continued":
		s.running = true
		s.resumed = len(s.stops)
		s.pausing = false
	case "exited":
		var b godap.ExitedEventBody
		json.Unmarshal(e.Body, &b)
		code := b.ExitCode
		s.exitCode = &code
		s.running = false
	case "terminated":
		s.terminated = true
		s.running = false
	case "output":
		var b godap.OutputEventBody
		json.Unmarshal(e.Body, &b)
		switch {
		case b.Category == "telemetry":
		case !s.configured:
			// Before configurationDone the program has not run: this is
			// the adapter talking ("Building …", a compiler's errors),
			// kept for a launch that fails.
			if len(s.launchOut) < 16<<10 {
				s.launchOut += b.Output
			}
		case b.Category == "console" && slices.Contains(s.Spec.Banners, b.Output):
		default:
			s.out.add(b.Output)
		}
		return // output changes no state a waiter looks at
	case "process":
		var b godap.ProcessEventBody
		json.Unmarshal(e.Body, &b)
		if s.core != "" {
			break // the crashed process's id: long gone, and never ours to end
		}
		if b.SystemProcessId > 0 && (s.pid == 0 || !s.attach) {
			s.pid = b.SystemProcessId
		}
		if b.SystemProcessId > 0 && !s.attach {
			// A group of the program's own, ours to end; never one of a
			// program we attached to.
			if pg, err := syscall.Getpgid(b.SystemProcessId); err == nil && pg != syscall.Getpgrp() && pg > 1 {
				if s.pgid > 0 && s.pgid != pg {
					proc.Untrack(s.pgid) // the program before an adapter's restart
				}
				s.pgid = pg
				proc.Track(pg) // killed even if this process dies first
			}
		}
	case "breakpoint":
		var b godap.BreakpointEventBody
		json.Unmarshal(e.Body, &b)
		if s.bps != nil {
			s.bps.update(b.Breakpoint)
		}
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

// call sends a request and waits for its response. When the adapter went
// away meanwhile, the error says how the session ended.
func (s *Session) call(ctx context.Context, command string, args, body any) error {
	err := s.client.Call(ctx, command, args, body)
	if err != nil && errors.Is(err, ErrClosed) {
		return s.closedError()
	}
	return err
}

// closedError waits (bounded) until the session's end has a reason (watch
// gives it once the connection is read to the end) and says it.
func (s *Session) closedError() error {
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ended, changed := s.ended, s.changed
		s.mu.Unlock()
		if ended != "" {
			return noSession("the debug session ended: %s", ended)
		}
		select {
		case <-changed:
		case <-deadline.C:
			return fmt.Errorf("%w%s", ErrClosed, s.stderrNote())
		}
	}
}

// bounded sends a request that runs code in the program (evaluate,
// setVariable, setExpression) and waits at most d for its answer. Past d
// it sends pause and waits a moment more (at most half of d, so the call
// ends well within twice it): late says so. still: it has not answered
// even then, and is recorded as what (busy) until it does, so that the
// next such request is refused at once instead of queueing behind it.
func (s *Session) bounded(ctx context.Context, st *Stop, command string, args, body any, d time.Duration, what string) (late, still bool, err error) {
	p, err := s.client.Send(command, args)
	if err != nil {
		return false, false, s.closedError()
	}
	wctx, cancel := context.WithTimeout(ctx, d)
	err = p.Wait(wctx, body)
	late = err != nil && wctx.Err() != nil && ctx.Err() == nil
	cancel()
	if !late {
		return false, false, err
	}
	pctx, cancel := context.WithTimeout(ctx, min(2*time.Second, d/2))
	defer cancel()
	if perr := s.call(pctx, "pause", map[string]any{"threadId": st.ThreadID}, nil); perr == nil {
		err = p.Wait(pctx, body)
	}
	if err != nil && pctx.Err() != nil && ctx.Err() == nil {
		s.mu.Lock()
		s.busy, s.busySince = what, time.Now()
		s.mu.Unlock()
		go func() {
			p.Wait(context.Background(), nil) // the answer, or the connection's end
			s.mu.Lock()
			s.busy = ""
			s.mu.Unlock()
		}()
		return true, true, err
	}
	return true, false, err
}

// evaluating says which evaluate or set_variable still runs, "" when
// none.
func (s *Session) evaluating() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy == "" {
		return ""
	}
	return fmt.Sprintf("an earlier %s still runs inside the program, for %s now", s.busy, time.Since(s.busySince).Round(time.Second))
}

// settle waits, for an adapter that sends one stopped event per thread,
// until the burst is over: no stopped event for burstQuiet, at most
// burstMax after the first.
func (s *Session) settle() {
	if !s.Spec.StopBursts {
		return
	}
	t0 := time.Now()
	for time.Since(t0) < burstMax {
		s.mu.Lock()
		wait := burstQuiet - time.Since(s.lastStopped)
		s.mu.Unlock()
		if wait <= 0 {
			return
		}
		time.Sleep(wait)
	}
}

const (
	burstQuiet = 50 * time.Millisecond
	burstMax   = 500 * time.Millisecond
)

// rank orders stop reasons by how much they say, for merging bursts.
func rank(reason string) int {
	switch reason {
	case "exception", "panic":
		return 4
	case "breakpoint", "function breakpoint", "data breakpoint", "instruction breakpoint":
		return 3
	case "step", "goto":
		return 2
	case "entry":
		return 1
	}
	return 0
}

// launch runs the handshake that works for every adapter order: launch
// sent without waiting; initialized awaited (before or after the launch
// response); breakpoints and exception filters; configurationDone; then
// the launch response.
func (s *Session) launch(ctx context.Context, l LaunchSpec, args map[string]any, command string, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// initialized may already have come, right after the initialize
	// response: wait for it from the start of the connection.
	const after = 0
	t0 := time.Now()
	p, err := s.client.Send(command, args)
	if err != nil {
		return err
	}
	resp := make(chan error, 1)
	go func() { resp <- p.Wait(ctx, nil) }()
	initialized := make(chan error, 1)
	go func() { _, err := s.client.WaitEvent(ctx, after, "initialized"); initialized <- err }()
	var respErr error
	gotResp := false
	select {
	case err := <-initialized:
		if err != nil {
			return s.launchError(command, err)
		}
	case respErr = <-resp:
		gotResp = true
		if respErr != nil {
			return s.launchError(command, respErr)
		}
		if err := <-initialized; err != nil {
			return s.launchError(command, err)
		}
	}
	tInit := time.Now()
	if s.Spec.ID == "delve" && command == "launch" {
		s.BuildTime = tInit.Sub(t0)
	}
	if s.core != "" {
		// Nothing runs in a core: no breakpoint or filter could be hit.
		goto configured
	}
	if s.bps != nil {
		for _, file := range s.bps.files() {
			if err := s.setBreakpoints(ctx, file); err != nil {
				return err
			}
		}
	}
	if s.bps != nil && len(s.bps.Funcs()) > 0 {
		// None set: nothing to send (a launch's handshake stays as short).
		if err := s.setFunctionBreakpoints(ctx); err != nil {
			return err
		}
	}
	if err := s.setExceptions(ctx); err != nil {
		return err
	}
configured:
	s.mu.Lock()
	s.configured = true
	s.mu.Unlock()
	if err := s.client.Call(ctx, "configurationDone", nil, nil); err != nil {
		return s.launchError(command, err)
	}
	if !gotResp {
		if err := <-resp; err != nil {
			return s.launchError(command, err)
		}
	}
	s.StartTime = time.Since(tInit)
	return nil
}

// gdbCannotInject is what gdb prints when ptrace cannot write a process's
// extended register state (some kernels and virtual machines): it cannot
// call a function in the process, which debugpy's attach by pid needs.
const gdbCannotInject = "Couldn't write extended state status"

func (s *Session) launchError(command string, err error) error {
	var re *ResponseError
	if errors.As(err, &re) {
		msg := re.Detail
		if msg == "" {
			msg = re.Message
		}
		s.mu.Lock()
		said := strings.TrimSpace(s.launchOut)
		s.mu.Unlock()
		if s.Spec.ID == "debugpy" && command == "attach" && strings.Contains(msg+said, gdbCannotInject) {
			// Before the adapter's long log, which the output budget may cut.
			msg += "\n(gdb on this machine cannot run code inside another process: the kernel refused to write the process's extended register state, so debugpy cannot inject itself by pid, and the attempt may have disturbed the program. Start the program under debugpy instead — python -m debugpy --listen 5678 --wait-for-client prog.py, or debugpy.listen() in it — and attach with port, or use launch.)"
		}
		if said != "" {
			msg += "\n" + said
		}
		return fmt.Errorf("%s refused the %s: %s", s.Spec.ID, command, msg)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		s.quiet.Store(true)
		return fmt.Errorf("%s did not finish the %s in time%s", s.Spec.ID, command, s.stderrNote())
	}
	return fmt.Errorf("%s: %v%s", command, err, s.stderrNote())
}

// setExceptions sends the exception filters the session's kinds and
// names resolve to, against the filters the adapter offers.
func (s *Session) setExceptions(ctx context.Context) error {
	offered := make([]string, 0, len(s.caps.ExceptionBreakpointFilters))
	for _, f := range s.caps.ExceptionBreakpointFilters {
		offered = append(offered, f.Filter)
	}
	filters, err := resolveExceptions(s.Spec, offered, s.exceptions)
	if err != nil {
		return err
	}
	s.filters = filters
	if len(offered) == 0 || (len(filters) == 0 && s.Spec.ID == "lldb") {
		// lldb-dap 19 given no filters leaves a launched program held in
		// the dynamic loader's rendezvous (a pause finds it there).
		return nil
	}
	return s.client.Call(ctx, "setExceptionBreakpoints", map[string]any{"filters": filters}, nil)
}

// setBreakpoints sends the whole, merged list of one file's breakpoints:
// DAP's request replaces the file's list, so it always carries all of them.
func (s *Session) setBreakpoints(ctx context.Context, file string) error {
	bps := s.bps.inFile(file)
	list := make([]map[string]any, 0, len(bps))
	for _, b := range bps {
		m := map[string]any{"line": b.Line}
		if b.Condition != "" && s.caps.SupportsConditionalBreakpoints {
			m["condition"] = b.Condition
		}
		if b.HitCondition != "" && s.caps.SupportsHitConditionalBreakpoints {
			m["hitCondition"] = b.HitCondition
		}
		if b.LogMessage != "" && s.caps.SupportsLogPoints {
			m["logMessage"] = b.LogMessage
		}
		list = append(list, m)
	}
	var body godap.SetBreakpointsResponseBody
	err := s.client.Call(ctx, "setBreakpoints", map[string]any{
		"source":      map[string]any{"path": filepath.Join(s.root, filepath.FromSlash(file)), "name": filepath.Base(file)},
		"breakpoints": list, "lines": linesOf(bps),
	}, &body)
	if err != nil {
		return fmt.Errorf("setting breakpoints in %s: %v", file, err)
	}
	s.bps.bound(file, body.Breakpoints, s.caps)
	return nil
}

func linesOf(bps []*Breakpoint) []int {
	out := make([]int, len(bps))
	for i, b := range bps {
		out[i] = b.Line
	}
	return out
}

// Ended reports why the session ended, "" while it lives.
func (s *Session) Ended() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}

// end tears the session down once, whatever ended it: disconnect (with
// terminateDebuggee for a program we launched; an attached one is
// detached from), then the adapter's process group, then the program's
// (from the process event), then the session's folder (delve's build
// output, the socket).
func (s *Session) end(reason string) { s.finish(reason, !s.attach && s.core == "") }

// finish is end, with terminateDebuggee chosen: true also ends an
// attached program.
func (s *Session) finish(reason string, terminateDebuggee bool) {
	s.endOnce.Do(func() {
		s.mu.Lock()
		s.ended = reason
		s.running = false
		pgid := s.pgid
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()
		if s.client != nil && s.client.Err() == nil {
			if !s.quiet.Load() {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				s.client.Call(ctx, "disconnect", map[string]any{"terminateDebuggee": terminateDebuggee, "restart": false}, nil)
				cancel()
			}
			s.client.Close()
		}
		s.kill()
		if pgid > 0 {
			proc.Untrack(pgid)
		}
		if s.tmp != "" {
			os.RemoveAll(s.tmp)
		}
		for _, f := range s.held {
			f.Close()
		}
		if s.stopTimer != nil {
			s.stopTimer()
		}
	})
}

// kill stops the adapter's process group, and every process that carries
// its environment tag, and waits for it, bounded.
func (s *Session) kill() {
	if s.p != nil {
		s.p.Kill()
	}
}

// PID is the debuggee's process id, 0 before the process event.
func (s *Session) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pid
}

// AdapterPID is the adapter's process id, 0 for one we dialled.
func (s *Session) AdapterPID() int {
	if s.p == nil {
		return 0
	}
	return s.p.Pid()
}

// newOutput returns the program's output no result has shown yet, at most
// limit bytes, oldest first: what stop results left out for room, then
// what came after the last result; how many such bytes were dropped for
// room; and how many are left for the next call.
func (s *Session) newOutput(limit int) (text string, skipped int64, more int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := &s.out
	end := o.dropped + int64(len(o.data))
	skipped, o.lost = o.lost, 0
	pieces := append(slices.Clone(o.gaps), span{o.shown, end})
	var b []byte
	at := int64(-1) // where the last piece taken ended
	taken := 0      // pieces taken whole
	for i, p := range pieces {
		if p.from < o.dropped {
			skipped += min(o.dropped, p.to) - p.from
			p.from = min(o.dropped, p.to)
		}
		if p.from >= p.to {
			taken = i + 1
			continue
		}
		if at >= 0 && p.from != at {
			b = append(b, "\n[… output shown in an earlier result …]\n"...)
		}
		room := int64(limit - len(b))
		cut := min(p.to, p.from+max(room, 0))
		for cut > p.from && cut < p.to && o.data[cut-o.dropped]&0xC0 == 0x80 {
			cut-- // at a character
		}
		b = append(b, o.data[p.from-o.dropped:cut-o.dropped]...)
		at = cut
		if cut < p.to {
			pieces[i].from = cut
			break
		}
		taken = i + 1
	}
	rest := pieces[taken:]
	if len(rest) == 0 {
		o.gaps, o.shown = o.gaps[:0], end
	} else {
		// The last piece is the new output; what is left of it starts
		// at shown.
		o.shown = rest[len(rest)-1].from
		o.gaps = slices.Clone(rest[:len(rest)-1])
		for _, p := range rest {
			more += int(p.to - max(p.from, o.dropped))
		}
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD"))), skipped, more
}
