// Package rpc is the JSON-RPC connection package lsp holds to one language
// server's process: numbered requests, cancelled at the server when given
// up; notifications written in order by one goroutine whose watchdog ends a
// server that stopped reading its input; and a request's time limit that
// pauses while the operator is asked about something the request sent. It
// knows nothing of servers, documents or their errors: it returns the
// transport's own, which package lsp explains.
package rpc

import (
	"context"
	"errors"
	"io"
	"log"
	"sync/atomic"
	"time"

	"github.com/builtin-tools/builtin-tools/framing"
	"github.com/sourcegraph/jsonrpc2"
)

// ErrExited is what Send returns when the process exited before the
// notification was written.
var ErrExited = errors.New("the server's process exited")

// Options are what a connection knows of the process at its other end.
type Options struct {
	// Exited is closed once the process has exited.
	Exited <-chan struct{}
	// Stall is how long a write may go with the server taking nothing of
	// it; Kill then ends the process, which must also end the write.
	Stall time.Duration
	Kill  func()
	// BeforeSend and Sent, when set, run before and after a request is
	// written (tests act at those points).
	BeforeSend, Sent func(method string)
}

// Conn is one connection. The embedded jsonrpc2.Conn writes at once, for
// what must not wait behind the queue (shutdown, the broker's own
// requests); Request and Send are the ordinary traffic.
type Conn struct {
	*jsonrpc2.Conn
	opt     Options
	nextID  atomic.Uint64
	wrote   atomic.Int64 // bytes the server has taken from its input
	stalled atomic.Bool  // it stopped reading its input and was killed
	// outbox holds notifications for writeLoop, the one goroutine that
	// writes them, in order, until the process exits.
	outbox chan *outgoing
}

// New starts the connection over rwc, the server's input and output;
// h answers what the server sends.
func New(rwc io.ReadWriteCloser, h jsonrpc2.Handler, opt Options) *Conn {
	c := &Conn{opt: opt, outbox: make(chan *outgoing, outboxSize)}
	c.Conn = jsonrpc2.NewConn(context.Background(),
		framing.NewObjectStream(counted{rwc, &c.wrote}), h,
		jsonrpc2.SetLogger(log.New(io.Discard, "", 0)))
	go c.writeLoop()
	return c
}

// Stalled reports whether the server was killed for not reading its input.
func (c *Conn) Stalled() bool { return c.stalled.Load() }

// Request sends one request and waits for its answer until ctx ends. A
// request given up on is cancelled at the server ($/cancelRequest, queued
// and not waited for).
func (c *Conn) Request(ctx context.Context, method string, params, result any) error {
	id := jsonrpc2.ID{Num: c.nextID.Add(1)}
	if c.opt.BeforeSend != nil {
		c.opt.BeforeSend(method)
	}
	w, err := c.DispatchCall(ctx, method, params, jsonrpc2.PickID(id))
	if err != nil {
		return err
	}
	if c.opt.Sent != nil {
		c.opt.Sent(method)
	}
	err = w.Wait(ctx, result)
	if err != nil && ctx.Err() != nil {
		// Best effort: the server may stop working on it.
		c.post("$/cancelRequest", map[string]any{"id": id.Num})
	}
	return err
}

// outboxSize bounds the notifications waiting to be written; a caller
// waits for room, so a full queue only delays it until writeLoop's
// watchdog has dealt with a server that stopped reading.
const outboxSize = 32

// outgoing is one notification for writeLoop.
type outgoing struct {
	method    string
	params    any
	done      chan error // buffered: writeLoop never waits for the caller
	abandoned atomic.Bool
}

// writeLoop writes the queued notifications in order until the process
// exits. A write of which the server takes nothing for Stall means it
// stopped reading its input: it is killed, which also ends the write.
func (c *Conn) writeLoop() {
	for {
		select {
		case m := <-c.outbox:
			if m.abandoned.Load() {
				continue // its caller gave up before it was sent
			}
			// jsonrpc2 does not watch a context while it writes; the
			// watchdog is what bounds the write.
			stop := c.watchWrite()
			err := c.Notify(context.Background(), m.method, m.params)
			close(stop)
			m.done <- err
		case <-c.opt.Exited:
			return
		}
	}
}

// watchWrite kills the server when a write makes no progress for Stall;
// closing the returned channel ends the watch.
func (c *Conn) watchWrite() chan struct{} {
	stop := make(chan struct{})
	go func() {
		tick := time.NewTicker(max(c.opt.Stall/10, 10*time.Millisecond))
		defer tick.Stop()
		last, since := c.wrote.Load(), time.Now()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if now := c.wrote.Load(); now != last {
				last, since = now, time.Now()
				continue
			}
			if time.Since(since) >= c.opt.Stall {
				c.stalled.Store(true)
				c.opt.Kill()
				return
			}
		}
	}()
	return stop
}

// Send queues a notification for writeLoop and waits until it is
// written, so that a request sent afterwards follows it. It returns
// ctx.Err() when ctx ends first (a notification not yet written is then
// dropped), ErrExited when the process exits first (killed for not
// reading it or otherwise), else the write's error.
func (c *Conn) Send(ctx context.Context, method string, params any) error {
	m := &outgoing{method: method, params: params, done: make(chan error, 1)}
	select {
	case c.outbox <- m:
	case <-c.opt.Exited:
		return ErrExited
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-m.done:
		return err
	case <-c.opt.Exited:
		return ErrExited
	case <-ctx.Done():
		m.abandoned.Store(true)
		return ctx.Err()
	}
}

// post queues a notification nobody waits for; when the queue is full the
// server is not reading, and it is dropped.
func (c *Conn) post(method string, params any) {
	select {
	case c.outbox <- &outgoing{method: method, params: params, done: make(chan error, 1)}:
	default:
	}
}

// writePiece is the most written at once: a pipe's size, so that the
// count of what the server took moves while it reads a large document
// slowly.
const writePiece = 64 << 10

// counted writes to the server in pieces and counts what it took, so a
// large document a busy server reads slowly is told from one it never
// reads.
type counted struct {
	io.ReadWriteCloser
	wrote *atomic.Int64
}

func (p counted) Write(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := p.ReadWriteCloser.Write(b[n:min(n+writePiece, len(b))])
		n += m
		p.wrote.Add(int64(m))
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Pipes joins a process's output (read) and input (write) into the one
// stream New takes.
func Pipes(r io.ReadCloser, w io.WriteCloser) io.ReadWriteCloser { return pipes{r, w} }

type pipes struct {
	r io.ReadCloser
	w io.WriteCloser
}

func (p pipes) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p pipes) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p pipes) Close() error                { return errors.Join(p.w.Close(), p.r.Close()) }
