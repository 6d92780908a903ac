//go:build hardening

package hardening

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// R14 (L-6 of the third attack, docs/HARDENING.md): a client that connects to a run's
// debug socket and never speaks held the one slot until it closed; the
// next client was told "another client is attached" for as long. Now the
// slot is freed when the silent client has not initialized within 10 s.
// Issue 26: the refusal answers the second client's initialize by its id.
func TestR14(t *testing.T) { runCase(t, "R14", caseR14) }

func caseR14(c *cx) {
	r, err := builtintools.NewRun(builtintools.Options{Root: c.root, Without: []string{"lsp"}})
	check(err)
	defer r.Close()
	sock, err := r.ServeDebug(context.Background(), "")
	check(err)
	silent, err := net.Dial("unix", sock)
	check(err)
	defer silent.Close()
	t0 := time.Now()

	initialize := func(id string) (map[string]any, error) {
		conn, err := net.Dial("unix", sock)
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		fmt.Fprintf(conn, `{"jsonrpc":"2.0","id":%s,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"next","version":"1"}}}`+"\n", id)
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil {
			return nil, err
		}
		var m map[string]any
		return m, json.Unmarshal([]byte(line), &m)
	}

	c.sub("refusal", func(c *cx) {
		m, err := initialize(`"second-1"`)
		e, _ := m["error"].(map[string]any)
		msg, _ := e["message"].(string)
		c.line("a second client's initialize while the silent one holds the socket: the answer's id; its message",
			fmt.Sprintf("%v; %q (%v)", m["id"], msg, err), `null; "another client is attached to this run's debug socket; one at a time" (the Inspector shows "Connection closed")`)
		c.want(m["id"] == "second-1" && strings.Contains(msg, "another client is attached"), "the refusal answering its own initialize")
	})
	c.sub("silent", func(c *cx) {
		var served time.Duration
		var last map[string]any
		i := 0
		testenv.Until(30*time.Second-time.Since(t0), func() bool {
			i++
			m, err := initialize(fmt.Sprint(i))
			if err == nil && m["result"] != nil {
				served = time.Since(t0)
				return true
			}
			last = m
			return false
		})
		fig := "not within 30 s: " + fmt.Sprint(last)
		if served > 0 {
			fig = "served " + secs(served) + " after the silent client connected"
		}
		c.line("a silent client holds the debug socket: when is the next client served", fig, "never while the silent client stays (30 s here)")
		c.want(served > 0 && served < 20*time.Second, "the next client served once the 10 s initialize bound has passed")
	})
}
