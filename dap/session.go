package dap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	godap "github.com/google/go-dap"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/breakpoint"
	"github.com/builtin-tools/builtin-tools/dap/dapclient"
	"github.com/builtin-tools/builtin-tools/dap/progout"
	"github.com/builtin-tools/builtin-tools/dap/result"
	"github.com/builtin-tools/builtin-tools/dap/stack"
	"github.com/builtin-tools/builtin-tools/dap/watch"
	"github.com/builtin-tools/builtin-tools/internal/lifetime"
	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Session is one live debug session: an adapter process, its connection,
// and what the program did. Safe for concurrent use; actions that resume
// the program wait without a lock, so pause and terminate can interrupt.
type Session struct {
	Spec      adapter.Spec
	Program   string // as the agent named it
	Started   time.Time
	Deadline  time.Time
	BuildTime time.Duration // delve builds inside launch
	StartTime time.Duration // launch to configured, less the build

	root   string
	guard  *pathguard.Guard // confines every path the adapter sends back
	attach bool
	core   string        // the core file's absolute path, for a post-mortem session
	held   []*os.File    // files checked and handed to the adapter by descriptor
	p      *proc.Process // the adapter; nil for one we dialled
	tmp    string        // the session's folder: delve's build, the socket
	client *dapclient.Client
	caps   capabilities
	// exceptions are the kinds and filter names asked for; filters what
	// was sent for them.
	exceptions, filters []string
	endOnce             sync.Once
	stopTimer           func() bool
	// quiet: the adapter let a request run out its bound, so the teardown
	// does not wait on it for a disconnect answer.
	quiet atomic.Bool
	// stack reads the program where it stopped.
	stack stack.Reader

	// Each with a lock of its own: the program's output, the session's
	// data breakpoints, and an evaluate or set_variable that ran out of
	// time and still runs.
	out     progout.Buffer
	watches watch.Set
	busy    stillRunning
	// term is the launched program's terminal when the adapter's row asks
	// for one (adapter.Spec.OwnTerminal), closed at the session's end.
	term *progout.Terminal

	mu         sync.Mutex
	stops      []*stop
	running    bool
	resumed    int // stops before the last resume; a later stopped event is a new stop
	reported   int // the last stop a result showed
	exitCode   *int
	terminated bool
	ended      string // why the session ended, "" while it lives
	pid        int    // the debuggee's, from the process event
	pgid       int    // its process group, killed at the end
	bps        *breakpoint.Table
	changed    chan struct{}
	// lastStopped is when the last stopped event came, for adapters whose
	// stops come in bursts.
	lastStopped time.Time
	// target is the launch or attach; launched and launchCmd the request
	// sent for it.
	target    adapter.Target
	launched  any
	launchCmd string
	// runTo is a run_to_line waiting for its stop.
	runTo *runTo
	// pausing: a pause was sent and the program has not run since.
	pausing bool
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

// support is what the adapter supports of a breakpoint's settings.
func (c capabilities) support() breakpoint.Support {
	return breakpoint.Support{Condition: c.SupportsConditionalBreakpoints, HitCondition: c.SupportsHitConditionalBreakpoints, LogMessage: c.SupportsLogPoints}
}

// stop is a Stop with what the session keeps of it.
type stop struct {
	result.Stop
	adapterBPs []int // the adapter's ids of the breakpoints hit
	// shown is the frame the stop's result showed, which evaluate,
	// set_variable and watch default to; nil before it was shown. below:
	// it is not the top frame.
	shown *stack.Frame
	below bool
}

// Options bound a session.
type Options struct {
	TTL time.Duration
	// Guard confines every path the adapter sends back before it is read.
	Guard       *pathguard.Guard
	Breakpoints *breakpoint.Table
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

// inProcess is an Adapter served in this process: start connects to it
// instead of running a command. The tests' scripted adapter is one, so
// that a test on testing/synctest's clock waits on no real pipe (the
// clock stands still while a goroutine does).
type inProcess interface {
	connect() io.ReadWriteCloser
}

func newSession(spec adapter.Spec, root, tmp string, opts Options) *Session {
	sess := &Session{Spec: spec, root: root, guard: opts.Guard, tmp: tmp, changed: make(chan struct{}), bps: opts.Breakpoints}
	sess.stack = stack.Reader{Call: sess.call, Guard: opts.Guard, Spec: spec}
	return sess
}

// start runs the adapter and connects to it; tmp is the session's folder
// (the caller's to remove when start fails).
func start(ctx context.Context, spec adapter.Spec, root, tmp string, opts Options) (*Session, error) {
	if opts.Dial != "" {
		return dial(ctx, spec, root, tmp, opts)
	}
	if a, ok := spec.Adapter.(inProcess); ok {
		return newSession(spec, root, tmp, opts).connect(ctx, a.connect(), opts)
	}
	cmdline, why := spec.Command(ctx)
	if cmdline == nil {
		if why != "" {
			why = " (" + why + ")"
		}
		return nil, fmt.Errorf("%s is not installed: none of %s works here%s; %s", spec.ID, commandNames(spec), why, spec.Install)
	}
	sess := newSession(spec, root, tmp, opts)
	fail := func(err error) (*Session, error) {
		sess.kill()
		return nil, err
	}
	// failNote: the adapter is stopped first, so what it wrote is complete
	// at once (an adapter that hangs would otherwise be waited on).
	failNote := func(format string, args ...any) (*Session, error) {
		sess.kill()
		return nil, fmt.Errorf(format+"%s", append(args, sess.exitNote())...)
	}
	var (
		ln  net.Listener
		err error
	)
	if spec.Transport == adapter.UnixClient {
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
	if spec.Transport == adapter.Stdio {
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
	sess.p = p
	var rw io.ReadWriteCloser
	if spec.Transport == adapter.Stdio {
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
	return sess.connect(ctx, rw, opts)
}

// dial connects to a listening adapter (debugpy.listen in the program).
func dial(ctx context.Context, spec adapter.Spec, root, tmp string, opts Options) (*Session, error) {
	sess := newSession(spec, root, tmp, opts)
	sess.attach = true
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, opts.startTimeout())
	defer cancel()
	conn, err := d.DialContext(dctx, "tcp", opts.Dial)
	if err != nil {
		return nil, fmt.Errorf("nothing answers on %s: %v (the program must call debugpy.listen on that port)", opts.Dial, err)
	}
	return sess.connect(ctx, conn, opts)
}

// connect starts the client on rw and initializes the adapter.
func (sess *Session) connect(ctx context.Context, rw io.ReadWriteCloser, opts Options) (*Session, error) {
	spec := sess.Spec
	fail := func(format string, args ...any) (*Session, error) {
		if sess.client != nil {
			sess.client.Close()
		}
		sess.kill()
		return nil, fmt.Errorf(format+"%s", append(args, sess.exitNote())...)
	}
	sess.client = dapclient.New(rw)
	sess.client.OnEvent = sess.event
	sess.client.Start()
	go sess.watch()

	var caps capabilities
	init := map[string]any{
		"clientID": "builtin-tools", "clientName": "builtin-tools", "adapterID": spec.ID, "locale": "en",
		"pathFormat": "path", "linesStartAt1": true, "columnsStartAt1": true,
		"supportsVariableType": true, "supportsRunInTerminalRequest": false,
	}
	ictx, cancel := context.WithTimeout(ctx, opts.startTimeout())
	defer cancel()
	if err := sess.client.Call(ictx, "initialize", init, &caps); err != nil {
		if ictx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("no answer within %s", opts.startTimeout())
		}
		return fail("%s failed to initialize: %v", spec.ID, err)
	}
	sess.caps = caps
	ttl := opts.TTL
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	sess.Started = time.Now()
	sess.Deadline = sess.Started.Add(ttl)
	return sess, nil
}

func commandNames(a adapter.Spec) string {
	var names []string
	for _, c := range a.Commands {
		names = append(names, c[0])
	}
	return strings.Join(names, ", ")
}

// exitNote is stderrNote for an adapter that failed to start: its error
// output is complete only once it has exited (the connection can close
// first), so it waits for that, briefly.
func (sess *Session) exitNote() string {
	if sess.p != nil {
		lifetime.Await(context.Background(), sess.p.Done(), time.Second)
	}
	return sess.stderrNote()
}

// stderrNote is how the adapter ended, when it did, and the end of what it
// wrote to stderr.
func (sess *Session) stderrNote() string {
	if sess.p == nil {
		return ""
	}
	note := ""
	if st := sess.p.ExitStatus(); st != "" && !sess.p.StoppedByUs() {
		note = " (" + st + ")"
	}
	if t := sess.p.Tail().String(); t != "" {
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
func (sess *Session) watch() {
	var exited <-chan struct{} // a dialled adapter: only its connection tells
	if sess.p != nil {
		exited = sess.p.Exited()
	}
	select {
	case <-sess.client.Done():
	case <-exited:
		// What it wrote is still in the pipe or the socket; the pipe ends
		// (proc closes it after Drain) even if a process it left holds it.
		lifetime.Await(context.Background(), sess.client.Done(), 3*time.Second)
	}
	if sess.p != nil { // its stderr, complete
		lifetime.Await(context.Background(), sess.p.Done(), time.Second)
	}
	sess.mu.Lock()
	over := sess.exitCode != nil || sess.terminated
	sess.mu.Unlock()
	if over {
		sess.end(fmt.Sprintf("the program ended and the %s adapter exited", sess.Spec.ID))
		return
	}
	sess.end(fmt.Sprintf("the %s adapter exited unexpectedly%s", sess.Spec.ID, sess.stderrNote()))
}

// DefaultTTL is a session's hard time limit.
const DefaultTTL = 30 * time.Minute

// event updates the session's state; it runs on the client's reader.
func (sess *Session) event(e dapclient.Event) {
	if e.Name == "output" {
		var b godap.OutputEventBody
		json.Unmarshal(e.Body, &b)
		sess.out.Event(b, sess.Spec.Banners) // no state a waiter looks at
		return
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	switch e.Name {
	case "stopped":
		var b godap.StoppedEventBody
		json.Unmarshal(e.Body, &b)
		sess.lastStopped = e.At
		if sess.pausing && b.Reason == "exception" && strings.Contains(b.Description+" "+b.Text, "SIGSTOP") {
			// lldb-dap pauses with SIGSTOP and reports the signal as an
			// exception: it is the pause we asked for.
			b.Reason, b.Description, b.Text = "pause", "", ""
		}
		if b.Reason == "breakpoint" && strings.HasPrefix(b.Description, "watchpoint") {
			// lldb-dap's watchpoint stop.
			b.Reason = "data breakpoint"
		}
		if sess.core != "" {
			// The crash a core holds. delve, opening one, tries to run it and
			// reports that it cannot: its own attempt, not the crash.
			b.Reason = "crash"
			if strings.Contains(b.Text, "can not continue execution of core process") {
				b.Description, b.Text = "", ""
			}
		}
		st := &stop{Stop: result.Stop{Reason: b.Reason, Description: b.Description, Text: b.Text, ThreadID: b.ThreadId, At: e.At}, adapterBPs: b.HitBreakpointIds}
		if !sess.running && len(sess.stops) > sess.resumed {
			// A burst: lldb-dap sends one stopped event per thread. Keep one
			// stop, focused on the thread with the most telling reason.
			cur := sess.stops[len(sess.stops)-1]
			if rank(st.Reason) > rank(cur.Reason) {
				st.N = cur.N
				sess.stops[len(sess.stops)-1] = st
			}
			break
		}
		st.N = len(sess.stops) + 1
		sess.stops = append(sess.stops, st)
		sess.running = false
	case "continued":
		sess.running = true
		sess.resumed = len(sess.stops)
		sess.pausing = false
	case "exited":
		var b godap.ExitedEventBody
		json.Unmarshal(e.Body, &b)
		code := b.ExitCode
		sess.exitCode = &code
		sess.running = false
	case "terminated":
		sess.terminated = true
		sess.running = false
	case "process":
		var b godap.ProcessEventBody
		json.Unmarshal(e.Body, &b)
		if sess.core != "" {
			break // the crashed process's id: long gone, and never ours to end
		}
		if b.SystemProcessId > 0 && (sess.pid == 0 || !sess.attach) {
			sess.pid = b.SystemProcessId
		}
		if b.SystemProcessId > 0 && !sess.attach {
			// A group of the program's own, ours to end; never one of a
			// program we attached to.
			if pg, err := syscall.Getpgid(b.SystemProcessId); err == nil && pg != syscall.Getpgrp() && pg > 1 {
				if sess.pgid > 0 && sess.pgid != pg {
					proc.Untrack(sess.pgid) // the program before an adapter's restart
				}
				sess.pgid = pg
				proc.Track(pg) // killed even if this process dies first
			}
		}
	case "breakpoint":
		var b godap.BreakpointEventBody
		json.Unmarshal(e.Body, &b)
		if sess.bps != nil {
			sess.bps.Update(b.Breakpoint)
		}
	}
	close(sess.changed)
	sess.changed = make(chan struct{})
}

// call sends a request and waits for its response. When the adapter went
// away meanwhile, the error says how the session ended.
func (sess *Session) call(ctx context.Context, command string, args, body any) error {
	err := sess.client.Call(ctx, command, args, body)
	if err != nil && errors.Is(err, dapclient.ErrClosed) {
		return sess.closedError()
	}
	return err
}

// closedError waits (bounded) until the session's end has a reason (watch
// gives it once the connection is read to the end) and says it.
func (sess *Session) closedError() error {
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	for {
		sess.mu.Lock()
		ended, changed := sess.ended, sess.changed
		sess.mu.Unlock()
		if ended != "" {
			return noSession("the debug session ended: %s", ended)
		}
		select {
		case <-changed:
		case <-deadline.C:
			return fmt.Errorf("%w%s", dapclient.ErrClosed, sess.stderrNote())
		}
	}
}

// bounded sends a request that runs code in the program (evaluate,
// setVariable, setExpression) and waits at most d for its answer. Past d
// it sends pause and waits a moment more (at most half of d, so the call
// ends well within twice it): late says so. still: it has not answered
// even then, and is recorded as what (busy) until it does, so that the
// next such request is refused at once instead of queueing behind it.
func (sess *Session) bounded(ctx context.Context, st *stop, command string, args, body any, d time.Duration, what string) (late, still bool, err error) {
	p, err := sess.client.Send(command, args)
	if err != nil {
		return false, false, sess.closedError()
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
	if perr := sess.call(pctx, "pause", map[string]any{"threadId": st.ThreadID}, nil); perr == nil {
		err = p.Wait(pctx, body)
	}
	if err != nil && pctx.Err() != nil && ctx.Err() == nil {
		sess.busy.start(what)
		go func() {
			p.Wait(context.Background(), nil) // the answer, or the connection's end
			sess.busy.done()
		}()
		return true, true, err
	}
	return true, false, err
}

// stillRunning is a request that runs code in the program (evaluate,
// set_variable) and ran out of its bound: while it runs, the next such
// request is refused at once. Safe for concurrent use.
type stillRunning struct {
	mu    sync.Mutex
	what  string
	since time.Time
}

func (r *stillRunning) start(what string) {
	r.mu.Lock()
	r.what, r.since = what, time.Now()
	r.mu.Unlock()
}

func (r *stillRunning) done() {
	r.mu.Lock()
	r.what = ""
	r.mu.Unlock()
}

// note says which request still runs, "" when none.
func (r *stillRunning) note() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.what == "" {
		return ""
	}
	return fmt.Sprintf("an earlier %s still runs inside the program, for %s now", r.what, time.Since(r.since).Round(time.Second))
}

// settle waits, for an adapter that sends one stopped event per thread,
// until the burst is over: no stopped event for burstQuiet, at most
// burstMax after the first.
func (sess *Session) settle() {
	if !sess.Spec.StopBursts {
		return
	}
	t0 := time.Now()
	for time.Since(t0) < burstMax {
		sess.mu.Lock()
		wait := burstQuiet - time.Since(sess.lastStopped)
		sess.mu.Unlock()
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
func (sess *Session) launch(ctx context.Context, args any, command string, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// initialized may already have come, right after the initialize
	// response: wait for it from the start of the connection.
	const after = 0
	t0 := time.Now()
	p, err := sess.client.Send(command, args)
	if err != nil {
		return err
	}
	resp := make(chan error, 1)
	go func() { resp <- p.Wait(ctx, nil) }()
	initialized := make(chan error, 1)
	go func() { _, err := sess.client.WaitEvent(ctx, after, "initialized"); initialized <- err }()
	var respErr error
	gotResp := false
	select {
	case err := <-initialized:
		if err != nil {
			return sess.launchError(command, err)
		}
	case respErr = <-resp:
		gotResp = true
		if respErr != nil {
			return sess.launchError(command, respErr)
		}
		if err := <-initialized; err != nil {
			return sess.launchError(command, err)
		}
	}
	tInit := time.Now()
	if sess.Spec.BuildsInLaunch && command == "launch" {
		sess.BuildTime = tInit.Sub(t0)
	}
	if sess.core != "" {
		// Nothing runs in a core: no breakpoint or filter could be hit.
		goto configured
	}
	if sess.bps != nil {
		for _, file := range sess.bps.Files() {
			if err := sess.setBreakpoints(ctx, file); err != nil {
				return err
			}
		}
	}
	if sess.bps != nil && len(sess.bps.Funcs()) > 0 {
		// None set: nothing to send (a launch's handshake stays as short).
		if err := sess.setFunctionBreakpoints(ctx); err != nil {
			return err
		}
	}
	if err := sess.setExceptions(ctx); err != nil {
		return err
	}
configured:
	sess.out.Configure()
	if err := sess.client.Call(ctx, "configurationDone", nil, nil); err != nil {
		return sess.launchError(command, err)
	}
	if !gotResp {
		if err := <-resp; err != nil {
			return sess.launchError(command, err)
		}
	}
	sess.StartTime = time.Since(tInit)
	return nil
}

func (sess *Session) launchError(command string, err error) error {
	var re *dapclient.ResponseError
	if errors.As(err, &re) {
		msg := re.Said()
		said := sess.out.LaunchSaid()
		msg = sess.Spec.Adapter.Explain(command, msg, said)
		if said != "" {
			msg += "\n" + said
		}
		return fmt.Errorf("%s refused the %s: %s", sess.Spec.ID, command, msg)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		sess.quiet.Store(true)
		return fmt.Errorf("%s did not finish the %s in time%s", sess.Spec.ID, command, sess.stderrNote())
	}
	return fmt.Errorf("%s: %v%s", command, err, sess.stderrNote())
}

// setExceptions sends the exception filters the session's kinds and
// names resolve to, against the filters the adapter offers.
func (sess *Session) setExceptions(ctx context.Context) error {
	offered := make([]string, 0, len(sess.caps.ExceptionBreakpointFilters))
	for _, f := range sess.caps.ExceptionBreakpointFilters {
		offered = append(offered, f.Filter)
	}
	filters, err := sess.Spec.ResolveExceptions(offered, sess.exceptions)
	if err != nil {
		return err
	}
	sess.filters = filters
	if len(offered) == 0 || (len(filters) == 0 && sess.Spec.NoEmptyFilters) {
		return nil
	}
	return sess.client.Call(ctx, "setExceptionBreakpoints", map[string]any{"filters": filters}, nil)
}

// setBreakpoints sends the whole, merged list of one file's breakpoints:
// DAP's request replaces the file's list, so it always carries all of them.
func (sess *Session) setBreakpoints(ctx context.Context, file string) error {
	bps := sess.bps.InFile(file)
	list := make([]map[string]any, 0, len(bps))
	for _, b := range bps {
		m := map[string]any{"line": b.Line}
		if b.Condition != "" && sess.caps.SupportsConditionalBreakpoints {
			m["condition"] = b.Condition
		}
		if b.HitCondition != "" && sess.caps.SupportsHitConditionalBreakpoints {
			m["hitCondition"] = b.HitCondition
		}
		if b.LogMessage != "" && sess.caps.SupportsLogPoints {
			m["logMessage"] = b.LogMessage
		}
		list = append(list, m)
	}
	var body godap.SetBreakpointsResponseBody
	err := sess.client.Call(ctx, "setBreakpoints", map[string]any{
		"source":      map[string]any{"path": filepath.Join(sess.root, filepath.FromSlash(file)), "name": filepath.Base(file)},
		"breakpoints": list, "lines": linesOf(bps),
	}, &body)
	if err != nil {
		return fmt.Errorf("setting breakpoints in %s: %v", file, err)
	}
	sess.bps.Bound(file, body.Breakpoints, sess.caps.support())
	return nil
}

func linesOf(bps []*breakpoint.Source) []int {
	out := make([]int, len(bps))
	for i, b := range bps {
		out[i] = b.Line
	}
	return out
}

// Ended reports why the session ended, "" while it lives.
func (sess *Session) Ended() string {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.ended
}

// end tears the session down once, whatever ended it: disconnect (with
// terminateDebuggee for a program we launched; an attached one is
// detached from), then the adapter's process group, then the program's
// (from the process event), then the session's folder (delve's build
// output, the socket).
func (sess *Session) end(reason string) { sess.finish(reason, !sess.attach && sess.core == "") }

// finish is end, with terminateDebuggee chosen: true also ends an
// attached program.
func (sess *Session) finish(reason string, terminateDebuggee bool) {
	sess.endOnce.Do(func() {
		sess.mu.Lock()
		sess.ended = reason
		sess.running = false
		pgid := sess.pgid
		close(sess.changed)
		sess.changed = make(chan struct{})
		sess.mu.Unlock()
		if sess.client != nil && sess.client.Err() == nil {
			if !sess.quiet.Load() {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				sess.client.Call(ctx, "disconnect", map[string]any{"terminateDebuggee": terminateDebuggee, "restart": false}, nil)
				cancel()
			}
			sess.client.Close()
		}
		sess.kill()
		if pgid > 0 {
			proc.Untrack(pgid)
		}
		if sess.tmp != "" {
			os.RemoveAll(sess.tmp)
		}
		for _, f := range sess.held {
			f.Close()
		}
		sess.term.Close()
		if sess.stopTimer != nil {
			sess.stopTimer()
		}
	})
}

// kill stops the adapter's process group, and every process that carries
// its environment tag, and waits for it, bounded.
func (sess *Session) kill() {
	if sess.p != nil {
		sess.p.Kill()
	}
}

// PID is the debuggee's process id, 0 before the process event.
func (sess *Session) PID() int {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.pid
}

// AdapterPID is the adapter's process id, 0 for one we dialled.
func (sess *Session) AdapterPID() int {
	if sess.p == nil {
		return 0
	}
	return sess.p.Pid()
}

// Info says where the session stands.
func (sess *Session) Info() result.SessionInfo {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.infoLocked()
}

func (sess *Session) infoLocked() result.SessionInfo {
	info := result.SessionInfo{Adapter: sess.Spec.ID, Program: sess.Program, PID: sess.pid,
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
