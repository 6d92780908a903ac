//go:build hardening

package hardening

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// D10: huge frames on serve's input are answered in bounded memory, and
// huge arguments are not echoed back.
func TestD10(t *testing.T) { runCase(t, "D10", caseD10) }

func caseD10(c *cx) {
	root := c.root

	// A 1 GiB line without a newline inside it, then a ping.
	c.sub("1 GiB line", func(c *cx) {
		s := c.serve(root, "--without", "lsp")
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		t0 := time.Now()
		var werr error
		for i := 0; i < 1024 && werr == nil; i++ {
			werr = s.writeRaw(chunk)
		}
		if werr == nil {
			werr = s.writeRaw([]byte("\n"))
		}
		sent := time.Since(t0)
		var errFig string
		answered := false
		if werr != nil {
			errFig = "sending failed: " + werr.Error()
		} else {
			m, err := s.awaitNull(timeout)
			errFig = msgSummary(m, err)
			answered = err == nil && m.Error != nil
		}
		ping, perr := s.call("ping", nil, timeout)
		pingFig := "answered"
		if perr != nil {
			pingFig = perr.Error()
		} else if ping.Error != nil {
			pingFig = fmt.Sprintf("error %d: %s", ping.Error.Code, ping.Error.Message)
		}
		h := s.hwm()
		s.close()
		c.line("1 GiB line without a newline: VmHWM; error back?; ping after",
			fmt.Sprintf("%s; %s; ping %s (1 GiB sent in %s)", mib(h), excerpt(errFig, 160), pingFig, secs(sent)),
			"3.2 GB RSS")
		c.want(answered && pingFig == "answered" && h > 0 && h < 200<<10, "an error answer, the ping answered, serve under 200 MiB")
	})

	pathCall := func(n int) (toolResult, int64) {
		s := c.serve(root, "--without", "lsp")
		defer s.close()
		big := bytes.Repeat([]byte("a"), n)
		p := s.startRaw(func(id int64) []byte {
			b := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read","arguments":{"path":"`, id)
			return append(append(b, big...), "\"}}}\n"...)
		})
		r := s.awaitTool(p, timeout)
		return r, s.hwm()
	}
	c.sub("100 MiB path", func(c *cx) {
		r, h := pathCall(100 << 20)
		c.line("read with a 100 MiB path: answer time, VmHWM, answer", fmt.Sprintf("%s, %s, %s", secs(r.dur), mib(h), r.summary(140)),
			"no answer within 120 s, 1.96 GB RSS")
		c.want(r.err == nil && !r.ok() && r.size < 64<<10 && h > 0 && h < 300<<10, "refused with a short answer, serve under 300 MiB")
	})
	c.sub("10 MiB path", func(c *cx) {
		r, h := pathCall(10 << 20)
		c.line("read with a 10 MiB path: response size, answer", fmt.Sprintf("%s in %s, VmHWM %s; %s", byteSize(r.size), secs(r.dur), mib(h), r.summary(140)),
			"a 20 MB error (the path echoed twice), in 10 s")
		c.want(r.err == nil && !r.ok() && r.size < 64<<10, "refused with an answer under 64 KiB")
	})
}
