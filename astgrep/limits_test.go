package astgrep

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/astgrep/procpool"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// distinctNames is n different identifiers: tree-sitter recovers from
// the syntax error they make in time quadratic in n (n copies of one name
// are cheap).
func distinctNames(n int) string { return distinct("a%d", n) }

func distinct(format string, n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(format, i)
	}
	return strings.Join(parts, " ")
}

// countingParse returns the engine's parser for l under ctx, counting the
// parses and calling before (when set) ahead of each.
func countingParse(t *testing.T, e *Engine, ctx context.Context, l *language, n *int, before func(i int)) parseFunc {
	t.Helper()
	if err := l.load(); err != nil {
		t.Fatal(err)
	}
	p := procpool.Parser()
	t.Cleanup(func() { procpool.PutParser(p) })
	return func(b []byte) (*tree, error) {
		*n++
		if before != nil {
			before(*n)
		}
		return e.parseWith(ctx, p, l, b)
	}
}

// D8: patterns over the limits are refused, naming the limit, before any
// parse; 4,000 metavariables used to take 7.6 s and 589 MB, 100,000 never
// finished.
func TestPatternOverTheLimitsIsRefused(t *testing.T) {
	e := newTestEngine(t)
	root := testenv.Tree(t, map[string]string{"a.go": "package a\n"})
	cases := []struct {
		pattern string
		want    string
	}{
		{metavariableRun(4000), "26889 bytes, over the limit of 8192 bytes"},
		{metavariableRun(100_000), "over the limit of 8192 bytes"},
		{metavariableRun(MaxPatternMetavariables + 1), "201 metavariables, over the limit of 200"},
		{"f(" + strings.Repeat("$$$A, ", MaxPatternMetavariables+1) + ")", "over the limit of 200"},
		{"x" + strings.Repeat(" ", MaxPatternBytes), "8193 bytes, over the limit of 8192 bytes"},
	}
	l := e.langs.lookup("go")
	for _, c := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err := e.Search(ctx, Query{Path: at(root), Pattern: c.pattern, Language: "go"})
		cancel()
		if !errors.Is(err, ErrPatternTooLarge) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("pattern of %d bytes: %v, want %q", len(c.pattern), err, c.want)
		}
		parses := 0
		if _, err := compilePattern(context.Background(), l, c.pattern, countingParse(t, e, context.Background(), l, &parses, nil)); !errors.Is(err, ErrPatternTooLarge) || parses != 0 {
			t.Errorf("pattern of %d bytes: %d parses, %v; want a refusal before any parse", len(c.pattern), parses, err)
		}
	}
}

// D8: patterns just under the limits, the worst shapes that are allowed,
// are read at most once per scaffold context and placeholder style and
// finish (the deadline only catches a hang: each takes a few seconds at
// most); a pattern without metavariables is read once per context.
func TestPatternAtTheLimitsIsReadInBoundedAttempts(t *testing.T) {
	e := newTestEngine(t)
	fill := func(head, format string) string {
		s := head + " " + distinct(format, MaxPatternBytes/3)
		for len(s) > MaxPatternBytes {
			s = s[:strings.LastIndexByte(s, ' ')]
		}
		return s
	}
	cases := []struct {
		lang, pattern string
		perContext    bool // no metavariables: one reading per context
	}{
		{"go", metavariableRun(MaxPatternMetavariables), false},
		{"go", fill("$A", "a%d"), false},
		// The slowest shape found: about 3 s on a 2-core test machine.
		{"typescript", fill("$A", `"%d"`), false},
		{"go", fill("x", "a%d"), true},
	}
	for _, c := range cases {
		l := e.langs.lookup(c.lang)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		parses := 0
		_, err := compilePattern(ctx, l, c.pattern, countingParse(t, e, ctx, l, &parses, nil))
		late := ctx.Err()
		cancel()
		if late != nil {
			t.Fatalf("%s pattern of %d bytes: still reading after the deadline (%d parses): %v", c.lang, len(c.pattern), parses, err)
		}
		var upe *UnparsablePatternError
		if !errors.As(err, &upe) {
			t.Errorf("%s pattern of %d bytes: %v, want an unparsable-pattern error", c.lang, len(c.pattern), err)
		}
		want := len(l.spec.Contexts) * len(l.spec.PlaceholderStyles())
		if c.perContext {
			want = len(l.spec.Contexts)
		}
		if parses != want {
			t.Errorf("%s pattern of %d bytes: %d parses, want %d", c.lang, len(c.pattern), parses, want)
		}
	}
}

// D8: cancelling stops a compile in progress: between readings, and inside
// tree-sitter's parse of one reading.
func TestPatternCompileStopsWhenCancelled(t *testing.T) {
	e := newTestEngine(t)
	l := e.langs.lookup("go")
	pattern := "$A " + distinctNames(1400) // just under MaxPatternBytes

	// Cancelled as the third reading starts: it, and nothing after it, is
	// parsed.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	parses := 0
	_, err := compilePattern(ctx, l, pattern, countingParse(t, e, ctx, l, &parses, func(i int) {
		if i == 3 {
			cancel()
		}
	}))
	if !errors.Is(err, context.Canceled) || parses != 3 {
		t.Errorf("cancelled at the third reading: %d parses, %v; want 3 and context.Canceled", parses, err)
	}

	// (tree-sitter itself stopping a parse: tsnative's
	// TestParseStopsWhenCancelled.)

	// A compile stopped by its context is not cached as the pattern's
	// result.
	if _, err := e.compile(ctx, l, "f($A)"); !errors.Is(err, context.Canceled) {
		t.Errorf("compile under a cancelled context: %v", err)
	}
	if _, err := e.compile(context.Background(), l, "f($A)"); err != nil {
		t.Errorf("the same pattern afterwards: %v", err)
	}
}
