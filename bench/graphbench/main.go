// Command graphbench measures the code graph (package graph) on a tree:
// a cold or warm build in one process (-mode build), or, after a build,
// the latency of queries and of re-indexing after one-file edits (-mode
// queries). bench/graph.sh runs it beside ast-grep and writes the figures
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
	"github.com/builtin-tools/builtin-tools/graph/graphtool"
	"github.com/builtin-tools/builtin-tools/graph/index"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

func main() {
	root := flag.String("root", "", "tree to index")
	mode := flag.String("mode", "build", "build (one build, timed) or queries (build, then time queries and edits)")
	cache := flag.String("cache", "", "graph store folder (graph.Options.StoreDir)")
	n := flag.Int("n", 50, "query targets and edits (queries mode)")
	seed := flag.Uint64("seed", 1, "target choice")
	scratch := flag.String("scratch", "", "queries mode: a copy of the tree the edits may change (required)")
	queryDirs := flag.String("query-dirs", "", "extra language folders (graph.Options.QueryDirs); a go folder with a one-pattern query measures the parse alone")
	cpuProfile := flag.String("cpuprofile", "", "build mode: write a CPU profile of the build to this file")
	flag.Parse()
	if *root == "" {
		fail("-root is required")
	}
	switch *mode {
	case "build":
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
		fmt.Printf("build seconds=%.3f files=%d definitions=%d references=%d from_store=%d parsed=%d index_mib=%.1f heap_sys_mib=%d live_mib=%d\n",
			took.Seconds(), st.Files, st.Defs, st.Refs, st.FromStore, x.Stats().Parsed, st.MemoryMiB, sys>>20, ms.HeapAlloc>>20)
	case "queries":
		if *scratch == "" {
			fail("-scratch is required: the edits write to it")
		}
		queries(*scratch, *n, *seed)
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
				graphtool.Render(a, 8000)
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
				graphtool.Render(a, 8000)
			}
			if round == 2 {
				callees = append(callees, time.Since(t0))
			}
			t0 = time.Now()
			x.Sync(context.Background())
			if a, err := graph.Impact(w.View(0), spec, 3, 30); err == nil {
				graphtool.Render(a, 8000)
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
			fail(fmt.Sprintf("after the edit of %s the new call does not lead to %s: %s", t.File, t.Qualified, graphtool.Render(a, 0)))
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
