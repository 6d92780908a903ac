package render

import (
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/graph"
)

// A partial answer says how far the build was when it was made, from the
// answer's own data, not the index's state when the text is written.
func TestPartialNoteFromTheAnswer(t *testing.T) {
	sym := graph.Symbol{Name: "F", Qualified: "p.F", Kind: "function", File: "p/f.go", Line: 3}
	a := &graph.Answer{Op: "callees", Symbol: &sym, Index: graph.IndexState{Files: 5, Found: 10, Done: 5, Total: 10}}
	got := Text(a, 0)
	want := "calls made by function p.F (p/f.go:3): 0 (0 exact, 0 import, 0 candidate, 0 unresolved)\n" +
		"(index still building: 5 of 10 files indexed so far; this answer covers only those)"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if got := Text(&graph.Answer{Op: "status", Status: &graph.Status{Root: "/r"}}, 0); !strings.HasPrefix(got, "code graph of /r: building: still listing the files\n") {
		t.Fatalf("status before the files are listed:\n%s", got)
	}
}

// Past the budget, lines are left out and counted, summaries still show,
// and the structured lists keep only what the text shows.
func TestBudgetCutsTextAndLists(t *testing.T) {
	sym := graph.Symbol{Name: "T", Qualified: "p.T", Kind: "function", File: "p/t.go", Line: 1}
	a := &graph.Answer{Op: "callers", Symbol: &sym, Index: graph.IndexState{Ready: true}}
	for i := range 10 {
		a.Sites = append(a.Sites, graph.Site{File: "p/a.go", Line: i + 1, In: "p.A", Class: graph.Exact, Code: "T()"})
		a.Counts.Exact++
	}
	a.Counts.Elsewhere = 2
	got := Text(a, 200)
	if len(a.Sites) != 3 || a.Counts.Shown != 3 {
		t.Fatalf("%d sites kept, %d shown, of 10:\n%s", len(a.Sites), a.Counts.Shown, got)
	}
	if !strings.Contains(got, "2 other references named T lead to other definitions") ||
		!strings.HasSuffix(got, "(7 more lines not shown: the output budget was reached; ask about one file with file and line, or raise the budget)") {
		t.Fatalf("text:\n%s", got)
	}
}
