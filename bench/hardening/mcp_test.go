//go:build hardening

package hardening

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// server is one `builtin-tools serve` process and a tiny MCP client for it:
// newline-delimited JSON-RPC, responses matched by id, any number of
// requests in flight.
type server struct {
	cmd      *exec.Cmd
	in       *os.File
	wmu      sync.Mutex
	mu       sync.Mutex
	pending  map[string]chan *msg
	nulls    chan *msg // responses with a null id
	next     atomic.Int64
	stderr   tailBuf
	readDone chan struct{}
	exited   chan struct{}
	state    *os.ProcessState
	inOnce   sync.Once
	// answer, when set, answers the server's requests to the client (an
	// elicitation); ok false answers "not supported".
	answer func(method string, params json.RawMessage) (result any, ok bool)
}

type msg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
	size   int             // bytes of the line
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

var errExited = errors.New("server exited")

func errNoAnswer(d time.Duration) error {
	return fmt.Errorf("no answer within %d s", int(d.Seconds()))
}

// startServe starts `bin serve --root root ARGS...` without initializing.
func (c *cx) startServe(root string, env []string, args ...string) (*server, error) {
	return c.startServeLimited(0, root, env, args...)
}

// startServeLimited is startServe with an address-space limit of asBytes
// (0: none) on serve and, inherited, on everything it starts, so that a
// memory blow-up ends in an allocation failure, not the host's OOM killer.
func (c *cx) startServeLimited(asBytes int64, root string, env []string, args ...string) (*server, error) {
	var prefix []string
	if asBytes > 0 {
		prefix = []string{"prlimit", fmt.Sprintf("--as=%d", asBytes), "--"}
	}
	return c.startServeVia(prefix, root, env, args...)
}

// startServeVia starts serve as the command prefix... runs it (nil: as
// the child of this process).
func (c *cx) startServeVia(prefix []string, root string, env []string, args ...string) (*server, error) {
	if env == nil {
		env = c.env()
	}
	argv := append(append(prefix[:len(prefix):len(prefix)], bin, "serve", "--root", root, "--graph-cache=", "--lsp-broker=false"), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = root
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, err
	}
	track(cmd.Process)
	s := &server{cmd: cmd, in: inW, pending: map[string]chan *msg{}, nulls: make(chan *msg, 64),
		readDone: make(chan struct{}), exited: make(chan struct{})}
	c.mu.Lock()
	c.servers = append(c.servers, s)
	c.mu.Unlock()
	go func() {
		io.Copy(&s.stderr, errR)
		errR.Close()
	}()
	go s.readLoop(outR)
	go func() {
		cmd.Wait()
		s.state = cmd.ProcessState
		untrack(cmd.Process)
		close(s.exited)
	}()
	c.logf("serve pid %d: %v", cmd.Process.Pid, argv[1:])
	return s, nil
}

// serve starts an initialized server with the default environment.
func (c *cx) serve(root string, args ...string) *server { return c.serveIn(0, root, nil, args...) }

// serveIn starts an initialized server in env (nil: the default), under an
// address-space limit of asBytes (0: none; see startServeLimited).
func (c *cx) serveIn(asBytes int64, root string, env []string, args ...string) *server {
	s, err := c.startServeLimited(asBytes, root, env, args...)
	check(err)
	check(s.initialize())
	return s
}

func (s *server) pid() int { return s.cmd.Process.Pid }

func (s *server) initialize() error { return s.initializeWith(map[string]any{}) }

// initializeWith initializes declaring the client capabilities caps
// (elicitation, for a case that answers approvals).
func (s *server) initializeWith(caps map[string]any) error {
	m, err := s.call("initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    caps,
		"clientInfo":      map[string]any{"name": "hardening", "version": "1"},
	}, timeout)
	if err != nil {
		return fmt.Errorf("initialize: %v (stderr: %s)", err, excerpt(s.stderr.String(), 300))
	}
	if m.Error != nil {
		return fmt.Errorf("initialize: error %d: %s", m.Error.Code, m.Error.Message)
	}
	return s.notify("notifications/initialized", nil)
}

func (s *server) readLoop(r *os.File) {
	defer close(s.readDone)
	defer r.Close()
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			s.dispatch(line)
		}
		if err != nil {
			return
		}
	}
}

func (s *server) dispatch(line []byte) {
	var m msg
	if json.Unmarshal(line, &m) != nil {
		return
	}
	m.size = len(line)
	id := string(bytes.TrimSpace(m.ID))
	if m.Method != "" {
		if id != "" && id != "null" { // a request to the client
			if s.answer != nil {
				if res, ok := s.answer(m.Method, m.Params); ok {
					b, _ := json.Marshal(res)
					s.writeRaw(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, b))
					return
				}
			}
			s.writeRaw(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"not supported by this client"}}`+"\n", id))
		}
		return
	}
	if id == "" || id == "null" {
		select {
		case s.nulls <- &m:
		default:
		}
		return
	}
	s.mu.Lock()
	ch := s.pending[id]
	delete(s.pending, id)
	s.mu.Unlock()
	if ch != nil {
		ch <- &m
	}
}

// writeRaw writes b, giving up after the call timeout.
func (s *server) writeRaw(b []byte) error {
	done := make(chan error, 1)
	go func() {
		s.wmu.Lock()
		defer s.wmu.Unlock()
		_, err := s.in.Write(b)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(timeout):
		return fmt.Errorf("could not send within %d s", int(timeout.Seconds()))
	}
}

type frame struct {
	JSONRPC string `json:"jsonrpc"`
	ID      *int64 `json:"id,omitempty"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// pendingCall is a request sent and not yet awaited.
type pendingCall struct {
	ch   chan *msg
	key  string
	sent time.Time
	err  error
}

// register reserves the next id.
func (s *server) register() (int64, *pendingCall) {
	id := s.next.Add(1)
	p := &pendingCall{ch: make(chan *msg, 1), key: strconv.FormatInt(id, 10)}
	s.mu.Lock()
	s.pending[p.key] = p.ch
	s.mu.Unlock()
	return id, p
}

// start sends a request without waiting for its answer.
func (s *server) start(method string, params any) *pendingCall {
	id, p := s.register()
	b, err := json.Marshal(frame{JSONRPC: "2.0", ID: &id, Method: method, Params: params})
	if err == nil {
		p.sent = time.Now()
		err = s.writeRaw(append(b, '\n'))
	}
	p.err = err
	return p
}

// startRaw sends a hand-made frame; makeFrame gets the id to put in it.
func (s *server) startRaw(makeFrame func(id int64) []byte) *pendingCall {
	id, p := s.register()
	p.sent = time.Now()
	p.err = s.writeRaw(makeFrame(id))
	return p
}

func (s *server) await(p *pendingCall, d time.Duration) (*msg, error) {
	if p.err != nil {
		return nil, p.err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case m := <-p.ch:
		return m, nil
	case <-s.readDone:
		select {
		case m := <-p.ch:
			return m, nil
		default:
		}
		return nil, fmt.Errorf("%w (%s)", errExited, s.exitString())
	case <-t.C:
		return nil, errNoAnswer(d)
	}
}

func (s *server) call(method string, params any, d time.Duration) (*msg, error) {
	return s.await(s.start(method, params), d)
}

func (s *server) notify(method string, params any) error {
	b, err := json.Marshal(frame{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		return err
	}
	return s.writeRaw(append(b, '\n'))
}

// awaitNull waits for a response whose id is null.
func (s *server) awaitNull(d time.Duration) (*msg, error) {
	select {
	case m := <-s.nulls:
		return m, nil
	case <-time.After(d):
		return nil, errNoAnswer(d)
	}
}

// toolResult is one tools/call answer.
type toolResult struct {
	text    string
	isError bool
	rpc     *rpcError
	err     error // no answer
	size    int   // bytes of the response line
	dur     time.Duration
}

func (r toolResult) ok() bool { return r.err == nil && r.rpc == nil && !r.isError }

// summary is the answer in short: the text, the error, or why none came.
func (r toolResult) summary(n int) string {
	switch {
	case r.err != nil:
		return r.err.Error()
	case r.rpc != nil:
		return fmt.Sprintf("JSON-RPC error %d: %s", r.rpc.Code, excerpt(r.rpc.Message, n))
	case r.isError:
		return "tool error: " + excerpt(r.text, n)
	}
	return excerpt(r.text, n)
}

func toToolResult(m *msg, err error, dur time.Duration) toolResult {
	r := toolResult{err: err, dur: dur}
	if err != nil {
		return r
	}
	r.size = m.size
	if m.Error != nil {
		r.rpc = m.Error
		return r
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if e := json.Unmarshal(m.Result, &res); e != nil {
		r.err = fmt.Errorf("bad result: %v", e)
		return r
	}
	var texts []string
	for _, c := range res.Content {
		if c.Type == "text" {
			texts = append(texts, c.Text)
		} else {
			texts = append(texts, "["+c.Type+"]")
		}
	}
	r.text, r.isError = strings.Join(texts, "\n"), res.IsError
	return r
}

func toolParams(name string, args any) map[string]any {
	return map[string]any{"name": name, "arguments": args}
}

// toolAsync sends a tools/call without waiting.
func (s *server) toolAsync(name string, args any) *pendingCall {
	return s.start("tools/call", toolParams(name, args))
}

func (s *server) awaitTool(p *pendingCall, d time.Duration) toolResult {
	m, err := s.await(p, d)
	return toToolResult(m, err, time.Since(p.sent))
}

// tool calls a tool and waits up to the call timeout.
func (s *server) tool(name string, args any) toolResult {
	return s.awaitTool(s.toolAsync(name, args), timeout)
}

func (s *server) toolWithin(d time.Duration, name string, args any) toolResult {
	return s.awaitTool(s.toolAsync(name, args), d)
}

func (s *server) hwm() int64 { return hwm(s.pid()) }

// closeStdin closes the server's input and reports how long it took to
// exit (false: still running after d).
func (s *server) closeStdin(d time.Duration) (time.Duration, bool) {
	t0 := time.Now()
	s.closeIn()
	select {
	case <-s.exited:
		return time.Since(t0), true
	case <-time.After(d):
		return d, false
	}
}

// signal sends sig and reports how long the server took to exit.
func (s *server) signal(sig syscall.Signal, d time.Duration) (time.Duration, bool) {
	t0 := time.Now()
	s.cmd.Process.Signal(sig)
	select {
	case <-s.exited:
		return time.Since(t0), true
	case <-time.After(d):
		return d, false
	}
}

// close ends the server: stdin closed, then SIGKILL if it lingers.
func (s *server) close() {
	if _, ok := s.closeStdin(15 * time.Second); !ok {
		s.kill()
	}
}

func (s *server) kill() {
	select {
	case <-s.exited:
	default:
		s.cmd.Process.Kill()
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
		}
	}
	s.closeIn()
}

// closeIn closes stdin once, without waiting for a writer stuck on it.
func (s *server) closeIn() { s.inOnce.Do(func() { s.in.Close() }) }

func (s *server) exitString() string {
	select {
	case <-s.exited:
		return s.state.String()
	case <-time.After(2 * time.Second):
		return "output closed"
	}
}

// tailBuf keeps the last 64 KiB written to it.
type tailBuf struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuf) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 64<<10 {
		t.b = append([]byte(nil), t.b[len(t.b)-64<<10:]...)
	}
	return len(p), nil
}

func (t *tailBuf) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
