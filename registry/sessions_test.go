//go:build unix

package registry_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// lineClient is a scripted MCP client on one connection (stdio pipes or a
// socket): it records every message the server sends it, and answers the
// server's elicitation/create requests with answer.
type lineClient struct {
	t    *testing.T
	name string
	w    io.Writer
	in   chan map[string]any // messages not yet taken by await
	// answer, when set, is the result sent back for an elicitation/create.
	answer string

	mu   sync.Mutex
	seen []map[string]any // every message received, in order
}

func newLineClient(t *testing.T, name string, r io.Reader, w io.Writer, answer string) *lineClient {
	c := &lineClient{t: t, name: name, w: w, in: make(chan map[string]any, 256), answer: answer}
	go func() {
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				close(c.in)
				return
			}
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) != nil {
				m = map[string]any{"unreadable": line}
			}
			c.mu.Lock()
			c.seen = append(c.seen, m)
			c.mu.Unlock()
			if m["method"] == "elicitation/create" && c.answer != "" {
				id, _ := json.Marshal(m["id"])
				fmt.Fprintf(c.w, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, c.answer)
				continue
			}
			c.in <- m
		}
	}()
	return c
}

func (c *lineClient) send(format string, a ...any) {
	c.t.Helper()
	if _, err := fmt.Fprintf(c.w, format+"\n", a...); err != nil {
		c.t.Fatalf("%s: send: %v", c.name, err)
	}
}

// await reads until the response to id and returns it.
func (c *lineClient) await(id float64) map[string]any {
	c.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-c.in:
			if !ok {
				c.t.Fatalf("%s: the connection ended before the answer to %v", c.name, id)
			}
			if m["id"] == id && m["method"] == nil {
				return m
			}
		case <-deadline:
			c.t.Fatalf("%s: no answer to %v within 30 s", c.name, id)
		}
	}
}

func (c *lineClient) initialize(withElicitation bool) {
	c.t.Helper()
	caps := `{}`
	if withElicitation {
		caps = `{"elicitation":{}}`
	}
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":%s,"clientInfo":{"name":%q,"version":"1"}}}`, caps, c.name)
	if a := c.await(0); a["result"] == nil {
		c.t.Fatalf("%s: initialize: %v", c.name, a)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// received returns what the client was sent whose method is method, and
// the progress tokens of the progress notifications among them.
func (c *lineClient) received(method string) (n int, tokens []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.seen {
		if m["method"] != method {
			continue
		}
		n++
		if p, ok := m["params"].(map[string]any); ok {
			if tok, ok := p["progressToken"].(string); ok {
				tokens = append(tokens, tok)
			}
		}
	}
	return n, tokens
}

// dialDebug connects to a debug socket as a client named name.
func dialDebug(t *testing.T, sock, name, answer string) *lineClient {
	t.Helper()
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return newLineClient(t, name, conn, conn, answer)
}

// R2 (H-2): an agent on ServeStdio and two inspectors on read-only debug
// sockets of the same run each have a session of their own. The agent's
// approval card reaches the agent only: an inspector that declares
// elicitation and would answer Allow never receives it, nor can it resume
// the agent's parked call with its request state; progress goes to the
// token's own client; Notify and Log reach each client exactly once.
func TestStdioSessionsApart(t *testing.T) {
	tick := toolOf("tick", tiers.Read, func(ctx context.Context, c *registry.Call) (string, error) {
		for i := range 3 {
			c.Progress(ctx, float64(i+1), 3, "tick")
		}
		return "ticked", nil
	})
	root := t.TempDir()
	r := newRun(t, registry.Config{Root: root, Families: []registry.Extension{toyFiles, family("t", tick)},
		Policy: registry.Policy{tiers.Write: registry.Ask}, Approver: elicitApprover{}})

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- r.ServeStdio(context.Background(), tiers.Normal, inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close() })
	// The operator refuses every card it is shown.
	agent := newLineClient(t, "agent", outR, inW, `{"action":"accept","content":{"ok":false}}`)
	agent.initialize(true)

	// Two inspectors attach after the agent, on two read-only sockets; both
	// declare elicitation and would allow anything.
	var inspectors []*lineClient
	for i := range 2 {
		sock, err := r.ServeDebug(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		in := dialDebug(t, sock, fmt.Sprintf("inspector%d", i+1), `{"action":"accept","content":{"ok":true}}`)
		in.initialize(true)
		inspectors = append(inspectors, in)
	}

	// The agent's write asks for approval: the card goes to the agent, who
	// refuses, so nothing is written.
	agent.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"put","arguments":{"path":"a.txt","content":"WRITTEN WITHOUT THE OPERATOR"}}}`)
	res, _ := json.Marshal(agent.await(1))
	if cards, _ := agent.received("elicitation/create"); cards != 1 || !strings.Contains(string(res), "the operator said no") {
		t.Errorf("the agent was shown %d cards; its write answered %s", cards, res)
	}
	if b, err := os.ReadFile(filepath.Join(root, "a.txt")); err == nil {
		t.Errorf("a.txt was written without the operator: %q", b)
	}

	// Progress of each client's call reaches that client only.
	agent.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tick","arguments":{},"_meta":{"progressToken":"agent-tick"}}}`)
	agent.await(2)
	for i, in := range inspectors {
		in.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tick","arguments":{},"_meta":{"progressToken":"inspector%d-tick"}}}`, i+1)
		in.await(2)
	}

	// Outside any call: one notification and one log message to each.
	r.Notify("notifications/builtin-tools/worker", map[string]any{"id": "w1"})
	r.Log("error", "test", "once")
	r.Notify("notifications/builtin-tools/worker", map[string]any{"id": "last"})
	clients := append([]*lineClient{agent}, inspectors...)
	for _, c := range clients {
		testenv.WaitFor(t, time.Minute, c.name+": two worker notifications", func() bool {
			n, _ := c.received("notifications/builtin-tools/worker")
			return n >= 2
		})
	}

	// A readonly inspector holding the agent's request state cannot answer
	// the agent's question with it (2026-07-28 era: input_required).
	agent.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"put","arguments":{"path":"b.txt","content":"x"},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"agent","version":"1"}}}}`)
	parked, _ := json.Marshal(agent.await(3))
	state := requestState(parked)
	if state == "" {
		t.Fatalf("the agent's modern write did not park: %s", parked)
	}
	inspectors[0].send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"put","arguments":{"path":"b.txt","content":"x"},"requestState":%q,"inputResponses":{"q1":{"action":"accept","content":{"ok":true}}}}}`, state)
	stolen, _ := json.Marshal(inspectors[0].await(3))
	if !strings.Contains(string(stolen), "from another session") {
		t.Errorf("the inspector resumed the agent's call: %s", stolen)
	}
	agent.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"put","arguments":{"path":"b.txt","content":"x"},"requestState":%q,"inputResponses":{"q1":{"action":"accept","content":{"ok":false}}},"_meta":{`+
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},`+
		`"io.modelcontextprotocol/clientInfo":{"name":"agent","version":"1"}}}}`, state)
	if own, _ := json.Marshal(agent.await(4)); !strings.Contains(string(own), "the operator said no") {
		t.Errorf("the agent's own answer: %s", own)
	}
	if _, err := os.Stat(filepath.Join(root, "b.txt")); err == nil {
		t.Error("b.txt was written on the inspector's answer")
	}

	for _, c := range clients {
		c.send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
		c.await(9)
		cards, _ := c.received("elicitation/create")
		_, tokens := c.received("notifications/progress")
		notes, _ := c.received("notifications/builtin-tools/worker")
		logs, _ := c.received("notifications/message")
		wantCards := 0
		if c == agent {
			wantCards = 1
		}
		if cards != wantCards || notes != 2 || logs != 1 {
			t.Errorf("%s: %d approval cards (want %d), %d notifications and %d log messages (want 2 and 1)", c.name, cards, wantCards, notes, logs)
		}
		want := c.name + "-tick"
		if len(tokens) != 3 || strings.Count(strings.Join(tokens, " "), want) != 3 {
			t.Errorf("%s: progress for %v, want 3 for %s", c.name, tokens, want)
		}
	}
}

// requestState finds the requestState of an input_required result.
func requestState(res []byte) string {
	var m struct {
		Result struct {
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	json.Unmarshal(res, &m)
	return m.Result.RequestState
}
