package astgrep

import (
	"errors"
	"strings"
	"testing"
)

var fuzzSources = map[string]string{
	"go":         "package p\n\nfunc f(a, b int) error {\n\tdefer x.Close()\n\tif err != nil {\n\t\treturn fmt.Errorf(\"%w\", err)\n\t}\n\tfor i := 0; i < a; i++ {\n\t\tb += i\n\t}\n\treturn nil\n}\n",
	"python":     "def f(a, *b):\n    with open(a) as fh:\n        print(fh.read(), b)\n    return [x for x in b if x]\n",
	"javascript": "const o = { a: 123, f(x) { return x ?? 1; } };\nasync function g(...xs) { await Promise.all(xs.map((x) => x * 2)); }\n",
}

// FuzzCompilePattern feeds arbitrary patterns to the compiler and, when one
// compiles, runs it over a small file. Neither may panic or hang, and a
// failure must be one of the documented errors.
func FuzzCompilePattern(f *testing.F) {
	seeds := []string{
		"fmt.Println($$$A)", "$X := $Y", "if $X != nil { return $X }", "f($$$A, b, $$$C)",
		"def $F($$$P): $$$B", "a: 123", "$_", "$$$", "", "   ", "$A $B $C", "func (", "\"$X\"",
		"$$$$A", "$A.$B($$$C)", "{ $$$ }", "x = $X; $X", "// $X", "f(\x00)", "é$X", "$X\n\n$Y",
		"for $I := range $$$X {}", "[$$$A]", "lambda: $X",
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
		if l == nil || fuzzSources[l.id] == "" || len(pattern) > 2000 {
			return
		}
		if err := l.load(); err != nil {
			t.Fatal(err)
		}
		p := e.getParser()
		defer e.putParser(p)
		pat, err := compilePattern(l, pattern, func(b []byte) (*tree, error) { return e.parseWith(p, l, b) })
		if err != nil {
			var upe *UnparsablePatternError
			var ve errVarNotNode
			if errors.Is(err, ErrEmptyPattern) || errors.Is(err, ErrOnlyMetavariable) || errors.As(err, &upe) || errors.As(err, &ve) ||
				strings.Contains(err.Error(), "metavariable") || strings.Contains(err.Error(), "UTF-8") {
				return
			}
			t.Fatalf("pattern %q: undocumented error %v", pattern, err)
		}
		if pat.root == nil && len(pat.seq) == 0 {
			t.Fatalf("pattern %q compiled to nothing", pattern)
		}
		src := []byte(fuzzSources[l.id])
		tr, err := e.parseWith(p, l, src)
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
