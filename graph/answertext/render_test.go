package answertext

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/graph"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// A partial answer says how far the build was when it was made, from the
// answer's own data, not the index's state when the text is written.
func TestPartialNoteFromTheAnswer(t *testing.T) {
	sym := graph.Symbol{Name: "F", Qualified: "p.F", Kind: "function", File: "p/f.go", Line: 3}
	a := &graph.Answer{Op: "callees", Symbol: &sym, Index: graph.IndexState{Files: 5, Found: 10, Done: 5, Total: 10}}
	got := Render(a, 0)
	want := "calls made by function p.F (p/f.go:3): 0 (0 exact, 0 import, 0 candidate, 0 unresolved)\n" +
		"(index still building: 5 of 10 files indexed so far; this answer covers only those)"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if got := Render(&graph.Answer{Op: "status", Status: &graph.Status{Root: "/r"}}, 0); !strings.HasPrefix(got, "code graph of /r: building: still listing the files\n") {
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
	got := Render(a, 200)
	if len(a.Sites) != 3 || a.Counts.Shown != 3 {
		t.Fatalf("%d sites kept, %d shown, of 10:\n%s", len(a.Sites), a.Counts.Shown, got)
	}
	if !strings.Contains(got, "2 other references named T lead to other definitions") ||
		!strings.HasSuffix(got, "(7 more lines not shown: the output budget was reached; impact with depth 1 lists each calling definition once; lsp references lists the server's references)") {
		t.Fatalf("text:\n%s", got)
	}
}

// The budget counts characters, as the run's cut does: an answer whose
// lines quote non-ASCII code (each "é" two bytes) shows as many lines as an
// ASCII one, and Fit's note counts characters too (code review §1: graphtool
// counted bytes, so it showed about half of such an answer).
func TestBudgetCountsCharacters(t *testing.T) {
	sym := graph.Symbol{Name: "T", Qualified: "p.T", Kind: "function", File: "p/t.go", Line: 1}
	answer := func(code string) *graph.Answer {
		a := &graph.Answer{Op: "callers", Symbol: &sym, Index: graph.IndexState{Ready: true}}
		for i := range 10 {
			a.Sites = append(a.Sites, graph.Site{File: "p/a.go", Line: i + 1, In: "p.A", Class: graph.Exact, Code: code})
			a.Counts.Exact++
		}
		return a
	}
	ascii, accented := answer("T(\"eeeeeeeeeeeeeeeeeeee\")"), answer("T(\"éééééééééééééééééééé\")")
	Render(ascii, 400)
	Render(accented, 400)
	if len(accented.Sites) != len(ascii.Sites) || len(ascii.Sites) == 10 {
		t.Errorf("within 400 characters: %d accented sites shown, %d ASCII ones", len(accented.Sites), len(ascii.Sites))
	}
	text := strings.Repeat("é\n", 300)
	got := Fit(text, 400, "callers")
	head, _, _ := strings.Cut(got, "\n(")
	if n := utf8.RuneCountInString(got); n > 400 || n < 390 ||
		!strings.Contains(got, fmt.Sprintf("\n(%d more characters not shown", 600-utf8.RuneCountInString(head))) {
		t.Errorf("Fit to 400 characters: %d characters:\n%s", n, got)
	}
}

// nestedIndex indexes one JavaScript file of n functions, each nested in
// the one before.
func nestedIndex(tb testing.TB, n int) graph.View {
	tb.Helper()
	var src strings.Builder
	for i := range n {
		fmt.Fprintf(&src, "function a%d() {\n", i)
	}
	src.WriteString(strings.Repeat("}\n", n))
	root := tb.TempDir()
	if err := os.WriteFile(filepath.Join(root, "f.js"), []byte(src.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	g, err := pathguard.New(root)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { g.Close() })
	h, err := graph.Acquire(g, graph.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(h.Release)
	h.Index().Start(nil)
	if !h.Index().Wait(context.Background(), time.Minute) {
		tb.Fatal("index not built in a minute")
	}
	return h.View(0)
}

// N20: an outline of deeply nested definitions costs what the budget
// shows, not the square of the depth: lines stay short (deep levels are
// numbered, not drawn) and the structured list holds only what is shown.
func TestOutlineOfDeepNesting(t *testing.T) {
	const n = 5000
	v := nestedIndex(t, n)
	a, err := graph.Outline(v, "f.js")
	if err != nil {
		t.Fatal(err)
	}
	text := Render(a, 8000)
	for _, l := range strings.Split(text, "\n") {
		if len(l) > 200 {
			t.Fatalf("a line of %d bytes: %.80q…", len(l), l)
		}
	}
	if len(a.Definitions) != a.Counts.Shown || a.Counts.Shown == 0 || a.Counts.Shown >= n {
		t.Fatalf("%d definitions in the structured answer, %d shown, of %d", len(a.Definitions), a.Counts.Shown, n)
	}
	if !strings.Contains(text, "(depth 30) function a30") || !strings.Contains(text, "more lines not shown") {
		t.Fatalf("outline:\n%s", text)
	}
}

func BenchmarkOutlineDeepNesting(b *testing.B) {
	v := nestedIndex(b, 40000)
	for b.Loop() {
		a, err := graph.Outline(v, "f.js")
		if err != nil {
			b.Fatal(err)
		}
		Render(a, 8000)
	}
}
