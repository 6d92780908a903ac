package dap

import (
	"fmt"
	"strings"
	"testing"
)

// M4: once the output buffer was full, every output event copied all of
// it (a new 1 MiB slice per 100-byte line), under the session's lock. Now
// an event on a full buffer allocates nothing, and what the agent reads is
// unchanged: the newest output, what was dropped, a cursor.
func TestOutputBufferFull(t *testing.T) {
	var o outBuf
	line := strings.Repeat("x", 99) + "\n"
	for range 3 * maxOutput / len(line) {
		o.add(line)
	}
	if allocs := testing.AllocsPerRun(10000, func() { o.add(line) }); allocs > 0 {
		t.Fatalf("an output event on a full buffer allocates %.1f times", allocs)
	}
	if len(o.data) < maxOutput || len(o.data) > 2*maxOutput {
		t.Fatalf("the buffer holds %d bytes", len(o.data))
	}

	s := &Session{}
	for i := range 30000 {
		s.out.add(fmt.Sprintf("line %06d %s\n", i, strings.Repeat("y", 88)))
	}
	text, skipped, more := s.newOutput(1 << 30)
	if skipped == 0 || more != 0 || !strings.HasSuffix(text, "line 029999 "+strings.Repeat("y", 88)+"\n") {
		t.Fatalf("output: %d bytes, skipped %d, more %d, ends %q", len(text), skipped, more, text[max(len(text)-30, 0):])
	}
	if int64(len(text))+skipped != 30000*101 {
		t.Fatalf("shown %d + skipped %d is not the %d bytes printed", len(text), skipped, 30000*101)
	}
	s.out.add("after\n")
	if text, skipped, _ := s.newOutput(1 << 30); text != "after\n" || skipped != 0 {
		t.Fatalf("the cursor: %q, skipped %d", text, skipped)
	}
	// A stop result shows the newest 2,000 bytes of what it has not shown
	// yet, and says how much it left out.
	s.out.add(strings.Repeat("z", 5000))
	recent, left := s.recentOutput()
	if len(recent) != 2000 || left != 5000-2000 {
		t.Fatalf("recent output: %d bytes, %d left out", len(recent), left)
	}
	if recent, left := s.recentOutput(); recent != "" || left != 0 {
		t.Fatalf("recent output again: %q, %d", recent, left)
	}
}
