//go:build unix

// Package debugsock serves the clients of a run's debug socket (a unix
// socket a developer attaches the MCP Inspector to): one client at a time,
// each with a stdio session of its own; a client of another user refused;
// one that comes while another is served told, in answer to its
// initialize, who holds the socket and since when; one that stays silent
// closed after a bound (R14). It knows nothing of runs: registry's
// Run.ServeDebug listens and hands each session to the run's stdio serving.
package debugsock

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/builtin-tools/builtin-tools/registry/rpcline"
	"github.com/builtin-tools/builtin-tools/registry/stdiosession"
)

// Waits are the debug socket's two bounds.
type Waits struct {
	// Init bounds how long a client holds the one slot before its session
	// starts (initialize, or a first request of the 2026-07-28 revision):
	// one that connects and stays silent is closed and the slot freed
	// (R14). A client that did start may stay idle as long as it likes (an
	// Inspector left open): a second client is told who holds the slot and
	// since when, so a person can close it.
	Init time.Duration
	// Refuse bounds how long a client turned away is given to send its
	// initialize, so that the refusal answers that request by its id (an
	// MCP client shows an error that answers its request; one with id null
	// it drops).
	Refuse time.Duration
}

// DefaultWaits are the bounds of ServeDebug's socket.
var DefaultWaits = Waits{Init: 10 * time.Second, Refuse: 5 * time.Second}

// maxRefusing bounds the turned-away connections waiting at once; past it,
// a connection is closed with the refusal at once.
const maxRefusing = 8

// CodeBusy is the JSON-RPC error of a client turned away.
const CodeBusy = -32000

// debugSlot is the debug socket's one client.
type debugSlot struct {
	mu   sync.Mutex
	sess *stdiosession.Session // nil when free
	pid  int
	init time.Duration // how long it may stay silent
}

func (s *debugSlot) take(sess *stdiosession.Session, pid int, init time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess != nil {
		return false
	}
	s.sess, s.pid, s.init = sess, pid, init
	return true
}

func (s *debugSlot) free() {
	s.mu.Lock()
	s.sess, s.pid = nil, 0
	s.mu.Unlock()
}

// refusal tells a second client who holds the slot, since when, and what
// to do.
func (s *debugSlot) refusal() string {
	s.mu.Lock()
	sess, pid, init := s.sess, s.pid, s.init
	s.mu.Unlock()
	if sess == nil { // freed meanwhile
		return "another client was attached to this run's debug socket, and has just left; connect again"
	}
	who := "a client"
	if info := sess.GetClientInfo(); sess.Initialized() && info.Name != "" {
		who = strings.TrimSpace(info.Name + " " + info.Version)
	}
	if pid > 0 {
		who += fmt.Sprintf(" (pid %d)", pid)
	}
	ago := time.Since(sess.Since()).Round(time.Second)
	if !sess.Initialized() {
		return fmt.Sprintf("another client is attached to this run's debug socket: %s that connected %s ago and has not initialized yet; "+
			"the socket serves one client at a time and closes a client that does not initialize within %s, so connect again then", who, ago, init)
	}
	return fmt.Sprintf("another client is attached to this run's debug socket: %s, since %s (%s ago). "+
		"The socket serves one client at a time: close that client, then connect again", who, sess.Since().Format("15:04:05"), ago)
}

// Accept serves ln's clients one at a time, each with a session of its own
// that serve runs until the client goes; one that comes while another is
// served is answered with why and closed, as is a client of another user.
// It returns when ln is closed.
func Accept(ctx context.Context, ln net.Listener, waits Waits, serve func(ctx context.Context, conn net.Conn, sess *stdiosession.Session) error) {
	var slot debugSlot
	refusing := make(chan struct{}, maxRefusing)
	turnAway := func(conn net.Conn, why func() string) {
		select {
		case refusing <- struct{}{}:
			go func() {
				defer func() { <-refusing }()
				refuseDebug(conn, why, waits.Refuse)
			}()
		default:
			refuseDebug(conn, why, 0)
		}
	}
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		pid, err := sameUser(conn)
		if err != nil {
			turnAway(conn, err.Error)
			continue
		}
		sess := stdiosession.New(conn)
		if !slot.take(sess, pid, waits.Init) {
			turnAway(conn, slot.refusal)
			continue
		}
		go func() {
			defer slot.free()
			defer conn.Close()
			var silent atomic.Bool
			started := make(chan struct{})
			defer close(started)
			go func() {
				t := time.NewTimer(waits.Init)
				defer t.Stop()
				select {
				case <-sess.Ready():
				case <-started:
				case <-t.C:
					silent.Store(true)
					conn.SetWriteDeadline(time.Now().Add(time.Second))
					sess.Out().Reply(nil, CodeBusy, fmt.Sprintf("no initialize within %s: this run's debug socket serves one client at a time, "+
						"so a client that does not start its session is closed to let another attach", waits.Init))
					conn.Close()
				}
			}()
			if err := serve(ctx, conn, sess); err != nil && ctx.Err() == nil && !silent.Load() {
				fmt.Fprintf(os.Stderr, "builtin-tools: debug socket: %v\n", err)
			}
		}()
	}
}

// refuseDebug answers a client turned away and closes its connection. It
// waits at most wait for the client's first line: a request (initialize)
// is answered with an error carrying its id, which an MCP client shows;
// otherwise the error goes with id null.
func refuseDebug(conn net.Conn, why func() string, wait time.Duration) {
	defer conn.Close()
	var id json.RawMessage
	if wait > 0 {
		conn.SetReadDeadline(time.Now().Add(wait))
		id = rpcline.FirstRequestID(conn)
	}
	m, _ := json.Marshal(why())
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	conn.SetWriteDeadline(time.Now().Add(time.Second))
	fmt.Fprintf(conn, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`+"\n", id, CodeBusy, m)
}
