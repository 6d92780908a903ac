package registry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// A handler that asks its human something (ask_user, an approval) blocks in
// Call.Elicit. On a peer call that becomes MCP's multi round-trip exchange:
// the tools/call returns input_required with the question and an opaque
// state; the handler stays parked; the peer retries the call with the answer
// and that state, and the parked handler carries on. mcp-go performs the
// exchange itself for clients of the earlier protocol era (elicitation/create
// and a retry), so one handler serves both eras without the deprecated
// server-initiated requests.

// ErrNoPeer means the call has no MCP client to show a question to: it came
// through the direct path, or its client did not declare elicitation.
var ErrNoPeer = errors.New("no MCP client can show the question")

// ErrNoAnswer means the peer did not come back with an answer in time.
var ErrNoAnswer = errors.New("the MCP client did not answer")

// DefaultQuestionTimeout bounds how long a parked call waits for its peer.
const DefaultQuestionTimeout = 10 * time.Minute

// exchange is one peer call's conversation with its client: the events the
// call produces (a question, or its end) and the answers that come back.
type exchange struct {
	events chan event
	cancel context.CancelCauseFunc
	mu     sync.Mutex // one question at a time
	next   int
}

type event struct {
	q   *question
	res *mcp.CallToolResult
	err error
}

type question struct {
	id     string
	params mcp.ElicitationParams
	answer chan *mcp.ElicitationResult
}

// parking holds calls waiting for a peer's answer, by request state.
type parking struct {
	mu sync.Mutex
	m  map[string]parked
}

type parked struct {
	ex      *exchange
	q       *question
	session string
}

func (p *parking) put(pk parked) string {
	var b [16]byte
	rand.Read(b[:])
	state := hex.EncodeToString(b[:])
	p.mu.Lock()
	if p.m == nil {
		p.m = map[string]parked{}
	}
	p.m[state] = pk
	p.mu.Unlock()
	return state
}

func (p *parking) take(state, session string) (parked, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pk, ok := p.m[state]
	if !ok || pk.session != session {
		return parked{}, false
	}
	delete(p.m, state)
	return pk, true
}

func (p *parking) drop(q *question) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, v := range p.m {
		if v.q == q {
			delete(p.m, k)
		}
	}
}

// converse runs a peer call in its own goroutine, under the run's lifetime
// rather than the request's (a parked call outlives its first request), and
// relays its events to the peer.
func (r *Run) converse(ctx context.Context, p *Peer, run func(context.Context) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, error) {
	callCtx, cancel := context.WithCancelCause(r.ctx)
	ex := &exchange{events: make(chan event, 1), cancel: cancel}
	p.ex = ex
	go func() {
		defer cancel(nil)
		res, err := run(callCtx)
		ex.events <- event{res: res, err: err}
	}()
	return r.relay(ctx, p, ex)
}

// relay waits for the call's next event: a question is handed to the peer
// as input_required, the end as the result. If the peer gives up on the
// request, the call is cancelled.
func (r *Run) relay(ctx context.Context, p *Peer, ex *exchange) (*mcp.CallToolResult, error) {
	select {
	case ev := <-ex.events:
		if ev.q == nil {
			return ev.res, ev.err
		}
		session := ""
		if p.session != nil {
			session = p.session.SessionID()
		}
		state := r.parked.put(parked{ex: ex, q: ev.q, session: session})
		return server.NewInputRequestBuilder(state).Elicit(ev.q.id, ev.q.params).ToolResult(), nil
	case <-ctx.Done():
		ex.cancel(fmt.Errorf("the MCP client gave up on the call: %w", context.Cause(ctx)))
		return nil, ctx.Err()
	}
}

// resume hands a peer's answer to the parked call it belongs to.
func (r *Run) resume(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	session := ""
	if cs := server.ClientSessionFromContext(ctx); cs != nil {
		session = cs.SessionID()
	}
	pk, ok := r.parked.take(req.Params.RequestState, session)
	if !ok {
		return Failf("%s: this answer is for a question the run no longer waits for (it timed out, was answered already, or came from another session); call the tool again", req.Params.Name), nil
	}
	pk.q.answer <- server.ElicitationResponse(req.Params.InputResponses, pk.q.id)
	p := &Peer{srv: server.ServerFromContext(ctx), session: server.ClientSessionFromContext(ctx), ex: pk.ex}
	return r.relay(ctx, p, pk.ex)
}

func (c *Call) root() *Call {
	for c.Parent != nil {
		c = c.Parent
	}
	return c
}

// Elicit asks the human at the call's MCP client (REG-7, ASK-1) and waits
// for the answer, at most Config.QuestionTimeout. A child call asks through
// its root's peer. Without a client that can show it, it fails at once with
// ErrNoPeer.
func (c *Call) Elicit(ctx context.Context, params mcp.ElicitationParams) (*mcp.ElicitationResult, error) {
	p := c.peer
	if p == nil {
		return nil, fmt.Errorf("%w: this call did not come from an MCP client", ErrNoPeer)
	}
	if p.ex == nil {
		return nil, fmt.Errorf("%w: %s does not declare that it asks (Descriptor.Asks), so its call cannot pause for an answer", ErrNoPeer, c.root().Tool.Name)
	}
	info, ok := p.session.(server.SessionWithClientInfo)
	if !ok || info.GetClientCapabilities().Elicitation == nil {
		name := "the MCP client"
		if ok && info.GetClientInfo().Name != "" {
			name = "the MCP client " + info.GetClientInfo().Name
		}
		return nil, fmt.Errorf("%w: %s did not declare the elicitation capability", ErrNoPeer, name)
	}
	ex := p.ex
	ex.mu.Lock()
	defer ex.mu.Unlock()
	ex.next++
	q := &question{id: fmt.Sprintf("q%d", ex.next), params: params, answer: make(chan *mcp.ElicitationResult, 1)}
	select {
	case ex.events <- event{q: q}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	timeout := c.Run.cfg.QuestionTimeout
	if timeout <= 0 {
		timeout = DefaultQuestionTimeout
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case a := <-q.answer:
		if a == nil {
			return nil, fmt.Errorf("%w: its retry carried no answer to the question", ErrNoAnswer)
		}
		return a, nil
	case <-ctx.Done():
		c.Run.parked.drop(q)
		return nil, context.Cause(ctx)
	case <-t.C:
		c.Run.parked.drop(q)
		return nil, fmt.Errorf("%w within %s", ErrNoAnswer, timeout)
	}
}
