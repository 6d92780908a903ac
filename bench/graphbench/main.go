// Command graphbench measures the code graph (package graph) on a tree:
// a cold or warm build in one process (-mode build), or, after a build,
// the latency of queries and of re-indexing after one-file edits (-mode
// queries), or of callers while many files changed outside the tools are
// re-read in the background (-mode refresh-latency). bench/graph.sh runs it beside ast-grep and writes the figures
// BENCHMARKS.md quotes.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/graph"
	"github.com/builtin-tools/builtin-tools/graph/answertext"
	"github.com/builtin-tools/builtin-tools/graph/index"
	"github.com/builtin-tools/builtin-tools/pathguard"
	"golang.org/x/sys/unix"
)

func main() {
	root := flag.String("root", "", "tree to index")
	mode := flag.String("mode", "build", "build (one build, timed), queries (build, then time queries and edits) or refresh-latency (build, then time callers while a change of -files files made outside the tools is re-read)")
	cache := flag.String("cache", "", "graph store folder (graph.Options.StoreDir)")
	n := flag.Int("n", 50, "query targets and edits (queries mode)")
	seed := flag.Uint64("seed", 1, "target choice")
	scratch := flag.String("scratch", "", "queries mode: a copy of the tree the edits may change (required)")
	queryDirs := flag.String("query-dirs", "", "extra language folders (graph.Options.QueryDirs); a go folder with a one-pattern query measures the parse alone")
	cpuProfile := flag.String("cpuprofile", "", "build and refresh-latency modes: write a CPU profile of the build (of the whole run) to this file")
	memProfile := flag.String("memprofile", "", "build mode: write an allocation profile of the build (every allocation's bytes and count, and what is live after it) to this file")
	edits := flag.Int("files", 200, "refresh-latency mode: files changed at once outside the tools")
	rounds := flag.Int("rounds", 3, "refresh-latency mode: how many times the files are changed")
	textOut := flag.String("text", "", "refresh-latency mode: write every target's callers answer (its text) to this file, idle and after the last round, to compare two trees")
	change := flag.String("change", "append", "refresh-latency mode: how each file is changed: append (a comment at the end: the same definitions and references) or prepend (a comment line at the top: every line moves)")
	flag.Parse()
	if *root == "" {
		fail("-root is required")
	}
	switch *mode {
	case "build":
		if *memProfile != "" {
			runtime.MemProfileRate = 64 << 10
		}
		x := open(*root, *cache, *queryDirs)
		if *cpuProfile != "" {
			f, err := os.Create(*cpuProfile)
			if err != nil {
				fail(err.Error())
			}
			pprof.StartCPUProfile(f)
		}
		t0 := time.Now()
		x.Start(nil)
		x.Wait(context.Background(), time.Hour)
		took := time.Since(t0)
		if *cpuProfile != "" {
			pprof.StopCPUProfile()
		}
		x.Flush(context.Background())
		st := graph.StatusAnswer(graph.NewViewer(x).View(0), x.Stats()).Status
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		sys := ms.HeapSys
		runtime.GC() // what the index keeps live
		runtime.ReadMemStats(&ms)
		if *memProfile != "" {
			f, err := os.Create(*memProfile)
			if err != nil {
				fail(err.Error())
			}
			pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
		fmt.Printf("build seconds=%.3f files=%d definitions=%d references=%d from_store=%d parsed=%d index_mib=%.1f heap_sys_mib=%d live_mib=%d\n",
			took.Seconds(), st.Files, st.Defs, st.Refs, st.FromStore, x.Stats().Parsed, st.MemoryMiB, sys>>20, ms.HeapAlloc>>20)
	case "queries":
		if *scratch == "" {
			fail("-scratch is required: the edits write to it")
		}
		queries(*scratch, *n, *seed)
	case "refresh-latency":
		if *scratch == "" {
			fail("-scratch is required: the changes write to it")
		}
		if *cpuProfile != "" {
			f, err := os.Create(*cpuProfile)
			if err != nil {
				fail(err.Error())
			}
			defer pprof.StopCPUProfile()
			pprof.StartCPUProfile(f)
		}
		refreshLatency(*scratch, *n, *edits, *rounds, *seed, *change, *textOut)
	default:
		fail("unknown -mode " + *mode)
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "graphbench:", msg)
	os.Exit(2)
}

func open(root, cache, queryDirs string) *index.Index {
	g, err := pathguard.New(root)
	if err != nil {
		fail(err.Error())
	}
	e := astgrep.NewEngine(astgrep.Options{})
	opts := graph.Options{StoreDir: cache}
	if queryDirs != "" {
		opts.QueryDirs = filepath.SplitList(queryDirs)
	}
	x, err := index.New(g, e, opts)
	if err != nil {
		fail(err.Error())
	}
	return x
}

// targets picks n Go functions and methods outside tests, at most two
// per folder, by seed.
func targets(w *graph.Viewer, n int, seed uint64) []graph.Symbol {
	all := graph.Definitions(w.View(0))
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	perDir := map[string]int{}
	var out []graph.Symbol
	for _, s := range all {
		if s.Language != "go" || s.Kind != "function" && s.Kind != "method" || strings.HasSuffix(s.File, "_test.go") || strings.Contains(s.File, "testdata/") {
			continue
		}
		d := filepath.Dir(s.File)
		if perDir[d] == 2 {
			continue
		}
		perDir[d]++
		out = append(out, s)
		if len(out) == n {
			break
		}
	}
	return out
}

func pct(ds []time.Duration, p float64) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	if len(ds) == 0 {
		return 0
	}
	i := int(float64(len(ds)-1) * p)
	return ds[i]
}

func queries(root string, n int, seed uint64) {
	x := open(root, "", "")
	x.Start(nil)
	x.Wait(context.Background(), time.Hour)
	w := graph.NewViewer(x)
	ts := targets(w, n, seed)
	var callers, callees, impact []time.Duration
	sites := 0
	for _, t := range ts {
		spec := graph.Spec{File: t.File, Line: t.Line, Symbol: t.Name}
		for round := 0; round < 3; round++ {
			t0 := time.Now()
			x.Sync(context.Background())
			// An answer is timed as a client gets it: with its text.
			a, err := graph.Callers(w.View(0), spec)
			if err == nil {
				answertext.Render(a, 8000)
			}
			d := time.Since(t0)
			if err != nil {
				fail(fmt.Sprintf("callers %s: %v", t.Qualified, err))
			}
			if round == 2 {
				callers = append(callers, d)
				sites += a.Counts.Exact + a.Counts.Import + a.Counts.Candidate
			}
			t0 = time.Now()
			x.Sync(context.Background())
			if a, err := graph.Callees(w.View(0), spec); err == nil {
				answertext.Render(a, 8000)
			}
			if round == 2 {
				callees = append(callees, time.Since(t0))
			}
			t0 = time.Now()
			x.Sync(context.Background())
			if a, err := graph.Impact(w.View(0), spec, 3, 30); err == nil {
				answertext.Render(a, 8000)
			}
			if round == 2 {
				impact = append(impact, time.Since(t0))
			}
		}
	}
	fmt.Printf("queries targets=%d call_sites=%d callers_p50_ms=%.3f callers_p95_ms=%.3f callees_p50_ms=%.3f callees_p95_ms=%.3f impact3_p50_ms=%.3f impact3_p95_ms=%.3f impact3_max_ms=%.3f\n",
		len(ts), sites, ms(pct(callers, .5)), ms(pct(callers, .95)), ms(pct(callees, .5)), ms(pct(callees, .95)),
		ms(pct(impact, .5)), ms(pct(impact, .95)), ms(pct(impact, 1)))
	// Edits: add a function calling the target at the end of its file,
	// through the path a write tool takes (Refresh), then ask what the new
	// function calls: the answer must lead to the target.
	var edits, small []time.Duration
	var biggest int64
	for i, t := range ts {
		p := filepath.Join(root, filepath.FromSlash(t.File))
		old, err := os.ReadFile(p)
		if err != nil {
			fail(err.Error())
		}
		name := fmt.Sprintf("graphbenchEdit%d", i)
		body := append(append([]byte{}, old...), []byte(fmt.Sprintf("\nfunc %s() { %s() }\n", name, t.Name))...)
		t0 := time.Now()
		if err := os.WriteFile(p, body, 0o644); err != nil {
			fail(err.Error())
		}
		if err := x.Refresh(context.Background(), p); err != nil {
			fail(err.Error())
		}
		a, err := graph.Callees(w.View(0), graph.Spec{File: t.File, Symbol: name})
		d := time.Since(t0)
		if err != nil {
			fail(fmt.Sprintf("after the edit of %s: %v", t.File, err))
		}
		if t.Kind == "function" && (len(a.Sites) != 1 || len(a.Sites[0].Targets) == 0 || a.Sites[0].Targets[0].Line != t.Line) {
			fail(fmt.Sprintf("after the edit of %s the new call does not lead to %s: %s", t.File, t.Qualified, answertext.Render(a, 0)))
		}
		edits = append(edits, d)
		if len(old) < 100<<10 {
			small = append(small, d)
		}
		biggest = max(biggest, int64(len(old)))
		os.WriteFile(p, old, 0o644)
		x.Refresh(context.Background(), p)
	}
	fmt.Printf("edits n=%d reindex_p50_ms=%.3f reindex_p95_ms=%.3f reindex_max_ms=%.3f largest_file_kib=%d under_100kib_n=%d under_100kib_p95_ms=%.3f\n",
		len(edits), ms(pct(edits, .5)), ms(pct(edits, .95)), ms(pct(edits, 1)), biggest>>10, len(small), ms(pct(small, .95)))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// refreshLatency times callers of n targets (Sync, the answer and its
// text, as a client gets it) while the index re-reads files changed at
// once outside the tools: each round appends a comment to the same files
// (or, with change prepend, writes one above their first line)
// (chosen by seed among the Go files), then asks callers of every target
// in turn until the background refresher has read them all. The first
// query after the change re-reads syncNow files itself (Sync) before it
// answers; the others answer from the snapshots the refresher publishes.
func refreshLatency(root string, n, files, rounds int, seed uint64, change, textOut string) {
	if change != "append" && change != "prepend" {
		fail("-change is append or prepend")
	}
	ctx := context.Background()
	x := open(root, "", "")
	x.Start(nil)
	x.Wait(ctx, time.Hour)
	w := graph.NewViewer(x)
	ts := targets(w, n, seed)
	x.Sync(ctx) // the first full check of the stamps
	var paths []string
	for f := range w.View(0).Snap.Files() {
		if f.Lang.ID == "go" && !strings.Contains(f.Rel, "testdata/") {
			paths = append(paths, f.Rel)
		}
	}
	sort.Strings(paths)
	r := rand.New(rand.NewPCG(seed, seed^0x5bd1e995))
	r.Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
	paths = paths[:min(files, len(paths))]
	orig := make([][]byte, len(paths))
	for i, p := range paths {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			fail(err.Error())
		}
		orig[i] = b
	}
	// The queries run on one locked thread, so its CPU clock says what a
	// query computed, apart from the time it waited for a core (on a
	// shared machine, most of a slow query's time).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var cpu time.Duration // the last query's
	var text string       // the last answer's
	ask := func(t graph.Symbol) (time.Duration, int) {
		c0 := threadCPU()
		defer func() { cpu = threadCPU() - c0 }()
		t0 := time.Now()
		synced, err := x.Sync(ctx)
		if err != nil {
			fail(err.Error())
		}
		spec := graph.Spec{File: t.File, Line: t.Line, Symbol: t.Name}
		if change == "prepend" { // its line moves: Type.Method in its file
			spec = graph.Spec{File: t.File, Symbol: t.Qualified[strings.Index(t.Qualified, ".")+1:]}
		}
		a, err := graph.Callers(w.View(synced), spec)
		if err != nil {
			fail(fmt.Sprintf("callers %s: %v", t.Qualified, err))
		}
		text = answertext.Render(a, 8000)
		return time.Since(t0), synced
	}
	var texts strings.Builder
	keep := func(when string) {
		for _, t := range ts {
			ask(t)
			fmt.Fprintf(&texts, "=== %s callers %s %s:%d\n%s\n", when, t.Qualified, t.File, t.Line, text)
		}
	}
	// A few targets' callers take long however idle the index is (a
	// method name many types share): the time a query waits on the
	// refresh is its excess over its own target's idle median.
	var idle, busy, reads, excess, idleCPU, busyCPU, excessCPU []time.Duration
	own, ownCPU := make([][]time.Duration, len(ts)), make([][]time.Duration, len(ts))
	for range 3 {
		for i, t := range ts {
			d, _ := ask(t)
			idle, idleCPU = append(idle, d), append(idleCPU, cpu)
			own[i], ownCPU[i] = append(own[i], d), append(ownCPU[i], cpu)
		}
	}
	if textOut != "" {
		keep("idle")
	}
	med, medCPU := make([]time.Duration, len(ts)), make([]time.Duration, len(ts))
	for i := range own {
		med[i], medCPU[i] = pct(own[i], .5), pct(ownCPU[i], .5)
	}
	for round := range rounds {
		for i, p := range paths {
			note := fmt.Sprintf("// graphbench refresh %d\n", round)
			body := append(append([]byte{}, orig[i]...), "\n"+note...)
			if change == "prepend" { // round+1 lines: each round moves them again
				body = append([]byte(strings.Repeat(note, round+1)), orig[i]...)
			}
			if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(p)), body, 0o644); err != nil {
				fail(err.Error())
			}
		}
		t0 := time.Now()
		for first := true; first || x.State().Pending > 0; first = false {
			for i, t := range ts {
				d, synced := ask(t)
				if synced > 0 {
					reads = append(reads, d) // this query re-read files itself
				} else {
					busy, busyCPU = append(busy, d), append(busyCPU, cpu)
					excess, excessCPU = append(excess, max(0, d-med[i])), append(excessCPU, max(0, cpu-medCPU[i]))
				}
			}
		}
		fmt.Printf("round %d: %d files re-read in %.3f s\n", round, len(paths), time.Since(t0).Seconds())
	}
	if textOut != "" {
		keep("after")
		if err := os.WriteFile(textOut, []byte(texts.String()), 0o644); err != nil {
			fail(err.Error())
		}
	}
	for i, p := range paths {
		os.WriteFile(filepath.Join(root, filepath.FromSlash(p)), orig[i], 0o644)
	}
	fmt.Printf("refresh-latency targets=%d files=%d rounds=%d idle_callers_p50_ms=%.3f idle_callers_p99_ms=%.3f "+
		"during_callers_n=%d during_callers_p50_ms=%.3f during_callers_p99_ms=%.3f during_callers_max_ms=%.3f "+
		"during_excess_p50_ms=%.3f during_excess_p99_ms=%.3f syncing_queries_n=%d syncing_max_ms=%.3f\n",
		len(ts), len(paths), rounds, ms(pct(idle, .5)), ms(pct(idle, .99)),
		len(busy), ms(pct(busy, .5)), ms(pct(busy, .99)), ms(pct(busy, 1)),
		ms(pct(excess, .5)), ms(pct(excess, .99)), len(reads), ms(pct(reads, 1)))
	fmt.Printf("refresh-latency cpu idle_callers_p50_ms=%.3f idle_callers_p99_ms=%.3f during_callers_p50_ms=%.3f during_callers_p99_ms=%.3f "+
		"during_excess_p50_ms=%.3f during_excess_p99_ms=%.3f\n",
		ms(pct(idleCPU, .5)), ms(pct(idleCPU, .99)), ms(pct(busyCPU, .5)), ms(pct(busyCPU, .99)), ms(pct(excessCPU, .5)), ms(pct(excessCPU, .99)))
}

// threadCPU is the CPU time of the calling thread.
func threadCPU() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}
