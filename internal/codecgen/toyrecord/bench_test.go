package toyrecord

import (
	"bytes"
	"encoding/gob"
	"io"
	"slices"
	"syscall"
	"testing"
	"time"
)

// gobRecord is Record without the generated methods: gob would otherwise
// take UnmarshalBinary for its own decoding.
type gobRecord Record

// The benchmarks encode and decode the whole synthetic corpus per
// iteration (6,986 records): run with -benchtime=3x. size-MiB is the
// corpus's encoded size.
//
//	codecgen      one encoding per record (what the store keeps)
//	gob/record    one gob stream per record (the same, with gob)
//	gob/pack64    one stream per 64 records (a pack keyed by its members)
//	gob/stream    one stream for all (not content-addressable)
//	gob/primed    one stream whose type description is sent once and kept
//	              by a long-lived decoder, each record a message cut from
//	              it (gob's best case for per-record entries)
func BenchmarkEncode(b *testing.B) {
	recs := corpus()
	b.Run("codecgen", func(b *testing.B) {
		var buf []byte
		total := 0
		start := cpuNow()
		for b.Loop() {
			total = 0
			for _, r := range recs {
				buf, _ = asCodec(b, r).AppendBinary(buf[:0])
				total += len(buf)
			}
		}
		reportCPU(b, start)
		_ = buf
		b.ReportMetric(float64(total)/(1<<20), "size-MiB")
	})
	for _, c := range gobModes {
		b.Run("gob/"+c.name, func(b *testing.B) {
			var out [][]byte
			start := cpuNow()
			for b.Loop() {
				out = c.encode(b, recs)
			}
			reportCPU(b, start)
			b.ReportMetric(float64(sizeOf(out))/(1<<20), "size-MiB")
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	recs := corpus()
	enc := make([][]byte, len(recs))
	for i, r := range recs {
		enc[i] = encode(b, r)
	}
	b.Run("codecgen", func(b *testing.B) {
		start := cpuNow()
		for b.Loop() {
			for _, e := range enc {
				if _, err := decode(b, e); err != nil {
					b.Fatal(err)
				}
			}
		}
		reportCPU(b, start)
		b.ReportMetric(float64(sizeOf(enc))/(1<<20), "size-MiB")
	})
	b.Run("codecgen+validate", func(b *testing.B) {
		start := cpuNow()
		for b.Loop() {
			for _, e := range enc {
				r, err := decode(b, e)
				if err == nil {
					err = asCodec(b, r).Validate()
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		}
		reportCPU(b, start)
	})
	for _, c := range gobModes {
		b.Run("gob/"+c.name, func(b *testing.B) {
			out := c.encode(b, recs)
			start := cpuNow()
			for b.Loop() {
				if n := c.decode(b, out); n != len(recs) {
					b.Fatalf("decoded %d records of %d", n, len(recs))
				}
			}
			reportCPU(b, start)
		})
	}
}

func sizeOf(bs [][]byte) int {
	n := 0
	for _, b := range bs {
		n += len(b)
	}
	return n
}

type gobMode struct {
	name   string
	encode func(testing.TB, []*Record) [][]byte
	decode func(testing.TB, [][]byte) int
}

var gobModes = []gobMode{
	{"record", func(t testing.TB, recs []*Record) [][]byte { return gobPacks(t, recs, 1) },
		func(t testing.TB, packs [][]byte) int { return gobUnpack(t, packs, 1) }},
	{"pack64", func(t testing.TB, recs []*Record) [][]byte { return gobPacks(t, recs, 64) },
		func(t testing.TB, packs [][]byte) int { return gobUnpack(t, packs, 64) }},
	{"stream", func(t testing.TB, recs []*Record) [][]byte { return gobPacks(t, recs, len(recs)) },
		func(t testing.TB, packs [][]byte) int { return gobUnpack(t, packs, len(corpus())) }},
	{"primed", gobPrimedEncode, gobPrimedDecode},
}

func gobPacks(t testing.TB, recs []*Record, per int) [][]byte {
	var out [][]byte
	for i := 0; i < len(recs); i += per {
		var buf bytes.Buffer
		enc := gob.NewEncoder(&buf)
		for _, r := range recs[i:min(i+per, len(recs))] {
			if err := enc.Encode((*gobRecord)(r)); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, buf.Bytes())
	}
	return out
}

func gobUnpack(t testing.TB, packs [][]byte, per int) int {
	n := 0
	for _, p := range packs {
		dec := gob.NewDecoder(bytes.NewReader(p))
		for {
			r := &gobRecord{}
			if err := dec.Decode(r); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	return n
}

// gobPrimedEncode returns the type description (first) and one message per
// record after it.
func gobPrimedEncode(t testing.TB, recs []*Record) [][]byte {
	var buf bytes.Buffer
	enc := gob.NewEncoder(&buf)
	if err := enc.Encode(&gobRecord{}); err != nil {
		t.Fatal(err)
	}
	out := [][]byte{bytes.Clone(buf.Bytes())}
	for _, r := range recs {
		buf.Reset()
		if err := enc.Encode((*gobRecord)(r)); err != nil {
			t.Fatal(err)
		}
		out = append(out, bytes.Clone(buf.Bytes()))
	}
	return out
}

func gobPrimedDecode(t testing.TB, msgs [][]byte) int {
	var src bytes.Reader // a ByteReader: gob reads no further than a message
	src.Reset(msgs[0])
	dec := gob.NewDecoder(&src)
	if err := dec.Decode(&gobRecord{}); err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs[1:] {
		src.Reset(m)
		if err := dec.Decode(&gobRecord{}); err != nil {
			t.Fatal(err)
		}
	}
	return len(msgs) - 1
}

// cpuNow is the process's CPU time (user and system, every thread: the
// garbage collector's work counts): on a loaded machine it says more than
// the wall time does.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuNow()-start)/float64(b.N)/1e6, "cpu-ms/op")
}

// The corpus has the spread of sizes it is fitted to (checked on its
// first thousand records).
func TestCorpusShape(t *testing.T) {
	var sizes []int
	total := 0
	for _, r := range corpusN(1000) {
		n := len(encode(t, r))
		sizes = append(sizes, n)
		total += n
	}
	slices.Sort(sizes)
	q := func(p float64) int { return sizes[int(p*float64(len(sizes)-1))] }
	t.Logf("%d records, %.1f MiB: p50 %d, p90 %d, p99 %d, max %d bytes", len(sizes), float64(total)/(1<<20), q(.5), q(.9), q(.99), sizes[len(sizes)-1])
	if q(.5) < 1000 || q(.5) > 3000 || q(.9) < 7000 || q(.9) > 18000 {
		t.Errorf("p50 %d, p90 %d: not the design's 1.8 KB and 12 KB", q(.5), q(.9))
	}
}
