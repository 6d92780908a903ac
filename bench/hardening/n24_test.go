//go:build hardening

package hardening

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// N24: a request nested deeper than the parser's limit is answered with
// its own id, so the client is not left waiting.
func TestN24(t *testing.T) { runCase(t, "N24", caseN24) }

func caseN24(c *cx) {
	s := c.serve(c.root, "--without", "lsp")
	defer s.close()
	for _, depth := range []int{9_990, 10_001, 100_000} {
		c.sub(fmt.Sprint(depth), func(c *cx) {
			p := s.startRaw(func(id int64) []byte {
				b := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt","x":`, id)
				b = append(b, bytes.Repeat([]byte("["), depth)...)
				b = append(b, bytes.Repeat([]byte("]"), depth)...)
				return append(b, "}}}\n"...)
			})
			m, err := s.await(p, 10*time.Second)
			fig := msgSummary(m, err)
			if err != nil {
				if n, e := s.awaitNull(time.Second); e == nil {
					fig += "; came with id null: " + msgSummary(n, nil)
				}
			}
			c.line(fmt.Sprintf("a tools/call whose arguments nest %d arrays deep: answer with its id?", depth), fig, map[int]string{9_990: "answered with its id (a tool error for the extra argument)", 10_001: "no answer with its id: -32700 Parse error with id null", 100_000: "no answer with its id: -32700 Parse error with id null"}[depth])
			c.want(err == nil, "an answer carrying the request's id")
		})
	}
}
