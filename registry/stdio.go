package registry

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
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

// ServeStdio serves the run's peer for mode over in and out until in ends or
// ctx is cancelled. The client on the other end is the only peer.
//
// Every line of input passes a filter before mcp-go sees it: a
// line over Config.MaxFrameBytes is answered with an error and skipped
// with bounded memory; a line that is not UTF-8, or whose id is not a
// string, a number or null, is answered with an error; a request other
// than initialize and ping before initialize is refused. When the input
// ends, calls still running get drainTimeout to finish, then serve returns
// anyway.
func (r *Run) ServeStdio(ctx context.Context, mode tiers.Mode, in io.Reader, out io.Writer) error {
	s, err := r.Server(mode)
	if err != nil {
		return err
	}
	lw := &lockedWriter{w: out}
	ss := server.NewStdioServer(s)
	ss.SetErrorLogger(log.New(stderr, "builtin-tools: ", 0))

	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	inputDone := make(chan struct{})
	go func() {
		defer close(inputDone)
		f := &frameFilter{max: r.cfg.MaxFrameBytes, reply: lw.reply, asked: lw.asked, unknown: func(name string) string {
			if _, inCatalog := r.tools[name]; inCatalog {
				return "" // the call path refuses it if the caller cannot see it
			}
			return r.refusal(mode, name)
		}}
		err := f.run(ctx, in, pw)
		if err == nil {
			// mcp-go cancels every call in flight the moment its input
			// ends: it sees the end only once the requests already read
			// are answered, or drainTimeout has passed.
			lw.drained(ctx, drainTimeout)
		}
		pw.CloseWithError(err) // EOF for mcp-go when err is nil
	}()
	done := make(chan error, 1)
	go func() { done <- ss.Listen(ctx, pr, lw) }()

	select {
	case err = <-done:
	case <-inputDone:
		select {
		case err = <-done:
		case <-time.After(drainTimeout):
			cancel()
			select {
			case err = <-done:
			case <-time.After(time.Second):
				err = nil // a call blocked beyond cancellation; leave it behind
			}
		}
	case <-ctx.Done():
		select {
		case err = <-done:
		case <-time.After(drainTimeout):
			err = nil
		}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
		return nil
	}
	return err
}

// lockedWriter writes whole frames, one at a time, for mcp-go's responses,
// its requests to the client, and the filter's own errors. It counts the
// requests passed to mcp-go that are not answered yet.
type lockedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	pending int
	idle    chan struct{} // closed when pending drops to 0, while someone waits
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if isResponse(p) && l.pending > 0 {
		l.pending--
		if l.pending == 0 && l.idle != nil {
			close(l.idle)
			l.idle = nil
		}
	}
	return l.w.Write(p)
}

// asked counts a request passed on to mcp-go.
func (l *lockedWriter) asked() {
	l.mu.Lock()
	l.pending++
	l.mu.Unlock()
}

// drained waits until every request passed on was answered, at most d.
func (l *lockedWriter) drained(ctx context.Context, d time.Duration) {
	l.mu.Lock()
	if l.pending == 0 {
		l.mu.Unlock()
		return
	}
	if l.idle == nil {
		l.idle = make(chan struct{})
	}
	idle := l.idle
	l.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	case <-ctx.Done():
	}
}

// isResponse reports whether a frame mcp-go writes answers a request (an
// id and no method) rather than asking the client something or notifying.
func isResponse(p []byte) bool {
	return topLevelID(p) != nil && !hasTopLevelKey(p, "method")
}

// reply writes a JSON-RPC error response with id (raw JSON, "null" when
// unknown).
func (l *lockedWriter) reply(id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	m, _ := json.Marshal(msg)
	// Not through Write: these answer requests mcp-go never saw.
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Write(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`+"\n", id, code, m))
}

// JSON-RPC error codes the filter answers with.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeInvalidParams  = -32602
	codeNotInitialized = -32002 // as LSP's ServerNotInitialized
)

// frameFilter passes lines of at most max bytes on and answers the rest.
type frameFilter struct {
	max         int
	reply       func(id json.RawMessage, code int, msg string)
	initialized bool // an initialize request went through
	// asked, when set, is told of every request passed on.
	asked func()
	// unknown, when set, explains a tools/call of a tool the run does not
	// have ("" if it has it); such a call is answered -32602 with it, a
	// more useful text than mcp-go's "tool not found".
	unknown func(name string) string
}

func (f *frameFilter) run(ctx context.Context, in io.Reader, pass io.Writer) error {
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
		if _, err := pass.Write(line); err != nil {
			return nil // mcp-go stopped reading
		}
		if len(line) > 0 && line[len(line)-1] != '\n' {
			if _, err := pass.Write([]byte{'\n'}); err != nil {
				return nil
			}
		}
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
	if f.asked != nil {
		f.asked()
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
// the JSON decoder refused (nested too deep, or cut short), by scanning
// strings and brackets without building anything; nil when there is none
// or it is not a string or a number.
func topLevelID(msg []byte) json.RawMessage {
	depth := 0
	for i := 0; i < len(msg); i++ {
		switch c := msg[i]; c {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth <= 0 {
				return nil
			}
		case '"':
			end := stringEnd(msg, i)
			if end < 0 {
				return nil
			}
			if depth == 1 && string(msg[i:end]) == `"id"` {
				rest := bytes.TrimLeft(msg[end:], " \t\r\n")
				if len(rest) > 0 && rest[0] == ':' {
					return leadingValue(bytes.TrimLeft(rest[1:], " \t\r\n"))
				}
			}
			i = end - 1
		}
	}
	return nil
}

// hasTopLevelKey reports whether the top-level object of msg has key.
func hasTopLevelKey(msg []byte, key string) bool {
	want := `"` + key + `"`
	depth := 0
	for i := 0; i < len(msg); i++ {
		switch msg[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth <= 0 {
				return false
			}
		case '"':
			end := stringEnd(msg, i)
			if end < 0 {
				return false
			}
			if depth == 1 && string(msg[i:end]) == want {
				rest := bytes.TrimLeft(msg[end:], " \t\r\n")
				if len(rest) > 0 && rest[0] == ':' {
					return true
				}
			}
			i = end - 1
		}
	}
	return false
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
