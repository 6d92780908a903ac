package eval

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// What a capture keeps in memory: the whole text up to captureWhole bytes;
// past that, its first and last captureEnd bytes, and the whole goes to a
// file as it arrives (H5: memory stays bounded whatever a cell prints).
const (
	captureWhole = 1 << 20
	captureEnd   = 256 << 10
)

// capture collects one text of a cell (its output, its result, its
// error). It is not safe for concurrent use; the kernel's lock guards it.
type capture struct {
	path  string // the spill file, made when the text outgrows memory
	limit int64  // bytes kept in all, 0 for no limit; the rest is counted

	whole []byte // the text, until it spills
	head  []byte
	tail  []byte // grows to twice captureEnd, then drops to captureEnd
	file  *os.File
	err   error // the spill file could not be written

	bytes   int64 // kept (in memory or the file)
	chars   int64
	dropped int64 // bytes past limit
}

func newCapture(path string, limit int64) *capture {
	return &capture{path: path, limit: limit}
}

// over reports whether the limit was reached.
func (c *capture) over() bool { return c.limit > 0 && c.dropped > 0 }

func (c *capture) WriteString(s string) {
	if c.limit > 0 && c.bytes+int64(len(s)) > c.limit {
		keep := cutBytes(s, int(c.limit-c.bytes))
		c.dropped += int64(len(s) - len(keep))
		s = keep
	}
	if s == "" {
		return
	}
	c.bytes += int64(len(s))
	c.chars += int64(utf8.RuneCountInString(s))
	if c.file == nil && c.err == nil {
		if len(c.whole)+len(s) <= captureWhole {
			c.whole = append(c.whole, s...)
			return
		}
		c.spill()
	}
	if c.file != nil {
		if _, err := c.file.WriteString(s); err != nil {
			c.err = err
			c.file.Close()
			c.file = nil
		}
	}
	if len(c.head) < captureEnd {
		c.head = append(c.head, cutBytes(s, captureEnd-len(c.head))...)
	}
	c.tail = append(c.tail, s...)
	if len(c.tail) > 2*captureEnd {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-captureEnd:]...)
	}
}

// spill moves what is kept to the file, keeping its ends in memory.
func (c *capture) spill() {
	if c.path == "" {
		c.err = fmt.Errorf("no file to spill to")
	} else {
		f, err := os.OpenFile(c.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err == nil {
			_, err = f.Write(c.whole)
		}
		if err != nil {
			if f != nil {
				f.Close()
			}
			c.err = err
		} else {
			c.file = f
		}
	}
	c.head = append([]byte(nil), cutBytes(string(c.whole), captureEnd)...)
	c.tail = append([]byte(nil), c.whole[max(0, len(c.whole)-captureEnd):]...)
	c.whole = nil
}

// text closes the spill file and returns what the capture holds.
func (c *capture) text() Text {
	if c.file != nil {
		if err := c.file.Close(); err != nil && c.err == nil {
			c.err = err
		}
		c.file = nil
	}
	t := Text{Chars: c.chars, Dropped: c.dropped}
	if c.head == nil && c.tail == nil {
		t.Head = strings.ToValidUTF8(string(c.whole), "\uFFFD")
		return t
	}
	t.Cut = true
	t.Head = strings.ToValidUTF8(string(c.head), "\uFFFD")
	tail := c.tail[max(0, len(c.tail)-captureEnd):]
	for i := 0; i < len(tail) && i < utf8.UTFMax && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
	}
	t.Tail = strings.ToValidUTF8(string(tail), "\uFFFD")
	if c.err == nil {
		t.Path = c.path
	}
	return t
}

func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Text is one text of a cell: whole in Head, or, when it was too long to
// keep in memory, its two ends with the whole in a file.
type Text struct {
	Head string
	// Tail is the end of a cut text.
	Tail string
	// Cut says only the ends are here; Path names the file holding all of
	// it ("" when that file could not be written).
	Cut  bool
	Path string
	// Chars counts the characters kept, here or in the file.
	Chars int64
	// Dropped counts the bytes past the output cap, kept nowhere.
	Dropped int64
}

// String is the text when it is whole, else its ends.
func (t Text) String() string {
	if !t.Cut {
		return t.Head
	}
	return t.Head + t.Tail
}

// Empty reports whether nothing was written.
func (t Text) Empty() bool { return t.Chars == 0 && t.Dropped == 0 }

func (t *Text) appendLine(s string) {
	if t.Cut {
		t.Tail = strings.TrimRight(t.Tail, "\n") + "\n" + s
	} else if t.Head == "" {
		t.Head = s
	} else {
		t.Head = strings.TrimRight(t.Head, "\n") + "\n" + s
	}
	t.Chars += int64(utf8.RuneCountInString(s)) + 1
}

func spillPath(dir string, cell int, kind string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, fmt.Sprintf("cell-%d-%s.txt", cell, kind))
}
