//go:build hardening

package hardening

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// D15: protocol details: no tool before initialize, refusals as tool
// errors, odd ids and bytes refused with a message, `..` as the kernel
// resolves it.
func TestD15(t *testing.T) { runCase(t, "D15", caseD15) }

func caseD15(c *cx) {
	root, outside := c.root, c.outside
	writeFile(filepath.Join(root, "sub", "a.txt"), "inside\n")
	writeFile(filepath.Join(root, "a\xff.txt"), "latin-1 name\n")

	c.sub("before initialize", func(c *cx) {
		s, err := c.startServe(root, nil, "--without", "lsp")
		check(err)
		defer s.close()
		r := s.tool("read", map[string]any{"path": "sub/a.txt"})
		c.line("tools/call before initialize", r.summary(160), "served (the read ran)")
		c.want(r.rpc != nil && r.rpc.Code == -32002, "JSON-RPC error -32002")
	})

	s := c.serve(root, "--without", "lsp")
	defer s.close()
	c.sub("object id", func(c *cx) {
		if err := s.writeRaw([]byte(`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}` + "\n")); err != nil {
			c.line("object id {\"a\":1}", err.Error(), "accepted")
			c.t.Fatal(err)
		}
		m, err := s.awaitNull(min(timeout, 10*time.Second))
		c.line("object id {\"a\":1} on a ping", msgSummary(m, err), "accepted (answered as a valid request)")
		c.want(err == nil && m.Error != nil && m.Error.Code == -32600, "JSON-RPC error -32600")
	})
	c.sub("invalid UTF-8", func(c *cx) {
		p := s.startRaw(func(id int64) []byte {
			return fmt.Appendf(nil, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"read\",\"arguments\":{\"path\":\"a\xff.txt\"}}}\n", id)
		})
		m, err := s.await(p, timeout)
		if err != nil { // answered with a null id, as a parse error
			m, err = s.awaitNull(time.Second)
		}
		c.line("invalid UTF-8 (0xff) in a read path", msgSummary(m, err), "replaced by U+FFFD, then \"does not exist\"")
		c.want(err == nil && m.Error != nil && m.Error.Code == -32700, "JSON-RPC error -32700")
	})

	// Refused and unknown tools.
	sp := c.serve(root, "--without", "lsp", "--mode", "plan")
	defer sp.close()
	c.sub("hidden tool", func(c *cx) {
		r := sp.tool("write", map[string]any{"path": "x.txt", "content": "x"})
		c.line("plan mode, tools/call write (hidden tool)", fmt.Sprintf("tool error: %s; %s", yesNo(r.isError), r.summary(120)), "JSON-RPC -32600 Invalid Request")
		c.want(r.err == nil && r.rpc == nil && r.isError && !exists(filepath.Join(root, "x.txt")), "a tool error, nothing written")
	})
	c.sub("unknown tool", func(c *cx) {
		r := sp.tool("nosuchtool", map[string]any{})
		c.line("unknown tool nosuchtool", r.summary(120), "JSON-RPC -32600 Invalid Request (for debug, then unknown)")
		c.want(r.rpc != nil && r.rpc.Code == -32602, "JSON-RPC error -32602")
	})

	// .. after a link, as the kernel resolves it.
	c.sub("dotdot after link", func(c *cx) {
		writeFile(filepath.Join(outside, "dir", "o.txt"), "outside\n")
		check(os.Symlink("../outside/dir", filepath.Join(root, "linkdir")))
		r := s.tool("read", map[string]any{"path": "linkdir/../sub/a.txt"})
		c.line("read linkdir/../sub/a.txt (the kernel: outside/sub/a.txt, absent)", r.summary(160), "read root/sub/a.txt (lexical ..)")
		c.want(r.err == nil && r.isError, "refused")
	})
}

func msgSummary(m *msg, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case m.Error != nil:
		return fmt.Sprintf("error %d: %s (id %s)", m.Error.Code, excerpt(m.Error.Message, 200), m.ID)
	}
	return "result " + excerpt(string(m.Result), 200)
}
