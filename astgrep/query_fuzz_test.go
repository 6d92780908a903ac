package astgrep

import (
	"context"
	"testing"

	"github.com/builtin-tools/builtin-tools/astgrep/procpool"
)

// Any query text either compiles or gives a *QueryError; none panics, and
// a compiled one runs over a real tree.
func FuzzCompileQuery(f *testing.F) {
	for _, s := range []string{
		`(function_declaration name: (identifier) @name) @definition.function`,
		`(call_expression function: [(identifier) @n (selector_expression field: (field_identifier) @n)]) @c`,
		`((identifier) @x (#eq? @x "G"))`,
		`(import_spec name: (_)? @a path: (_) @m) @i`,
		`(argument_list . (identifier) @first (identifier)* @rest .)`,
		`(block !label "{" _ @any)`,
		`(ERROR) @e`,
		`((identifier) @x (#match? @x "^[A-Z]") (#not-any-of? @x "A" "B"))`,
		`(`, `[`, `"`, `(x`, `@`, `(#eq? @x)`,
	} {
		f.Add(s)
	}
	e := NewEngine(Options{})
	src := []byte("package p\n\nimport f \"fmt\"\n\nfunc F(a, b int) { f.Println(a); G(b) }\n\nfunc G(x int) {}\n")
	l := e.langs.lookup("go")
	if err := l.load(); err != nil {
		f.Fatal(err)
	}
	p := procpool.Parser()
	nodes, err := p.Parse(context.Background(), l.g, src, nil, nil)
	procpool.PutParser(p)
	if err != nil {
		f.Fatal(err)
	}
	tr := &tree{src: src, nodes: nodes}
	f.Fuzz(func(t *testing.T, q string) {
		cq, err := e.CompileCaptureQuery("go", q)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error with no message")
			}
			return
		}
		cq.run(tr)
	})
}
