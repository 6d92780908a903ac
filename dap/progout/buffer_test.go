package progout

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
	var o Buffer
	line := strings.Repeat("x", 99) + "\n"
	for range 3 * maxOutput / len(line) {
		add(&o, line)
	}
	if allocs := testing.AllocsPerRun(10000, func() { add(&o, line) }); allocs > 0 {
		t.Fatalf("an output event on a full buffer allocates %.1f times", allocs)
	}
	chunk := []byte(line)
	if allocs := testing.AllocsPerRun(10000, func() { o.Write(chunk) }); allocs > 0 {
		t.Fatalf("a terminal read on a full buffer allocates %.1f times", allocs)
	}
	if len(o.data) < maxOutput || len(o.data) > 2*maxOutput {
		t.Fatalf("the buffer holds %d bytes", len(o.data))
	}

	s := &struct{ out Buffer }{}
	for i := range 30000 {
		add(&s.out, fmt.Sprintf("line %06d %s\n", i, strings.Repeat("y", 88)))
	}
	text, skipped, more := s.out.Unshown(1 << 30)
	if skipped == 0 || more != 0 || !strings.HasSuffix(text, "line 029999 "+strings.Repeat("y", 88)+"\n") {
		t.Fatalf("output: %d bytes, skipped %d, more %d, ends %q", len(text), skipped, more, text[max(len(text)-30, 0):])
	}
	if int64(len(text))+skipped != 30000*101 {
		t.Fatalf("shown %d + skipped %d is not the %d bytes printed", len(text), skipped, 30000*101)
	}
	add(&s.out, "after\n")
	if text, skipped, _ := s.out.Unshown(1 << 30); text != "after\n" || skipped != 0 {
		t.Fatalf("the cursor: %q, skipped %d", text, skipped)
	}
	// A stop result shows the newest 2,000 bytes of what it has not shown
	// yet, and says how much it left out.
	add(&s.out, strings.Repeat("z", 5000))
	recent, left := s.out.Recent()
	if len(recent) != 2000 || left != 5000-2000 {
		t.Fatalf("recent output: %d bytes, %d left out", len(recent), left)
	}
	if recent, left := s.out.Recent(); recent != "" || left != 0 {
		t.Fatalf("recent output again: %q, %d", recent, left)
	}
}

// Issue 26: output repeated what the last stop's result had shown (39 of
// 40 lines; pytest's report twice): it kept a cursor of its own. One
// cursor now covers every result: output gives only what none showed,
// the part a stop result left out for room first.
func TestOutputShownOnce(t *testing.T) {
	s := &struct{ out Buffer }{}
	for i := range 40 {
		add(&s.out, fmt.Sprintf("line %d\n", i))
	}
	if recent, left := s.out.Recent(); !strings.HasPrefix(recent, "line 0\n") || left != 0 {
		t.Fatalf("the stop's output: %q, %d left out", recent, left)
	}
	if text, _, more := s.out.Unshown(1 << 20); text != "" || more != 0 {
		t.Fatalf("output after a stop showed it all: %q (%d more)", text, more)
	}

	// 5,000 bytes: the stop shows the newest 2,000; output the 3,000
	// before them, and not the 2,000 again.
	old := strings.Repeat("a", 3000)
	add(&s.out, old+strings.Repeat("b", 2000))
	if recent, left := s.out.Recent(); recent != strings.Repeat("b", 2000) || left != 3000 {
		t.Fatalf("the stop's output: %d bytes, %d left out", len(recent), left)
	}
	add(&s.out, "new\n")
	text, skipped, more := s.out.Unshown(1 << 20)
	if want := old + "\n[… output shown in an earlier result …]\nnew\n"; text != want || skipped != 0 || more != 0 {
		t.Fatalf("output: %q, skipped %d, more %d; want %q", text, skipped, more, want)
	}
	if text, _, _ := s.out.Unshown(1 << 20); text != "" {
		t.Fatalf("output twice: %q", text)
	}

	// A small limit pages through what is left, and nothing twice.
	add(&s.out, strings.Repeat("c", 2500)+"d")
	s.out.Recent()
	var got strings.Builder
	for range 10 {
		text, _, more := s.out.Unshown(200)
		got.WriteString(text)
		if more == 0 {
			break
		}
	}
	if got.String() != strings.Repeat("c", 501) {
		t.Fatalf("paged output: %d bytes %q…", got.Len(), got.String()[:min(got.Len(), 40)])
	}
}
