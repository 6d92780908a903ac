// Package dapclient speaks the Debug Adapter Protocol over one connection:
// requests sent and their responses matched by request_seq, events kept in
// a numbered log, the adapter's own requests answered. It decodes only the
// envelope and leaves bodies raw for go-dap's types, so an adapter's own
// events never break the stream. It knows nothing of sessions, programs or
// adapters (package dap does); framing reads and writes its frames.
package dapclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/framing"
)

// Message is one DAP message as it came off the wire: the envelope decoded,
// the body kept raw for the caller to decode into go-dap's body types.
// Decoding only the envelope means an adapter's extra events (debugpy's
// debugpyAttach, lldb-dap's module events) and commands go-dap does not
// know never break the stream.
type Message struct {
	Seq        int             `json:"seq"`
	Type       string          `json:"type"`
	Command    string          `json:"command,omitempty"`
	Event      string          `json:"event,omitempty"`
	RequestSeq int             `json:"request_seq,omitempty"`
	Success    bool            `json:"success,omitempty"`
	Message    string          `json:"message,omitempty"`
	Body       json.RawMessage `json:"body,omitempty"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
}

// Event is an event in the client's log, numbered in arrival order.
type Event struct {
	N    int // 1-based, over the client's life
	Name string
	Body json.RawMessage
	At   time.Time
}

// ResponseError is a response with success false: the adapter refused or
// failed the request. Message is the adapter's own text.
type ResponseError struct {
	Command string
	Message string
	Detail  string // the error body's formatted message, when there is one
}

// Said is the adapter's own words: the error body's message, else the
// response's.
func (e *ResponseError) Said() string {
	if e.Detail != "" {
		return e.Detail
	}
	return e.Message
}

func (e *ResponseError) Error() string {
	msg := e.Message
	if e.Detail != "" && e.Detail != e.Message {
		if msg != "" {
			msg += ": "
		}
		msg += e.Detail
	}
	if msg == "" {
		msg = "failed"
	}
	return fmt.Sprintf("%s: %s", e.Command, msg)
}

// ErrClosed means the adapter's connection ended.
var ErrClosed = errors.New("the debug adapter's connection closed")

// maxLog bounds the event log; a session keeps the program's output apart.
const maxLog = 4096

// Client speaks DAP over one connection: one reader goroutine, responses
// matched to requests by request_seq (never by order or type), every event
// appended to a log with its own number. Safe for concurrent use.
type Client struct {
	rw io.ReadWriteCloser
	r  *framing.Reader
	w  *framing.Writer

	wmu sync.Mutex // one frame at a time

	mu      sync.Mutex
	seq     int
	pending map[int]chan *Message
	log     []Event
	n       int           // events received
	changed chan struct{} // closed and replaced on every event
	err     error

	// OnEvent, when set before the first message, sees every event on the
	// reader goroutine, before waiters do. It must not block.
	OnEvent func(Event)
	// OnReverse answers a request from the adapter (runInTerminal,
	// startDebugging); nil refuses them all.
	OnReverse func(m *Message) (any, error)

	done chan struct{}
}

// New makes a client on rw; Start begins reading it. Close it with Close.
func New(rw io.ReadWriteCloser) *Client {
	c := &Client{
		rw:      rw,
		r:       framing.NewReader(rw, framing.WithMaxBody(64<<20)),
		w:       framing.NewWriter(rw),
		pending: map[int]chan *Message{},
		changed: make(chan struct{}),
		done:    make(chan struct{}),
	}
	return c
}

// Start begins reading; call it after setting OnEvent and OnReverse.
func (c *Client) Start() { go c.read() }

func (c *Client) read() {
	defer close(c.done)
	for {
		body, err := c.r.Read()
		if err != nil {
			c.fail(err)
			return
		}
		var m Message
		if err := json.Unmarshal(body, &m); err != nil {
			continue // not a message; an adapter's stray line
		}
		switch m.Type {
		case "response":
			c.mu.Lock()
			ch := c.pending[m.RequestSeq]
			delete(c.pending, m.RequestSeq)
			c.mu.Unlock()
			if ch != nil {
				ch <- &m
			}
		case "event":
			c.mu.Lock()
			c.n++
			e := Event{N: c.n, Name: m.Event, Body: m.Body, At: time.Now()}
			c.log = append(c.log, e)
			if len(c.log) > maxLog {
				c.log = append(c.log[:0:0], c.log[len(c.log)-maxLog/2:]...)
			}
			on := c.OnEvent
			c.mu.Unlock()
			if on != nil {
				on(e)
			}
			c.mu.Lock()
			close(c.changed)
			c.changed = make(chan struct{})
			c.mu.Unlock()
		case "request":
			go c.reverse(&m)
		}
	}
}

func (c *Client) reverse(m *Message) {
	var body any
	err := fmt.Errorf("builtin-tools does not support the %s request", m.Command)
	if c.OnReverse != nil {
		body, err = c.OnReverse(m)
	}
	resp := map[string]any{"type": "response", "request_seq": m.Seq, "command": m.Command, "success": err == nil}
	if err != nil {
		resp["message"] = err.Error()
	} else if body != nil {
		resp["body"] = body
	}
	c.write(resp)
}

func (c *Client) fail(err error) {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
		err = ErrClosed
	} else {
		err = fmt.Errorf("%w: %v", ErrClosed, err)
	}
	c.mu.Lock()
	c.err = err
	for seq, ch := range c.pending {
		close(ch)
		delete(c.pending, seq)
	}
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

func (c *Client) write(msg map[string]any) error {
	c.mu.Lock()
	c.seq++
	msg["seq"] = c.seq
	c.mu.Unlock()
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.w.Write(b)
}

// Pending is a request sent and not yet answered.
type Pending struct {
	c       *Client
	command string
	ch      chan *Message
}

// Send sends a request without waiting for its response (a launch that an
// adapter answers only after configurationDone).
func (c *Client) Send(command string, args any) (*Pending, error) {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.seq++
	seq := c.seq
	ch := make(chan *Message, 1)
	c.pending[seq] = ch
	c.mu.Unlock()
	msg := map[string]any{"seq": seq, "type": "request", "command": command}
	if args != nil {
		msg["arguments"] = args
	}
	b, err := json.Marshal(msg)
	if err != nil {
		c.forget(seq)
		return nil, err
	}
	c.wmu.Lock()
	err = c.w.Write(b)
	c.wmu.Unlock()
	if err != nil {
		c.forget(seq)
		return nil, fmt.Errorf("%w: sending %s: %v", ErrClosed, command, err)
	}
	return &Pending{c: c, command: command, ch: ch}, nil
}

func (c *Client) forget(seq int) {
	c.mu.Lock()
	delete(c.pending, seq)
	c.mu.Unlock()
}

// Wait waits for the response and decodes its body into body (when not
// nil). A success:false response is a *ResponseError.
func (p *Pending) Wait(ctx context.Context, body any) error {
	select {
	case m, ok := <-p.ch:
		if !ok {
			return p.c.Err()
		}
		if !m.Success {
			re := &ResponseError{Command: p.command, Message: m.Message}
			var eb struct {
				Error *struct {
					Format    string            `json:"format"`
					Variables map[string]string `json:"variables"`
				} `json:"error"`
			}
			if json.Unmarshal(m.Body, &eb) == nil && eb.Error != nil {
				re.Detail = expand(eb.Error.Format, eb.Error.Variables)
			}
			return re
		}
		if body != nil && len(m.Body) > 0 {
			if err := json.Unmarshal(m.Body, body); err != nil {
				return fmt.Errorf("%s: the adapter's response does not decode: %v", p.command, err)
			}
		}
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// expand fills DAP's {name} placeholders.
func expand(format string, vars map[string]string) string {
	for k, v := range vars {
		format = strings.ReplaceAll(format, "{"+k+"}", v)
	}
	return format
}

// Call sends a request and waits for its response.
func (c *Client) Call(ctx context.Context, command string, args, body any) error {
	p, err := c.Send(command, args)
	if err != nil {
		return err
	}
	return p.Wait(ctx, body)
}

// Events returns the logged events numbered after n.
func (c *Client) Events(after int) []Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Event
	for _, e := range c.log {
		if e.N > after {
			out = append(out, e)
		}
	}
	return out
}

// Seq is the number of the last event received.
func (c *Client) Seq() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// WaitEvent waits for the first event after n named one of names.
func (c *Client) WaitEvent(ctx context.Context, after int, names ...string) (Event, error) {
	for {
		c.mu.Lock()
		for _, e := range c.log {
			if e.N > after {
				for _, name := range names {
					if e.Name == name {
						c.mu.Unlock()
						return e, nil
					}
				}
			}
		}
		err, changed := c.err, c.changed
		c.mu.Unlock()
		if err != nil {
			return Event{}, err
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return Event{}, context.Cause(ctx)
		}
	}
}

// Changed returns a channel closed at the next event or at the end of the
// connection.
func (c *Client) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// Err is why the connection ended, nil while it is up.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Done is closed when the reader has stopped.
func (c *Client) Done() <-chan struct{} { return c.done }

// Close closes the connection; pending requests fail.
func (c *Client) Close() error { return c.rw.Close() }
