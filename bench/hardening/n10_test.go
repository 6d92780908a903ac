//go:build hardening

package hardening

import (
	"fmt"
	"testing"
	"time"
)

// N10: eval's structured result is cut as its text is: a 60 M-character
// last expression must not come back whole in structuredContent.
func TestN10(t *testing.T) { runCase(t, "N10", caseN10) }

func caseN10(c *cx) {
	s := c.serveIn(memLimit, c.root, nil, "--without", "lsp")
	defer s.kill()
	r := s.cell(3*time.Minute, "'z' * 60_000_000\n")
	h := s.hwm()
	c.line("a cell whose last expression is 60 M characters: response line bytes, text, serve's VmHWM",
		fmt.Sprintf("%s; text %s; %s", byteSize(r.size), excerpt(r.text, 100), mib(h)), "60004215 bytes (57.2 MiB); text 4049 bytes; 370 MiB")
	c.want(r.ok() && r.size < 256<<10, "the whole response under 256 KiB")
}
