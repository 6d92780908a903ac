package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// D14: line ends and patch details.
func caseD14(c *cx) {
	root := c.root
	p := func(name string) string { return filepath.Join(root, name) }
	s := c.serve(root, "--without", "lsp")
	defer s.close()

	writeFile(p("mixed.txt"), "one\r\ntwo\nthree\nfour\r\n")
	r := s.tool("edit", map[string]any{"path": "mixed.txt", "old_string": "two\nthree", "new_string": "TWO\nTHREE"})
	c.line("edit of the LF region two\\nthree in a mixed CRLF/LF file: answer; bytes after",
		fmt.Sprintf("%s; %q", r.summary(70), readFile(p("mixed.txt"))),
		"refused (old_string rewritten to CRLF; \"copy the indentation exactly\")")

	writeFile(p("mixed2.txt"), "one\r\ntwo\nthree\r\n")
	r = s.tool("apply_patch", map[string]any{"patch": "--- a/mixed2.txt\n+++ b/mixed2.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"})
	after := readFile(p("mixed2.txt"))
	c.line("apply_patch changing the LF line of a mixed file: LF line stays LF?",
		fmt.Sprintf("%s; %q (%s)", yesNo(strings.Contains(after, "TWO\n") && !strings.Contains(after, "TWO\r\n")), after, r.summary(50)),
		"no: the LF line became CRLF")

	writeFile(p("crlf.go"), "package main\r\n\r\nimport \"fmt\"\r\n\r\nfunc main() {\r\n\tprintln(\"a\")\r\n}\r\n\r\nvar _ = fmt.Sprint\r\n")
	r = s.tool("ast_edit", map[string]any{"pattern": `println("a")`, "rewrite": "println(\"a\")\nfmt.Println(\"b\")",
		"path": "crlf.go", "language": "go"})
	fig := "ast_edit staged nothing: " + r.summary(120)
	if id := editID.FindString(r.text); id != "" {
		r = s.tool("resolve", map[string]any{"edit_id": id, "action": "accept"})
		b := readFile(p("crlf.go"))
		lf := strings.Count(b, "\n") - strings.Count(b, "\r\n")
		fig = fmt.Sprintf("%d bare LF, %d CRLF: %s (%s)", lf, strings.Count(b, "\r\n"), quote(b[strings.Index(b, "func"):], 60), r.summary(50))
	}
	c.line("ast_edit multi-line rewrite on a CRLF Go file, accepted: line ends after", fig,
		"LF inserted: println(\"a\")\\n\\tfmt.Println(\"b\")\\r\\n")

	writeFile(p("conf.txt"), "value=1\n")
	writeFile(p("b/conf.txt"), "value=1\n")
	r = s.tool("apply_patch", map[string]any{"patch": "--- b/conf.txt\n+++ b/conf.txt\n@@ -1 +1 @@\n-value=1\n+value=2\n"})
	c.line("traditional diff --- b/conf.txt with a b/ folder present: file patched",
		fmt.Sprintf("conf.txt %q, b/conf.txt %q (%s)", readFile(p("conf.txt")), readFile(p("b/conf.txt")), r.summary(120)),
		"stripped to conf.txt whatever b/ holds (the wrong file if contexts match)")

	writeFile(p("run.sh"), "echo run\n")
	r = s.tool("apply_patch", map[string]any{"patch": "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"})
	c.line("git mode-only patch 100644 -> 100755: mode after", modeOf(p("run.sh"))+" ("+r.summary(80)+")",
		"ignored (0644), reported as patched")

	r = s.tool("apply_patch", map[string]any{"patch": "diff --git a/lnk b/lnk\nnew file mode 120000\nindex 0000000..e69de29\n--- /dev/null\n+++ b/lnk\n@@ -0,0 +1 @@\n+conf.txt\n\\ No newline at end of file\n"})
	kind := "absent"
	if fi, err := os.Lstat(p("lnk")); err == nil {
		kind = fi.Mode().Type().String()
		if fi.Mode().IsRegular() {
			kind = "regular file"
		}
	}
	c.line("git patch creating a symlink (mode 120000): answer; lnk is", fmt.Sprintf("%s; %s", r.summary(120), kind),
		"written as a regular file, reported as created")

	writeFile(p("twice.txt"), "a\nb\nc\nd\ne\nf\ng\nh\n")
	r = s.tool("apply_patch", map[string]any{"patch": "--- a/twice.txt\n+++ b/twice.txt\n@@ -1 +1 @@\n-a\n+A\n--- a/twice.txt\n+++ b/twice.txt\n@@ -8 +8 @@\n-h\n+H\n"})
	c.line("patch with two sections for one file: answer; content after", fmt.Sprintf("%s; %q", r.summary(120), readFile(p("twice.txt"))),
		"\"applied the patch to 2 files\"")

	check(unix.Mkfifo(p("fifo.txt"), 0o644))
	r = s.tool("write", map[string]any{"path": "fifo.txt", "content": "x\n"})
	fi, _ := os.Lstat(p("fifo.txt"))
	c.line("write onto a FIFO: answer; still a FIFO?", fmt.Sprintf("%s; %s", r.summary(120), yesNo(fi != nil && fi.Mode()&os.ModeNamedPipe != 0)),
		"FIFO replaced by a regular file, \"replaced fifo.txt\"")
}
