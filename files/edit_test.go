package files_test

import (
	"os"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

const goSource = `package main

import "fmt"

func main() {
	fmt.Println("hello")
}
`

// REG-8: one exact replacement; the result shows the changed lines numbered.
func TestEditOneReplacement(t *testing.T) {
	h := newHarness(t)
	h.putMode("main.go", goSource, 0o600)
	got := h.ok("edit", map[string]any{
		"path":       "main.go",
		"old_string": `	fmt.Println("hello")`,
		"new_string": "\tname := \"world\"\n\tfmt.Println(\"hello\", name)",
	})
	want := "edited main.go: replaced 1 occurrence (first at line 6)\n" +
		numberedLines(4, "", "func main() {", "\tname := \"world\"", "\tfmt.Println(\"hello\", name)", "}")
	if got != strings.TrimRight(want, "\n") {
		t.Errorf("edit result:\n%s\nwant\n%s", got, want)
	}
	wantFile := strings.Replace(goSource, `	fmt.Println("hello")`, "\tname := \"world\"\n\tfmt.Println(\"hello\", name)", 1)
	if c := h.get("main.go"); c != wantFile {
		t.Errorf("file:\n%s", c)
	}
	if info, _ := os.Stat(h.abs("main.go")); info.Mode().Perm() != 0o600 {
		t.Errorf("edit changed the mode to %v", info.Mode().Perm())
	}
	h.wantWritten("main.go")
}

// Bad input (issue 2): zero matches is an error that shows the lines most
// like old_string's first line; the file is not touched.
func TestEditZeroMatchesShowsCandidates(t *testing.T) {
	h := newHarness(t)
	src := `package server

func handleRequest(w http.ResponseWriter, r *http.Request) {
	log.Printf("request %s", r.URL)
}

func handleHealth(w http.ResponseWriter) {}

var unrelated = 42
`
	h.put("server.go", src)
	msg := h.fail("edit", map[string]any{
		"path":       "server.go",
		"old_string": "func handleRequst(w http.ResponseWriter, r *http.Request) {\n\tlog.Printf(\"req\")",
		"new_string": "x",
	})
	wantAll(t, msg, "old_string was not found in server.go, so nothing was changed", "Lines most like its first line:\n")
	list := msg[strings.Index(msg, "first line:\n")+len("first line:\n"):]
	lines := strings.Split(list, "\n")
	if lines[0] != "     3\tfunc handleRequest(w http.ResponseWriter, r *http.Request) {" {
		t.Errorf("best candidate %q, want line 3", lines[0])
	}
	wantAll(t, list, "     7\tfunc handleHealth(w http.ResponseWriter) {}")
	if strings.Contains(list, "unrelated") {
		t.Errorf("an unrelated line is offered as a candidate:\n%s", list)
	}
	if h.get("server.go") != src {
		t.Errorf("file changed")
	}

	msg = h.fail("edit", map[string]any{"path": "server.go", "old_string": "zzqx", "new_string": "y"})
	wantAll(t, msg, "was not found", "No line resembles its first line.")
}

// Bad input: a whitespace-only difference is named as such.
func TestEditWhitespaceOnlyDifference(t *testing.T) {
	h := newHarness(t)
	src := "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n"
	h.put("f.go", src)
	msg := h.fail("edit", map[string]any{
		"path":       "f.go",
		"old_string": "    if x {\n        return 1\n    }",
		"new_string": "\treturn 2",
	})
	wantAll(t, msg, "matches at line 2 if whitespace is ignored", "copy the indentation and spacing exactly",
		strings.TrimSuffix(numberedLines(2, "\tif x {", "\t\treturn 1", "\t}"), "\n"))
	if h.get("f.go") != src {
		t.Errorf("file changed")
	}
}

// Bad input (issue 2): several matches without replace_all list the lines
// and change nothing.
func TestEditSeveralMatches(t *testing.T) {
	h := newHarness(t)
	src := "a := 1\nx++\nb := 2\nx++\n\tx++ // again\n"
	h.put("m.go", src)
	msg := h.fail("edit", map[string]any{"path": "m.go", "old_string": "x++", "new_string": "x += 2"})
	wantAll(t, msg, "old_string occurs 3 times in m.go, so nothing was changed",
		"replace_all", numberedLines(2, "x++")+numberedLines(4, "x++")+"     5\t\tx++ // again")
	if h.get("m.go") != src {
		t.Errorf("file changed")
	}
}

func TestEditReplaceAll(t *testing.T) {
	h := newHarness(t)
	h.put("m.go", "a := 1\nx++\nb := 2\nx++\n\tx++ // again\n")
	got := h.ok("edit", map[string]any{"path": "m.go", "old_string": "x++", "new_string": "x += 2", "replace_all": true})
	wantAll(t, got, "edited m.go: replaced 3 occurrences (first at line 2)", "     2\tx += 2")
	h.wantFile("m.go", "a := 1\nx += 2\nb := 2\nx += 2\n\tx += 2 // again\n")
	h.wantWritten("m.go")
}

// CRLF files are matched with LF in old_string and keep their CRLF ends.
func TestEditCRLF(t *testing.T) {
	h := newHarness(t)
	h.put("dos.txt", "one\r\ntwo\r\nthree\r\n")
	got := h.ok("edit", map[string]any{"path": "dos.txt", "old_string": "one\ntwo\n", "new_string": "uno\ndos\n"})
	wantAll(t, got, "replaced 1 occurrence (first at line 1)", "     1\tuno\n     2\tdos")
	h.wantFile("dos.txt", "uno\r\ndos\r\nthree\r\n")
	// A one-line old_string with a multi-line new_string keeps CRLF too.
	h.ok("edit", map[string]any{"path": "dos.txt", "old_string": "three", "new_string": "tres\nquatro"})
	if c := h.get("dos.txt"); c != "uno\r\ndos\r\ntres\r\nquatro\r\n" {
		t.Errorf("file %q: new lines should end in CRLF", c)
	}
}

func TestEditLatin1KeepsOtherBytes(t *testing.T) {
	h := newHarness(t)
	h.put("l1.txt", "caf\xe9\nvalue = 1\n")
	h.ok("edit", map[string]any{"path": "l1.txt", "old_string": "value = 1", "new_string": "value = 2"})
	h.wantFile("l1.txt", "caf\xe9\nvalue = 2\n")
}

func TestEditBadInput(t *testing.T) {
	h := newHarness(t)
	h.put("a.txt", "alpha\n")
	h.put("bin.dat", "ab\x00cd\n")
	h.put("dir/x.txt", "x\n")
	cases := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"empty old_string", map[string]any{"path": "a.txt", "old_string": "", "new_string": "b"},
			[]string{"old_string is empty", "use write"}},
		{"identical", map[string]any{"path": "a.txt", "old_string": "alpha", "new_string": "alpha"},
			[]string{"old_string and new_string are the same"}},
		{"binary", map[string]any{"path": "bin.dat", "old_string": "ab", "new_string": "xy"},
			[]string{"bin.dat is a binary file (6 bytes)", "edit changes text files only"}},
		{"missing", map[string]any{"path": "gone.txt", "old_string": "a", "new_string": "b"},
			[]string{"gone.txt does not exist; use write to create it"}},
		{"folder", map[string]any{"path": "dir", "old_string": "a", "new_string": "b"},
			[]string{"dir is a folder"}},
		{"outside", map[string]any{"path": "../x.txt", "old_string": "a", "new_string": "b"},
			[]string{"outside the root " + h.root}},
		{"missing new_string", map[string]any{"path": "a.txt", "old_string": "a"},
			[]string{"new_string"}},
	}
	before := testenv.Snapshot(t, h.root)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h.t = t
			wantAll(t, h.fail("edit", tc.args), tc.want...)
		})
	}
	if d := testenv.SnapshotDiff(before, testenv.Snapshot(t, h.root)); d != "" {
		t.Errorf("failed edits changed files: %s", d)
	}
}
