package astedit

import (
	"context"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/internal/atomicfile"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// D14: a multi-line rewrite's line breaks take the line end of the line
// the match starts on: CRLF in a CRLF file (LF used to be inserted), LF in
// an LF file, each line's own in a mixed file, whatever the template was
// written with.
func TestRewriteTakesTheLineEndOfTheMatch(t *testing.T) {
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	const src = "package p\n\nfunc f() {\n\tprintln(\"a\")\n\tfmt.Println(x,\n\t\ty)\n}\n"
	cases := []struct {
		name, file, pattern, rewrite, want string
	}{
		{"crlf", crlf(src), "fmt.Println($$$A)", "if debug {\nfmt.Println($$$A)\n}",
			crlf("package p\n\nfunc f() {\n\tprintln(\"a\")\n\tif debug {\n\tfmt.Println(x,\n\t\ty)\n\t}\n}\n")},
		{"crlf, the report's case", crlf(src), `println($A)`, "println($A)\nfmt.Println(\"b\")",
			crlf("package p\n\nfunc f() {\n\tprintln(\"a\")\n\tfmt.Println(\"b\")\n\tfmt.Println(x,\n\t\ty)\n}\n")},
		{"lf", src, "fmt.Println($$$A)", "if debug {\r\nfmt.Println($$$A)\r\n}",
			"package p\n\nfunc f() {\n\tprintln(\"a\")\n\tif debug {\n\tfmt.Println(x,\n\t\ty)\n\t}\n}\n"},
		{"mixed", "package p\n\nfunc f() {\r\n\tprintln(\"a\")\r\n\tprintln(\"b\")\n}\n", "println($A)", "println($A)\nprintln($A)",
			"package p\n\nfunc f() {\r\n\tprintln(\"a\")\r\n\tprintln(\"a\")\r\n\tprintln(\"b\")\n\tprintln(\"b\")\n}\n"},
		{"crlf, last line without a line end", "package p\r\n\r\nvar x = f(1)", "f($A)", "g(\n$A,\n)",
			"package p\r\n\r\nvar x = g(\r\n1,\r\n)"},
	}
	e := newEngine(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := testenv.Tree(t, map[string]string{"a.go": c.file})
			st := NewStager(e)
			p, err := st.Stage(context.Background(), astgrep.Query{Path: at(root), Pattern: c.pattern, Language: "go"}, c.rewrite)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Resolve(context.Background(), p.ID, true, atomicfile.Options{}); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, root, "a.go"); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}
