// Command querycursor measures the code graph's tags query over a tree of
// Go files two ways, one thread each, in one run: today's path (astgrep's
// Engine.Capture: parse, flatten, the Go matcher) and tree-sitter's own
// query cursor on the native tree (go-tree-sitter's runtime, the same one
// astgrep links), after the same parse. It prints CPU seconds, matches
// and captures for each, so the two can be compared and checked to agree.
//
//	go -C bench run ./querycursor -root "$(go env GOROOT)/src" -rounds 3
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/pathguard"
	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/golang"
)

func cpu() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type tally struct {
	files, matches, captures int
	wall, cpu                time.Duration
}

func (t tally) String() string {
	return fmt.Sprintf("files=%d matches=%d captures=%d wall=%.2fs cpu=%.2fs", t.files, t.matches, t.captures, t.wall.Seconds(), t.cpu.Seconds())
}

func timed(fn func(*tally)) tally {
	var t tally
	w, c := time.Now(), cpu()
	fn(&t)
	t.wall, t.cpu = time.Since(w), cpu()-c
	return t
}

func main() {
	root := flag.String("root", "", "tree of Go files (default GOROOT/src)")
	query := flag.String("query", "../graph/languages/go/tags.scm", "the tags query, relative to bench/")
	rounds := flag.Int("rounds", 3, "alternating rounds")
	flag.Parse()
	if *root == "" {
		*root = filepath.Join(os.Getenv("GOROOT"), "src")
		if os.Getenv("GOROOT") == "" {
			log.Fatal("querycursor: pass -root or set GOROOT")
		}
	}
	qsrc, err := os.ReadFile(*query)
	if err != nil {
		log.Fatal(err)
	}
	var paths []string
	err = filepath.WalkDir(*root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.HasSuffix(p, ".go") {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}

	// Today's path, one worker.
	eng := astgrep.NewEngine(astgrep.Options{Workers: 1})
	defer eng.Close()
	cq, err := eng.CompileCaptureQuery("go", string(qsrc))
	if err != nil {
		log.Fatal(err)
	}
	guard, err := pathguard.New(*root)
	if err != nil {
		log.Fatal(err)
	}
	files := make([]astgrep.CaptureFile, len(paths))
	for i, p := range paths {
		files[i] = astgrep.CaptureFile{Path: p, Query: cq}
	}
	ours := func(t *tally) {
		err := eng.Capture(context.Background(), guard, files, func(r *astgrep.CaptureResult) {
			if r.Err != nil {
				return
			}
			t.files++
			t.matches += len(r.Matches)
			for _, m := range r.Matches {
				t.captures += len(m.Captures)
			}
		})
		if err != nil {
			log.Fatal(err)
		}
	}

	// The native query cursor, after go-tree-sitter's parse.
	lang := golang.GetLanguage()
	nq, err := sitter.NewQuery(qsrc, lang)
	if err != nil {
		log.Fatalf("querycursor: the native runtime refuses the query: %v", err)
	}
	parser := sitter.NewParser()
	parser.SetLanguage(lang)
	run := func(t *tally, query bool) {
		for _, p := range paths {
			src, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			tree, err := parser.ParseCtx(context.Background(), nil, src)
			if err != nil {
				continue
			}
			t.files++
			if query {
				qc := sitter.NewQueryCursor()
				qc.Exec(nq, tree.RootNode())
				for {
					m, ok := qc.NextMatch()
					if !ok {
						break
					}
					m = qc.FilterPredicates(m, src)
					if len(m.Captures) == 0 {
						continue
					}
					t.matches++
					t.captures += len(m.Captures)
				}
				qc.Close()
			}
			tree.Close()
		}
	}
	native := func(t *tally) { run(t, true) }
	parseOnly := func(t *tally) { run(t, false) }

	fmt.Printf("# %d Go files under %s; query %s (%d patterns)\n", len(paths), *root, *query, nq.PatternCount())
	for r := 1; r <= *rounds; r++ {
		a := timed(ours)
		b := timed(native)
		c := timed(parseOnly)
		fmt.Printf("round %d\n  astgrep (parse + flatten + Go matcher): %v\n  native query cursor (parse + cursor):  %v\n  parse only (native runtime):           %v\n  cursor / astgrep CPU: %.2f; query part alone, native / ours: %.2f\n",
			r, a, b, c, b.cpu.Seconds()/a.cpu.Seconds(), (b.cpu-c.cpu).Seconds()/(a.cpu-c.cpu).Seconds())
	}
}
