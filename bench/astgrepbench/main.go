// Command astgrepbench times the astgrep engine on a tree, cold and then
// warm (the same query again in the same process), and can print every
// match as "file:startByte:endByte" for comparison with ast-grep's output.
// bench/astgrep.sh runs it beside ast-grep; see BENCHMARKS.md ("Structural search").
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"time"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/astgrep/rule"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

func main() {
	root := flag.String("root", ".", "folder to search")
	pattern := flag.String("pattern", "", "pattern")
	ruleJSON := flag.String("rule", "", "an ast-grep rule object as JSON, instead of -pattern")
	lang := flag.String("lang", "", "language id")
	runs := flag.Int("runs", 1, "how many times to run the query in one process (runs after the first are warm)")
	maxSize := flag.Int64("max-file-size", 0, "skip files larger than this (0 = engine default)")
	cache := flag.Int64("cache-bytes", 0, "parse cache budget (0 = engine default, <0 = off)")
	workers := flag.Int("workers", 0, "parallel workers (0 = GOMAXPROCS)")
	list := flag.String("list", "", "write every match of the first run as file:start:end lines to this file")
	grammars := flag.String("grammars", "", "grammar folder for run-time grammars")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of all runs here")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if (*pattern == "") == (*ruleJSON == "") {
		fmt.Fprintln(os.Stderr, "astgrepbench: give -pattern or -rule")
		os.Exit(2)
	}
	var spec *rule.Spec
	if *ruleJSON != "" {
		spec = &rule.Spec{}
		if err := json.Unmarshal([]byte(*ruleJSON), &spec.Rule); err != nil {
			fmt.Fprintln(os.Stderr, "astgrepbench: -rule:", err)
			os.Exit(2)
		}
	}
	abs, err := filepath.Abs(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	opts := astgrep.Options{MaxFileSize: *maxSize, CacheBytes: *cache, Workers: *workers}
	if *grammars != "" {
		opts.GrammarDirs = []string{*grammars}
	}
	e := astgrep.NewEngine(opts)
	defer e.Close()
	g, err := pathguard.New(abs)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer g.Close()
	for i := 0; i < *runs; i++ {
		q := astgrep.Query{Path: g.RootPath(), Pattern: *pattern, Rule: spec, Language: *lang, MaxResults: 1}
		start := time.Now()
		var (
			res *astgrep.Result
			fms []astgrep.FileMatches
		)
		if i == 0 && *list != "" {
			res, fms, err = e.SearchFiles(context.Background(), q)
		} else {
			res, err = e.Search(context.Background(), q)
		}
		elapsed := time.Since(start)
		if err != nil {
			fmt.Fprintln(os.Stderr, "astgrepbench:", err)
			pprof.StopCPUProfile()
			os.Exit(1)
		}
		kind := "warm"
		if i == 0 {
			kind = "cold"
		}
		fmt.Printf("run=%d kind=%s seconds=%.3f matches=%d files_scanned=%d files_parsed=%d files_cached=%d files_skipped=%d\n",
			i+1, kind, elapsed.Seconds(), res.Total, res.FilesScanned, res.FilesParsed, res.FilesCached, res.FilesSkipped)
		if fms != nil {
			var lines []string
			for _, f := range fms {
				for _, m := range f.Matches {
					lines = append(lines, fmt.Sprintf("%s:%d:%d", f.File, m.StartByte, m.EndByte))
				}
			}
			sort.Strings(lines)
			out, err := os.Create(*list)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			for _, l := range lines {
				fmt.Fprintln(out, l)
			}
			out.Close()
		}
	}
}
