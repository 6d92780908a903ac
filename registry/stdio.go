package registry

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// DefaultMaxFrameBytes bounds one JSON-RPC message read by ServeStdio.
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
// Every line of input passes a filter first: a line over
// Config.MaxFrameBytes is answered with an error and skipped with bounded
// memory; a line that is not UTF-8, or whose id is not a string, a number
// or null, is answered with an error; a request other than initialize and
// ping before initialize is refused. When the input ends, the requests
// already read get drainTimeout to be answered, then are cancelled, and
// serve returns at most a second later.
func (r *Run) ServeStdio(ctx context.Context, mode tiers.Mode, in io.Reader, out io.Writer) error {
	return r.serveStdio(ctx, mode, in, newStdioSession(out))
}

func (r *Run) serveStdio(ctx context.Context, mode tiers.Mode, in io.Reader, sess *stdioSession) error {
	s, err := r.Server(mode)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := s.RegisterSession(ctx, sess); err != nil {
		return err
	}
	defer s.UnregisterSession(context.WithoutCancel(ctx), sess.id)
	go sess.forward(ctx)

	c := &stdioConn{srv: s, sess: sess, ctx: s.WithContext(ctx, sess), workers: make(chan struct{}, callWorkers)}
	f := &frameFilter{max: r.cfg.MaxFrameBytes, reply: sess.out.reply, unknown: func(name string) string {
		if _, inCatalog := r.table.tools[name]; inCatalog {
			return "" // the call path refuses it if the caller cannot see it
		}
		return r.table.refusal(mode, name)
	}}
	inputDone := make(chan error, 1)
	go func() { inputDone <- f.run(ctx, in, c.dispatch) }()

	select {
	case err = <-inputDone:
		sess.ended() // no answer to the server's own requests can come now
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
	sess    *stdioSession
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
		c.sess.out.reply(nil, codeParseError, "the message is not a JSON object; send one JSON-RPC message per line")
		return
	}
	id := bytes.TrimSpace(head.ID)
	hasID := len(id) > 0 && string(id) != "null"
	switch {
	case head.Method == "" && hasID && (hasTopLevelKey(line, "result") || hasTopLevelKey(line, "error")):
		c.sess.answered(line) // an answer to nothing pending is dropped
	case hasID:
		c.calls.add()
		go func() {
			defer c.calls.done()
			if head.Method == string(mcp.MethodToolsCall) {
				select {
				case c.workers <- struct{}{}:
					defer func() { <-c.workers }()
				case <-c.ctx.Done():
					c.sess.out.reply(id, codeInternalError, "the connection is closing; the call was not run")
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
				c.sess.out.reply(id, codeInternalError, fmt.Sprintf("internal error: %v", p))
			}
		}
	}()
	if resp := c.srv.HandleMessage(c.ctx, line); resp != nil {
		c.sess.out.json(resp)
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

// JSON-RPC error codes the filter answers with.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeInvalidParams  = -32602
	codeInternalError  = -32603
	codeNotInitialized = -32002 // as LSP's ServerNotInitialized
)

// frameFilter passes lines of at most max bytes on and answers the rest.
type frameFilter struct {
	max         int
	reply       func(id json.RawMessage, code int, msg string)
	initialized bool // an initialize request went through
	// unknown, when set, explains a tools/call of a tool the run does not
	// have ("" if it has it); such a call is answered -32602 with it, a
	// more useful text than mcp-go's "tool not found".
	unknown func(name string) string
}

// run reads lines from in until it ends (nil) or fails, and passes each
// line that passes check on, its own copy.
func (f *frameFilter) run(ctx context.Context, in io.Reader, pass func(line []byte)) error {
	limit := f.max
	if limit <= 0 {
		limit = DefaultMaxFrameBytes
	}
	br := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	for {
		if ctx.Err() != nil {
			return nil
		}
		line = line[:0]
		size, over := 0, false
		var head []byte // the start of an over-long line, to find its id
		for {
			chunk, err := br.ReadSlice('\n')
			size += len(chunk)
			switch {
			case over:
			case size > limit:
				over = true
				head = append(head[:0], line[:min(len(line), 4<<10)]...)
				if len(head) < 4<<10 {
					head = append(head, chunk[:min(len(chunk), 4<<10-len(head))]...)
				}
				line = line[:0]
			default:
				line = append(line, chunk...)
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil && size == 0 {
				if err == io.EOF {
					return nil
				}
				return err
			}
			break
		}
		if over {
			f.reply(leadingID(head), codeInvalidRequest, fmt.Sprintf(
				"the message is %d bytes, over this server's limit of %d bytes (--limit-frame), so it was not read; nothing was done. "+
					"Send less in one call: split a large write, or send a patch instead of a whole file", size, limit))
			continue
		}
		if !f.check(line) {
			continue
		}
		pass(bytes.Clone(line)) // pass may keep it: line is reused
	}
}

// check answers a frame mcp-go would mishandle and reports whether to pass
// it on. Malformed JSON is passed on: mcp-go answers it with -32700.
func (f *frameFilter) check(line []byte) bool {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return false
	}
	if !utf8.Valid(trimmed) {
		at := 0
		for at < len(trimmed) {
			r, n := utf8.DecodeRune(trimmed[at:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			at += n
		}
		f.reply(leadingID(trimmed), codeParseError, fmt.Sprintf(
			"the message is not UTF-8 (byte %d); JSON must be UTF-8, so a file whose name is not UTF-8 cannot be named: list its folder with read to see it", at))
		return false
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
		Params struct {
			Name any            `json:"name"`
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if trimmed[0] != '{' {
		return true
	}
	if err := json.Unmarshal(trimmed, &msg); err != nil {
		// mcp-go would answer with id null, which no client can match to
		// its request (N24: valid JSON nested too deep for the decoder).
		if id := topLevelID(trimmed); id != nil {
			f.reply(id, codeParseError, fmt.Sprintf("the message could not be read (%v); nothing was done", err))
			return false
		}
		return true
	}
	if id := bytes.TrimSpace(msg.ID); len(id) > 0 {
		switch id[0] {
		case '{', '[', 't', 'f':
			f.reply(nil, codeInvalidRequest, "invalid request: the id must be a string, a number or null")
			return false
		}
	}
	if msg.Method == nil || len(msg.ID) == 0 || string(msg.ID) == "null" {
		return true // a response or a notification
	}
	modern := false
	if v, ok := msg.Params.Meta[mcp.MetaKeyProtocolVersion].(string); ok {
		modern = mcp.IsModernProtocol(v)
	}
	switch *msg.Method {
	case "initialize":
		f.initialized = true
	case "ping", "server/discover":
		// The 2026-07-28 revision has no initialize: a client discovers,
		// then every request carries its protocol version.
	default:
		if !f.initialized && !modern {
			f.reply(msg.ID, codeNotInitialized, fmt.Sprintf("%s before initialize: the session is not initialized; send initialize first", *msg.Method))
			return false
		}
	}
	if name, ok := msg.Params.Name.(string); ok && *msg.Method == "tools/call" && f.unknown != nil {
		if why := f.unknown(name); why != "" {
			f.reply(msg.ID, codeInvalidParams, why)
			return false
		}
	}
	return true
}

// leadingID finds the id of a message from its first bytes, when the id
// comes before any params (as clients write it); otherwise null.
func leadingID(head []byte) json.RawMessage {
	i := bytes.Index(head, []byte(`"id"`))
	if i < 0 || bytes.Contains(head[:i], []byte(`"params"`)) {
		return nil
	}
	rest := bytes.TrimLeft(head[i+4:], " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return nil
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	dec := json.NewDecoder(bytes.NewReader(rest))
	var v json.RawMessage
	if dec.Decode(&v) != nil || len(v) == 0 {
		return nil
	}
	switch v[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return v
	}
	return nil
}

// topLevelID finds the "id" member of the top-level object in a message
// the JSON decoder refused (nested too deep, or cut short); nil when there
// is none or it is not a string or a number.
func topLevelID(msg []byte) json.RawMessage {
	if v, ok := topLevelValue(msg, "id"); ok {
		return leadingValue(v)
	}
	return nil
}

// hasTopLevelKey reports whether the top-level object of msg has key.
func hasTopLevelKey(msg []byte, key string) bool {
	_, ok := topLevelValue(msg, key)
	return ok
}

// topLevelValue finds the member key of the top-level object in msg by
// scanning strings and brackets without building anything, so it works on
// a message the JSON decoder refused: ok says the key is there, and the
// bytes are what follows its colon (blanks skipped), to the end of msg.
func topLevelValue(msg []byte, key string) ([]byte, bool) {
	want := `"` + key + `"`
	depth := 0
	for i := 0; i < len(msg); i++ {
		switch msg[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth <= 0 {
				return nil, false
			}
		case '"':
			end := stringEnd(msg, i)
			if end < 0 {
				return nil, false
			}
			if depth == 1 && string(msg[i:end]) == want {
				rest := bytes.TrimLeft(msg[end:], " \t\r\n")
				if len(rest) > 0 && rest[0] == ':' {
					return bytes.TrimLeft(rest[1:], " \t\r\n"), true
				}
			}
			i = end - 1
		}
	}
	return nil, false
}

// stringEnd returns the index just past the JSON string starting at
// msg[i], or -1 if it does not end.
func stringEnd(msg []byte, i int) int {
	for j := i + 1; j < len(msg); j++ {
		switch msg[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// leadingValue decodes the string or number at the start of b.
func leadingValue(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	end := 0
	switch c := b[0]; {
	case c == '"':
		end = stringEnd(b, 0)
	case c == '-' || c >= '0' && c <= '9':
		end = bytes.IndexAny(b, ", \t\r\n}")
	}
	if end <= 0 {
		return nil
	}
	v := b[:end]
	if !json.Valid(v) {
		return nil
	}
	return json.RawMessage(bytes.Clone(v))
}
