// Package stdiosession is the MCP session of one stdio connection (a
// process's stdin and stdout, or a debug socket's client) and its serving:
// its id, its writer of whole lines, its notifications, log level and
// client info, the requests sent to the client that await its answers, and
// Serve, which passes each line through rpcline's filter to an mcp-go
// server with this session, a bounded number of calls at once. registry
// serves each connection with a Session of its own (R2). It knows nothing
// of runs or tools.
package stdiosession

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/builtin-tools/builtin-tools/internal/lifetime"
)

// A Session is the MCP session of one stdio connection: its own id,
// writer, notification queue, log level, client info and requests to the
// client awaiting answers. mcp-go's StdioServer keeps one session for the
// whole process, so two connections in one process (ServeStdio and a debug
// socket) shared one: the agent's approval card went to the inspector and
// its answer was taken (R2). Like the official Go SDK's ServerSession, ours
// is per connection.
//
// Every method is safe for concurrent use.
type Session struct {
	id    string
	out   *Writer
	notes chan mcp.JSONRPCNotification
	since time.Time // when the connection came

	ready     chan struct{} // closed by Initialize
	readyOnce sync.Once
	level     atomic.Value // mcp.LoggingLevel
	info      atomic.Value // mcp.Implementation
	caps      atomic.Value // mcp.ClientCapabilities
	version   atomic.Value // string

	nextID   atomic.Int64
	mu       sync.Mutex
	pending  map[int64]chan clientAnswer
	gone     chan struct{} // closed when the client's input ended
	goneOnce sync.Once
}

// clientAnswer is the client's response to a request the server sent.
type clientAnswer struct {
	result json.RawMessage
	err    *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
}

var sessionCount atomic.Int64

// New makes the session of a connection whose output is out.
func New(out io.Writer) *Session {
	return &Session{
		id:      "stdio-" + strconv.FormatInt(sessionCount.Add(1), 10),
		out:     &Writer{w: out},
		notes:   make(chan mcp.JSONRPCNotification, 100),
		since:   time.Now(),
		ready:   make(chan struct{}),
		pending: map[int64]chan clientAnswer{},
		gone:    make(chan struct{}),
	}
}

var (
	_ server.SessionWithLogging         = (*Session)(nil)
	_ server.SessionWithClientInfo      = (*Session)(nil)
	_ server.SessionWithProtocolVersion = (*Session)(nil)
	_ server.SessionWithElicitation     = (*Session)(nil)
	_ server.SessionWithRoots           = (*Session)(nil)
	_ server.SessionWithSampling        = (*Session)(nil)
)

func (s *Session) SessionID() string { return s.id }

// Out is the connection's writer: every message the session's connection
// sends goes through it, one whole line at a time.
func (s *Session) Out() *Writer { return s.out }

// Since is when the connection came.
func (s *Session) Since() time.Time { return s.since }

// Ready is closed when the client has initialized.
func (s *Session) Ready() <-chan struct{} { return s.ready }

func (s *Session) NotificationChannel() chan<- mcp.JSONRPCNotification { return s.notes }

// Initialize is called by mcp-go on initialize, or on the first request
// of the 2026-07-28 revision (which has no initialize).
func (s *Session) Initialize() {
	s.readyOnce.Do(func() {
		if s.level.Load() == nil {
			s.level.Store(mcp.LoggingLevelError)
		}
		close(s.ready)
	})
}

func (s *Session) Initialized() bool { return lifetime.Ended(s.ready) }

func (s *Session) SetLogLevel(level mcp.LoggingLevel) { s.level.Store(level) }

func (s *Session) GetLogLevel() mcp.LoggingLevel {
	if l, ok := s.level.Load().(mcp.LoggingLevel); ok {
		return l
	}
	return mcp.LoggingLevelError
}

func (s *Session) GetClientInfo() mcp.Implementation {
	i, _ := s.info.Load().(mcp.Implementation)
	return i
}

func (s *Session) SetClientInfo(i mcp.Implementation) { s.info.Store(i) }

func (s *Session) GetClientCapabilities() mcp.ClientCapabilities {
	c, _ := s.caps.Load().(mcp.ClientCapabilities)
	return c
}

func (s *Session) SetClientCapabilities(c mcp.ClientCapabilities) { s.caps.Store(c) }

func (s *Session) ProtocolVersion() string {
	v, _ := s.version.Load().(string)
	return v
}

func (s *Session) SetProtocolVersion(v string) { s.version.Store(v) }

func (s *Session) RequestElicitation(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	var res mcp.ElicitationResult
	if err := s.request(ctx, mcp.MethodElicitationCreate, req.Params, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

func (s *Session) ListRoots(ctx context.Context, req mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	var res mcp.ListRootsResult
	if err := s.request(ctx, mcp.MethodListRoots, nil, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

func (s *Session) RequestSampling(ctx context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	var res mcp.CreateMessageResult
	if err := s.request(ctx, mcp.MethodSamplingCreateMessage, req.CreateMessageParams, &res); err != nil {
		return nil, err
	}
	content, err := mcp.ParseSamplingContent(res.Content)
	if err != nil {
		return nil, fmt.Errorf("the client's sampling result: %w", err)
	}
	res.Content = content
	return &res, nil
}

// errClientGone means the client's input ended before it answered.
var errClientGone = errors.New("the client's input ended before it answered")

// request sends the client a request and waits for its answer, the end of
// the client's input, or ctx.
func (s *Session) request(ctx context.Context, method mcp.MCPMethod, params any, into any) error {
	id := s.nextID.Add(1)
	ch := make(chan clientAnswer, 1)
	s.mu.Lock()
	s.pending[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
	}()
	b, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int64  `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}{mcp.JSONRPC_VERSION, id, string(method), params})
	if err != nil {
		return err
	}
	if err := s.out.frame(b); err != nil {
		return fmt.Errorf("sending %s: %w", method, err)
	}
	select {
	case a := <-ch:
		if a.err != nil {
			return fmt.Errorf("the client answered %s with error %d: %s", method, a.err.Code, a.err.Message)
		}
		if err := json.Unmarshal(a.result, into); err != nil {
			return fmt.Errorf("the client's %s result: %w", method, err)
		}
		return nil
	case <-s.gone:
		return errClientGone
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Answered hands a response from the client to the request of this
// session it answers, and reports whether there was one.
func (s *Session) Answered(line []byte) bool {
	var r struct {
		ID     json.Number     `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(line, &r) != nil {
		return false
	}
	id, err := r.ID.Int64()
	if err != nil {
		return false
	}
	s.mu.Lock()
	ch, ok := s.pending[id]
	s.mu.Unlock()
	if !ok {
		return false
	}
	select {
	case ch <- clientAnswer{result: r.Result, err: r.Error}:
	default:
	}
	return true
}

// Ended says the client's input ended: requests still waiting for it fail.
func (s *Session) Ended() {
	s.goneOnce.Do(func() { close(s.gone) })
}

// Forward writes the session's notifications until ctx ends, then those
// already queued.
func (s *Session) Forward(ctx context.Context) {
	for {
		select {
		case n := <-s.notes:
			s.out.JSON(n)
		case <-ctx.Done():
			for {
				select {
				case n := <-s.notes:
					s.out.JSON(n)
				default:
					return
				}
			}
		}
	}
}

// Writer writes whole frames, one line each, one at a time.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

func (f *Writer) frame(b []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(b) == 0 || b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	_, err := f.w.Write(b)
	return err
}

// JSON writes v as one frame.
func (f *Writer) JSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return f.frame(b)
}

// Reply writes a JSON-RPC error response with id (raw JSON, "null" when
// unknown).
func (f *Writer) Reply(id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	m, _ := json.Marshal(msg)
	f.frame(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id, code, m))
}
