package framing

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/google/go-dap"
	"github.com/sourcegraph/jsonrpc2"
)

// cycleReader replays data forever, so a benchmark can read b.N frames
// from one long stream without resetting (and reallocating) readers.
type cycleReader struct {
	data []byte
	off  int
}

func (c *cycleReader) Read(p []byte) (int, error) {
	n := copy(p, c.data[c.off:])
	c.off = (c.off + n) % len(c.data)
	return n, nil
}

func (c *cycleReader) Write(p []byte) (int, error) { return len(p), nil }
func (c *cycleReader) Close() error                { return nil }

// benchStream is 64 LSP-like frames whose bodies are JSON of the given
// sizes, written by Writer (plain "Content-Length: N\r\n\r\n" headers, which
// all three decoders accept).
func benchStream(sizes []int) (stream []byte, avgFrame int64, bodies [][2]int) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i := range 64 {
		size := sizes[i%len(sizes)]
		head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"contents":"`, i)
		body := head + string(bytes.Repeat([]byte("x"), max(0, size-len(head)-3))) + `"}}`
		if err := w.Write([]byte(body)); err != nil {
			panic(err)
		}
		bodies = append(bodies, [2]int{buf.Len() - len(body), buf.Len()})
	}
	return buf.Bytes(), int64(buf.Len() / 64), bodies
}

// BenchmarkDecode (FRM-4) decodes one long stream of frames with this
// package's Reader, jsonrpc2's VSCodeObjectCodec (into json.RawMessage) and
// go-dap's ReadBaseMessage. One op is one frame; MB/s counts header and body
// bytes. Compare with: benchstat -col /impl.
//
// impl=floor is no decoder: it only copies each body, at known offsets, into
// a new slice. It is the bound any decoder that returns fresh bodies meets
// once bodies are large enough for the copy and its garbage to dominate.
func BenchmarkDecode(b *testing.B) {
	profiles := []struct {
		name  string
		sizes []int
	}{
		{"small", []int{90, 150, 220, 300}},             // notifications, short responses
		{"mixed", []int{120, 400, 1500, 4000, 12000}},   // hover, completion, diagnostics
		{"large", []int{64 << 10, 200 << 10, 30 << 10}}, // symbol lists, semantic tokens
	}
	for _, p := range profiles {
		stream, avg, bodies := benchStream(p.sizes)
		b.Run("size="+p.name+"/impl=floor", func(b *testing.B) {
			b.SetBytes(avg)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				off := bodies[i%len(bodies)]
				sink = append([]byte(nil), stream[off[0]:off[1]]...)
				i++
			}
		})
		b.Run("size="+p.name+"/impl=framing", func(b *testing.B) {
			r := NewReader(&cycleReader{data: stream})
			b.SetBytes(avg)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Read(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("size="+p.name+"/impl=jsonrpc2", func(b *testing.B) {
			s := jsonrpc2.NewBufferedStream(&cycleReader{data: stream}, jsonrpc2.VSCodeObjectCodec{})
			b.SetBytes(avg)
			b.ReportAllocs()
			for b.Loop() {
				var raw json.RawMessage
				if err := s.ReadObject(&raw); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("size="+p.name+"/impl=godap", func(b *testing.B) {
			br := bufio.NewReader(&cycleReader{data: stream})
			b.SetBytes(avg)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := dap.ReadBaseMessage(br); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// sink keeps the floor benchmark's copies from being optimised away.
var sink []byte

// BenchmarkWrite measures framing one body (header and body in one buffer,
// reused across writes).
func BenchmarkWrite(b *testing.B) {
	body := bytes.Repeat([]byte("y"), 1500)
	w := NewWriter(io.Discard)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Write(body); err != nil {
			b.Fatal(err)
		}
	}
}
