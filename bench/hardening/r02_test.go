//go:build hardening

package hardening

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

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/askuser"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// R2 (H-2 of the third attack, docs/HARDENING.md): a harness serves its agent over
// Run.ServeStdio (write=ask, asked through MCP elicitation) and opens
// Run.ServeDebug (read-only); an inspector attaches after the agent. The
// agent's approval card went to the inspector, which allowed the edit, and
// the agent's progress was split between the two. The case links the
// library, as the attack's harness did.
func TestR02(t *testing.T) { runCase(t, "R2", caseR02) }

// The card answers: the operator, at the agent, denies; the inspector
// would allow.
const (
	denyCard  = `{"action":"accept","content":{"choice":"Deny"}}`
	allowCard = `{"action":"accept","content":{"choice":"Allow"}}`
)

func caseR02(c *cx) {
	writeFile(filepath.Join(c.root, "a.txt"), "ORIGINAL\n")
	for i := range 200 {
		writeFile(filepath.Join(c.root, "src", fmt.Sprintf("f%d.go", i)), fmt.Sprintf("package src\n\nfunc F%d() int { return %d }\n", i, i))
	}
	r, err := builtintools.NewRun(builtintools.Options{Root: c.root, Policy: registry.Policy{tiers.Write: registry.Ask},
		Ask: askuser.Elicitation{}, Without: []string{"lsp"}})
	check(err)
	defer r.Close()

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		r.ServeStdio(context.Background(), tiers.Normal, inR, outW)
		outW.Close()
	}()
	defer inW.Close()
	agent := newRPCClient("agent", outR, inW, denyCard)
	agent.initialize()
	sock, err := r.ServeDebug(context.Background(), "")
	check(err)
	conn, err := net.Dial("unix", sock)
	check(err)
	defer conn.Close()
	inspector := newRPCClient("inspector", conn, conn, allowCard)
	inspector.initialize()

	c.sub("approval", func(c *cx) {
		ans := agent.call(1, `{"name":"edit","arguments":{"path":"a.txt","old_string":"ORIGINAL","new_string":"WRITTEN WITHOUT THE OPERATOR"}}`)
		b, _ := os.ReadFile(filepath.Join(c.root, "a.txt"))
		toAgent, toInspector := agent.count("elicitation/create", ""), inspector.count("elicitation/create", "")
		c.line("agent's edit under write=ask: cards to the agent / to the read-only inspector; a.txt; the agent's answer",
			fmt.Sprintf("%d / %d; %q; %s", toAgent, toInspector, strings.TrimSpace(string(b)), summarize(ans)),
			`0 / 1; "WRITTEN WITHOUT THE OPERATOR"; the agent was told it succeeded`)
		c.want(toAgent == 1 && toInspector == 0 && string(b) == "ORIGINAL\n", "the card at the agent only, and a.txt unchanged on its Deny")
	})
	c.sub("progress", func(c *cx) {
		for i := 1; i <= 3; i++ {
			agent.call(10+i, fmt.Sprintf(`{"name":"ast_grep","arguments":{"pattern":"func $F() int { return $N }","language":"go","path":"src"},"_meta":{"progressToken":"agent-ast-%d"}}`, i))
		}
		// A round trip of each, so that progress sent before it is in.
		agent.call(20, `{"name":"read","arguments":{"path":"a.txt"}}`)
		inspector.call(20, `{"name":"read","arguments":{"path":"a.txt"}}`)
		var agentTokens []int
		for i := 1; i <= 3; i++ {
			agentTokens = append(agentTokens, agent.count("notifications/progress", fmt.Sprintf("agent-ast-%d", i)))
		}
		stray := inspector.count("notifications/progress", "")
		c.line("progress of the agent's 3 ast_grep calls: per token at the agent; at the inspector",
			fmt.Sprintf("%v; %d", agentTokens, stray), "[1 0 1]; 1 at 3d51568 here (the report: 2 of them, agent-ast-1 and agent-ast-3, at the inspector)")
		c.want(stray == 0 && agentTokens[0] > 0 && agentTokens[1] > 0 && agentTokens[2] > 0, "every call's progress at the agent, none at the inspector")
	})
	c.sub("notify", func(c *cx) {
		r.Notify("notifications/builtin-tools/r02", map[string]any{"n": 1})
		agent.call(30, `{"name":"read","arguments":{"path":"a.txt"}}`)
		inspector.call(30, `{"name":"read","arguments":{"path":"a.txt"}}`)
		testenv.Until(5*time.Second, func() bool {
			return agent.count("notifications/builtin-tools/r02", "") > 0 && inspector.count("notifications/builtin-tools/r02", "") > 0
		})
		// Another round trip: a duplicate queued before it is in by its answer.
		agent.call(31, `{"name":"read","arguments":{"path":"a.txt"}}`)
		inspector.call(31, `{"name":"read","arguments":{"path":"a.txt"}}`)
		a, i := agent.count("notifications/builtin-tools/r02", ""), inspector.count("notifications/builtin-tools/r02", "")
		c.line("Run.Notify outside a call: copies at the agent / the inspector", fmt.Sprintf("%d / %d", a, i), "1 / 1 at 3d51568 here, from one shared channel that either client reads")
		c.want(a == 1 && i == 1, "one at each")
	})
}

// rpcClient is a line-JSON MCP client that records what it is sent and
// answers elicitation/create with card.
type rpcClient struct {
	name string
	w    io.Writer
	card string

	mu      sync.Mutex
	seen    []map[string]any
	waiters map[float64]chan map[string]any
}

func newRPCClient(name string, r io.Reader, w io.Writer, card string) *rpcClient {
	c := &rpcClient{name: name, w: w, card: card, waiters: map[float64]chan map[string]any{}}
	go func() {
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) != nil {
				continue
			}
			c.mu.Lock()
			c.seen = append(c.seen, m)
			id, isNum := m["id"].(float64)
			ch := c.waiters[id]
			c.mu.Unlock()
			if m["method"] == "elicitation/create" {
				idb, _ := json.Marshal(m["id"])
				fmt.Fprintf(c.w, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", idb, c.card)
				continue
			}
			if isNum && m["method"] == nil && ch != nil {
				ch <- m
			}
		}
	}()
	return c
}

// request sends a request and waits for its answer (nil after a minute).
func (c *rpcClient) request(id int, method, params string) map[string]any {
	ch := make(chan map[string]any, 1)
	c.mu.Lock()
	c.waiters[float64(id)] = ch
	c.mu.Unlock()
	fmt.Fprintf(c.w, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
	select {
	case m := <-ch:
		return m
	case <-time.After(time.Minute):
		return nil
	}
}

func (c *rpcClient) initialize() {
	m := c.request(0, "initialize", fmt.Sprintf(`{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":%q,"version":"1"}}`, c.name))
	if m == nil || m["result"] == nil {
		check(fmt.Errorf("%s: initialize: %v", c.name, m))
	}
	fmt.Fprintf(c.w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
}

func (c *rpcClient) call(id int, params string) map[string]any {
	return c.request(id, "tools/call", params)
}

// count counts the messages of method received, only those whose progress
// token is token when token is set.
func (c *rpcClient) count(method, token string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, m := range c.seen {
		if m["method"] != method {
			continue
		}
		p, _ := m["params"].(map[string]any)
		if token == "" || p["progressToken"] == token {
			n++
		}
	}
	return n
}

// summarize is a tool answer's text, cut to 100 bytes.
func summarize(m map[string]any) string {
	if m == nil {
		return "no answer"
	}
	b, _ := json.Marshal(m["result"])
	if m["error"] != nil {
		b, _ = json.Marshal(m["error"])
	}
	if len(b) > 100 {
		b = append(b[:100], "…"...)
	}
	return string(b)
}
