package builtintools_test

import (
	"context"
	"encoding/json"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// Many runs in one process (REG-13), as a harness running many agents does:
//
//	go test -run XXX -bench 'NewRun|IdleRuns|ConcurrentSearch' -benchtime 1x -count 3 .
//
// NewRun's time and allocations; the heap an idle run holds (100 runs over
// this repository); and the peak Go heap of 10 runs doing the unselective
// search $X := $Y at once, against one run doing it alone, both with the
// parse cache empty (astgrep's BenchmarkManyEngines adds the parsers' own
// memory).

func BenchmarkNewRun(b *testing.B) {
	root := testenv.ModuleRoot()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r, err := builtintools.NewRun(builtintools.Options{Root: root})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		r.Close()
		b.StartTimer()
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func BenchmarkIdleRuns(b *testing.B) {
	root := testenv.ModuleRoot()
	for i := 0; i < b.N; i++ {
		before := heapInUse()
		runs := make([]*registry.Run, 100)
		for j := range runs {
			r, err := builtintools.NewRun(builtintools.Options{Root: root})
			if err != nil {
				b.Fatal(err)
			}
			runs[j] = r
		}
		after := heapInUse()
		b.ReportMetric(float64(after-before)/100/1024, "KiB/idle-run")
		for _, r := range runs {
			r.Close()
		}
	}
}

// peakDuring samples the Go heap every millisecond while fn runs and
// returns the highest value above the heap before it.
func peakDuring(fn func()) uint64 {
	base := heapInUse()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(stop)
	<-done
	if p := peak.Load(); p > base {
		return p - base
	}
	return 0
}

// emptyCache drops the process's parse cache, so both phases start cold.
func emptyCache() {
	astgrep.SetProcessCacheBytes(-1)
	astgrep.SetProcessCacheBytes(0)
}

func search(b *testing.B, r *registry.Run) {
	args := json.RawMessage(`{"pattern": "$X := $Y", "language": "go"}`)
	res, err := r.Call(context.Background(), tiers.Normal, "ast_grep", args)
	if err != nil || res.IsError {
		b.Fatalf("%v %s", err, registry.ResultText(res))
	}
}

func BenchmarkConcurrentSearch(b *testing.B) {
	root := testenv.ModuleRoot()
	opts := builtintools.Options{Root: root, Without: []string{"lsp"}}
	for i := 0; i < b.N; i++ {
		one, err := builtintools.NewRun(opts)
		if err != nil {
			b.Fatal(err)
		}
		search(b, one) // grammars loaded, files in the page cache
		emptyCache()
		alone := peakDuring(func() { search(b, one) })
		one.Close()
		runs := make([]*registry.Run, 10)
		for j := range runs {
			if runs[j], err = builtintools.NewRun(opts); err != nil {
				b.Fatal(err)
			}
		}
		emptyCache()
		together := peakDuring(func() {
			var wg sync.WaitGroup
			for _, r := range runs {
				wg.Add(1)
				go func() { defer wg.Done(); search(b, r) }()
			}
			wg.Wait()
		})
		for _, r := range runs {
			r.Close()
		}
		b.ReportMetric(float64(alone)/(1<<20), "MiB-peak-1-run")
		b.ReportMetric(float64(together)/(1<<20), "MiB-peak-10-runs")
		b.ReportMetric(float64(together)/float64(max(alone, 1)), "ratio")
	}
}
