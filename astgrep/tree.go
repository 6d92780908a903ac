package astgrep

import "sort"

// tree is a parsed file: its bytes and its flattened syntax nodes in
// preorder. It is immutable once built, so any number of goroutines may read
// it at once (unlike go-tree-sitter's Node, whose accessors fill a per-tree
// cache).
type tree struct {
	src   []byte
	nodes []node
}

func (t *tree) extra(i int) bool  { return t.nodes[i].flags&flagExtra != 0 }
func (t *tree) leaf(i int) bool   { return int(t.nodes[i].last) == i+1 }
func (t *tree) text(i int) []byte { return t.src[t.nodes[i].start:t.nodes[i].end] }

// children appends the indexes of i's children (all of them, extras
// included) to buf.
func (t *tree) children(i int, buf []int) []int {
	end := int(t.nodes[i].last)
	for c := i + 1; c < end; c = int(t.nodes[c].last) {
		buf = append(buf, c)
	}
	return buf
}

// errorCount counts ERROR and MISSING nodes.
func (t *tree) errorCount() int {
	n := 0
	for i := range t.nodes {
		if t.nodes[i].flags&(flagError|flagMissing) != 0 {
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
		if t.nodes[i].flags&(flagError|flagMissing) != 0 {
			if starts == nil {
				starts = lineStarts(t.src)
			}
			out = append(out, lineOf(starts, int(t.nodes[i].start)))
		}
	}
	return out
}

func lineStarts(src []byte) []int {
	starts := []int{0}
	for i, b := range src {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineOf returns the 1-based line holding byte offset off.
func lineOf(starts []int, off int) int {
	return sort.Search(len(starts), func(i int) bool { return starts[i] > off })
}
