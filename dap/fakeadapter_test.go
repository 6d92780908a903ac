package dap

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	godap "github.com/google/go-dap"

	"github.com/builtin-tools/builtin-tools/dap/adapter"
	"github.com/builtin-tools/builtin-tools/dap/result"
	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// A scripted debug adapter plays one of the scripts below, so the
// orderings Session handles are pinned with no adapter installed. It runs
// as a process (fakeProcess: the test binary run again with fakeEnv set,
// speaking DAP on its stdin and stdout), for what only a process shows (how
// it dies, what it wrote to stderr, its last events before it exits); or
// in this process over net.Pipe (fakeHere), for the tests on
// testing/synctest's clock, which stands still while a goroutine waits on a
// real pipe.

const fakeEnv = "BUILTIN_TOOLS_DAP_FAKE"

func TestMain(m *testing.M) {
	if arg := os.Getenv(killedEnv); arg != "" {
		debugUntilKilled(arg)
		os.Exit(0)
	}
	if adapter := os.Getenv(attachSelfEnv); adapter != "" {
		attachSelf(adapter)
		os.Exit(0)
	}
	if name := os.Getenv(fakeEnv); name != "" {
		sc, ok := scripts[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "no script %q\n", name)
			os.Exit(2)
		}
		(&fake{sc: sc, r: bufio.NewReader(os.Stdin), w: os.Stdout, exit: os.Exit}).serve()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// script is how the fake adapter behaves.
type script struct {
	early       bool   // initialized before launch is sent (it comes ahead of the initialize response)
	deferLaunch bool   // the launch answered only after configurationDone (debugpy)
	threads     int    // a stop is one stopped event per thread (lldb-dap); the breakpoint is on the last
	stops       int    // times the program stops before it exits
	dieOn       string // a request the adapter dies on, saying why on stderr
	exitCode    int
	atOnce      bool // after its last event the adapter exits, not waiting for disconnect
	flood       int  // lines of 1,000 bytes the program prints right before it ends
	hangEval    bool // an evaluate is never answered
	forever     bool // once its stops are over the program runs on (until a pause stops it): no exit
	mute        bool // nothing is ever answered
	hangLaunch  bool // launch is never answered, and initialized never sent
	// reasons are the stops' reasons in turn (default breakpoint), and
	// memory what a watchpoint's memory reads at each (delve's form).
	reasons, memory []string
	watch           bool // supportsDataBreakpoints
}

var scripts = map[string]script{
	"delve":       {stops: 2},
	"debugpy":     {deferLaunch: true, stops: 1},
	"early":       {early: true, stops: 1},
	"lldb-burst":  {threads: 4, stops: 2},
	"dies":        {stops: 1, dieOn: "evaluate"},
	"last-words":  {exitCode: 7, atOnce: true, flood: 2000},
	"hang-eval":   {stops: 1, hangEval: true},
	"forever":     {forever: true},
	"mute":        {mute: true},
	"hang-launch": {hangLaunch: true},
	// delve with a watchpoint: a stop where the watched memory changed,
	// then one labelled a data breakpoint where nothing changed.
	"watch": {stops: 3, watch: true, reasons: []string{"breakpoint", "data breakpoint", "data breakpoint"}, memory: []string{"[1 0]", "[2 0]", "[2 0]"}},
}

// fakeSource is the file the fake's frames are in, in the root.
const fakeSource = "prog.c"

type fake struct {
	sc      script
	r       *bufio.Reader
	w       io.Writer
	exit    func(code int)  // the adapter ends; it does not return
	hold    <-chan struct{} // initialize is answered once this is closed (nil: at once)
	seq     int
	launch  *godap.Request // a deferred launch
	left    int            // stops still to come
	running bool           // the program runs on, forever, until a pause
}

func (f *fake) write(m any) {
	b, _ := json.Marshal(m)
	if err := godap.WriteBaseMessage(f.w, b); err != nil {
		f.exit(3)
	}
}

func (f *fake) message(typ string) godap.ProtocolMessage {
	f.seq++
	return godap.ProtocolMessage{Seq: f.seq, Type: typ}
}

func (f *fake) reply(req *godap.Request, body any) {
	f.write(struct {
		godap.Response
		Body any `json:"body,omitempty"`
	}{godap.Response{ProtocolMessage: f.message("response"), RequestSeq: req.Seq, Success: true, Command: req.Command}, body})
}

func (f *fake) event(name string, body any) {
	f.write(struct {
		godap.Event
		Body any `json:"body,omitempty"`
	}{godap.Event{ProtocolMessage: f.message("event"), Event: name}, body})
}

// stop sends one stop: one event, or a burst of one per thread.
func (f *fake) stop() {
	f.left--
	n := max(f.sc.threads, 1)
	for t := 1; t <= n; t++ {
		reason := "breakpoint"
		if i := f.sc.stops - f.left - 1; i < len(f.sc.reasons) {
			reason = f.sc.reasons[i]
		}
		if t < n {
			reason = "trace" // lldb-dap's other threads
		}
		f.event("stopped", godap.StoppedEventBody{Reason: reason, ThreadId: t, AllThreadsStopped: true})
	}
}

// run lets the program go on: its next stop, or its end.
func (f *fake) run() {
	if f.left > 0 {
		f.stop()
		return
	}
	if f.sc.forever {
		f.running = true
		return
	}
	line := strings.Repeat("x", 999) + "\n"
	for range f.sc.flood {
		f.event("output", godap.OutputEventBody{Category: "stdout", Output: line})
	}
	f.event("output", godap.OutputEventBody{Category: "stdout", Output: "last words\n"})
	f.event("exited", godap.ExitedEventBody{ExitCode: f.sc.exitCode})
	f.event("terminated", nil)
	if f.sc.atOnce {
		f.exit(0)
	}
}

func (f *fake) serve() {
	f.left = f.sc.stops
	cwd, _ := os.Getwd()
	for {
		m, err := godap.ReadProtocolMessage(f.r)
		if err != nil {
			return
		}
		rm, ok := m.(godap.RequestMessage)
		if !ok {
			continue
		}
		req := rm.GetRequest()
		if f.sc.mute || (f.sc.hangLaunch && req.Command == "launch") {
			continue
		}
		if req.Command == f.sc.dieOn {
			fmt.Fprintln(os.Stderr, "fake adapter: assertion failed in", req.Command)
			f.exit(134)
		}
		switch m := m.(type) {
		case *godap.InitializeRequest:
			if f.hold != nil {
				<-f.hold
			}
			if f.sc.early {
				f.event("initialized", nil)
			}
			f.reply(req, godap.Capabilities{SupportsConfigurationDoneRequest: true, SupportsConditionalBreakpoints: true, SupportsDataBreakpoints: f.sc.watch})
		case *godap.LaunchRequest:
			if f.sc.deferLaunch {
				f.launch = req
			} else {
				f.reply(req, nil)
			}
			if !f.sc.early {
				f.event("initialized", nil)
			}
		case *godap.SetBreakpointsRequest:
			var bps []godap.Breakpoint
			for i, b := range m.Arguments.Breakpoints {
				bps = append(bps, godap.Breakpoint{Id: i + 1, Verified: true, Line: b.Line})
			}
			f.reply(req, godap.SetBreakpointsResponseBody{Breakpoints: bps})
		case *godap.ConfigurationDoneRequest:
			f.reply(req, nil)
			if f.launch != nil {
				f.reply(f.launch, nil)
				f.launch = nil
			}
			f.run()
		case *godap.ContinueRequest:
			f.reply(req, godap.ContinueResponseBody{AllThreadsContinued: true})
			f.run()
		case *godap.PauseRequest:
			f.reply(req, nil)
			if f.running {
				f.running = false
				f.event("stopped", godap.StoppedEventBody{Reason: "pause", ThreadId: 1, AllThreadsStopped: true})
			}
		case *godap.NextRequest:
			f.reply(req, nil)
			f.event("stopped", godap.StoppedEventBody{Reason: "step", ThreadId: m.Arguments.ThreadId, AllThreadsStopped: true})
		case *godap.StackTraceRequest:
			f.reply(req, godap.StackTraceResponseBody{TotalFrames: 1, StackFrames: []godap.StackFrame{
				{Id: 1000 + m.Arguments.ThreadId, Name: "main", Line: 3, Source: &godap.Source{Path: filepath.Join(cwd, fakeSource)}}}})
		case *godap.ScopesRequest:
			f.reply(req, godap.ScopesResponseBody{Scopes: []godap.Scope{{Name: "Locals", VariablesReference: 7}}})
		case *godap.VariablesRequest:
			f.reply(req, godap.VariablesResponseBody{Variables: []godap.Variable{{Name: "n", Value: "3", Type: "int"}}})
		case *godap.ThreadsRequest:
			var ts []godap.Thread
			for t := 1; t <= max(f.sc.threads, 1); t++ {
				ts = append(ts, godap.Thread{Id: t, Name: fmt.Sprintf("worker (Thread %d)", t)})
			}
			f.reply(req, godap.ThreadsResponseBody{Threads: ts})
		case *godap.EvaluateRequest:
			if f.sc.hangEval {
				continue
			}
			if i := f.sc.stops - f.left - 1; strings.HasPrefix(m.Arguments.Expression, "*(*[") && i >= 0 && i < len(f.sc.memory) {
				f.reply(req, godap.EvaluateResponseBody{Result: f.sc.memory[i]})
				continue
			}
			f.reply(req, godap.EvaluateResponseBody{Result: "42", Type: "int"})
		case *godap.DataBreakpointInfoRequest:
			f.reply(req, godap.DataBreakpointInfoResponseBody{DataId: "1,0,*(*[2]byte)(0xc000012345)", Description: m.Arguments.Name, AccessTypes: []godap.DataBreakpointAccessType{"write"}})
		case *godap.SetDataBreakpointsRequest:
			var bps []godap.Breakpoint
			for i := range m.Arguments.Breakpoints {
				bps = append(bps, godap.Breakpoint{Id: 100 + i, Verified: true})
			}
			f.reply(req, godap.SetDataBreakpointsResponseBody{Breakpoints: bps})
		case *godap.DisconnectRequest:
			f.reply(req, nil)
			f.exit(0)
		default:
			f.reply(req, nil)
		}
	}
}

// fakeProcess adds the scripted adapter playing name, run as a process of
// its own, to the table, as adapter "fake", for the test's length; it
// returns a supervisor over a fakeRoot, and that root.
func fakeProcess(t *testing.T, name string) (*Supervisor, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	adapter.Table = append(adapter.Table, adapter.Spec{ID: "fake", Language: "test",
		Commands: [][]string{{"/usr/bin/env", fakeEnv + "=" + name, exe}}, Transport: adapter.Stdio, ExprContext: "repl",
		StopBursts: scripts[name].threads > 1, Adapter: scripted{}})
	t.Cleanup(func() { adapter.Table = adapter.Table[:len(adapter.Table)-1] })
	root := fakeRoot(t)
	return newSupervisor(t, root, Config{}), root
}

// scripted is the fake adapter's Adapter: the common behaviour.
type scripted struct{ adapter.Generic }

// fakeHere adds the scripted adapter playing name to the table, as adapter
// "fake", served in this process (see here), for the test's length. With
// hold set, initialize is answered once it is closed.
func fakeHere(t *testing.T, name string, hold <-chan struct{}) *here {
	t.Helper()
	h := &here{sc: scripts[name], hold: hold}
	adapter.Table = append(adapter.Table, adapter.Spec{ID: "fake", Language: "test", Transport: adapter.Stdio, ExprContext: "repl",
		StopBursts: scripts[name].threads > 1, Adapter: h})
	t.Cleanup(func() { adapter.Table = adapter.Table[:len(adapter.Table)-1] })
	return h
}

// launchHere launches the scripted adapter playing name, served in this
// process, under a supervisor with cfg; the launch waits at most wait.
func launchHere(t *testing.T, name string, cfg Config, wait time.Duration) (*Supervisor, *result.StopResult) {
	t.Helper()
	fakeHere(t, name, nil)
	root := fakeRoot(t)
	s := newSupervisor(t, root, cfg)
	res, err := s.Launch(t.Context(), fakeLaunch(root), wait)
	if err != nil {
		t.Fatal(err)
	}
	return s, res
}

// here is the scripted adapter served in this process: each session gets
// a net.Pipe, and a goroutine plays the script on the other end; the
// adapter's exit ends that goroutine.
type here struct {
	scripted
	sc   script
	hold <-chan struct{}
	live atomic.Int32 // adapters serving a session
}

func (h *here) connect() io.ReadWriteCloser {
	ours, theirs := net.Pipe()
	exit := func(int) {
		theirs.Close()
		runtime.Goexit()
	}
	h.live.Add(1)
	go func() {
		defer h.live.Add(-1)
		(&fake{sc: h.sc, r: bufio.NewReader(theirs), w: theirs, exit: exit, hold: h.hold}).serve()
		theirs.Close()
	}()
	return ours
}

// bubble runs f on testing/synctest's clock (see fakeHere). What this
// process starts once and keeps (internal/proc's reaper and folder) is
// started first, outside the bubble, which waits for every goroutine
// started in it to end.
func bubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	dir, err := proc.TempDir("warm-")
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(dir)
	synctest.Test(t, f)
}

// fakeRoot is a root with the fake's source file.
func fakeRoot(t *testing.T) string {
	return testenv.Tree(t, map[string]string{fakeSource: "int main(void) {\n\tint n = 3;\n\treturn n;\n}\n"})
}
