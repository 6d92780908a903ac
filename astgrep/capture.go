package astgrep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync"

	"github.com/builtin-tools/builtin-tools/astgrep/fileread"
	"github.com/builtin-tools/builtin-tools/astgrep/parsecache"
	"github.com/builtin-tools/builtin-tools/astgrep/procpool"
	"github.com/builtin-tools/builtin-tools/astgrep/scmmatch"
	"github.com/builtin-tools/builtin-tools/astgrep/scmquery"
	"github.com/builtin-tools/builtin-tools/astgrep/tsnative"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Captures: tree-sitter's own query language (S-expression patterns with
// @captures, the format of a grammar's tags.scm), read by package
// scmquery against a grammar and run here over files read and parsed in
// the process's work slots. The code graph's per-language query files are
// compiled here, so the graph parses with the same grammars, parsers and
// slots as ast_grep.

// CaptureQuery is a query compiled for one language. It is immutable and
// safe for concurrent use.
type CaptureQuery struct {
	// Language is the grammar id the query was compiled for.
	Language string
	// Names are the capture names by index (without the @).
	Names []string
	// Patterns is how many patterns the query holds.
	Patterns int

	lang *language
	prog *scmmatch.Query
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

// CompileCaptureQuery compiles source, a tree-sitter query, for language.
// Supported predicates are #eq?, #match?, #any-of? and their #not-
// forms; directives (#set!, #strip!, ...) are ignored.
func (e *Engine) CompileCaptureQuery(language, source string) (*CaptureQuery, error) {
	l, err := e.loaded(language)
	if err != nil {
		return nil, err
	}
	l.loadNames()
	named := make([]bool, len(l.names))
	for i := range named {
		named[i] = l.g.Named[i] == 1
	}
	pats, names, err := scmquery.Parse(scmquery.Grammar{Symbols: l.names, Named: named, Fields: l.g.Fields}, source)
	if err != nil {
		var se *scmquery.Error
		if !errors.As(err, &se) {
			return nil, err
		}
		return nil, &QueryError{Language: l.id, Line: se.Line, Column: se.Column, Problem: se.Problem, Near: se.Near}
	}
	return &CaptureQuery{Language: l.id, Names: names, Patterns: len(pats), lang: l, prog: scmmatch.New(pats, l.ts.SymbolCount()+1)}, nil
}

// Capture returns the index of the capture called name, or -1.
func (q *CaptureQuery) Capture(name string) int {
	return slices.Index(q.Names, name)
}

// CaptureResult is what one file gave. Src is the file's text and Tree
// its syntax tree; both are valid only during the callback (copy what you
// keep).
type CaptureResult struct {
	File CaptureFile
	Src  []byte
	Info fs.FileInfo // from the descriptor the file was read through
	// Tree is the file's tree, for running queries over it
	// (CaptureQuery.Each, Tree.MatchAt); nil when Err is set.
	Tree *Tree
	// Matches are File.Query's matches, in the order Each visits them
	// (Capture and CaptureSnippet; CaptureTrees leaves them nil).
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

// QueryCapture is one captured node: its capture index, the node (its
// number in the Tree), its byte range, and its 0-based rows and start
// column (in bytes). The visitor forms (Each, MatchAt) leave the rows and
// the column -1, for Tree.Row and Tree.Col to give on demand.
type QueryCapture struct {
	Index              int
	Node               int32
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
	// Want, when set, is called with the file's bytes and the info of the
	// descriptor they were read through, after the read and before the
	// parse (not for a tree the parse cache holds), from the worker: false leaves the file unparsed and fn is not called for it
	// (the caller had what the parse would give, e.g. a record kept by
	// content). src is valid only during the call.
	Want func(src []byte, info fs.FileInfo) bool
}

// Capture reads, parses and queries files, Workers at a time (bounded by
// the process's work slots), and calls fn for each from the worker that
// did it, so fn must be safe for concurrent use. Trees already in the
// parse cache are used; new ones are not added to it (an index reads
// every file once). It stops early when ctx ends and returns ctx's error.
// It is CaptureTrees with each file's matches collected into
// r.Matches, rows and columns filled in.
func (e *Engine) Capture(ctx context.Context, g *pathguard.Guard, files []CaptureFile, fn func(*CaptureResult)) error {
	return e.CaptureTrees(ctx, g, files, func(r *CaptureResult) {
		if r.Tree != nil {
			r.Matches = r.File.Query.matches(r.Tree)
		}
		fn(r)
	})
}

// CaptureTrees is Capture without running the queries: fn gets each
// file's Tree (r.Matches is nil) and runs what it needs over it,
// r.File.Query.Each for the file's matches without building them all,
// Tree.MatchAt for other queries of the language at chosen nodes.
func (e *Engine) CaptureTrees(ctx context.Context, g *pathguard.Guard, files []CaptureFile, fn func(*CaptureResult)) error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return ErrClosed
	}
	workers := min(e.opts.Workers, len(files))
	gen := e.pc.NextGen()
	order := make([]int, len(files))
	for i := range order {
		order[i] = i
	}
	fd := procpool.NewFeeder(order, func(i int) int64 {
		if files[i].Info == nil {
			return 0
		}
		return procpool.BigParses.Weight(files[i].Info.Size())
	})
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := &Tree{}
			var rd fileread.Reader
			defer rd.Close()
			for {
				i, held, ok := fd.Take(ctx)
				if !ok || ctx.Err() != nil {
					procpool.BigParses.Release(held)
					return
				}
				e.captureOne(ctx, g, gen, files[i], x, &rd, held, fn)
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// captureOne reads and parses one file (or takes its tree from the
// cache) and hands it to fn in x, the worker's Tree.
func (e *Engine) captureOne(ctx context.Context, g *pathguard.Guard, gen uint64, f CaptureFile, x *Tree, rd *fileread.Reader, held int64, fn func(*CaptureResult)) {
	release := func() {
		procpool.BigParses.Release(held)
		held = 0
	}
	defer release()
	if ctx.Err() != nil {
		return
	}
	q := f.Query
	res := &CaptureResult{File: f, Info: f.Info}
	var t *tree
	if e.cache != nil && f.Info != nil {
		if st, ok := parsecache.StampOf(f.Info); ok {
			t, _ = e.cache.Peek(parsecache.Key{Path: f.Path, Lang: q.lang.id, Grammar: q.lang.ts.Addr()}, st, gen, g)
		}
	}
	if t == nil {
		s, err := procpool.Acquire(ctx)
		if err != nil {
			return
		}
		defer procpool.Release(s)
		src, info, err := rd.Read(s.Src[:0], g, f.Path, 0, e.opts.MaxFileSize)
		s.Src = src[:0]
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
		if f.Want != nil && !f.Want(src, res.Info) {
			return
		}
		nodes, err := s.Parser.Parse(ctx, q.lang.g, src, s.Nodes, nil)
		release()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			res.Err = err
			fn(res)
			return
		}
		s.Nodes = nodes[:0]
		t = &tree{src: src, nodes: nodes}
	}
	x.reset(t, q.lang)
	defer x.reset(nil, nil)
	res.Src, res.Tree = t.src, x
	res.Errors, res.ErrorRows = x.errors()
	fn(res)
}

// errors counts the tree's ERROR and MISSING nodes and lists the rows of
// the first 20.
func (x *Tree) errors() (n int, rows []int) {
	for i := range x.t.nodes {
		nd := &x.t.nodes[i]
		if nd.Flags&(tsnative.FlagError|tsnative.FlagMissing) == 0 {
			continue
		}
		n++
		if len(rows) < 20 {
			rows = append(rows, x.Row(int(nd.Start)))
		}
	}
	return n, rows
}

// CaptureSnippet runs q over src, code in q's language held in memory
// (nothing is read from disk): the result's File.Path is SnippetFile, its
// Matches are filled as Capture fills them, and its Tree owns its memory
// (it stays valid after the call, for one goroutine at a time).
func (e *Engine) CaptureSnippet(ctx context.Context, q *CaptureQuery, src []byte) (*CaptureResult, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, ErrClosed
	}
	s, err := procpool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	src = append([]byte(nil), src...)
	t, err := e.parseWith(ctx, s.Parser, q.lang, src)
	procpool.Release(s)
	if err != nil {
		return nil, err
	}
	x := &Tree{}
	x.reset(t, q.lang)
	res := &CaptureResult{File: CaptureFile{Path: SnippetFile, Query: q}, Src: src, Tree: x}
	res.Errors, res.ErrorRows = x.errors()
	res.Matches = q.matches(x)
	return res, nil
}

// Each runs q over the whole tree and calls visit with every match whose
// predicates hold: by root node in tree order, then by pattern, captures
// sorted by position (an ancestor before its first descendant). The match
// and its Captures are reused: they are valid only until visit returns,
// and their rows and columns are -1 (Tree.Row gives them). visit returns
// false to stop. q must be compiled for the tree's grammar.
func (q *CaptureQuery) Each(t *Tree, visit func(m *QueryMatch) bool) {
	s := t.push(q, visit)
	defer t.pop()
	s.qm.Run(q.prog, s.emit)
}

// MatchAt runs, at node n alone, the patterns of q whose root can be n's
// kind, and calls visit with each match as Each would (visit may call
// MatchAt again). Every match Each finds rooted at n is found, in the
// same order.
func (x *Tree) MatchAt(n int32, q *CaptureQuery, visit func(m *QueryMatch) bool) {
	s := x.push(q, visit)
	defer x.pop()
	s.qm.At(q.prog, int(n), s.emit)
}

func (x *Tree) push(q *CaptureQuery, visit func(*QueryMatch) bool) *matchScratch {
	if q.lang.ts != x.lang.ts {
		panic(fmt.Sprintf("astgrep: a query compiled for %s run over a %s tree", q.lang.id, x.lang.id))
	}
	if x.depth == len(x.scratch) {
		s := &matchScratch{}
		s.emit = s.deliver
		x.scratch = append(x.scratch, s)
	}
	s := x.scratch[x.depth]
	x.depth++
	s.qm.Reset(x.t.nodes)
	s.t, s.q, s.visit = x.t, q, visit
	return s
}

func (x *Tree) pop() {
	x.depth--
	s := x.scratch[x.depth]
	s.t, s.q, s.visit = nil, nil, nil
	s.qm.Release()
	// A rare huge file's captures are not kept for the next.
	if cap(s.m.Captures) > 1<<12 {
		s.m.Captures = nil
	}
}

// deliver turns one raw match into s.m and visits it if its predicates
// hold.
func (s *matchScratch) deliver(pi int, caps []scmmatch.Cap) {
	m := &s.m
	m.Pattern = pi
	m.Captures = m.Captures[:0]
	sorted := true
	nodes := s.t.nodes
	for _, c := range caps {
		nd := &nodes[c.Node]
		if n := len(m.Captures); n > 0 && int(nd.Start) < m.Captures[n-1].Start {
			sorted = false
		}
		m.Captures = append(m.Captures, QueryCapture{Index: c.Capture, Node: int32(c.Node), Start: int(nd.Start), End: int(nd.End), StartRow: -1, StartCol: -1, EndRow: -1})
	}
	if !sorted {
		// Stable: of two captures at one position, the outer (captured
		// first) stays first.
		cs := m.Captures
		for i := 1; i < len(cs); i++ {
			for j := i; j > 0 && cs[j].Start < cs[j-1].Start; j-- {
				cs[j], cs[j-1] = cs[j-1], cs[j]
			}
		}
	}
	if !s.q.holds(s.t.src, m) {
		return
	}
	if !s.visit(m) {
		s.qm.Stop()
	}
}

// matches collects every match of q over x, each with its own captures,
// rows and columns filled in.
func (q *CaptureQuery) matches(x *Tree) []QueryMatch {
	var out []QueryMatch
	var all []QueryCapture // every match's captures, one after another
	var ends []int
	q.Each(x, func(m *QueryMatch) bool {
		for _, c := range m.Captures {
			c.StartRow, c.StartCol = x.Row(c.Start), x.Col(c.Start)
			c.EndRow = x.Row(endOffset(c.Start, c.End))
			all = append(all, c)
		}
		out = append(out, QueryMatch{Pattern: m.Pattern})
		ends = append(ends, len(all))
		return true
	})
	start := 0
	for i := range out {
		out[i].Captures = all[start:ends[i]:ends[i]]
		start = ends[i]
	}
	return out
}

// run is matches over a bare tree.
func (q *CaptureQuery) run(t *tree) []QueryMatch {
	x := &Tree{}
	x.reset(t, q.lang)
	return q.matches(x)
}

func (q *CaptureQuery) holds(src []byte, m *QueryMatch) bool {
	for _, p := range q.prog.Pattern(m.Pattern).Preds {
		for _, c := range m.Captures {
			if c.Index != p.Capture {
				continue
			}
			text := src[c.Start:c.End]
			ok := true
			if p.Other >= 0 {
				for _, o := range m.Captures {
					if o.Index == p.Other && !bytes.Equal(src[o.Start:o.End], text) {
						ok = false
					}
				}
			} else {
				ok = p.Test(text)
			}
			if ok == p.Negate {
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
	return slices.Clone(l.spec.Exts)
}
