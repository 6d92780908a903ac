package astgrep

import (
	"bytes"
	"sort"

	"github.com/builtin-tools/builtin-tools/astgrep/scmmatch"
	"github.com/builtin-tools/builtin-tools/astgrep/tsnative"
)

// tree is a parsed file: its bytes and its flattened syntax nodes in
// preorder. It is immutable once built, so any number of goroutines may read
// it at once (unlike go-tree-sitter's Node, whose accessors fill a per-tree
// cache).
type tree struct {
	src   []byte
	nodes []tsnative.Node
}

func (t *tree) extra(i int) bool  { return t.nodes[i].Flags&tsnative.FlagExtra != 0 }
func (t *tree) leaf(i int) bool   { return int(t.nodes[i].Last) == i+1 }
func (t *tree) text(i int) []byte { return t.src[t.nodes[i].Start:t.nodes[i].End] }

// children appends the indexes of i's children (all of them, extras
// included) to buf.
func (t *tree) children(i int, buf []int) []int {
	end := int(t.nodes[i].Last)
	for c := i + 1; c < end; c = int(t.nodes[c].Last) {
		buf = append(buf, c)
	}
	return buf
}

// errorCount counts ERROR and MISSING nodes.
func (t *tree) errorCount() int {
	n := 0
	for i := range t.nodes {
		if t.nodes[i].Flags&(tsnative.FlagError|tsnative.FlagMissing) != 0 {
			n++
		}
	}
	return n
}

// errorLines lists the 1-based line of every ERROR and MISSING node, in
// tree order (a line appears once per node on it).
func (t *tree) errorLines() []int {
	var out []int
	var starts []int
	for i := range t.nodes {
		if t.nodes[i].Flags&(tsnative.FlagError|tsnative.FlagMissing) != 0 {
			if starts == nil {
				starts = lineStarts(t.src)
			}
			out = append(out, lineOf(starts, int(t.nodes[i].Start)))
		}
	}
	return out
}

func lineStarts(src []byte) []int { return appendLineStarts(nil, src) }

// appendLineStarts appends the offset of every line's first byte to buf.
func appendLineStarts(buf []int, src []byte) []int {
	buf = append(buf, 0)
	for i := 0; ; {
		j := bytes.IndexByte(src[i:], '\n')
		if j < 0 {
			return buf
		}
		i += j + 1
		buf = append(buf, i)
	}
}

// lineOf returns the 1-based line holding byte offset off.
func lineOf(starts []int, off int) int {
	return sort.Search(len(starts), func(i int) bool { return starts[i] > off })
}

// Tree is one parsed file as capture queries see it: its syntax nodes,
// numbered in preorder from 0 (the root), the numbers QueryCapture.Node
// holds. A Tree handed to a callback is valid only during the callback
// (its memory is the work slot's, reused for the next file), and is for
// one goroutine at a time.
type Tree struct {
	t      *tree
	lang   *language
	starts []int // line starts, computed on the first Row

	// Scratch matches, one per nesting level of Each and MatchAt (a
	// visitor may run MatchAt while visiting): reused, so visiting
	// allocates nothing once warm.
	scratch []*matchScratch
	depth   int
}

type matchScratch struct {
	m     QueryMatch
	qm    scmmatch.Matcher
	t     *tree
	q     *CaptureQuery
	visit func(*QueryMatch) bool
	emit  func(pi int, caps []scmmatch.Cap) // deliver, bound once
}

// reset points x at another tree, keeping its buffers.
func (x *Tree) reset(t *tree, l *language) {
	x.t, x.lang = t, l
	x.starts = x.starts[:0]
}

// Len is the number of nodes.
func (x *Tree) Len() int { return len(x.t.nodes) }

// Kind is node n's kind, the grammar's name for its symbol
// ("identifier", "call_expression", "(" for an unnamed token, "ERROR").
func (x *Tree) Kind(n int32) string { return x.lang.symbolName(x.t.nodes[n].Sym) }

// Named reports whether node n is a named node (not a literal token).
func (x *Tree) Named(n int32) bool { return x.t.nodes[n].Flags&tsnative.FlagNamed != 0 }

// Extra reports whether node n is one the grammar allows anywhere (a
// comment).
func (x *Tree) Extra(n int32) bool { return x.t.nodes[n].Flags&tsnative.FlagExtra != 0 }

// Leaf reports whether node n has no children at all.
func (x *Tree) Leaf(n int32) bool { return x.t.leaf(int(n)) }

// Last is one past the last node of n's subtree: n's children are n+1,
// then each one's Last, while below Last(n).
func (x *Tree) Last(n int32) int32 { return int32(x.t.nodes[n].Last) }

// Span is node n's byte range [start, end) in the source.
func (x *Tree) Span(n int32) (start, end int) {
	nd := &x.t.nodes[n]
	return int(nd.Start), int(nd.End)
}

// Text is node n's source text. It aliases the file's bytes: copy what
// you keep past the callback.
func (x *Tree) Text(n int32) []byte { return x.t.text(int(n)) }

// Row is the 0-based line holding byte offset off (the source's lines
// are indexed on the first call).
func (x *Tree) Row(off int) int {
	if len(x.starts) == 0 {
		x.starts = appendLineStarts(x.starts, x.t.src)
	}
	return lineOf(x.starts, off) - 1
}

// Col is off's 0-based byte column.
func (x *Tree) Col(off int) int {
	r := x.Row(off)
	return off - x.starts[r]
}

// RowCol is Row and Col of off, found at once.
func (x *Tree) RowCol(off int) (row, col int) {
	r := x.Row(off)
	return r, off - x.starts[r]
}
