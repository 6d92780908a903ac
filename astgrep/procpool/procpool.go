package procpool

import (
	"context"
	"runtime"
	"sync"

	"github.com/builtin-tools/builtin-tools/astgrep/tsnative"
)

// Slot is one unit of parse work: a parser and the scratch buffers a tree
// the cache does not keep lives in until the next file.
type Slot struct {
	Parser *tsnative.Parser
	Src    []byte
	Nodes  []tsnative.Node
}

// Scratch buffers larger than these are dropped when a slot is put back,
// so a rare big file does not pin its buffers for the life of the process.
const (
	maxKeptSrc   = 512 << 10
	maxKeptNodes = 64 << 10 // nodes (1 MiB)
)

var slots = func() chan *Slot {
	n := runtime.GOMAXPROCS(0)
	ch := make(chan *Slot, n)
	for i := 0; i < n; i++ {
		ch <- &Slot{}
	}
	return ch
}()

// Acquire waits for a free slot, or for ctx to end.
func Acquire(ctx context.Context) (*Slot, error) {
	var s *Slot
	select {
	case s = <-slots:
	default:
		select {
		case s = <-slots:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if s.Parser == nil {
		s.Parser = tsnative.NewParser()
	}
	return s, nil
}

// Release puts s back for the next file.
func Release(s *Slot) {
	if cap(s.Src) > maxKeptSrc {
		s.Src = nil
	}
	if cap(s.Nodes) > maxKeptNodes {
		s.Nodes = nil
	}
	slots <- s
}

// spare parsers serve the small parses outside the work slots: pattern
// readings (and tests). A few are kept for reuse.
var spare struct {
	mu sync.Mutex
	ps []*tsnative.Parser
}

// Parser is a spare parser, to give back with PutParser.
func Parser() *tsnative.Parser {
	spare.mu.Lock()
	defer spare.mu.Unlock()
	if n := len(spare.ps); n > 0 {
		p := spare.ps[n-1]
		spare.ps = spare.ps[:n-1]
		return p
	}
	return tsnative.NewParser()
}

// PutParser gives p back, kept for reuse or closed.
func PutParser(p *tsnative.Parser) {
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
// the process's peak. A file of BigFile bytes or more takes its size from
// the budget (all of it when larger) from the moment a worker takes it
// until its parse ends; smaller files take nothing.
const parseBudgetBytes = 512 << 10

// BigFile is the size from which a file's parse takes from the budget
// (and from which a search takes files first: a large file started last
// would leave the other workers idle at the end).
const BigFile = 128 << 10

// BigParses is the process's budget of big files' bytes parsed at once.
var BigParses = &Budget{limit: parseBudgetBytes, wake: make(chan struct{})}

// Budget is a count of bytes in use within a limit, waited on.
type Budget struct {
	mu    sync.Mutex
	used  int64
	limit int64
	peak  int64         // the most ever used at once (Use)
	wake  chan struct{} // closed (and replaced) when bytes come back
}

// Weight is what a file of size takes from the budget.
func (b *Budget) Weight(size int64) int64 {
	if size < BigFile {
		return 0
	}
	return min(size, b.limit)
}

func (b *Budget) try(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return false
	}
	b.used += n
	b.peak = max(b.peak, b.used)
	return true
}

// Acquire takes n bytes, waiting until they fit; false when ctx ended
// first.
func (b *Budget) Acquire(ctx context.Context, n int64) bool {
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

// Release gives back n bytes.
func (b *Budget) Release(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	close(b.wake)
	b.wake = make(chan struct{})
	b.mu.Unlock()
}

// Use is the bytes in use, the most ever in use at once since ResetPeak,
// and the limit.
func (b *Budget) Use() (used, peak, limit int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used, b.peak, b.limit
}

// ResetPeak starts the peak again from what is in use now.
func (b *Budget) ResetPeak() {
	b.mu.Lock()
	b.peak = b.used
	b.mu.Unlock()
}

// Feeder hands one search's files to its workers in order, except that a
// big file that does not fit the parse budget waits: the worker takes the
// next file instead, and the held-back one goes first once it fits, so
// the other workers keep parsing small files meanwhile.
type Feeder struct {
	mu     sync.Mutex
	order  []int
	next   int
	held   []int
	weight func(i int) int64
}

// NewFeeder hands out the files order lists, file i taking weight(i)
// bytes of BigParses.
func NewFeeder(order []int, weight func(i int) int64) *Feeder {
	return &Feeder{order: order, weight: weight}
}

// Take returns the next file to work on and the bytes of the parse budget
// its worker holds (to release with BigParses.Release once the file is
// parsed, or at once if it needs no parse); ok is false when every file
// is taken or ctx ended.
func (f *Feeder) Take(ctx context.Context) (i int, held int64, ok bool) {
	f.mu.Lock()
	if len(f.held) > 0 {
		if w := f.weight(f.held[0]); BigParses.try(w) {
			i, f.held = f.held[0], f.held[1:]
			f.mu.Unlock()
			return i, w, true
		}
	}
	for f.next < len(f.order) {
		i = f.order[f.next]
		f.next++
		w := f.weight(i)
		if w == 0 || BigParses.try(w) {
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
	if !BigParses.Acquire(ctx, w) {
		return 0, 0, false
	}
	return i, w, true
}
