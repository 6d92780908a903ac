package graph

import (
	"bytes"
	"context"
	"path"
	"runtime"
	"strings"
	"sync"

	"github.com/builtin-tools/builtin-tools/internal/walk"
)

// AheadMinFiles is the smallest tree Ahead answers for; below it Ahead
// returns nil and the query waits for the whole build.
const AheadMinFiles = 200

// Ahead builds, while the full build is still going, a small index of
// only the files a query about name needs: those whose bytes hold the
// name (a literal scan, like astgrep's prefilter), then every other file in the folders of
// the files that define it (the target's package, which same-package and
// import resolution read). Any call site, import or alias of name holds
// its bytes, so callers and callees answer from it as the full index
// would (for callees, also the files that hold a name the definitions
// call); answers say how many files they came from (IndexState.Ahead).
// find is not answered ahead: it also matches names that hold the query
// only as a scattered subsequence, which no literal scan can narrow to.
// symbol is as the query gives it (pkg.Func, Type.Method,
// file.go:Func): its last identifier is scanned for.
func (x *Index) Ahead(ctx context.Context, symbol string, callees bool) (*Index, error) {
	name := aheadName(symbol)
	if name == "" {
		return nil, &LookupError{"no name to look for in " + symbol}
	}
	sub := &Index{root: x.root, guard: x.guard, eng: x.eng, langs: x.langs, opts: x.opts,
		files: map[string]*File{}, dirs: map[string]int64{}, skipped: map[string]string{},
		langIx: map[*Language]*langIndex{}, ready: make(chan struct{}), saved: make(chan struct{}),
		ctx: ctx, cancel: func() {}, modAt: map[string]string{}, parent: x}
	close(sub.ready)
	close(sub.saved)
	var found []walk.Entry
	if err := walk.Walk(ctx, x.guard, x.root, x.walkOpts(), func(e walk.Entry) error {
		found = append(found, e)
		return nil
	}); err != nil {
		return nil, err
	}
	files := sub.admit(found)
	if len(files) < AheadMinFiles {
		return nil, nil // the whole build is about as quick
	}
	hit := sub.scan(ctx, files, [][]byte{[]byte(name)})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var first []walk.Entry
	for i, e := range files {
		if hit[i] {
			first = append(first, e)
		}
	}
	sub.total = len(files)
	if err := sub.capture(ctx, first, false); err != nil {
		return nil, err
	}
	// The folders of the files that define the name: their other files
	// hold the package's types, results and imports resolution may read.
	pkgs := map[string]bool{}
	for _, f := range sub.files {
		for i := range f.Defs {
			if f.Defs[i].Name == name {
				pkgs[f.Dir] = true
				break
			}
		}
	}
	var more []walk.Entry
	for i, e := range files {
		if !hit[i] && pkgs[path.Dir(e.Rel)] {
			more = append(more, e)
			hit[i] = true
		}
	}
	if err := sub.capture(ctx, more, false); err != nil {
		return nil, err
	}
	if !callees {
		return sub, nil
	}
	// The names the definitions call: their definitions and candidates.
	called := map[string]bool{}
	for _, f := range sub.files {
		for i := range f.Defs {
			d := &f.Defs[i]
			if d.Name != name {
				continue
			}
			for ri := range f.Refs {
				if r := &f.Refs[ri]; r.Kind == RefCall && r.at >= d.start && r.at < d.end {
					called[f.strs[r.name]] = true
				}
			}
		}
	}
	var names [][]byte
	for n := range called {
		if n != name {
			names = append(names, []byte(n))
		}
	}
	var rest []walk.Entry
	for i, e := range files {
		if !hit[i] {
			rest = append(rest, e)
		}
	}
	third := sub.scan(ctx, rest, names)
	var callee []walk.Entry
	for i, e := range rest {
		if third[i] {
			callee = append(callee, e)
		}
	}
	if err := sub.capture(ctx, callee, false); err != nil {
		return nil, err
	}
	return sub, nil
}

// aheadName is the identifier a symbol spec ends with.
func aheadName(symbol string) string {
	s := strings.TrimSpace(symbol)
	if i := strings.LastIndex(s, ":"); i >= 0 {
		s = s[i+1:]
	}
	if i := strings.LastIndexAny(s, ".#"); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

// scan says, for each file, whether its bytes hold one of names, reading files on
// a few goroutines; a file that cannot be read counts as a hit, so the
// capture reports why.
func (x *Index) scan(ctx context.Context, files []walk.Entry, names [][]byte) []bool {
	hit := make([]bool, len(files))
	if len(names) == 0 {
		return hit
	}
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 4 * runtime.GOMAXPROCS(0) { // reads wait in system calls
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(files) {
					return
				}
				data, _, err := x.guard.ReadFile(files[i].Abs, x.opts.MaxFileSize)
				hit[i] = err != nil
				for _, n := range names {
					if hit[i] {
						break
					}
					hit[i] = bytes.Contains(data, n)
				}
			}
		}()
	}
	wg.Wait()
	return hit
}
