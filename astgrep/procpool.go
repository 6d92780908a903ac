package astgrep

import (
	"context"
	"runtime"
	"sync"

	"github.com/builtin-tools/builtin-tools/astgrep/tsnative"
)

// Parsing is bounded per process, not per Engine: a search's workers take
// a work slot for every file they read and parse, and there are
// GOMAXPROCS slots in the process, so ten runs searching at once parse as
// many files at a time, and hold as much parse memory (tree-sitter's pool
// chunks, the read buffer, the flat node buffer), as one run does.
// Matching a tree from the parse cache needs no slot.

// slot is one unit of parse work: a parser and the scratch buffers a tree
// the cache does not keep lives in until the next file.
type slot struct {
	p     *tsnative.Parser
	src   []byte
	nodes []tsnative.Node
}

// Scratch buffers larger than these are dropped when a slot is put back,
// so a rare big file does not pin its buffers for the life of the process.
const (
	maxKeptSrc   = 512 << 10
	maxKeptNodes = 64 << 10 // nodes (1 MiB)
)

var slots = func() chan *slot {
	n := runtime.GOMAXPROCS(0)
	ch := make(chan *slot, n)
	for i := 0; i < n; i++ {
		ch <- &slot{}
	}
	return ch
}()

// acquireSlot waits for a free slot, or for ctx to end.
func acquireSlot(ctx context.Context) (*slot, error) {
	var s *slot
	select {
	case s = <-slots:
	default:
		select {
		case s = <-slots:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if s.p == nil {
		s.p = tsnative.NewParser()
	}
	return s, nil
}

func releaseSlot(s *slot) {
	if cap(s.src) > maxKeptSrc {
		s.src = nil
	}
	if cap(s.nodes) > maxKeptNodes {
		s.nodes = nil
	}
	slots <- s
}

// spare parsers serve the small parses outside the work slots: pattern
// readings (and tests). A few are kept for reuse.
var spare struct {
	mu sync.Mutex
	ps []*tsnative.Parser
}

func getParser() *tsnative.Parser {
	spare.mu.Lock()
	defer spare.mu.Unlock()
	if n := len(spare.ps); n > 0 {
		p := spare.ps[n-1]
		spare.ps = spare.ps[:n-1]
		return p
	}
	return tsnative.NewParser()
}

func putParser(p *tsnative.Parser) {
	spare.mu.Lock()
	defer spare.mu.Unlock()
	if len(spare.ps) < runtime.GOMAXPROCS(0) {
		spare.ps = append(spare.ps, p)
		return
	}
	p.Close()
}

// Big files share a budget of source bytes parsed at once in the
// process: a parse holds tens of times its file's size in tree-sitter's
// memory while it runs, so two multi-MiB files parsed at once would set
// the process's peak. A file of bigFile bytes or more takes its size from
// the budget (all of it when larger) from the moment a worker takes it
// until its parse ends; smaller files take nothing.
const parseBudgetBytes = 512 << 10

var bigParses = &byteBudget{limit: parseBudgetBytes, wake: make(chan struct{})}

type byteBudget struct {
	mu    sync.Mutex
	used  int64
	limit int64
	peak  int64         // the most ever used at once (for tests)
	wake  chan struct{} // closed (and replaced) when bytes come back
}

// weight is what a file of size takes from the budget.
func (b *byteBudget) weight(size int64) int64 {
	if size < bigFile {
		return 0
	}
	return min(size, b.limit)
}

func (b *byteBudget) try(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return false
	}
	b.used += n
	b.peak = max(b.peak, b.used)
	return true
}

func (b *byteBudget) acquire(ctx context.Context, n int64) bool {
	for {
		b.mu.Lock()
		if b.used+n <= b.limit {
			b.used += n
			b.peak = max(b.peak, b.used)
			b.mu.Unlock()
			return true
		}
		wake := b.wake
		b.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return false
		}
	}
}

func (b *byteBudget) release(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	close(b.wake)
	b.wake = make(chan struct{})
	b.mu.Unlock()
}

// feeder hands one search's files to its workers in order, except that a
// big file that does not fit the parse budget waits: the worker takes the
// next file instead, and the held-back one goes first once it fits, so
// the other workers keep parsing small files meanwhile.
type feeder struct {
	mu     sync.Mutex
	order  []int
	next   int
	held   []int
	weight func(i int) int64
}

// take returns the next file to work on and the bytes of the parse budget
// its worker holds (to release with bigParses.release once the file is
// parsed, or at once if it needs no parse); ok is false when every file
// is taken or ctx ended.
func (f *feeder) take(ctx context.Context) (i int, held int64, ok bool) {
	f.mu.Lock()
	if len(f.held) > 0 {
		if w := f.weight(f.held[0]); bigParses.try(w) {
			i, f.held = f.held[0], f.held[1:]
			f.mu.Unlock()
			return i, w, true
		}
	}
	for f.next < len(f.order) {
		i = f.order[f.next]
		f.next++
		w := f.weight(i)
		if w == 0 || bigParses.try(w) {
			f.mu.Unlock()
			return i, w, true
		}
		f.held = append(f.held, i)
	}
	if len(f.held) == 0 {
		f.mu.Unlock()
		return 0, 0, false
	}
	i, f.held = f.held[0], f.held[1:]
	f.mu.Unlock()
	w := f.weight(i)
	if !bigParses.acquire(ctx, w) {
		return 0, 0, false
	}
	return i, w, true
}
