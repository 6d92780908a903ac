package indent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// R9: tree-sitter-python parses what Python refuses for its indentation;
// Faults finds each such line, with Python's words.
var indentCases = []struct {
	src  string
	want string // "line: message; …", "" when Python takes it
}{
	{"def f():\n    x = 1\n    return x\n", ""},
	{"def f():\n    x = 1\n        return x\n", "3: unexpected indent"},
	{"def f():\n        x = 1\n    return x\n", "3: unindent does not match any outer indentation level"},
	{"def f():\n    x = 1\n\treturn x\n", "3: inconsistent use of tabs and spaces in indentation"},
	{"if x:\n        a\n\tb\n", "3: inconsistent use of tabs and spaces in indentation"}, // a tab: 8 columns, or 1
	{"def f():\nreturn 1\n", "2: expected an indented block"},
	{"def f():\n", "1: expected an indented block"},
	{"def f():  # c\n\n    # only a comment\n    pass\n", ""},
	{"x = (1,\n        2,\n  3)\ny = 1\n", ""},
	{"x = 1 + \\\n        2\n", ""},
	{"s = '''\n        not code\n'''\nt = 1\n", ""},
	{"s = \"a\\\n        b\"\n", ""},
	{"d = {'a':\n 1}\n", ""},
	{"if a: pass\nb = 1\n", ""},
	{"class C:\n    def m(self):\n        pass\n\n  x = 1\n", "5: unindent does not match any outer indentation level"},
	{"  x = 1\n", "1: unexpected indent"},
	{"x = 1\r\n    y = 2\r\n", "2: unexpected indent"},
	{"def f():\n    a\n        b\n    c\n        d\n", "3: unexpected indent; 5: unexpected indent"},
	{"f = r'\\''\nif x:\n    y\n", ""},
	{"x = f\"{a}:\"\n", ""},
	{"x = a[1:\n]\n", ""},
}

func TestFaults(t *testing.T) {
	for _, c := range indentCases {
		var got []string
		for _, e := range Faults("python", []byte(c.src)) {
			got = append(got, fmt.Sprintf("%d: %s", e.Line, e.Msg))
		}
		if g := strings.Join(got, "; "); g != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.src, g, c.want)
		}
	}
	if Faults("go", []byte("  x")) != nil {
		t.Fatal("Go has no indentation rules")
	}
}

// The first fault Faults reports is the one Python's compile()
// raises, for the cases above and for programs made of lines that open
// and close blocks, brackets, strings and continuations at random
// indentation. compile() only parses: no code of the text runs.
func TestFaultsAgreeWithPython(t *testing.T) {
	py := testenv.LookPath(t, "python3")
	var srcs []string
	for _, c := range indentCases {
		srcs = append(srcs, c.src)
	}
	pieces := []string{"if x:", "pass", "x = 1", "# c", "", "y = (1,", "2)", "s = '''", "'''", "z = 1 + \\", "def f():  # c", "return 2", "else:", "t = f'{a}:'", "x = [", "] + \\", "\f", "while y:  ", "class C: pass", "u = 'a\\", "b'"}
	indents := []string{"", "    ", "        ", "\t", "  ", "\t    ", "    \t", " \t", "\f  ", "  \f"}
	r := rand.New(rand.NewPCG(11, 5))
	for range 5000 {
		var b strings.Builder
		nl := []string{"\n", "\r\n"}[r.IntN(2)]
		for range 1 + r.IntN(7) {
			b.WriteString(indents[r.IntN(len(indents))] + pieces[r.IntN(len(pieces))] + nl)
		}
		srcs = append(srcs, b.String())
	}
	in, _ := json.Marshal(srcs)
	// For each text: null when it compiles, else [error class, line].
	// Python reads a file's line ends as "\n"; compile() of a string
	// counts one line more at the end when they are "\r\n".
	const script = `import json, sys
out = []
for src in json.load(sys.stdin):
    try:
        compile(src.replace("\r\n", "\n"), "t.py", "exec", dont_inherit=True)
        out.append(None)
    except SyntaxError as e:
        out.append([type(e).__name__, e.lineno or 0])
json.dump(out, sys.stdout)`
	cmd := exec.Command(py, "-I", "-S", "-c", script)
	cmd.Dir = t.TempDir()
	cmd.Stdin = bytes.NewReader(in)
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	var verdicts [][]any
	if err := json.Unmarshal(raw, &verdicts); err != nil {
		t.Fatal(err)
	}
	compared, bad := 0, 0
	for k, src := range srcs {
		v := verdicts[k]
		got := Faults("python", []byte(src))
		switch {
		case v == nil:
			compared++
			if len(got) > 0 {
				bad++
				t.Errorf("%q: Python takes it, Faults says %v", src, got)
			}
		case v[0] == "IndentationError" || v[0] == "TabError":
			compared++
			line := int(v[1].(float64))
			if len(got) == 0 || got[0].Line != line || (v[0] == "TabError") != (got[0].Msg == indentInconsistent) {
				bad++
				t.Errorf("%q: Python raises %s at line %d, Faults says %v", src, v[0], line, got)
			}
		default:
			// Another syntax error: compile() stops there, and
			// tree-sitter reports that kind.
		}
		if bad > 10 {
			t.FailNow()
		}
	}
	t.Logf("%d of %d texts compared with compile()", compared, len(srcs))
}

// Faults never panics, and every line it names is in the text.
func FuzzFaults(f *testing.F) {
	for _, c := range indentCases {
		f.Add(c.src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		lines := strings.Count(src, "\n") + strings.Count(src, "\r") + 1
		for _, e := range Faults("python", []byte(src)) {
			if e.Line < 1 || e.Line > lines {
				t.Fatalf("%q: line %d of %d", src, e.Line, lines)
			}
		}
	})
}
