package astgrep

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Captures: tree-sitter's own query language (S-expression patterns with
// @captures, the format of a grammar's tags.scm), run over files read and
// parsed in the process's work slots. The code graph's per-language query
// files are compiled here, so the graph parses with the same grammars,
// parsers and slots as ast_grep.

// CaptureQuery is a query compiled for one language. It is immutable and
// safe for concurrent use.
type CaptureQuery struct {
	// Language is the grammar id the query was compiled for.
	Language string
	// Names are the capture names by index (without the @).
	Names []string
	// Patterns is how many patterns the query holds.
	Patterns int

	lang    *language
	pats    []qpattern
	bySym   [][]int
	anyRoot []int
}

// QueryError says why a query did not compile, at which line and column
// (1-based) of its source.
type QueryError struct {
	Language     string
	Line, Column int
	Problem      string
	Near         string
}

func (e *QueryError) Error() string {
	return fmt.Sprintf("%s query, line %d column %d: %s near %q", e.Language, e.Line, e.Column, e.Problem, e.Near)
}

// predicate is one #eq?-style condition of a pattern, checked against the
// captured text.
type predicate struct {
	op      string // eq, match, any-of
	negate  bool
	capture int
	other   int // a second capture for eq, or -1
	values  []string
	re      *regexp.Regexp
}

// CompileCaptureQuery compiles source, a tree-sitter query, for language.
// Supported predicates are #eq?, #match?, #any-of? and their #not-
// forms; directives (#set!, #strip!, ...) are ignored.
func (e *Engine) CompileCaptureQuery(language, source string) (*CaptureQuery, error) {
	l := e.langs.lookup(language)
	if l == nil {
		return nil, e.unknown(language, "")
	}
	if err := l.load(); err != nil {
		return nil, err
	}
	pats, names, err := compileQuery(l, source)
	if err != nil {
		var qe *qerr
		if !errors.As(err, &qe) {
			return nil, err
		}
		off := min(qe.pos, len(source))
		line, col := 1, 1
		for _, r := range source[:off] {
			if r == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
		}
		near := source[off:]
		if i := strings.IndexByte(near, '\n'); i >= 0 {
			near = near[:i]
		}
		if len(near) > 40 {
			near = near[:40]
		}
		return nil, &QueryError{Language: l.id, Line: line, Column: col, Problem: qe.msg, Near: near}
	}
	cq := &CaptureQuery{Language: l.id, Names: names, Patterns: len(pats), lang: l, pats: pats}
	cq.bySym, cq.anyRoot = rootSyms(pats, symbolCount(l.ts)+1)
	return cq, nil
}

// Capture returns the index of the capture called name, or -1.
func (q *CaptureQuery) Capture(name string) int {
	return slices.Index(q.Names, name)
}

func makePredicate(name string, args []predArg) (*predicate, error) {
	if strings.HasSuffix(name, "!") {
		return nil, nil // a directive: nothing to check
	}
	p := predicate{other: -1}
	op := strings.TrimSuffix(name, "?")
	if rest, ok := strings.CutPrefix(op, "not-"); ok {
		p.negate, op = true, rest
	}
	p.op = op
	if len(args) < 2 || args[0].capture < 0 {
		return nil, fmt.Errorf("#%s needs a capture and a value", name)
	}
	p.capture = args[0].capture
	switch op {
	case "eq":
		if len(args) != 2 {
			return nil, fmt.Errorf("#%s takes two arguments", name)
		}
		if args[1].capture >= 0 {
			p.other = args[1].capture
		} else {
			p.values = []string{args[1].text}
		}
	case "match":
		if len(args) != 2 || args[1].capture >= 0 {
			return nil, fmt.Errorf("#%s takes a capture and a regular expression", name)
		}
		re, err := regexp.Compile(args[1].text)
		if err != nil {
			return nil, fmt.Errorf("#%s: %w", name, err)
		}
		p.re = re
	case "any-of":
		for _, a := range args[1:] {
			if a.capture >= 0 {
				return nil, fmt.Errorf("#%s takes strings after its capture", name)
			}
			p.values = append(p.values, a.text)
		}
	default:
		return nil, fmt.Errorf("unknown predicate #%s (known: #eq?, #match?, #any-of? and their #not- forms)", name)
	}
	return &p, nil
}

// CaptureResult is what one file gave. Src is the file's text and is
// valid only during the callback; copy what you keep.
type CaptureResult struct {
	File    CaptureFile
	Src     []byte
	Info    fs.FileInfo // from the descriptor the file was read through
	Matches []QueryMatch
	// ErrorRows are 0-based rows of the first ERROR or MISSING nodes (at
	// most 20); Errors counts them all. The matches cover what parsed.
	ErrorRows []int
	Errors    int
	// Err says why the file gave nothing: unreadable, binary, larger than
	// the size limit, or not parsed.
	Err error
}

// QueryMatch is one match of one pattern.
type QueryMatch struct {
	Pattern  int
	Captures []QueryCapture
}

// QueryCapture is one captured node: its capture index, byte range and
// 0-based rows and start column (in bytes).
type QueryCapture struct {
	Index              int
	Start, End         int
	StartRow, StartCol int
	EndRow             int
}

// Text returns the captured text of src.
func (c QueryCapture) Text(src []byte) string { return string(src[c.Start:c.End]) }

// CaptureFile is one file to capture from, with the query for its
// language. Info, when set (from a walk), lets the parse cache serve the
// file's tree.
type CaptureFile struct {
	Path  string // absolute, inside the guard's root
	Query *CaptureQuery
	Info  fs.FileInfo
}

// Capture reads, parses and queries files, Workers at a time (bounded by
// the process's work slots), and calls fn for each from the worker that
// did it, so fn must be safe for concurrent use. Trees already in the
// parse cache are used; new ones are not added to it (an index reads
// every file once). It stops early when ctx ends and returns ctx's error.
func (e *Engine) Capture(ctx context.Context, g *pathguard.Guard, files []CaptureFile, fn func(*CaptureResult)) error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return errors.New("astgrep: engine closed")
	}
	workers := min(e.opts.Workers, len(files))
	gen := queryGen.Add(1)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				e.captureOne(ctx, g, gen, files[i], fn)
			}
		}()
	}
	var err error
feed:
	for i := range files {
		select {
		case next <- i:
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err == nil {
		err = ctx.Err()
	}
	return err
}

func (e *Engine) captureOne(ctx context.Context, g *pathguard.Guard, gen uint64, f CaptureFile, fn func(*CaptureResult)) {
	if ctx.Err() != nil {
		return
	}
	q := f.Query
	res := &CaptureResult{File: f, Info: f.Info}
	var t *tree
	if e.cache != nil && f.Info != nil {
		if st, ok := stampOf(f.Info); ok {
			t = e.cache.peek(cacheKey{path: f.Path, lang: q.lang.id, grammar: grammarAddr(q.lang.ts)}, st, gen, g)
		}
	}
	if t == nil {
		s, err := acquireSlot(ctx)
		if err != nil {
			return
		}
		defer releaseSlot(s)
		src, info, err := readInto(s.src[:0], g, f.Path, 0, e.opts.MaxFileSize)
		s.src = src[:0]
		if info != nil {
			res.Info = info
		}
		switch {
		case err != nil:
			res.Err = err
		case textcut.Binary(src):
			res.Err = errors.New("binary (a NUL byte near the start)")
		}
		if res.Err != nil {
			fn(res)
			return
		}
		nodes, err := s.p.parse(ctx, q.lang.g, src, s.nodes, nil)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			res.Err = err
			fn(res)
			return
		}
		s.nodes = nodes[:0]
		t = &tree{src: src, nodes: nodes}
	}
	res.Src = t.src
	var starts []int
	for i := range t.nodes {
		if t.nodes[i].flags&(flagError|flagMissing) == 0 {
			continue
		}
		res.Errors++
		if len(res.ErrorRows) < 20 {
			if starts == nil {
				starts = lineStarts(t.src)
			}
			res.ErrorRows = append(res.ErrorRows, lineOf(starts, int(t.nodes[i].start))-1)
		}
	}
	res.Matches = q.run(t)
	fn(res)
}

// run matches the query over t and returns the matches whose predicates
// hold, captures in tree order.
func (q *CaptureQuery) run(t *tree) []QueryMatch {
	var out []QueryMatch
	var starts []int
	row := func(off int) int {
		if starts == nil {
			starts = lineStarts(t.src)
		}
		return lineOf(starts, off) - 1
	}
	runPatterns(t, q.pats, q.bySym, q.anyRoot, func(pi int, caps []capPair) {
		m := QueryMatch{Pattern: pi, Captures: make([]QueryCapture, 0, len(caps))}
		for _, c := range caps {
			nd := &t.nodes[c.node]
			sr := row(int(nd.start))
			er := sr
			if nd.end > nd.start {
				er = row(int(nd.end) - 1)
			}
			col := int(nd.start) - starts[sr]
			m.Captures = append(m.Captures, QueryCapture{Index: c.capture, Start: int(nd.start), End: int(nd.end), StartRow: sr, StartCol: col, EndRow: er})
		}
		sort.SliceStable(m.Captures, func(i, j int) bool { return m.Captures[i].Start < m.Captures[j].Start })
		if q.holds(t.src, m) {
			out = append(out, m)
		}
	})
	return out
}

func (q *CaptureQuery) holds(src []byte, m QueryMatch) bool {
	for _, p := range q.pats[m.Pattern].preds {
		for _, c := range m.Captures {
			if c.Index != p.capture {
				continue
			}
			text := string(src[c.Start:c.End])
			var ok bool
			switch p.op {
			case "eq":
				if p.other >= 0 {
					ok = true
					for _, o := range m.Captures {
						if o.Index == p.other && string(src[o.Start:o.End]) != text {
							ok = false
						}
					}
				} else {
					ok = text == p.values[0]
				}
			case "match":
				ok = p.re.MatchString(text)
			case "any-of":
				ok = slices.Contains(p.values, text)
			}
			if ok == p.negate {
				return false
			}
		}
	}
	return true
}

// Extensions lists the file extensions (with the dot) of a language id or
// alias, or nil when it is unknown.
func (e *Engine) Extensions(language string) []string {
	l := e.langs.lookup(language)
	if l == nil {
		return nil
	}
	return slices.Clone(l.spec.exts)
}
