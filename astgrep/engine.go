package astgrep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/astgrep/fileread"
	"github.com/builtin-tools/builtin-tools/astgrep/indent"
	"github.com/builtin-tools/builtin-tools/astgrep/parsecache"
	"github.com/builtin-tools/builtin-tools/astgrep/procpool"
	"github.com/builtin-tools/builtin-tools/astgrep/rule"
	"github.com/builtin-tools/builtin-tools/astgrep/tsnative"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Options configure an Engine. Zero values pick the defaults.
type Options struct {
	// GrammarDirs are folders holding grammar shared libraries named
	// libtree-sitter-<id>.so (exporting tree_sitter_<id>), loaded on first
	// use. The first folder holding an id wins; bundled grammars win over
	// all of them.
	GrammarDirs []string
	// MaxFileSize skips larger files (counted in Result.Skipped). Default
	// 2 MiB.
	MaxFileSize int64
	// CacheBytes < 0 keeps this engine out of the parse cache. The cache
	// is one per process, shared by every Engine under one budget (512 MiB
	// by default, room for the trees of about 110 MB of source: a tree
	// takes ~4.5× its file), set with SetProcessCacheBytes; a positive
	// CacheBytes sets that budget if it is the first engine to name one
	// and SetProcessCacheBytes was not called, for programs that make a
	// single engine, and is otherwise ignored.
	CacheBytes int64
	// Workers is how many files one search works on at once. Default
	// GOMAXPROCS. Reading and parsing are further bounded per process:
	// GOMAXPROCS files at a time across all engines.
	Workers int
	// MaxRuleSteps bounds the work of matching a rule at one file (each
	// check tried counts a step, and a pattern's own steps count): a file
	// that needs more is left out and listed in Result.Skipped, a snippet
	// is refused. Default DefaultMaxRuleSteps.
	MaxRuleSteps int
}

// Defaults applied by NewEngine and Search; DefaultCacheBytes is the
// process parse cache's budget until SetProcessCacheBytes changes it.
const (
	DefaultMaxFileSize = 2 << 20
	DefaultCacheBytes  = 512 << 20
	DefaultMaxResults  = 50
	maxSkippedListed   = 50
	binarySniffBytes   = 8000
)

// Engine runs structural searches for one agent run. It holds the
// grammars it loaded from its grammar folders and its compiled patterns,
// and uses the process's parse cache and parsers (shared by all engines),
// so a second query in the same run, or in another run over the same
// files, reuses the first one's work. An idle Engine holds next to
// nothing. An Engine is safe for concurrent use; Close frees it.
type Engine struct {
	opts  Options
	langs *languageSet

	mu     sync.RWMutex // held for reading by every call; Close takes it for writing
	closed bool

	pc    *parsecache.Cache[*tree] // the process's cache, which cache is a user of
	cache *parsecache.User[*tree]  // nil: Options.CacheBytes < 0

	patMu    sync.Mutex
	patterns map[string]patternResult

	noPrefilter bool // tests: parse every file, to check the prefilter is sound
}

type patternResult struct {
	p   *pattern
	err error
}

// NewEngine makes an Engine. Grammar libraries are only opened when a
// search first needs them, so a broken one surfaces as a GrammarLoadError
// for its own language and nothing else.
func NewEngine(opts Options) *Engine {
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = DefaultMaxFileSize
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	e := &Engine{opts: opts, langs: newLanguageSet(opts.GrammarDirs), pc: procCache}
	if opts.CacheBytes >= 0 {
		if opts.CacheBytes > 0 {
			e.pc.Ask(opts.CacheBytes)
		}
		e.cache = e.pc.User()
	}
	return e
}

// Close drops the compiled patterns and the cached trees no other open
// Engine used (trees another engine uses stay cached for it). It waits for
// running searches to finish.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	if e.cache != nil {
		e.cache.Release()
	}
	e.patMu.Lock()
	e.patterns = nil
	e.patMu.Unlock()
	return nil
}

// Languages lists the grammar ids this Engine knows, sorted: the bundled
// ones and those found in the grammar folders (whether or not they load).
func (e *Engine) Languages() []string {
	ids := make([]string, 0, len(e.langs.byID))
	for id := range e.langs.byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// LanguageForFile names the language a file would be searched as, or ""
// when its name says nothing.
func (e *Engine) LanguageForFile(path string) string {
	if l := e.langs.forFile(path); l != nil {
		return l.id
	}
	return ""
}

func (e *Engine) parseWith(ctx context.Context, p *tsnative.Parser, l *language, src []byte) (*tree, error) {
	nodes, err := p.Parse(ctx, l.g, src, nil, nil)
	if err != nil {
		return nil, err
	}
	return &tree{src: src, nodes: nodes}, nil
}

// compile returns l's compiled pattern, from the cache when it was seen.
// A compile that ctx stopped is not cached.
func (e *Engine) compile(ctx context.Context, l *language, src string) (*pattern, error) {
	key := l.id + "\x00" + src
	e.patMu.Lock()
	r, ok := e.patterns[key]
	e.patMu.Unlock()
	if ok {
		return r.p, r.err
	}
	if err := l.load(); err != nil {
		return nil, err
	}
	p := procpool.Parser()
	pat, err := compilePattern(ctx, l, src, func(b []byte) (*tree, error) { return e.parseWith(ctx, p, l, b) })
	procpool.PutParser(p)
	if ctx.Err() != nil && err != nil {
		return nil, err
	}
	e.patMu.Lock()
	if e.patterns == nil || len(e.patterns) > 256 {
		e.patterns = map[string]patternResult{}
	}
	e.patterns[key] = patternResult{pat, err}
	e.patMu.Unlock()
	return pat, err
}

// Query is one structural search.
type Query struct {
	// Path is the file or folder to search, from the run's path guard
	// (pathguard.Guard.Path, or RootPath for the whole root). Results are
	// relative to the guard's root, and every folder and file is read
	// through the guard, so nothing outside the root is read even if a
	// folder is swapped for a link mid-search.
	Path pathguard.Path
	// Pattern is a code fragment with metavariables.
	Pattern string
	// Rule, instead of Pattern, is an ast-grep rule (see rule.Spec).
	Rule *rule.Spec
	// Language is a grammar id or alias; optional when Path is a file or
	// the folder's files are of one language the pattern parses in.
	Language string
	// MaxResults caps Result.Matches; default 50. Total still counts all.
	MaxResults int
	// Progress, when set, is called now and then during a long search and
	// once at the end, always from the goroutine that called Search.
	Progress func(filesDone, filesTotal int)
}

// Result is what a search found.
type Result struct {
	// Language is the grammar the pattern was read with.
	Language string
	// Context names the scaffold the pattern was read in ("statement in a
	// function body", ...).
	Context string
	// Metavariables are the pattern's named metavariables as written
	// ("$X", "$$$ARGS"), in order of first appearance.
	Metavariables []string
	// Matches holds at most MaxResults matches, sorted by file then
	// position (outer before inner).
	Matches []Match
	// Total counts every match, shown or not.
	Total int
	// FilesScanned counts files of the language looked at; FilesParsed
	// those that passed the literal prefilter and were parsed (or taken
	// from the parse cache); FilesSkipped those left out as binary, too
	// large or unreadable; FilesCached those whose tree came from the
	// cache.
	FilesScanned, FilesParsed, FilesSkipped, FilesCached int
	// Skipped names skipped files with the reason (at most 50).
	Skipped []SkippedFile
}

// SkippedFile is a file a search left out, and why.
type SkippedFile struct {
	File   string
	Reason string
}

// Match is one place the pattern matched.
type Match struct {
	// File is relative to the guard's root, slash-separated.
	File string
	// StartLine and EndLine are 1-based; StartByte and EndByte are byte
	// offsets into the file (end exclusive).
	StartLine, EndLine int
	StartByte, EndByte int
	// Text is the matched code, trimmed to a few lines.
	Text string
	// Captures are the named metavariables' captures.
	Captures map[string]Capture
}

// Capture is what one metavariable matched.
type Capture struct {
	// Text is the captured code, trimmed to a few lines. For $$$NAME it
	// runs from the first captured node to the last, separators included.
	Text               string
	StartLine, EndLine int
	StartByte, EndByte int
	// Multi is true for a $$$NAME capture; Nodes counts its nodes.
	Multi bool
	Nodes int
}

// FileMatches is every match in one file together with the exact bytes
// they were found in, for callers that rewrite (astedit).
type FileMatches struct {
	File     string // relative, slash-separated
	Path     string // absolute
	Language string
	Source   []byte
	Matches  []Match
}

// Search runs q. Bad input (empty or unparsable pattern, unknown language,
// a path outside the root) is a typed error; see the package doc.
func (e *Engine) Search(ctx context.Context, q Query) (*Result, error) {
	res, _, err := e.run(ctx, q, false)
	return res, err
}

// SearchFiles is Search that also returns, for every file with matches,
// all its matches (not capped by MaxResults) and the bytes they were
// found in.
func (e *Engine) SearchFiles(ctx context.Context, q Query) (*Result, []FileMatches, error) {
	return e.run(ctx, q, true)
}

// loaded is the language of id (or alias) name, its grammar loaded.
func (e *Engine) loaded(name string) (*language, error) {
	l := e.langs.lookup(name)
	if l == nil {
		return nil, e.unknown(name, "")
	}
	if err := l.load(); err != nil {
		return nil, err
	}
	return l, nil
}

// ParseErrorLines parses src as lang and returns the 1-based line of
// each of its ERROR and MISSING nodes, one entry per node, and of each
// line whose indentation the language refuses (indent.Faults: Python's,
// which tree-sitter takes); empty when it parses cleanly.
func (e *Engine) ParseErrorLines(lang string, src []byte) ([]int, error) {
	var lines []int
	err := e.withTree(context.Background(), lang, src, func(l *language, t *tree) error {
		lines = t.errorLines()
		for _, ie := range indent.Faults(l.id, src) {
			lines = append(lines, ie.Line)
		}
		return nil
	})
	return lines, err
}

// withTree parses src as lang on a parser slot and calls f with the
// tree, while the engine is held open and the slot is taken.
func (e *Engine) withTree(ctx context.Context, lang string, src []byte, f func(*language, *tree) error) error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return ErrClosed
	}
	l, err := e.loaded(lang)
	if err != nil {
		return err
	}
	s, err := procpool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer procpool.Release(s)
	t, err := e.parseWith(ctx, s.Parser, l, src)
	if err != nil {
		return err
	}
	return f(l, t)
}

func (e *Engine) unknown(language, file string) error {
	return &UnknownLanguageError{Language: language, File: file, Known: e.Languages(), GrammarDirs: e.opts.GrammarDirs}
}

// fileOutcome is what one worker learned about one file.
type fileOutcome struct {
	scanned, parsed, cached bool
	skip                    string
	count                   int
	matches                 []Match // nil when none can be among the first MaxResults
	src                     []byte
}

// frontier decides, as files finish out of order, whether a file's matches
// can still be among the first max in file order; the rest are only
// counted, so an unselective search does not hold every match in memory.
type frontier struct {
	mu     sync.Mutex
	max    int
	counts []int // -1 until the file is done
	lo     int   // files before lo are done
	sum    int   // matches in files before lo
}

func newFrontier(n, limit int) *frontier {
	f := &frontier{max: limit, counts: make([]int, n)}
	for i := range f.counts {
		f.counts[i] = -1
	}
	return f
}

func (f *frontier) needed(i int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.lo < len(f.counts) && f.counts[f.lo] >= 0 {
		f.sum += f.counts[f.lo]
		f.lo++
	}
	before := f.sum
	for j := f.lo; j < i && before < f.max; j++ {
		if f.counts[j] > 0 {
			before += f.counts[j]
		}
	}
	return before < f.max
}

func (f *frontier) done(i, n int) {
	f.mu.Lock()
	f.counts[i] = n
	f.mu.Unlock()
}

func (e *Engine) run(ctx context.Context, q Query, keep bool) (*Result, []FileMatches, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, nil, ErrClosed
	}
	var pr *rule.Parsed
	if q.Rule != nil {
		if q.Pattern != "" {
			return nil, nil, ErrRuleAndPattern
		}
		var err error
		if pr, err = rule.Parse(q.Rule); err != nil {
			return nil, nil, err
		}
	} else if strings.TrimSpace(q.Pattern) == "" {
		return nil, nil, ErrEmptyPattern
	} else if lx, err := lexPattern(q.Pattern); err != nil {
		return nil, nil, err
	} else if lx.onlyMetavariable() {
		return nil, nil, ErrOnlyMetavariable
	}
	g := q.Path.Guard()
	if g == nil {
		return nil, nil, fmt.Errorf("%w: a search needs a Path from the run's path guard", pathguard.ErrNoPath)
	}
	root, path := g.Root(), q.Path.Abs()
	info, err := g.Stat(path)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot search %s: %w", path, err)
	}
	if !info.IsDir() && !info.Mode().IsRegular() {
		// Opening a named pipe would block; a device may never end.
		rel, _ := filepath.Rel(root, path)
		return nil, nil, fmt.Errorf("%w: %s is %s, which is never searched (opening it could block); give a source file or a folder", ErrNotRegular, filepath.ToSlash(rel), pathguard.FileKind(info.Mode()))
	}
	var want *language
	if q.Language != "" {
		if want = e.langs.lookup(q.Language); want == nil {
			return nil, nil, e.unknown(q.Language, "")
		}
	}

	var files []candidate
	if info.IsDir() {
		files, err = walkTree(ctx, g, root, path, e.langs, want, e.opts.MaxFileSize)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, err
			}
			return nil, nil, fmt.Errorf("cannot search %s: %w", path, err)
		}
	} else {
		l := want
		if l == nil {
			if l = e.langs.forFile(path); l == nil {
				return nil, nil, e.unknown("", path)
			}
		}
		rel, _ := filepath.Rel(root, path)
		files = []candidate{newCandidate(filepath.ToSlash(rel), path, info, e.opts.MaxFileSize, l)}
	}

	lang, pat, err := e.choose(ctx, q, pr, want, files, path)
	if err != nil {
		return nil, nil, err
	}
	if want == nil {
		kept := files[:0]
		for _, f := range files {
			if f.lang == lang {
				kept = append(kept, f)
			}
		}
		files = kept
	}

	maxResults := q.MaxResults
	if maxResults <= 0 {
		maxResults = DefaultMaxResults
	}
	order := processingOrder(files)
	gen := e.pc.NextGen()
	var adm *parsecache.Admission
	if e.cache != nil {
		var total int64
		for _, f := range files {
			if !f.tooLarge {
				total += f.size
			}
		}
		adm = parsecache.NewAdmission(total, e.pc.Budget())
	}
	outcomes := make([]fileOutcome, len(files))
	fr := newFrontier(len(files), maxResults)
	var done atomic.Int64
	fd := procpool.NewFeeder(order, func(i int) int64 {
		if files[i].tooLarge {
			return 0
		}
		return procpool.BigParses.Weight(files[i].size)
	})
	workers := e.opts.Workers
	if workers > len(files) {
		workers = len(files)
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &worker{m: e.newMatcher(ctx, pat), gen: gen, adm: adm}
			defer w.rd.Close()
			for {
				i, held, ok := fd.Take(ctx)
				if !ok || ctx.Err() != nil {
					procpool.BigParses.Release(held)
					return
				}
				w.held = held
				outcomes[i] = e.searchFile(ctx, w, g, lang, pat, files[i], keep, func() bool { return keep || fr.needed(i) })
				w.dropToken()
				fr.done(i, outcomes[i].count)
				done.Add(1)
			}
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	if q.Progress != nil {
		tick := time.NewTicker(250 * time.Millisecond)
	wait:
		for {
			select {
			case <-finished:
				break wait
			case <-tick.C:
				q.Progress(int(done.Load()), len(files))
			}
		}
		tick.Stop()
		q.Progress(int(done.Load()), len(files))
	} else {
		<-finished
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}

	res := &Result{Language: lang.id, Context: pat.context}
	res.Metavariables = pat.names()
	var fms []FileMatches
	for i, o := range outcomes {
		if o.scanned {
			res.FilesScanned++
		}
		if o.parsed {
			res.FilesParsed++
		}
		if o.cached {
			res.FilesCached++
		}
		if o.skip != "" {
			res.FilesSkipped++
			if len(res.Skipped) < maxSkippedListed {
				res.Skipped = append(res.Skipped, SkippedFile{File: files[i].rel, Reason: o.skip})
			}
		}
		res.Total += o.count
		for _, m := range o.matches {
			if len(res.Matches) >= maxResults {
				break
			}
			res.Matches = append(res.Matches, trimMatch(m))
		}
		if keep && len(o.matches) > 0 {
			fms = append(fms, FileMatches{File: files[i].rel, Path: files[i].abs, Language: lang.id, Source: o.src, Matches: o.matches})
		}
	}
	return res, fms, nil
}

// processingOrder lists file indexes big files first (largest first), then
// the rest in path order, which keeps completion close to path order for
// the frontier.
func processingOrder(files []candidate) []int {
	order := make([]int, 0, len(files))
	for i, f := range files {
		if f.size >= procpool.BigFile {
			order = append(order, i)
		}
	}
	sort.Slice(order, func(a, b int) bool { return files[order[a]].size > files[order[b]].size })
	for i, f := range files {
		if f.size < procpool.BigFile {
			order = append(order, i)
		}
	}
	return order
}

// compiled is a query's pattern or rule compiled for one language.
type compiled struct {
	pat      *pattern
	prog     *ruleProgram
	context  string
	vars     []string
	multi    []bool
	literals [][]byte
}

// names are the metavariables as written ($X, $$$ARGS), in order.
func (c *compiled) names() []string {
	var out []string
	for i, name := range c.vars {
		if name == "" {
			continue
		}
		if c.multi[i] {
			out = append(out, "$$$"+name)
		} else {
			out = append(out, "$"+name)
		}
	}
	return out
}

func (c *compiled) newMatcher() *matcher {
	if c.prog != nil {
		return &matcher{rs: &ruleState{prog: c.prog}}
	}
	return &matcher{p: c.pat}
}

// newMatcher is c's matcher for a search under ctx, within the engine's
// step budget.
func (e *Engine) newMatcher(ctx context.Context, c *compiled) *matcher {
	m := c.newMatcher()
	m.ctx = ctx
	if m.rs != nil {
		m.rs.budget = e.opts.MaxRuleSteps
	}
	return m
}

// stepBudget is what a search says of a file or snippet whose matching
// spent the step budget.
func (e *Engine) stepBudget(where string) string {
	budget := e.opts.MaxRuleSteps
	if budget <= 0 {
		budget = DefaultMaxRuleSteps
	}
	return fmt.Sprintf("matching the rule %s took more than %d steps (the limit), so it was stopped; narrow the rule: a kind or pattern at its top, stopBy neighbor or a stopBy rule rather than end, each utility rule used once", where, budget)
}

// mayMatch is the prefilter: false means src cannot hold a match.
func (c *compiled) mayMatch(src []byte) bool {
	for _, l := range c.literals {
		if !bytes.Contains(src, l) {
			return false
		}
	}
	return true
}

// compileQuery compiles q's pattern, or its parsed rule pr, for l.
func (e *Engine) compileQuery(ctx context.Context, l *language, q Query, pr *rule.Parsed) (*compiled, error) {
	if pr != nil {
		prog, err := e.compileRule(ctx, l, pr)
		if err != nil {
			return nil, err
		}
		return &compiled{prog: prog, context: "a rule", vars: prog.vars, multi: prog.multi, literals: prog.literals}, nil
	}
	pat, err := e.compile(ctx, l, q.Pattern)
	if err != nil {
		return nil, err
	}
	return &compiled{pat: pat, context: pat.context, vars: pat.vars, multi: pat.multi, literals: pat.literals}, nil
}

// choose settles the language and compiles the pattern (or rule) for it.
func (e *Engine) choose(ctx context.Context, q Query, pr *rule.Parsed, want *language, files []candidate, path string) (*language, *compiled, error) {
	if want != nil {
		if err := want.load(); err != nil {
			return nil, nil, err
		}
		pat, err := e.compileQuery(ctx, want, q, pr)
		return want, pat, err
	}
	counts := map[*language]int{}
	for _, f := range files {
		counts[f.lang]++
	}
	if len(counts) == 0 {
		return nil, nil, fmt.Errorf("no source files of a known language under %s; pass language, or search another path (known: %s)", path, strings.Join(e.Languages(), ", "))
	}
	langs := make([]*language, 0, len(counts))
	for l := range counts {
		langs = append(langs, l)
	}
	sort.Slice(langs, func(i, j int) bool {
		if counts[langs[i]] != counts[langs[j]] {
			return counts[langs[i]] > counts[langs[j]]
		}
		return langs[i].id < langs[j].id
	})
	var (
		okLangs  []*language
		okPats   []*compiled
		firstErr error
	)
	for _, l := range langs {
		if err := l.load(); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		pat, err := e.compileQuery(ctx, l, q, pr)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, err
			}
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		okLangs = append(okLangs, l)
		okPats = append(okPats, pat)
	}
	switch len(okLangs) {
	case 0:
		return nil, nil, firstErr
	case 1:
		return okLangs[0], okPats[0], nil
	}
	var names []string
	for _, l := range okLangs {
		names = append(names, fmt.Sprintf("%s (%d files)", l.id, counts[l]))
	}
	return nil, nil, &AmbiguousLanguageError{Languages: names}
}

// worker is one search goroutine's matcher.
type worker struct {
	m    *matcher
	gen  uint64
	adm  *parsecache.Admission // nil: the search does not use the cache
	held int64                 // bytes of the parse budget it holds for its file
	rd   fileread.Reader
}

// dropToken gives back the parse budget the worker holds.
func (w *worker) dropToken() {
	procpool.BigParses.Release(w.held)
	w.held = 0
}

// searchFile takes one file's tree from the parse cache (waiting when
// another search is parsing it), or reads, prefilters and parses it in a
// work slot, then matches it. Trees the cache does not admit live in the
// slot's buffers until the slot's next file.
func (e *Engine) searchFile(ctx context.Context, w *worker, g *pathguard.Guard, l *language, pat *compiled, f candidate, keep bool, needed func() bool) fileOutcome {
	var o fileOutcome
	o.scanned = true
	if f.tooLarge {
		o.skip = fmt.Sprintf("too large (%d bytes; the limit is %d)", f.size, e.opts.MaxFileSize)
		return o
	}
	var (
		t     *tree
		claim *parsecache.Entry[*tree]
	)
	if e.cache != nil && f.stampOK {
		key := parsecache.Key{Path: f.abs, Lang: l.id, Grammar: l.ts.Addr()}
		for t == nil && claim == nil {
			r := e.cache.Lookup(key, f.stamp, w.gen)
			switch {
			case r.Wait != nil:
				select {
				case <-r.Wait:
					continue
				case <-ctx.Done():
					return o
				}
			case r.Found && r.Racy:
				start := time.Now()
				if !parsecache.SameBytes(g, f.abs, f.stamp, r.Tree.src) {
					e.pc.Drop(r.Entry)
					continue
				}
				if !parsecache.Racy(f.stamp, start) {
					e.pc.Settle(r.Entry)
				}
			}
			t, claim = r.Tree, r.Claim
			if t == nil && claim == nil {
				break // parse without caching
			}
		}
		o.cached = t != nil
	}
	if t == nil {
		s, err := procpool.Acquire(ctx)
		if err != nil {
			if claim != nil {
				e.pc.Abandon(claim)
			}
			return o
		}
		defer procpool.Release(s)
		t, o.skip = e.parseFile(ctx, s, w, g, l, pat, f, keep, claim)
		w.dropToken()
		if t == nil {
			return o
		}
	}
	w.dropToken()
	if !e.noPrefilter && !pat.mayMatch(t.src) {
		return o
	}
	o.parsed = true
	w.m.t = t
	defer func() { w.m.t = nil }()
	// needed only turns false as files finish: a file it rules out now is
	// only counted.
	if !needed() {
		o.count = w.m.countAll()
		e.stopped(w.m, &o)
		return o
	}
	raw := w.m.findAll()
	o.count = len(raw)
	if e.stopped(w.m, &o) {
		return o
	}
	if len(raw) == 0 || !needed() {
		return o
	}
	if keep {
		o.src = t.src
	}
	starts := lineStarts(t.src)
	o.matches = make([]Match, len(raw))
	for i, r := range raw {
		o.matches[i] = e.toMatch(t, pat, f.rel, starts, r)
	}
	return o
}

// stopped turns a file whose matching stopped early into a skipped one
// (a search cancelled is the caller's to report).
func (e *Engine) stopped(m *matcher, o *fileOutcome) bool {
	if m.stopped == nil {
		return false
	}
	o.count = 0
	if errors.Is(m.stopped, errStepBudget) {
		o.skip = e.stepBudget("here") + "; the file is left out"
	}
	return true
}

// parseFile reads, prefilters and parses f in slot s, filling claim (when
// set) if the cache admits the tree and abandoning it otherwise. It
// returns nil and the reason to list the file as skipped (or "" when the
// prefilter rules it out) when there is no tree to match.
func (e *Engine) parseFile(ctx context.Context, s *procpool.Slot, w *worker, g *pathguard.Guard, l *language, pat *compiled, f candidate, keep bool, claim *parsecache.Entry[*tree]) (t *tree, skip string) {
	gen := w.gen
	defer func() {
		if claim != nil {
			e.pc.Abandon(claim)
		}
	}()
	readStart := time.Now()
	src, info, err := w.rd.Read(s.Src[:0], g, f.abs, f.size, e.opts.MaxFileSize)
	s.Src = src[:0]
	if err != nil {
		return nil, "unreadable: " + err.Error()
	}
	if claim != nil {
		// The bytes read are of the stamp the walk saw, or the file changed
		// since and they are not cached under it.
		if st, ok := parsecache.StampOf(info); !ok || st != f.stamp {
			e.pc.Abandon(claim)
			claim = nil
		}
	}
	if w.adm != nil {
		w.adm.SawRead(len(src))
	}
	if textcut.Binary(src) {
		return nil, "binary"
	}
	if !e.noPrefilter && !pat.mayMatch(src) {
		return nil, ""
	}
	// Trees the cache admits are flattened straight into their own memory;
	// the rest reuse the slot's buffer.
	var cost int64
	admitted := false
	nodes, err := s.Parser.Parse(ctx, l.g, src, s.Nodes, func(count int) []tsnative.Node {
		cost = treeCost(len(src), count)
		if w.adm != nil {
			w.adm.SawParsed(len(src), cost)
		}
		if claim == nil {
			return nil
		}
		if !w.adm.FirstSight() && !e.pc.SecondSight(claim) {
			return nil
		}
		if admitted = e.pc.Admit(cost, gen); admitted {
			return make([]tsnative.Node, count)
		}
		return nil
	})
	if err != nil {
		if admitted {
			e.pc.Unreserve(cost)
		}
		return nil, "parse failed: " + err.Error()
	}
	t = &tree{src: src, nodes: nodes}
	switch {
	case admitted:
		t.src = append([]byte(nil), src...)
		e.cache.Fill(claim, t, cost, gen, parsecache.Racy(f.stamp, readStart))
		claim = nil
	case keep:
		s.Nodes = nodes[:0]
		t.src = append([]byte(nil), src...)
	default:
		s.Nodes = nodes[:0]
	}
	return t, ""
}

// trimRange narrows [start, end) past surrounding whitespace; some grammars
// give nodes spans that include the blanks before them.
func trimRange(src []byte, start, end int) (int, int) {
	for start < end && isSpace(src[start]) {
		start++
	}
	for end > start && isSpace(src[end-1]) {
		end--
	}
	return start, end
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func (e *Engine) toMatch(t *tree, pat *compiled, file string, starts []int, r rawMatch) Match {
	r.start, r.end = trimRange(t.src, r.start, r.end)
	m := Match{
		File:      file,
		StartByte: r.start,
		EndByte:   r.end,
		StartLine: lineOf(starts, r.start),
		EndLine:   lineOf(starts, endOffset(r.start, r.end)),
		Text:      string(t.src[r.start:r.end]),
	}
	for _, b := range r.env {
		name := pat.vars[b.mv]
		if name == "" {
			continue
		}
		var c Capture
		if pat.multi[b.mv] {
			c.Multi = true
			c.Nodes = len(b.nodes)
			if len(b.nodes) == 0 {
				pos := b.pos
				if pos < 0 {
					pos = r.start
				}
				c.StartByte, c.EndByte = pos, pos
			} else {
				c.StartByte = int(t.nodes[b.nodes[0]].Start)
				c.EndByte = int(t.nodes[b.nodes[len(b.nodes)-1]].End)
			}
		} else {
			c.Nodes = 1
			c.StartByte, c.EndByte = int(t.nodes[b.node].Start), int(t.nodes[b.node].End)
		}
		c.StartByte, c.EndByte = trimRange(t.src, c.StartByte, c.EndByte)
		c.Text = string(t.src[c.StartByte:c.EndByte])
		c.StartLine = lineOf(starts, c.StartByte)
		c.EndLine = lineOf(starts, endOffset(c.StartByte, c.EndByte))
		if m.Captures == nil {
			m.Captures = map[string]Capture{}
		}
		m.Captures[name] = c
	}
	return m
}

// endOffset is the offset of the last byte of a non-empty range.
func endOffset(start, end int) int {
	if end > start {
		return end - 1
	}
	return start
}

// Text trimming for results shown to an agent.
const (
	maxShownLines = 6
	maxShownBytes = 600
)

func trimMatch(m Match) Match {
	m.Text = trimText(m.Text)
	if len(m.Captures) > 0 {
		caps := make(map[string]Capture, len(m.Captures))
		for k, c := range m.Captures {
			c.Text = trimText(c.Text)
			caps[k] = c
		}
		m.Captures = caps
	}
	return m
}

func trimText(s string) string {
	lines := strings.Split(s, "\n")
	cut := false
	if len(lines) > maxShownLines {
		lines = lines[:maxShownLines]
		cut = true
	}
	out := strings.Join(lines, "\n")
	if len(out) > maxShownBytes {
		out = out[:maxShownBytes]
		for !utf8.ValidString(out) {
			out = out[:len(out)-1]
		}
		cut = true
	}
	if cut {
		out += fmt.Sprintf(" …(%d more lines)", strings.Count(s, "\n")-strings.Count(out, "\n"))
	}
	return out
}
