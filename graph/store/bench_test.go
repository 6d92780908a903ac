package store

import (
	"math"
	"math/rand/v2"
	"testing"
)

// payloads are n record-sized payloads (log-normal, p50 1.8 KB, p90
// 12 KB: GOROOT's records by the graph design's estimate).
func payloads(n int) [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([][]byte, n)
	for i := range out {
		b := make([]byte, int(min(1800*math.Exp(1.4*rng.NormFloat64()), 1.4e6)))
		for j := range b {
			b[j] = byte(j * i)
		}
		out[i] = b
	}
	return out
}

// Per op: 1,000 records written into a fresh store (temporary file and
// rename each), then read back.
func BenchmarkPut(b *testing.B) {
	ps := payloads(1000)
	for b.Loop() {
		b.StopTimer()
		s := Open(b.TempDir(), Options{})
		b.StartTimer()
		for i, p := range ps {
			if err := s.Put(key(i), p); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkGet(b *testing.B) {
	ps := payloads(1000)
	s := Open(b.TempDir(), Options{})
	for i, p := range ps {
		s.Put(key(i), p)
	}
	for b.Loop() {
		for i := range ps {
			if _, ok := s.Get(key(i)); !ok {
				b.Fatal("miss")
			}
		}
	}
}
