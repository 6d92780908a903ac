package projcheck

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// A checker's output is kept to its first lines, each cut at 400 bytes,
// with the rest counted; blank lines at the end are not output, and
// output that is only blank is none.
func TestLineCollector(t *testing.T) {
	c := &lineCollector{max: 3}
	long := strings.Repeat("x", 500)
	fmt.Fprintf(c, "a.go:1: one\n%s\nb.go:2: two\nc.go:3: three\nd.go:4: four", long)
	lines, more := c.result()
	if len(lines) != 3 || lines[0] != "a.go:1: one" || lines[2] != "b.go:2: two" || more != 2 {
		t.Fatalf("lines %q, %d more", lines, more)
	}
	if len(lines[1]) > 400+len("…") || !strings.HasPrefix(lines[1], "xxx") {
		t.Fatalf("a 500-byte line kept as %d bytes", len(lines[1]))
	}

	c = &lineCollector{max: 5}
	c.Write([]byte("one\n"))
	c.Write([]byte("tw"))
	c.Write([]byte("o\n\n\n"))
	if lines, more := c.result(); !slices.Equal(lines, []string{"one", "two"}) || more != 0 {
		t.Fatalf("trailing blank lines: %q, %d more", lines, more)
	}

	c = &lineCollector{max: 5}
	c.Write([]byte("\n  \n\n"))
	if lines, more := c.result(); lines != nil || more != 0 {
		t.Fatalf("blank output: %q, %d more", lines, more)
	}
}
