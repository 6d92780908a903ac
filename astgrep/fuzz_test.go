package astgrep

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/astgrep/procpool"
)

var fuzzSources = map[string]string{
	"go":         "package p\n\nfunc f(a, b int) error {\n\tdefer x.Close()\n\tif err != nil {\n\t\treturn fmt.Errorf(\"%w\", err)\n\t}\n\tfor i := 0; i < a; i++ {\n\t\tb += i\n\t}\n\treturn nil\n}\n",
	"python":     "def f(a, *b):\n    with open(a) as fh:\n        print(fh.read(), b)\n    return [x for x in b if x]\n",
	"javascript": "const o = { a: 123, f(x) { return x ?? 1; } };\nasync function g(...xs) { await Promise.all(xs.map((x) => x * 2)); }\n",
}

// metavariableRun is D8's pattern: n metavariables in a row, which no
// grammar reads.
func metavariableRun(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("$A%d", i)
	}
	return strings.Join(parts, " ")
}

// FuzzCompilePattern feeds arbitrary patterns to the compiler and, when one
// compiles, runs it over a small file. Neither may panic or hang, a
// failure must be one of the documented errors, a pattern over the limits
// is refused before any parse, and no pattern is parsed more than once per
// scaffold context and placeholder style.
func FuzzCompilePattern(f *testing.F) {
	seeds := []string{
		"fmt.Println($$$A)", "$X := $Y", "if $X != nil { return $X }", "f($$$A, b, $$$C)",
		"def $F($$$P): $$$B", "a: 123", "$_", "$$$", "", "   ", "$A $B $C", "func (", "\"$X\"",
		"$$$$A", "$A.$B($$$C)", "{ $$$ }", "x = $X; $X", "// $X", "f(\x00)", "é$X", "$X\n\n$Y",
		"for $I := range $$$X {}", "[$$$A]", "lambda: $X",
		metavariableRun(MaxPatternMetavariables), metavariableRun(MaxPatternMetavariables + 1),
		strings.Repeat("x", MaxPatternBytes+1), "$A" + strings.Repeat(" ", MaxPatternBytes),
	}
	for _, s := range seeds {
		for _, lang := range []string{"go", "python", "javascript"} {
			f.Add(lang, s)
		}
	}
	e := NewEngine(Options{})
	f.Cleanup(func() { e.Close() })
	f.Fuzz(func(t *testing.T, lang, pattern string) {
		l := e.langs.lookup(lang)
		if l == nil || fuzzSources[l.id] == "" {
			return
		}
		if err := l.load(); err != nil {
			t.Fatal(err)
		}
		p := procpool.Parser()
		defer procpool.PutParser(p)
		// Not a time limit on reading, a hang detector: the worst pattern
		// under the limits reads in a few seconds.
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		parses := 0
		pat, err := compilePattern(ctx, l, pattern, func(b []byte) (*tree, error) {
			parses++
			return e.parseWith(ctx, p, l, b)
		})
		if max := len(l.spec.Contexts) * len(l.spec.PlaceholderStyles()); parses > max {
			t.Fatalf("pattern %q: %d parses, more than the %d scaffold readings", pattern, parses, max)
		}
		over := len(pattern) > MaxPatternBytes || countVars(pattern) > MaxPatternMetavariables
		if strings.TrimSpace(pattern) != "" && errors.Is(err, ErrPatternTooLarge) != over {
			t.Fatalf("pattern of %d bytes and %d metavariables: %v", len(pattern), countVars(pattern), err)
		}
		if errors.Is(err, ErrPatternTooLarge) && parses > 0 {
			t.Fatalf("pattern over the limits was parsed %d times before being refused", parses)
		}
		if err != nil {
			if ctx.Err() != nil {
				t.Fatalf("pattern %q: still reading after a minute: %v", pattern, err)
			}
			var upe *UnparsablePatternError
			var ve errVarNotNode
			if errors.Is(err, ErrEmptyPattern) || errors.Is(err, ErrOnlyMetavariable) || errors.Is(err, ErrPatternTooLarge) || errors.As(err, &upe) || errors.As(err, &ve) ||
				strings.Contains(err.Error(), "metavariable") || strings.Contains(err.Error(), "UTF-8") {
				return
			}
			t.Fatalf("pattern %q: undocumented error %v", pattern, err)
		}
		if pat.root == nil && len(pat.seq) == 0 {
			t.Fatalf("pattern %q compiled to nothing", pattern)
		}
		src := []byte(fuzzSources[l.id])
		tr, err := e.parseWith(context.Background(), p, l, src)
		if err != nil {
			t.Fatal(err)
		}
		m := &matcher{t: tr, p: pat}
		for _, r := range m.findAll() {
			if r.start < 0 || r.end > len(src) || r.start > r.end {
				t.Fatalf("pattern %q: match range %d-%d outside the source", pattern, r.start, r.end)
			}
		}
	})
}

func countVars(src string) int {
	n := 0
	for _, tok := range ScanMetavariables(src) {
		if tok.Var {
			n++
		}
	}
	return n
}
