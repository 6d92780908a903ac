//go:build hardening

package hardening

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// R9: edit_symbol's syntax check is tree-sitter's, which takes Python
// indentation Python refuses: 4 of 4 such changes were written and
// reported done, and compile() then failed with IndentationError. Each
// must be refused with Python's reason and the file left compiling.
func TestR9(t *testing.T) { runCase(t, "R9", caseR9) }

func caseR9(c *cx) {
	py, err := exec.LookPath("python3")
	check(err)
	const spaces = "def F():\n    return 0\n\n\nclass C:\n    def m(self):\n        return 1\n"
	cases := []struct{ name, file, symbol, op, text string }{
		{"indented past its block", spaces, "F", "replace_body", "x = 1\n        return x"},
		{"dedent below the body", spaces, "C.m", "replace_body", "    x = 1\n  return x"},
		{"a tab and eight spaces", "def F():\n\treturn 0\n", "F", "replace_body", "if x:\n\ty = 1\n        return y"},
		{"whole definition", spaces, "F", "replace", "def F():\n    x = 1\n      return x"},
	}
	f := filepath.Join(c.root, "m.py")
	s := c.serve(c.root, "--without", "lsp")
	defer s.close()
	written, refused := 0, 0
	var notes []string
	for _, k := range cases {
		writeFile(f, k.file)
		r := s.tool("edit_symbol", map[string]any{"symbol": k.symbol, "operation": k.op, "new_text": k.text})
		out, cerr := exec.Command(py, "-I", "-S", "-c", "import sys; compile(open(sys.argv[1]).read(), 'm.py', 'exec')", f).CombinedOutput()
		switch {
		case r.ok():
			written++
			notes = append(notes, fmt.Sprintf("%s: written (compile: %s)", k.name, excerpt(lastLine(string(out)), 60)))
		case r.isError && strings.Contains(r.text, "indentation Python refuses") && readFile(f) == k.file && cerr == nil:
			refused++
		default:
			notes = append(notes, k.name+": "+r.summary(100))
		}
	}
	c.line(fmt.Sprintf("%d edit_symbol changes whose indentation Python refuses", len(cases)),
		fmt.Sprintf("%d refused with Python's reason, %d written; %q", refused, written, notes), "4 of 4 written and reported done; compile() then failed")
	c.want(refused == len(cases), "each refused, saying why, the file unchanged")
}
