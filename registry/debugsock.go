//go:build unix

package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/registry/rpcline"
	"github.com/builtin-tools/builtin-tools/registry/stdiosession"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// ServeDebug lets a developer inspect this live run — with the MCP
// Inspector, through `builtin-tools attach SOCKET` — while the harness that
// links the library keeps using it. It listens on a unix socket in a
// private folder (0700; a client of another user is refused), serves one
// client at a time in mode (readonly when mode is empty) and returns the
// socket's path. Nothing listens on a network. The socket and its folder go
// when ctx ends or the run closes.
//
// Each client has a session of its own, apart from the harness's peers: it
// never sees their questions, progress or answers. A second client is
// answered, on its initialize, with who holds the socket and since when; a
// client that does not initialize within 10 s is closed.
func (r *Run) ServeDebug(ctx context.Context, mode tiers.Mode) (string, error) {
	return r.serveDebug(ctx, mode, defaultDebugWaits)
}

func (r *Run) serveDebug(ctx context.Context, mode tiers.Mode, waits debugWaits) (string, error) {
	if mode == "" {
		mode = tiers.ReadOnly
	}
	if _, err := tiers.ParseMode(string(mode)); err != nil {
		return "", err
	}
	if r.ctx.Err() != nil {
		return "", ErrClosed
	}
	dir, err := proc.TempDir("debug-")
	if err != nil {
		return "", fmt.Errorf("a folder for the debug socket: %w", err)
	}
	sock := filepath.Join(dir, "mcp.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("the debug socket: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			ln.Close()
			os.RemoveAll(dir)
		})
	}
	r.OnClose(func() error { stop(); return nil })
	go func() {
		select {
		case <-ctx.Done():
		case <-r.ctx.Done():
		}
		stop()
	}()
	go r.acceptDebug(ctx, ln, mode, waits)
	return sock, nil
}

// debugWaits are the debug socket's two bounds.
type debugWaits struct {
	// init bounds how long a client holds the one slot before its session
	// starts (initialize, or a first request of the 2026-07-28 revision):
	// one that connects and stays silent is closed and the slot freed
	// (R14). A client that did start may stay idle as long as it likes (an
	// Inspector left open): a second client is told who holds the slot and
	// since when, so a person can close it.
	init time.Duration
	// refuse bounds how long a client turned away is given to send its
	// initialize, so that the refusal answers that request by its id (an
	// MCP client shows an error that answers its request; one with id null
	// it drops).
	refuse time.Duration
}

var defaultDebugWaits = debugWaits{init: 10 * time.Second, refuse: 5 * time.Second}

// maxRefusing bounds the turned-away connections waiting at once; past it,
// a connection is closed with the refusal at once.
const maxRefusing = 8

// codeBusy is the JSON-RPC error of a client turned away.
const codeBusy = -32000

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

// acceptDebug serves the socket's clients one at a time; one that comes
// while another is served is answered with why and closed.
func (r *Run) acceptDebug(ctx context.Context, ln net.Listener, mode tiers.Mode, waits debugWaits) {
	var slot debugSlot
	refusing := make(chan struct{}, maxRefusing)
	turnAway := func(conn net.Conn, why func() string) {
		select {
		case refusing <- struct{}{}:
			go func() {
				defer func() { <-refusing }()
				refuseDebug(conn, why, waits.refuse)
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
		if !slot.take(sess, pid, waits.init) {
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
				t := time.NewTimer(waits.init)
				defer t.Stop()
				select {
				case <-sess.Ready():
				case <-started:
				case <-t.C:
					silent.Store(true)
					conn.SetWriteDeadline(time.Now().Add(time.Second))
					sess.Out().Reply(nil, codeBusy, fmt.Sprintf("no initialize within %s: this run's debug socket serves one client at a time, "+
						"so a client that does not start its session is closed to let another attach", waits.init))
					conn.Close()
				}
			}()
			if err := r.serveStdio(ctx, mode, conn, sess); err != nil && ctx.Err() == nil && !silent.Load() {
				fmt.Fprintf(stderr, "builtin-tools: debug socket: %v\n", err)
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
	fmt.Fprintf(conn, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`+"\n", id, codeBusy, m)
}
