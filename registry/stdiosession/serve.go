package stdiosession

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/lifetime"
	"github.com/builtin-tools/builtin-tools/registry/rpcline"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// drainTimeout is how long Serve waits, once its input ended, for calls
// still running; a call blocked for good does not keep the process.
const drainTimeout = 3 * time.Second

// callWorkers bounds the tool calls of one connection that run at once, as
// mcp-go's stdio transport did; later ones wait their turn.
const callWorkers = 5

// Serve serves srv over in and the session's writer until in ends or ctx
// is cancelled, the session registered with srv meanwhile. Every line
// passes rpcline's filter first (lines over maxLine bytes; unknown, when
// it says why, refuses a call of a tool by name); a request is served in
// its own goroutine, at most callWorkers tool calls at once. When in ends,
// the requests already read get drainTimeout to be answered, then are
// cancelled, and Serve returns at most a second later.
func (sess *Session) Serve(ctx context.Context, srv *server.MCPServer, in io.Reader, maxLine int, unknown func(name string) string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := srv.RegisterSession(ctx, sess); err != nil {
		return err
	}
	defer srv.UnregisterSession(context.WithoutCancel(ctx), sess.SessionID())
	go sess.Forward(ctx)

	c := &conn{srv: srv, sess: sess, ctx: srv.WithContext(ctx, sess), workers: make(chan struct{}, callWorkers)}
	f := &rpcline.Filter{Max: maxLine, Reply: sess.Out().Reply, Unknown: unknown}
	inputDone := make(chan error, 1)
	go func() { inputDone <- f.Run(ctx, in, c.dispatch) }()

	var err error
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

// conn dispatches the lines of one connection to mcp-go.
type conn struct {
	srv     *server.MCPServer
	sess    *Session
	ctx     context.Context // the connection's, carrying its session
	workers chan struct{}   // tool calls running
	calls   waitGroup       // requests not answered yet
}

// dispatch handles one line the filter passed: a response to a request of
// this session goes to it; a request is served in its own goroutine; a
// notification is handled before the next line is read.
func (c *conn) dispatch(line []byte) {
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
func (c *conn) handle(id json.RawMessage, line []byte) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(os.Stderr, "builtin-tools: panic serving a request: %v\n", p)
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
	lifetime.Await(context.Background(), idle, d)
}
