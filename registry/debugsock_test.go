//go:build unix

package registry

import (
	"bufio"
	"encoding/json"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry/debugsock"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// sockClient is one raw connection to a debug socket.
type sockClient struct {
	t    *testing.T
	conn net.Conn
	br   *bufio.Reader
}

func dialSock(t *testing.T, sock string) *sockClient {
	t.Helper()
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &sockClient{t: t, conn: conn, br: bufio.NewReader(conn)}
}

func (c *sockClient) send(line string) {
	c.t.Helper()
	if _, err := c.conn.Write([]byte(line + "\n")); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// next reads the next message; ok is false when the connection ended.
func (c *sockClient) next() (m map[string]any, ok bool) {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	line, err := c.br.ReadString('\n')
	if err != nil {
		if ne, isNet := err.(net.Error); isNet && ne.Timeout() {
			c.t.Fatal("nothing from the debug socket within 30 s")
		}
		return nil, false
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		c.t.Fatalf("not JSON: %q", line)
	}
	return m, true
}

func initLine(id, name string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"` + name + `","version":"2.0"}}}`
}

// refusedWith checks that m is the busy error answering id, and returns
// its message.
func refusedWith(t *testing.T, m map[string]any, id any) string {
	t.Helper()
	e, _ := m["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if m["id"] != id || e["code"] != float64(debugsock.CodeBusy) || !strings.Contains(msg, "another client is attached") {
		t.Fatalf("want the busy error answering id %v, got %v", id, m)
	}
	return msg
}

// Issue 26: a second client is answered on its own initialize, by id, with
// who holds the socket, since when and what to do, so that an MCP client
// (which drops an error with id null) shows it; one that sends nothing is
// still told, within the bound, and closed.
func TestDebugSocketRefusalAnswersInitialize(t *testing.T) {
	r := toyRun(t)
	sock, err := r.serveDebug(t.Context(), tiers.ReadOnly, debugsock.Waits{Init: time.Minute, Refuse: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	first := dialSock(t, sock)
	first.send(initLine("1", "first-inspector"))
	if m, _ := first.next(); m["result"] == nil {
		t.Fatalf("first client: %v", m)
	}

	second := dialSock(t, sock)
	second.send(initLine(`"init-7"`, "second-inspector"))
	m, _ := second.next()
	msg := refusedWith(t, m, "init-7")
	if !contains(msg, "first-inspector 2.0", "since ", "close that client, then connect again") ||
		runtime.GOOS == "linux" && !strings.Contains(msg, "(pid ") {
		t.Errorf("the refusal does not say who, since when and what to do: %q", msg)
	}
	if m, ok := second.next(); ok {
		t.Errorf("the second connection stayed open: %v", m)
	}

	silent := dialSock(t, sock)
	m, _ = silent.next()
	refusedWith(t, m, nil)
	if m, ok := silent.next(); ok {
		t.Errorf("the silent connection stayed open: %v", m)
	}

	// The first client is still served.
	first.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m, _ := first.next(); m["id"] != float64(2) || m["result"] == nil {
		t.Fatalf("first client after the refusals: %v", m)
	}
}

// R14 (L-6): a client that connects and never speaks holds the slot only
// until the initialize bound; then it is told why and closed, and the next
// client is served.
func TestDebugSocketSilentClientFreesTheSlot(t *testing.T) {
	r := toyRun(t)
	sock, err := r.serveDebug(t.Context(), tiers.ReadOnly, debugsock.Waits{Init: 300 * time.Millisecond, Refuse: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	silent := dialSock(t, sock)
	// While it holds the slot, a second client learns it has not
	// initialized and when it will be closed.
	waiting := dialSock(t, sock)
	waiting.send(initLine("5", "waiting"))
	m, _ := waiting.next()
	if msg := refusedWith(t, m, float64(5)); !contains(msg, "has not initialized yet", "connect again then") {
		t.Errorf("refusal while the holder is silent: %q", msg)
	}

	m, ok := silent.next()
	e, _ := m["error"].(map[string]any)
	if msg, _ := e["message"].(string); !ok || !strings.Contains(msg, "no initialize within") {
		t.Fatalf("the silent client was not told why: %v", m)
	}
	if m, ok := silent.next(); ok {
		t.Fatalf("the silent client stayed connected: %v", m)
	}

	// The slot is freed once the silent client's session has ended: a
	// refusal before that says the holder has just left.
	var refused map[string]any
	if !testenv.Until(time.Minute, func() bool {
		next := dialSock(t, sock)
		next.send(initLine("1", "next"))
		m, _ := next.next()
		if m["result"] != nil {
			return true
		}
		refused = m
		next.conn.Close()
		return false
	}) {
		t.Fatalf("the slot was not freed: %v", refused)
	}
}

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
