//go:build hardening

package hardening

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// D9: staged ast_edit proposals expire: 20 stagings, none resolved, keep
// at most 16 (and 256 MiB), and serve's memory stops growing.
//
// The report staged over the whole of GOROOT/src (about 19 s a staging
// here); this stages over src/crypto and src/encoding (650 files, 1/12 of
// it), which still passes the count cap by four.
func TestD9(t *testing.T) { runCase(t, "D9", caseD9) }

func caseD9(c *cx) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	check(err)
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	root := c.root
	t0 := time.Now()
	for _, d := range []string{"crypto", "encoding"} {
		check(copyTree(filepath.Join(src, d), filepath.Join(root, d)))
	}
	c.logf("copied %s/{crypto,encoding} in %s", src, time.Since(t0))

	s := c.serve(root, "--without", "lsp")
	defer s.close()
	var ids []string
	var h1, h5 int64
	var total time.Duration
	var last toolResult
	for i := 1; i <= 20; i++ {
		r := s.tool("ast_edit", map[string]any{"pattern": "if err != nil { $$$B }", "rewrite": "if err != nil { panic(err) }", "language": "go"})
		total += r.dur
		last = r
		if id := editID.FindString(r.text); id != "" && r.ok() {
			ids = append(ids, id)
		} else {
			ids = append(ids, "("+r.summary(60)+")")
		}
		switch i {
		case 1:
			h1 = s.hwm()
		case 5:
			h5 = s.hwm()
		}
	}
	h20 := s.hwm()
	c.sub("memory", func(c *cx) {
		c.line("VmHWM after 5 stagings of `if err != nil { $$$B }` over GOROOT/src/{crypto,encoding}", fmt.Sprintf("%s (after 1: %s)", mib(h5), mib(h1)),
			"975 MB (72 MB before staging), over all of GOROOT/src")
		first, _, _ := strings.Cut(last.text, "\n")
		c.line("VmHWM after 20 stagings", fmt.Sprintf("%s (%s per staging on average; ids %s … %s; the 20th said %q)",
			mib(h20), secs(total/20), ids[0], ids[len(ids)-1], excerpt(first, 100)), "2.27 GB, over all of GOROOT/src")
		c.want(last.ok() && h20 > 0 && h20 < 1<<20, "the 20th staged, serve under 1 GiB")
	})
	c.sub("expired", func(c *cx) {
		r := s.tool("resolve", map[string]any{"edit_id": "edit_1", "action": "accept"})
		c.line("resolve edit_1 accept after the 20 stagings", r.summary(240), "n/a (all 20 kept; none expired)")
		c.want(r.err == nil && r.isError && strings.Contains(r.text, "dropped"), "edit_1 reported dropped, nothing written")
	})
}
