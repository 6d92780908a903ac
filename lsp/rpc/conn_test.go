package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/framing"
	"github.com/sourcegraph/jsonrpc2"
)

// peer is the server's end: it records what it was sent and answers
// nothing.
type peer chan *jsonrpc2.Request

func (p peer) Handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) { p <- req }

func ignore(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request) (any, error) { return nil, nil }

// A server that takes nothing of a notification is killed after Stall,
// and Send says so rather than waiting for ever.
func TestStalledServerIsKilled(t *testing.T) {
	ours, theirs := net.Pipe() // a write waits until the other end reads; it never does
	defer theirs.Close()
	exited := make(chan struct{})
	var once sync.Once
	var c *Conn
	c = New(ours, jsonrpc2.HandlerWithError(ignore), Options{Exited: exited, Stall: 50 * time.Millisecond,
		Kill: func() { once.Do(func() { close(exited) }); c.Close() }})
	err := c.Send(context.Background(), "textDocument/didOpen", map[string]string{"text": "x"})
	if err == nil {
		t.Fatal("Send returned nil though nothing was read")
	}
	if !c.Stalled() {
		t.Fatalf("Send failed (%v) but the connection does not say the server stalled", err)
	}
}

// A request the caller gives up on is cancelled at the server, by its id,
// and the hooks run around its write.
func TestGivenUpRequestIsCancelled(t *testing.T) {
	ours, theirs := net.Pipe()
	got := make(peer, 4)
	other := jsonrpc2.NewConn(context.Background(), framing.NewObjectStream(theirs), got)
	defer other.Close()
	exited := make(chan struct{})
	var hooked []string
	c := New(ours, jsonrpc2.HandlerWithError(ignore), Options{Exited: exited, Stall: time.Minute, Kill: func() {},
		BeforeSend: func(m string) { hooked = append(hooked, "before "+m) },
		Sent:       func(m string) { hooked = append(hooked, "sent "+m) }})
	defer func() { close(exited); c.Close() }()

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-got // the request arrived
		cancel()
	}()
	if err := c.Request(ctx, "workspace/symbol", nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("want the caller's cancel, got %v", err)
	}
	req := <-got
	var p struct {
		ID uint64 `json:"id"`
	}
	if req.Method != "$/cancelRequest" || req.Params == nil || json.Unmarshal(*req.Params, &p) != nil || p.ID != 1 {
		t.Fatalf("want $/cancelRequest of request 1, got %s %s", req.Method, req.Params)
	}
	if len(hooked) != 2 || hooked[0] != "before workspace/symbol" || hooked[1] != "sent workspace/symbol" {
		t.Errorf("hooks: got %q", hooked)
	}
}

// An expired bound cancels with ErrBoundExpired, which callers tell from
// their own cancel.
func TestBoundExpires(t *testing.T) {
	b := NewBound(time.Millisecond)
	ctx, release := b.Start(context.Background())
	defer release()
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), ErrBoundExpired) {
		t.Fatalf("cause: got %v", context.Cause(ctx))
	}
}
