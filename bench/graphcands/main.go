// Command graphcands counts the code graph's call edges by class: for
// each symbol named, its callers by class with every name-only candidate
// site listed (what the declared types did not reach); with -totals, the
// exact and candidate edges of the whole index, which tell whether a
// typing rule moved edges from one class to the other. Run from bench/:
//
//	go run ./graphcands -root $(go env GOROOT)/src bytes.Buffer.WriteString sync.WaitGroup.Done
//	go run ./graphcands -root $(go env GOROOT)/src -totals
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/graph"
	"github.com/builtin-tools/builtin-tools/graph/index"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

func main() {
	root := flag.String("root", "", "tree to index (required)")
	totals := flag.Bool("totals", false, "print the whole index's exact and candidate edge counts")
	dump := flag.String("dump", "", "with -totals, also write the whole index's dump (graph.Dump) to this file: two runs' dumps differ only if the index depends on the order files were read")
	flag.Parse()
	if *root == "" {
		fmt.Fprintln(os.Stderr, "graphcands: -root is required")
		os.Exit(2)
	}
	g, err := pathguard.New(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "graphcands:", err)
		os.Exit(2)
	}
	x, err := index.New(g, astgrep.NewEngine(astgrep.Options{}), graph.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "graphcands:", err)
		os.Exit(2)
	}
	x.Start(nil)
	x.Wait(context.Background(), time.Hour)
	w := graph.NewViewer(x)
	if *totals {
		d := graph.Dump(w.View(0))
		fmt.Printf("exact=%d candidate=%d implementation-listing=%d\n", strings.Count(d, " -> exact"), strings.Count(d, " -> candidate"), strings.Count(d, " implementation["))
		if *dump != "" {
			if err := os.WriteFile(*dump, []byte(d), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "graphcands:", err)
				os.Exit(1)
			}
		}
	}
	for _, sym := range flag.Args() {
		a, err := graph.Callers(w.View(0), graph.Spec{Symbol: sym})
		if err != nil {
			fmt.Printf("== %s: %v\n", sym, err)
			continue
		}
		c := a.Counts
		fmt.Printf("== %s: exact %d, import %d, candidate %d, implementation %d, unresolved %d\n", sym, c.Exact, c.Import, c.Candidate, c.Implementation, c.Unresolved)
		for _, s := range a.Sites {
			if s.Class == "candidate" {
				fmt.Printf("  %s:%d  %s  (%s)\n", s.File, s.Line, strings.TrimSpace(s.Code), s.Reason)
			}
		}
	}
}
