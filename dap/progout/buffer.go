// Package progout keeps what a debugged program prints: a buffer with
// one cursor of what the agent was shown, whatever result showed it, fed
// by the adapter's output events or by a terminal the session made for
// the program (Terminal) and reads itself.
package progout

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"time"

	godap "github.com/google/go-dap"
)

// Buffer keeps the debuggee's output, at least the newest maxOutput bytes,
// with one cursor of what the agent has been shown, whatever result showed
// it: output shown once is never shown again. What the adapter says before
// configurationDone is kept apart, for a launch that fails. Safe for
// concurrent use; its lock is its own, since output changes nothing a
// waiter on the session looks at.
type Buffer struct {
	mu sync.Mutex
	// configured: configurationDone was sent, so output is the program's;
	// before, it is the adapter talking ("Building …", a compiler's
	// errors), kept in launch.
	configured bool
	launch     string
	data       []byte
	dropped    int64 // bytes dropped from the front
	// shown: every byte before it was shown, except the gaps, which a stop
	// result left out for room (it shows the newest part) and output gives.
	shown int64
	gaps  []span
	// lost counts gap bytes forgotten for room (more than maxGaps).
	lost int64
	// term is the program's own terminal when the session made one
	// (Terminal.Start): read into the buffer, drained before a result.
	term *Terminal
}

// Event takes an output event: telemetry and the adapter's banners are
// dropped.
func (o *Buffer) Event(b godap.OutputEventBody, banners []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case b.Category == "telemetry":
	case !o.configured:
		if len(o.launch) < 16<<10 {
			o.launch += b.Output
		}
	case b.Category == "console" && slices.Contains(banners, b.Output):
	default:
		add(o, b.Output)
	}
}

// Write takes what the program printed to its terminal.
func (o *Buffer) Write(p []byte) {
	o.mu.Lock()
	add(o, p)
	o.mu.Unlock()
}

// termDrain bounds the wait for the program's terminal to be read.
const termDrain = 200 * time.Millisecond

// drain waits for the program's terminal, if it has one, to be read.
func (o *Buffer) drain() {
	o.mu.Lock()
	t := o.term
	o.mu.Unlock()
	t.Drain(termDrain)
}

// Configure marks configurationDone sent: what comes next is the
// program's.
func (o *Buffer) Configure() {
	o.mu.Lock()
	o.configured = true
	o.mu.Unlock()
}

// LaunchSaid is what the adapter said before configurationDone.
func (o *Buffer) LaunchSaid() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return strings.TrimSpace(o.launch)
}

// span is output from..to, absolute offsets.
type span struct{ from, to int64 }

// maxGaps bounds the gaps kept: a stop result that cut its output adds
// one, and only output takes them.
const maxGaps = 64

// skip records output from..to as left out of a result.
func (o *Buffer) skip(from, to int64) {
	if from >= to {
		return
	}
	if n := len(o.gaps); n > 0 && o.gaps[n-1].to == from {
		o.gaps[n-1].to = to
		return
	}
	if len(o.gaps) == maxGaps {
		o.lost += o.gaps[0].to - o.gaps[0].from
		o.gaps = o.gaps[1:]
	}
	o.gaps = append(o.gaps, span{from, to})
}

const maxOutput = 1 << 20

// add appends s to o, an event's string or the terminal's bytes as they
// come (no copy of either); the caller holds o.mu or owns o alone. The
// buffer grows to twice maxOutput before its oldest half goes, in one
// copy: each byte is copied at most once more however the output comes,
// where trimming at every event copied the whole buffer each time (M4).
func add[T string | []byte](o *Buffer, s T) {
	if len(s) >= maxOutput {
		o.dropped += int64(len(o.data) + len(s) - maxOutput)
		o.data = append(o.data[:0], s[len(s)-maxOutput:]...)
		return
	}
	if len(o.data)+len(s) > 2*maxOutput {
		over := len(o.data) - maxOutput
		o.data = append(o.data[:0], o.data[over:]...)
		o.dropped += int64(over)
	}
	if o.data == nil {
		o.data = make([]byte, 0, 2*maxOutput)
	}
	o.data = append(o.data, s...)
}

// Unshown returns the program's output no result has shown yet, at most
// limit bytes, oldest first: what stop results left out for room, then
// what came after the last result; how many such bytes were dropped for
// room; and how many are left for the next call.
func (o *Buffer) Unshown(limit int) (text string, skipped int64, more int) {
	o.drain()
	o.mu.Lock()
	defer o.mu.Unlock()
	end := o.dropped + int64(len(o.data))
	skipped, o.lost = o.lost, 0
	pieces := append(slices.Clone(o.gaps), span{o.shown, end})
	var b []byte
	at := int64(-1) // where the last piece taken ended
	taken := 0      // pieces taken whole
	for i, p := range pieces {
		if p.from < o.dropped {
			skipped += min(o.dropped, p.to) - p.from
			p.from = min(o.dropped, p.to)
		}
		if p.from >= p.to {
			taken = i + 1
			continue
		}
		if at >= 0 && p.from != at {
			b = append(b, "\n[… output shown in an earlier result …]\n"...)
		}
		room := int64(limit - len(b))
		cut := min(p.to, p.from+max(room, 0))
		for cut > p.from && cut < p.to && o.data[cut-o.dropped]&0xC0 == 0x80 {
			cut-- // at a character
		}
		b = append(b, o.data[p.from-o.dropped:cut-o.dropped]...)
		at = cut
		if cut < p.to {
			pieces[i].from = cut
			break
		}
		taken = i + 1
	}
	rest := pieces[taken:]
	if len(rest) == 0 {
		o.gaps, o.shown = o.gaps[:0], end
	} else {
		// The last piece is the new output; what is left of it starts
		// at shown.
		o.shown = rest[len(rest)-1].from
		o.gaps = slices.Clone(rest[:len(rest)-1])
		for _, p := range rest {
			more += int(p.to - max(p.from, o.dropped))
		}
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD"))), skipped, more
}

// Recent is the output no result has shown, cut to its last 2,000
// bytes for a stop result, and how many bytes before those it left out;
// output gives those later, and never what a result showed.
func (o *Buffer) Recent() (string, int) {
	o.drain()
	o.mu.Lock()
	defer o.mu.Unlock()
	end := o.dropped + int64(len(o.data))
	from := max(o.shown, o.dropped)
	const keep = 2000
	start := max(from, end-keep)
	data := o.data[start-o.dropped:]
	if start > from {
		// Cut: start at a line when one begins soon, else at a character.
		if i := bytes.IndexByte(data[:min(len(data), 300)], '\n'); i >= 0 && i+1 < len(data) {
			data, start = data[i+1:], start+int64(i+1)
		}
		for len(data) > 0 && data[0]&0xC0 == 0x80 {
			data, start = data[1:], start+1
		}
	}
	o.skip(from, start)
	o.shown = end
	return string(bytes.ToValidUTF8(data, []byte("\uFFFD"))), int(start - from)
}
