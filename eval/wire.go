package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strconv"
)

// The channel between Go and a kernel: JSON objects, one a line. A kernel
// writes a newline before each message too, so junk a cell writes on the
// pipe spoils at most its own line; a line that is not a message is
// dropped, and so is a message whose cell is not the one it may speak for
// (M3).

// message is one message either way.
type message struct {
	Type   string          `json:"type"`
	Cell   int             `json:"cell,omitempty"`
	ID     int64           `json:"id,omitempty"`
	Name   string          `json:"name,omitempty"`
	Text   string          `json:"text,omitempty"`
	Mime   string          `json:"mime,omitempty"`
	Data   string          `json:"data,omitempty"`
	Args   json.RawMessage `json:"args,omitempty"`
	Result *string         `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	OOM    bool            `json:"oom,omitempty"`
	Marks  []int           `json:"marks,omitempty"` // done: the streams a cell-end mark went down (0 stdout, 1 stderr)
	PID    int             `json:"pid,omitempty"`
	Stop   *Stop           `json:"stop,omitempty"` // done: where a cell that did not all run stopped
}

// maxLine bounds one message from a kernel. The drivers cut long texts
// into parts of a million characters (at most 12 MB as escaped JSON), so
// only junk comes near it; a longer line is skipped, not fatal (M1).
const maxLine = 32 << 20

// readLines calls f with each line of r (f must not keep it) until r
// fails; it returns that error (io.EOF at the end) and how many lines it
// skipped as too long.
func readLines(r io.Reader, f func([]byte)) (skipped int, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	skipping := false
	for {
		line, err := br.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			if !skipping {
				long = append(long, line...)
				if len(long) > maxLine {
					skipping, long = true, nil
					skipped++
				}
			}
			continue
		case err != nil:
			return skipped, err
		case skipping:
			skipping = false
			continue
		}
		if long != nil {
			line = append(long, line...)
			long = nil
		}
		if len(line) > 1 {
			f(line)
		}
	}
}

// markScanner finds a driver's cell-end marks ("\x00TOKEN:N\x00") in what
// the kernel's stdout or stderr carries, and passes the rest on.
type markScanner struct {
	prefix []byte // "\x00TOKEN:"
	carry  []byte // the start of a mark cut by the end of a write
}

// scan calls out for each run of plain bytes in p and mark for each mark,
// in order.
func (s *markScanner) scan(p []byte, out func([]byte), mark func(int)) {
	data := p
	if len(s.carry) > 0 {
		data = append(s.carry, p...)
		s.carry = nil
	}
	for len(data) > 0 {
		i := bytes.IndexByte(data, 0)
		if i < 0 {
			out(data)
			return
		}
		if i > 0 {
			out(data[:i])
			data = data[i:]
		}
		// data starts with NUL: a mark, the start of one, or plain output.
		n := min(len(data), len(s.prefix))
		if !bytes.Equal(data[:n], s.prefix[:n]) {
			out(data[:1])
			data = data[1:]
			continue
		}
		if n < len(s.prefix) {
			s.carry = append([]byte(nil), data...)
			return
		}
		rest := data[len(s.prefix):]
		j := bytes.IndexByte(rest, 0)
		if j < 0 && len(rest) < 20 {
			s.carry = append([]byte(nil), data...)
			return
		}
		cell, err := strconv.Atoi(string(rest[:max(j, 0)]))
		if j < 0 || err != nil {
			out(data[:1])
			data = data[1:]
			continue
		}
		mark(cell)
		data = rest[j+1:]
	}
}
