//go:build hardening

package hardening

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// D13: a temp file left by a SIGKILL mid-write leaves the target intact and
// is swept by the next write in that folder once it is old.
func TestD13(t *testing.T) { runCase(t, "D13", caseD13) }

func caseD13(c *cx) {
	root := c.root
	big := filepath.Join(root, "big.txt")
	writeFile(big, "original\n")
	content := strings.Repeat(strings.Repeat("x", 99)+"\n", 1_500_000) // 150 MB
	var (
		seen, tries string
		left        []string
		intact      bool
	)
	// The kill must land while the temp file exists: a write that ends
	// first (a fast disk) is tried again, up to three times.
	for try := 1; try <= 3 && seen == ""; try++ {
		writeFile(big, "original\n")
		// A larger --max-frame so the 150 MB call is read at all.
		s := c.serve(root, "--without", "lsp", "--max-frame", fmt.Sprint(512<<20))
		p := s.toolAsync("write", map[string]any{"path": "big.txt", "content": content})
		seen = tempDuring(root, p, timeout)
		s.signal(syscall.SIGKILL, 10*time.Second)
		left = temps(root)
		intact = readFile(big) == "original\n"
		tries = fmt.Sprint(try)
	}
	switch {
	case seen == "":
		c.line("SIGKILL serve during a 150 MB write: temp file left?", "no temp file seen before the write ended or the timeout in "+tries+" tries; left now: "+fmt.Sprint(len(left)), "yes, a 6 MB .big.txt.tmp-* (target intact)")
		c.lacks("the write ended before a temp file was seen, in %s tries; nothing to sweep", tries)
	case len(left) == 0:
		c.line("SIGKILL serve during a 150 MB write: temp file left?", fmt.Sprintf("no (one was seen mid-write: %s); target intact: %s", filepath.Base(seen), yesNo(intact)), "yes, a 6 MB .big.txt.tmp-* (target intact)")
		c.want(intact, "the target intact")
		return
	}
	var desc []string
	for _, t := range left {
		fi, _ := os.Stat(t)
		size := int64(0)
		if fi != nil {
			size = fi.Size()
		}
		desc = append(desc, fmt.Sprintf("%s, %s", filepath.Base(t), byteSize(int(size))))
	}
	c.line("SIGKILL serve during a 150 MB write: temp file left? target intact?",
		fmt.Sprintf("yes: %s; target intact: %s", strings.Join(desc, "; "), yesNo(intact)),
		"yes, a 6 MB .big.txt.tmp-* (target intact)")
	c.want(intact, "the target intact")

	hour := time.Now().Add(-time.Hour)
	for _, t := range left {
		check(os.Chtimes(t, hour, hour))
	}
	s2 := c.serve(root, "--without", "lsp")
	r := s2.tool("write", map[string]any{"path": "other.txt", "content": "later\n"})
	s2.close()
	c.line("mtime an hour back, then a write of other.txt by a new serve: temp file swept?",
		fmt.Sprintf("%s (%d left; write: %s)", yesNo(len(temps(root)) == 0), len(temps(root)), r.summary(60)),
		"no (nothing sweeps these files)")
	c.want(r.ok() && len(temps(root)) == 0, "the old temp file swept by the next write")
}
