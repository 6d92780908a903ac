//go:build hardening

package hardening

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// D14: line ends and patch details are kept as the file has them.
func TestD14(t *testing.T) { runCase(t, "D14", caseD14) }

func caseD14(c *cx) {
	root := c.root
	p := func(name string) string { return filepath.Join(root, name) }
	s := c.serve(root, "--without", "lsp")
	defer s.close()

	c.sub("mixed edit", func(c *cx) {
		writeFile(p("mixed.txt"), "one\r\ntwo\nthree\nfour\r\n")
		r := s.tool("edit", map[string]any{"path": "mixed.txt", "old_string": "two\nthree", "new_string": "TWO\nTHREE"})
		c.line("edit of the LF region two\\nthree in a mixed CRLF/LF file: answer; bytes after",
			fmt.Sprintf("%s; %q", r.summary(70), readFile(p("mixed.txt"))),
			"refused (old_string rewritten to CRLF; \"copy the indentation exactly\")")
		c.want(r.ok() && readFile(p("mixed.txt")) == "one\r\nTWO\nTHREE\nfour\r\n", "edited, each line's end kept")
	})

	c.sub("mixed patch", func(c *cx) {
		writeFile(p("mixed2.txt"), "one\r\ntwo\nthree\r\n")
		r := s.tool("apply_patch", map[string]any{"patch": "--- a/mixed2.txt\n+++ b/mixed2.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"})
		after := readFile(p("mixed2.txt"))
		c.line("apply_patch changing the LF line of a mixed file: LF line stays LF?",
			fmt.Sprintf("%s; %q (%s)", yesNo(strings.Contains(after, "TWO\n") && !strings.Contains(after, "TWO\r\n")), after, r.summary(50)),
			"no: the LF line became CRLF")
		c.want(r.ok() && after == "one\r\nTWO\nthree\r\n", "patched, the LF line still LF")
	})

	c.sub("crlf ast_edit", func(c *cx) {
		writeFile(p("crlf.go"), "package main\r\n\r\nimport \"fmt\"\r\n\r\nfunc main() {\r\n\tprintln(\"a\")\r\n}\r\n\r\nvar _ = fmt.Sprint\r\n")
		r := s.tool("ast_edit", map[string]any{"pattern": `println("a")`, "rewrite": "println(\"a\")\nfmt.Println(\"b\")",
			"path": "crlf.go", "language": "go"})
		fig := "ast_edit staged nothing: " + r.summary(120)
		lf := -1
		if id := editID.FindString(r.text); id != "" {
			r = s.tool("resolve", map[string]any{"edit_id": id, "action": "accept"})
			b := readFile(p("crlf.go"))
			lf = strings.Count(b, "\n") - strings.Count(b, "\r\n")
			fig = fmt.Sprintf("%d bare LF, %d CRLF: %s (%s)", lf, strings.Count(b, "\r\n"), quote(b[strings.Index(b, "func"):], 60), r.summary(50))
		}
		c.line("ast_edit multi-line rewrite on a CRLF Go file, accepted: line ends after", fig,
			"LF inserted: println(\"a\")\\n\\tfmt.Println(\"b\")\\r\\n")
		c.want(r.ok() && lf == 0 && strings.Contains(readFile(p("crlf.go")), `fmt.Println("b")`), "accepted, no bare LF")
	})

	c.sub("b/ prefix", func(c *cx) {
		writeFile(p("conf.txt"), "value=1\n")
		writeFile(p("b/conf.txt"), "value=1\n")
		r := s.tool("apply_patch", map[string]any{"patch": "--- b/conf.txt\n+++ b/conf.txt\n@@ -1 +1 @@\n-value=1\n+value=2\n"})
		c.line("traditional diff --- b/conf.txt with a b/ folder present: file patched",
			fmt.Sprintf("conf.txt %q, b/conf.txt %q (%s)", readFile(p("conf.txt")), readFile(p("b/conf.txt")), r.summary(120)),
			"stripped to conf.txt whatever b/ holds (the wrong file if contexts match)")
		c.want(r.err == nil && r.isError && readFile(p("conf.txt")) == "value=1\n" && readFile(p("b/conf.txt")) == "value=1\n",
			"refused as ambiguous, no file changed")
	})

	c.sub("mode", func(c *cx) {
		writeFile(p("run.sh"), "echo run\n")
		r := s.tool("apply_patch", map[string]any{"patch": "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"})
		c.line("git mode-only patch 100644 -> 100755: mode after", modeOf(p("run.sh"))+" ("+r.summary(80)+")",
			"ignored (0644), reported as patched")
		c.want(r.ok() && modeOf(p("run.sh")) == "0755", "mode 0755 applied")
	})

	c.sub("symlink entry", func(c *cx) {
		r := s.tool("apply_patch", map[string]any{"patch": "diff --git a/lnk b/lnk\nnew file mode 120000\nindex 0000000..e69de29\n--- /dev/null\n+++ b/lnk\n@@ -0,0 +1 @@\n+conf.txt\n\\ No newline at end of file\n"})
		kind := "absent"
		if fi, err := os.Lstat(p("lnk")); err == nil {
			kind = fi.Mode().Type().String()
			if fi.Mode().IsRegular() {
				kind = "regular file"
			}
		}
		c.line("git patch creating a symlink (mode 120000): answer; lnk is", fmt.Sprintf("%s; %s", r.summary(120), kind),
			"written as a regular file, reported as created")
		c.want(r.err == nil && r.isError && kind == "absent", "refused, nothing created")
	})

	c.sub("two sections", func(c *cx) {
		writeFile(p("twice.txt"), "a\nb\nc\nd\ne\nf\ng\nh\n")
		r := s.tool("apply_patch", map[string]any{"patch": "--- a/twice.txt\n+++ b/twice.txt\n@@ -1 +1 @@\n-a\n+A\n--- a/twice.txt\n+++ b/twice.txt\n@@ -8 +8 @@\n-h\n+H\n"})
		c.line("patch with two sections for one file: answer; content after", fmt.Sprintf("%s; %q", r.summary(120), readFile(p("twice.txt"))),
			"\"applied the patch to 2 files\"")
		c.want(r.ok() && readFile(p("twice.txt")) == "A\nb\nc\nd\ne\nf\ng\nH\n", "both sections applied")
	})

	c.sub("fifo", func(c *cx) {
		check(unix.Mkfifo(p("fifo.txt"), 0o644))
		r := s.tool("write", map[string]any{"path": "fifo.txt", "content": "x\n"})
		fi, _ := os.Lstat(p("fifo.txt"))
		still := fi != nil && fi.Mode()&os.ModeNamedPipe != 0
		c.line("write onto a FIFO: answer; still a FIFO?", fmt.Sprintf("%s; %s", r.summary(120), yesNo(still)),
			"FIFO replaced by a regular file, \"replaced fifo.txt\"")
		c.want(r.err == nil && r.isError && still, "refused, the FIFO kept")
	})
}
