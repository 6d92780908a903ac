// Package elicit carries a peer call's questions to its MCP client and the
// answers back (REG-7). A call that asks runs in its own goroutine with an
// Exchange; each question goes to the client as input_required with an
// opaque request state, under which the Parking holds the call until the
// client retries with the answer (or, for a client of the earlier protocol
// era, as elicitation/create). It knows nothing of runs, tools or calls:
// registry's Call.Elicit asks through the Exchange of its root's peer.
package elicit

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

	"github.com/builtin-tools/builtin-tools/internal/lifetime"
)

// A handler that asks its human something (ask_user, an approval) blocks in
// Exchange.Ask. On a peer call that becomes MCP's multi round-trip exchange:
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

// An Exchange is one peer call's conversation with its client: the events the
// call produces (a question, or its end) and the answers that come back.
//
// Concurrency: the call's handler is the only sender on events, one event at
// a time (questions are asked under mu); relays receive. attached counts the
// relays that are reading events or are about to (a retry that carries an
// answer attaches before handing it over, so the handler's next question is
// seen); a question asked while nothing is attached would never be shown,
// so it fails at once.
type Exchange struct {
	pk     *Parking // where its questions are held for the client's retry
	events chan event
	cancel context.CancelCauseFunc
	done   <-chan struct{} // the run's end: nothing will read events after it
	mu     sync.Mutex      // one question at a time
	next   int

	amu      sync.Mutex
	attached int
}

func (ex *Exchange) attach() {
	ex.amu.Lock()
	ex.attached++
	ex.amu.Unlock()
}

func (ex *Exchange) detach() {
	ex.amu.Lock()
	ex.attached--
	ex.amu.Unlock()
}

func (ex *Exchange) isAttached() bool {
	ex.amu.Lock()
	defer ex.amu.Unlock()
	return ex.attached > 0
}

type event struct {
	q   *question
	res *mcp.CallToolResult
	err error
}

type question struct {
	id     string
	params mcp.ElicitationParams
	answer chan *mcp.ElicitationResult // buffered: an answer never blocks its giver
	done   chan struct{}               // closed when Elicit returns

	errMu sync.Mutex
	err   error // why a nil answer came
}

// failed hands the asker no answer, and why.
func (q *question) failed(err error) {
	q.errMu.Lock()
	q.err = err
	q.errMu.Unlock()
	select {
	case q.answer <- nil:
	default:
	}
}

func (q *question) failure() error {
	q.errMu.Lock()
	defer q.errMu.Unlock()
	if q.err != nil {
		return q.err
	}
	return fmt.Errorf("%w: its retry carried no answer to the question", ErrNoAnswer)
}

// A Parking holds calls waiting for a peer's answer, by request state, and
// relays a peer call's conversation with its client (converse, relay,
// resume). A question that ended unanswered (timed out, cancelled) stays
// as a tombstone for a while: a client that comes back late gets the
// call's own outcome (the timeout, and what to do about it) instead of
// "unknown".
type Parking struct {
	mu      sync.Mutex
	m       map[string]parked
	expired []string // tombstones, oldest first
}

type parked struct {
	ex      *Exchange
	q       *question
	session string
	expired bool
}

// maxTombstones bounds the unanswered questions remembered for late clients.
const maxTombstones = 64

func (pk *Parking) put(held parked) string {
	var b [16]byte
	rand.Read(b[:])
	state := hex.EncodeToString(b[:])
	pk.mu.Lock()
	if pk.m == nil {
		pk.m = map[string]parked{}
	}
	pk.m[state] = held
	pk.mu.Unlock()
	return state
}

func (pk *Parking) take(state, session string) (parked, bool) {
	pk.mu.Lock()
	defer pk.mu.Unlock()
	held, ok := pk.m[state]
	if !ok || held.session != session {
		return parked{}, false
	}
	delete(pk.m, state)
	return held, true
}

// expire turns q's entry into a tombstone.
func (pk *Parking) expire(q *question) {
	pk.mu.Lock()
	defer pk.mu.Unlock()
	for k, v := range pk.m {
		if v.q == q && !v.expired {
			v.expired = true
			pk.m[k] = v
			pk.expired = append(pk.expired, k)
		}
	}
	for len(pk.expired) > maxTombstones {
		delete(pk.m, pk.expired[0])
		pk.expired = pk.expired[1:]
	}
}

// Converse runs a peer call of srv's client session in its own goroutine,
// under the run's lifetime (runCtx) rather than the request's (a parked call
// outlives its first request), with the Exchange it asks through, and relays
// its events to the peer.
func (pk *Parking) Converse(ctx, runCtx context.Context, srv *server.MCPServer, session server.ClientSession, run func(context.Context, *Exchange) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, error) {
	callCtx, cancel := context.WithCancelCause(runCtx)
	ex := &Exchange{pk: pk, events: make(chan event, 1), cancel: cancel, done: runCtx.Done()}
	ex.attach()
	go func() {
		defer cancel(nil)
		res, err := run(callCtx, ex)
		select {
		case ex.events <- event{res: res, err: err}:
		case <-ex.done:
		}
	}()
	return pk.relay(ctx, srv, session, ex)
}

// relay waits for the call's next event and detaches when it returns. A
// question goes to a client of the multi round-trip era as input_required
// (its retry resumes the call); a client of the earlier era is asked here
// with elicitation/create, bounded by the question's own end, so a client
// that never answers cannot hold the call past its timeout (mcp-go would
// wait for it without bound). The end goes back as the result. If the peer
// gives up on the request, the call is cancelled.
func (pk *Parking) relay(ctx context.Context, srv *server.MCPServer, cs server.ClientSession, ex *Exchange) (*mcp.CallToolResult, error) {
	defer ex.detach()
	for {
		select {
		case ev := <-ex.events:
			if ev.q == nil {
				return ev.res, ev.err
			}
			if !mcp.IsModernProtocol(server.RequestProtocolVersion(ctx)) && srv != nil {
				askEarlierEra(ctx, srv, ev.q)
				continue
			}
			session := ""
			if cs != nil {
				session = cs.SessionID()
			}
			state := pk.put(parked{ex: ex, q: ev.q, session: session})
			return server.NewInputRequestBuilder(state).Elicit(ev.q.id, ev.q.params).ToolResult(), nil
		case <-ctx.Done():
			ex.cancel(fmt.Errorf("the MCP client gave up on the call: %w", context.Cause(ctx)))
			return cancelledResult(ex, ctx.Err())
		}
	}
}

// cancelWait bounds how long a cancelled peer call's own result is waited
// for: longer than eval's interrupt grace (3 s), so a cell interrupted by
// the cancellation answers with what it did.
const cancelWait = 5 * time.Second

// cancelledResult is the result the call ends with once cancelled, if it
// ends within cancelWait (a client that still reads the answer learns
// what the call did before it stopped), else err.
func cancelledResult(ex *Exchange, err error) (*mcp.CallToolResult, error) {
	t := time.NewTimer(cancelWait)
	defer t.Stop()
	for {
		select {
		case ev := <-ex.events:
			if ev.q == nil {
				if ev.res == nil && ev.err == nil {
					return nil, err
				}
				return ev.res, ev.err
			}
			// A question asked after the cancellation is not put.
		case <-ex.done:
			return nil, err
		case <-t.C:
			return nil, err
		}
	}
}

// askEarlierEra sends q as elicitation/create on the peer's request's
// session and hands the answer over; it gives up when q ends (answered
// elsewhere, timed out, cancelled).
func askEarlierEra(ctx context.Context, srv *server.MCPServer, q *question) {
	qctx, cancel := lifetime.Until(ctx, q.done)
	defer cancel()
	res, err := srv.RequestElicitation(qctx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params:  q.params,
	})
	if err != nil || res == nil {
		if lifetime.Ended(q.done) {
			return // it ended first: the handler has its reason
		}
		if err == nil {
			err = errors.New("the client sent no result")
		}
		// The handler learns the client could not answer and goes on.
		q.failed(fmt.Errorf("%w: elicitation/create failed: %v", ErrNoAnswer, err))
		return
	}
	select {
	case q.answer <- res:
	default:
	}
}

// Resume hands a peer's answer to the parked call it belongs to. A retry
// for a question that ended unanswered carries no answer: it relays the
// call's outcome since.
func (pk *Parking) Resume(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	session := ""
	if cs := server.ClientSessionFromContext(ctx); cs != nil {
		session = cs.SessionID()
	}
	held, ok := pk.take(req.Params.RequestState, session)
	if !ok {
		return mcp.NewToolResultError(fmt.Sprintf("%s: this answer is for a question this run does not know (answered already, from another session, or forgotten long ago); call the tool again", req.Params.Name)), nil
	}
	held.ex.attach()
	if !held.expired {
		select {
		case held.q.answer <- server.ElicitationResponse(req.Params.InputResponses, held.q.id):
		default:
		}
	}
	return pk.relay(ctx, server.ServerFromContext(ctx), server.ClientSessionFromContext(ctx), held.ex)
}

// Ask shows the client the question params and waits for its answer, at
// most timeout or until ctx ends. It fails at once with ErrNoPeer when the
// client did not come back for the call's previous question, so would not
// see this one.
func (ex *Exchange) Ask(ctx context.Context, params mcp.ElicitationParams, timeout time.Duration) (*mcp.ElicitationResult, error) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if !ex.isAttached() {
		return nil, fmt.Errorf("%w: the MCP client did not come back for this call's previous question, so it would not see this one", ErrNoPeer)
	}
	ex.next++
	q := &question{id: fmt.Sprintf("q%d", ex.next), params: params,
		answer: make(chan *mcp.ElicitationResult, 1), done: make(chan struct{})}
	defer close(q.done)
	select {
	case ex.events <- event{q: q}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	unanswered := func(err error) (*mcp.ElicitationResult, error) {
		ex.pk.expire(q)
		// Not read by any relay: take it back, so the call's end is not
		// stuck behind it.
		select {
		case ev := <-ex.events:
			if ev.q != q {
				ex.events <- ev
			}
		default:
		}
		return nil, err
	}
	select {
	case a := <-q.answer:
		if a == nil {
			return unanswered(q.failure())
		}
		return a, nil
	case <-ctx.Done():
		return unanswered(context.Cause(ctx))
	case <-t.C:
		return unanswered(fmt.Errorf("%w within %s", ErrNoAnswer, timeout))
	}
}
