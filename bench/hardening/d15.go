package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// D15: protocol details.
func caseD15(c *cx) {
	root, outside := c.root, c.outside
	writeFile(filepath.Join(root, "sub", "a.txt"), "inside\n")
	writeFile(filepath.Join(root, "a\xff.txt"), "latin-1 name\n")

	// No initialize at all.
	s, err := c.startServe(root, nil, "--without", "lsp")
	check(err)
	r := s.tool("read", map[string]any{"path": "sub/a.txt"})
	c.line("tools/call before initialize", r.summary(160), "served (the read ran)")
	s.close()

	s = c.serve(root, "--without", "lsp")
	defer s.close()
	if err := s.writeRaw([]byte(`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}` + "\n")); err != nil {
		c.line("object id {\"a\":1}", err.Error(), "accepted")
	} else {
		m, err := s.awaitNull(min(timeout, 10*time.Second))
		c.line("object id {\"a\":1} on a ping", msgSummary(m, err), "accepted (answered as a valid request)")
	}
	p := s.startRaw(func(id int64) []byte {
		return fmt.Appendf(nil, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"read\",\"arguments\":{\"path\":\"a\xff.txt\"}}}\n", id)
	})
	m, err := s.await(p, timeout)
	c.line("invalid UTF-8 (0xff) in a read path", msgSummary(m, err), "replaced by U+FFFD, then \"does not exist\"")

	// Refused and unknown tools.
	sp := c.serve(root, "--without", "lsp", "--mode", "plan")
	defer sp.close()
	r = sp.tool("write", map[string]any{"path": "x.txt", "content": "x"})
	c.line("plan mode, tools/call write (hidden tool)", fmt.Sprintf("tool error: %s; %s", yesNo(r.isError), r.summary(120)), "JSON-RPC -32600 Invalid Request")
	r = sp.tool("debug", map[string]any{})
	c.line("unknown tool debug", r.summary(120), "JSON-RPC -32600 Invalid Request")

	// .. after a link, as the kernel resolves it.
	writeFile(filepath.Join(outside, "dir", "o.txt"), "outside\n")
	check(os.Symlink("../outside/dir", filepath.Join(root, "linkdir")))
	r = s.tool("read", map[string]any{"path": "linkdir/../sub/a.txt"})
	c.line("read linkdir/../sub/a.txt (the kernel: outside/sub/a.txt, absent)", r.summary(160), "read root/sub/a.txt (lexical ..)")
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
