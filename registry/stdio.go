package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/registry/rpcline"
	"github.com/builtin-tools/builtin-tools/registry/stdiosession"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// DefaultMaxFrameBytes bounds one JSON-RPC message read by ServeStdio
// when Config.MaxFrameBytes does not.
const DefaultMaxFrameBytes = 16 << 20

// drainTimeout is how long ServeStdio waits, once its input ended, for
// calls still running; a call blocked for good does not keep the process.
const drainTimeout = 3 * time.Second

// callWorkers bounds the tool calls of one connection that run at once, as
// mcp-go's stdio transport did; later ones wait their turn.
const callWorkers = 5

// ServeStdio serves the run's peer for mode over in and out until in ends or
// ctx is cancelled. The client on the other end is the only peer of this
// connection: it has a session of its own (requests to it, notifications,
// answers), apart from any other connection of the process (R2).
//
// Every line of input passes rpcline's filter first: a line over
// Config.MaxFrameBytes is answered with an error and skipped with bounded
// memory; a line that is not UTF-8, or whose id is not a string, a number
// or null, is answered with an error; a request other than initialize and
// ping before initialize is refused. When the input ends, the requests
// already read get drainTimeout to be answered, then are cancelled, and
// serve returns at most a second later.
func (r *Run) ServeStdio(ctx context.Context, mode tiers.Mode, in io.Reader, out io.Writer) error {
	return r.serveStdio(ctx, mode, in, stdiosession.New(out))
}

func (r *Run) serveStdio(ctx context.Context, mode tiers.Mode, in io.Reader, sess *stdiosession.Session) error {
	s, err := r.Server(mode)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := s.RegisterSession(ctx, sess); err != nil {
		return err
	}
	defer s.UnregisterSession(context.WithoutCancel(ctx), sess.SessionID())
	go sess.Forward(ctx)

	c := &stdioConn{srv: s, sess: sess, ctx: s.WithContext(ctx, sess), workers: make(chan struct{}, callWorkers)}
	limit := r.cfg.MaxFrameBytes
	if limit <= 0 {
		limit = DefaultMaxFrameBytes
	}
	f := &rpcline.Filter{Max: limit, Reply: sess.Out().Reply, Unknown: func(name string) string {
		if _, inCatalog := r.table.tools[name]; inCatalog {
			return "" // the call path refuses it if the caller cannot see it
		}
		return r.table.refusal(mode, name)
	}}
	inputDone := make(chan error, 1)
	go func() { inputDone <- f.Run(ctx, in, c.dispatch) }()

	select {
	case err = <-inputDone:
		sess.Ended() // no answer to the server's own requests can come now
		if err == nil {
			c.calls.waitAtMost(drainTimeout)
		}
		cancel()
		c.calls.waitAtMost(time.Second) // a call blocked beyond cancellation is left behind
	case <-ctx.Done():
		err = nil
		c.calls.waitAtMost(drainTimeout)
	}
	return err
}

// stdioConn dispatches the lines of one connection to mcp-go.
type stdioConn struct {
	srv     *server.MCPServer
	sess    *stdiosession.Session
	ctx     context.Context // the connection's, carrying its session
	workers chan struct{}   // tool calls running
	calls   waitGroup       // requests not answered yet
}

// dispatch handles one line the filter passed: a response to a request of
// this session goes to it; a request is served in its own goroutine; a
// notification is handled before the next line is read.
func (c *stdioConn) dispatch(line []byte) {
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		c.sess.Out().Reply(nil, mcp.PARSE_ERROR, "the message is not a JSON object; send one JSON-RPC message per line")
		return
	}
	id := bytes.TrimSpace(head.ID)
	hasID := len(id) > 0 && string(id) != "null"
	switch {
	case head.Method == "" && hasID && (rpcline.HasTopLevelKey(line, "result") || rpcline.HasTopLevelKey(line, "error")):
		c.sess.Answered(line) // an answer to nothing pending is dropped
	case hasID:
		c.calls.add()
		go func() {
			defer c.calls.done()
			if head.Method == string(mcp.MethodToolsCall) {
				select {
				case c.workers <- struct{}{}:
					defer func() { <-c.workers }()
				case <-c.ctx.Done():
					c.sess.Out().Reply(id, mcp.INTERNAL_ERROR, "the connection is closing; the call was not run")
					return
				}
			}
			c.handle(id, line)
		}()
	default:
		c.handle(nil, line)
	}
}

// handle passes one message to mcp-go and writes its answer, if any; a
// panic is answered as an internal error.
func (c *stdioConn) handle(id json.RawMessage, line []byte) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "builtin-tools: panic serving a request: %v\n", p)
			if id != nil {
				c.sess.Out().Reply(id, mcp.INTERNAL_ERROR, fmt.Sprintf("internal error: %v", p))
			}
		}
	}()
	if resp := c.srv.HandleMessage(c.ctx, line); resp != nil {
		c.sess.Out().JSON(resp)
	}
}

// waitGroup counts work in flight and can be waited for with a bound.
type waitGroup struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0, while someone waits
}

func (w *waitGroup) add() {
	w.mu.Lock()
	w.n++
	w.mu.Unlock()
}

func (w *waitGroup) done() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n--
	if w.n == 0 && w.idle != nil {
		close(w.idle)
		w.idle = nil
	}
}

// waitAtMost waits until nothing is in flight, at most d.
func (w *waitGroup) waitAtMost(d time.Duration) {
	w.mu.Lock()
	if w.n == 0 {
		w.mu.Unlock()
		return
	}
	if w.idle == nil {
		w.idle = make(chan struct{})
	}
	idle := w.idle
	w.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	}
}
