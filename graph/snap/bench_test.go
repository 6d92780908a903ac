package snap

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/builtin-tools/builtin-tools/graph/lang/langtest"
)

// BenchmarkPublishOneFile times a one-file edit published on a snapshot
// the size of GOROOT/src (7,000 files of 28 definitions and 45 more
// referenced names each, from 90,000 names whose uses follow Zipf's law):
// what a write costs the index before the next query sees it.
func BenchmarkPublishOneFile(b *testing.B) {
	ls := langtest.Bundled(b)
	rnd := rand.New(rand.NewPCG(7, 8))
	z := rand.NewZipf(rnd, 1.1, 2, 90000)
	names := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprint("n", z.Uint64())
		}
		return out
	}
	bl := New(ls)
	type file struct{ defs, refs []string }
	files := make([]file, 7000)
	for i := range files {
		files[i] = file{names(28), names(45)}
		bl.Put(entry(ls, fmt.Sprintf("d%d/f%d.go", i%900, i), files[i].defs, files[i].refs))
	}
	bl.Snapshot()
	// A body edit: three names called differently.
	b.Run("edit", func(b *testing.B) {
		defer cpuPerOp(b)()
		for i := range b.N {
			f := &files[i%7000]
			refs := append(append([]string{}, f.refs[3:]...), names(3)...)
			bl.Put(entry(ls, fmt.Sprintf("d%d/f%d.go", (i%7000)%900, i%7000), f.defs, refs))
			bl.Snapshot()
		}
	})
	// A rewrite: every name new.
	b.Run("rewrite", func(b *testing.B) {
		defer cpuPerOp(b)()
		for i := range b.N {
			bl.Put(entry(ls, fmt.Sprintf("d%d/f%d.go", (i%7000)%900, i%7000), names(28), names(45)))
			bl.Snapshot()
		}
	})
}

// cpuPerOp reports the process's CPU time per op (user and system): on a
// shared machine, what an op costs whatever else runs.
func cpuPerOp(b *testing.B) func() {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	start := ru.Utime.Nano() + ru.Stime.Nano()
	return func() {
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		b.ReportMetric(float64(ru.Utime.Nano()+ru.Stime.Nano()-start)/float64(b.N), "cpu-ns/op")
	}
}
