package tsnative

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func goGrammar(t *testing.T) (Language, *Grammar) {
	t.Helper()
	l, ok := Bundled("go")
	if !ok {
		t.Fatal("no bundled go grammar")
	}
	return l, NewGrammar(l)
}

// A parse fills one node per syntax node in preorder, each subtree's
// nodes ending at its Last, spans nested in their parent's.
func TestParseFlattensInPreorder(t *testing.T) {
	l, g := goGrammar(t)
	p := NewParser()
	defer p.Close()
	src := []byte("package p\n\nfunc f(a int) int { return a + 1 }\n")
	var asked int
	nodes, err := p.Parse(context.Background(), g, src, nil, func(count int) []Node {
		asked = count
		return make([]Node, count)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != asked || int(nodes[0].Last) != len(nodes) {
		t.Fatalf("%d nodes, keep asked for %d, the root's subtree ends at %d", len(nodes), asked, nodes[0].Last)
	}
	if got := l.SymbolName(nodes[0].Sym); got != "source_file" || nodes[0].Start != 0 || int(nodes[0].End) != len(src) {
		t.Errorf("root %s [%d,%d), want source_file [0,%d)", got, nodes[0].Start, nodes[0].End, len(src))
	}
	var kinds []string
	for i, n := range nodes {
		for c := i + 1; c < int(n.Last); c = int(nodes[c].Last) {
			if nodes[c].Start < n.Start || nodes[c].End > n.End || nodes[c].Last > n.Last {
				t.Errorf("node %d %+v is not inside its parent %d %+v", c, nodes[c], i, n)
			}
		}
		if n.Flags&FlagNamed != 0 {
			kinds = append(kinds, l.SymbolName(n.Sym))
		}
	}
	if got := strings.Join(kinds, " "); !strings.Contains(got, "function_declaration identifier parameter_list parameter_declaration") {
		t.Errorf("named kinds in preorder: %s", got)
	}
	for i, n := range nodes {
		if l.SymbolName(n.Sym) == "function_declaration" {
			name := nodes[i+2] // after the func keyword
			if id, ok := g.Fields["name"]; !ok || name.Field != id || string(src[name.Start:name.End]) != "f" {
				t.Errorf("name field %d (%v); node %+v %q", id, ok, name, src[name.Start:name.End])
			}
		}
	}
}

// tree-sitter itself stops: a parse of a large input under an ended
// context returns no tree, and the flag is cleared for the next parse.
func TestParseStopsWhenCancelled(t *testing.T) {
	_, g := goGrammar(t)
	p := NewParser()
	defer p.Close()
	src := []byte("package p\nfunc _() {\n" + strings.Repeat("\tx = y + 1\n", 20_000) + "}\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Parse(ctx, g, src, nil, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("parse under a cancelled context: %v, want context.Canceled", err)
	}
	if _, err := p.Parse(context.Background(), g, src[:200], nil, nil); err != nil {
		t.Errorf("parse after a cancelled one: %v", err)
	}
}

func TestGrammarsRefused(t *testing.T) {
	if _, ok := Bundled("no-such-language"); ok {
		t.Error("Bundled found a grammar that is not linked")
	}
	_, err := LoadShared(filepath.Join(t.TempDir(), "libtree-sitter-none.so"), "tree_sitter_none")
	if err == nil || !strings.HasPrefix(err.Error(), "dlopen: ") {
		t.Errorf("a missing library: %v", err)
	}
}
