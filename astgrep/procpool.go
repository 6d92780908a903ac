package astgrep

import (
	"context"
	"runtime"
	"sync"
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
	p     *parser
	src   []byte
	nodes []node
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
		s.p = newParser()
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
	ps []*parser
}

func getParser() *parser {
	spare.mu.Lock()
	defer spare.mu.Unlock()
	if n := len(spare.ps); n > 0 {
		p := spare.ps[n-1]
		spare.ps = spare.ps[:n-1]
		return p
	}
	return newParser()
}

func putParser(p *parser) {
	spare.mu.Lock()
	defer spare.mu.Unlock()
	if len(spare.ps) < runtime.GOMAXPROCS(0) {
		spare.ps = append(spare.ps, p)
		return
	}
	p.close()
}
