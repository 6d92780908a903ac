package astgrep

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/astgrep/procpool"
	"github.com/builtin-tools/builtin-tools/astgrep/tsnative"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// goFile is a large, ordinary Go file from the local toolchain.
func goFile(b *testing.B) []byte {
	b.Helper()
	src, err := os.ReadFile(filepath.Join(goroot(), "src", "net", "http", "server.go"))
	if err != nil {
		b.Skipf("no Go source tree: %v", err)
	}
	return src
}

// goEngine is an engine, closed when b ends, and its Go grammar, loaded.
func goEngine(b *testing.B) (*Engine, *language) {
	e := NewEngine(Options{})
	b.Cleanup(func() { e.Close() })
	l := e.langs.lookup("go")
	l.load()
	return e, l
}

// BenchmarkParse measures parsing plus flattening one file.
func BenchmarkParse(b *testing.B) {
	src := goFile(b)
	_, l := goEngine(b)
	p := procpool.Parser()
	defer procpool.PutParser(p)
	var buf []tsnative.Node
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		nodes, err := p.Parse(context.Background(), l.g, src, buf, nil)
		if err != nil {
			b.Fatal(err)
		}
		buf = nodes[:0]
	}
}

// BenchmarkMatch measures matching an unselective pattern over a parsed
// file (no parsing).
func BenchmarkMatch(b *testing.B) {
	src := goFile(b)
	e, l := goEngine(b)
	pat, err := e.compile(context.Background(), l, "$X := $Y")
	if err != nil {
		b.Fatal(err)
	}
	p := procpool.Parser()
	t, err := e.parseWith(context.Background(), p, l, src)
	procpool.PutParser(p)
	if err != nil {
		b.Fatal(err)
	}
	m := &matcher{t: t, p: pat}
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if len(m.findAll()) == 0 {
			b.Fatal("no matches")
		}
	}
}

// BenchmarkSearchNetHTTP searches GOROOT/src/net/http, cold (new engine)
// and warm (same engine).
func BenchmarkSearchNetHTTP(b *testing.B) {
	root := filepath.Join(goroot(), "src", "net", "http")
	if _, err := os.Stat(root); err != nil {
		b.Skip(err)
	}
	for _, pat := range []string{"defer $X.Close()", "$X := $Y"} {
		b.Run("cold/"+pat, func(b *testing.B) {
			for b.Loop() {
				e := NewEngine(Options{})
				if _, err := e.Search(context.Background(), Query{Path: at(root), Pattern: pat, Language: "go"}); err != nil {
					b.Fatal(err)
				}
				e.Close()
			}
		})
		b.Run("warm/"+pat, func(b *testing.B) {
			e := NewEngine(Options{})
			defer e.Close()
			q := Query{Path: at(root), Pattern: pat, Language: "go"}
			if _, err := e.Search(context.Background(), q); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := e.Search(context.Background(), q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// memNow is the memory searches hold right now: live and not yet swept Go
// heap objects, plus the C memory of every parser's pool (trees are
// flattened into Go memory, so the pools hold only parses in progress and
// one kept chunk per parser).
func memNow(s []metrics.Sample) int64 {
	metrics.Read(s)
	return int64(s[0].Value.Uint64()) + tsnative.CMemoryBytes()
}

// peakDuring samples memNow every millisecond while f runs and returns
// the highest sample above the level before f, after a full collection.
func peakDuring(f func()) int64 {
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	base := memNow(s)
	done := make(chan struct{})
	peak := make(chan int64)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		high := base
		for {
			if m := memNow(s); m > high {
				high = m
			}
			select {
			case <-done:
				peak <- high
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(done)
	return <-peak - base
}

// BenchmarkManyEngines measures what runs searching at once cost, against
// one run alone: the peak memory (above the idle level; Go heap objects
// plus C pool memory) while one engine, then ten engines at once, each
// new and with the process cache empty, search this module for the
// unselective `$X := $Y`. It also reports NewEngine's time and what an
// idle engine holds. Run it with
//
//	go test -run '^$' -bench ManyEngines -benchtime 1x ./astgrep/
func BenchmarkManyEngines(b *testing.B) {
	root := testenv.ModuleRoot()
	if root == "" {
		b.Skip("no module root")
	}
	grammars := []string{filepath.Join(testenv.ToolsDir(), "grammars")}
	q := Query{Path: at(root), Pattern: "$X := $Y", Language: "go", MaxResults: 50}
	var (
		total int
		mu    sync.Mutex
	)
	search := func(n int) (time.Duration, error) {
		procCache.Clear()
		start := time.Now()
		errs := make(chan error, n)
		go1 := make(chan struct{})
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e := NewEngine(Options{GrammarDirs: grammars})
				defer e.Close()
				<-go1
				res, err := e.Search(context.Background(), q)
				mu.Lock()
				if err == nil && (res.Total == 0 || total != 0 && res.Total != total) {
					err = fmt.Errorf("total %d, want %d", res.Total, total)
				}
				if err == nil {
					total = res.Total
				}
				mu.Unlock()
				errs <- err
			}()
		}
		close(go1)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				return 0, err
			}
		}
		return time.Since(start), nil
	}
	if _, err := search(1); err != nil { // warm the grammar and the page cache
		b.Fatal(err)
	}
	var one, ten int64
	var tOne, tTen time.Duration
	for b.Loop() {
		var err error
		one += peakDuring(func() { tOne, err = search(1) })
		if err != nil {
			b.Fatal(err)
		}
		ten += peakDuring(func() { tTen, err = search(10) })
		if err != nil {
			b.Fatal(err)
		}
	}
	n := int64(b.N)
	b.ReportMetric(float64(one/n)/(1<<20), "peak-1-MiB")
	b.ReportMetric(float64(ten/n)/(1<<20), "peak-10-MiB")
	b.ReportMetric(float64(ten)/float64(one), "peak-ratio")
	b.ReportMetric(tOne.Seconds(), "search-1-s")
	b.ReportMetric(tTen.Seconds(), "search-10-s")

	// NewEngine's time, and the memory an idle engine holds.
	const engines = 200
	start := time.Now()
	for i := 0; i < engines; i++ {
		NewEngine(Options{GrammarDirs: grammars}).Close()
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/engines, "newengine-ns")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cBefore := tsnative.CMemoryBytes()
	idle := make([]*Engine, engines)
	for i := range idle {
		idle[i] = NewEngine(Options{GrammarDirs: grammars})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc) + tsnative.CMemoryBytes() - cBefore
	b.ReportMetric(float64(held)/engines, "idle-engine-B")
	for _, e := range idle {
		e.Close()
	}
	b.Logf("%d matches; one engine %.1f MiB in %v, ten engines %.1f MiB in %v", total, float64(one/n)/(1<<20), tOne, float64(ten/n)/(1<<20), tTen)
}
