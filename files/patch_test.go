package files_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// REG-8: a git diff over several files is applied, and every written file
// is recorded for the diagnostics wrapper.
func TestApplyPatchMultiFileGitDiff(t *testing.T) {
	h := newHarness(t)
	h.put("a.txt", "one\ntwo\nthree\n")
	h.putMode("pkg/b.sh", "#!/bin/sh\necho b\n", 0o755)
	patch := `diff --git a/a.txt b/a.txt
index 5626abf..f9b5ab2 100644
--- a/a.txt
+++ b/a.txt
@@ -1,3 +1,3 @@
 one
-two
+TWO
 three
diff --git a/pkg/b.sh b/pkg/b.sh
index 1111111..2222222 100755
--- a/pkg/b.sh
+++ b/pkg/b.sh
@@ -1,2 +1,3 @@
 #!/bin/sh
 echo b
+echo c
`
	got := h.ok("apply_patch", map[string]any{"patch": patch})
	if want := "applied the patch to 2 files:\npatched a.txt (1 hunk)\npatched pkg/b.sh (1 hunk)"; got != want {
		t.Errorf("result:\n%s\nwant\n%s", got, want)
	}
	h.wantFile("a.txt", "one\nTWO\nthree\n")
	h.wantFile("pkg/b.sh", "#!/bin/sh\necho b\necho c\n")
	if info, _ := os.Stat(h.abs("pkg/b.sh")); info.Mode().Perm() != 0o755 {
		t.Errorf("b.sh mode %v, want 0755 kept", info.Mode().Perm())
	}
	h.wantWritten("a.txt", "pkg/b.sh")
}

// Traditional diff -u output: a/ and b/ prefixes and timestamps.
func TestApplyPatchTraditionalDiffU(t *testing.T) {
	h := newHarness(t)
	h.put("src/x.c", "int main() {\n  return 0;\n}\n")
	patch := "--- a/src/x.c\t2024-05-01 10:00:00.000000000 +0200\n" +
		"+++ b/src/x.c\t2024-05-01 10:05:00.000000000 +0200\n" +
		"@@ -1,3 +1,3 @@\n int main() {\n-  return 0;\n+  return 1;\n }\n"
	got := h.ok("apply_patch", map[string]any{"patch": patch})
	wantAll(t, got, "patched src/x.c (1 hunk)")
	h.wantFile("src/x.c", "int main() {\n  return 1;\n}\n")
	h.wantWritten("src/x.c")

	// Without prefixes, as `diff -u x.c x.c.new` writes them.
	patch = "--- src/x.c\n+++ src/x.c\n@@ -2 +2 @@\n-  return 1;\n+  return 2;\n"
	h.ok("apply_patch", map[string]any{"patch": patch})
	h.wantFile("src/x.c", "int main() {\n  return 2;\n}\n")
}

func TestApplyPatchNewFileAndDeletion(t *testing.T) {
	h := newHarness(t)
	h.put("old.txt", "bye\nnow\n")
	h.put("keep.txt", "k\n")
	patch := `diff --git a/docs/new.md b/docs/new.md
new file mode 100644
index 0000000..3b18e51
--- /dev/null
+++ b/docs/new.md
@@ -0,0 +1,2 @@
+# New
+hello
diff --git a/old.txt b/old.txt
deleted file mode 100644
index 1234567..0000000
--- a/old.txt
+++ /dev/null
@@ -1,2 +0,0 @@
-bye
-now
`
	got := h.ok("apply_patch", map[string]any{"patch": patch})
	wantAll(t, got, "applied the patch to 2 files:", "created docs/new.md (1 hunk)", "deleted old.txt")
	h.wantFile("docs/new.md", "# New\nhello\n")
	if _, err := os.Stat(h.abs("old.txt")); !os.IsNotExist(err) {
		t.Errorf("old.txt still exists (%v)", err)
	}
	h.wantWritten("docs/new.md")

	// The same in traditional form.
	patch = "--- /dev/null\n+++ b/t/made.txt\n@@ -0,0 +1 @@\n+made\n" +
		"--- a/keep.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-k\n"
	got = h.ok("apply_patch", map[string]any{"patch": patch})
	wantAll(t, got, "created t/made.txt", "deleted keep.txt")
	h.wantFile("t/made.txt", "made\n")
	h.wantGone("keep.txt")
}

// Git already drops a/ and b/; a file inside a folder really named b stays
// there.
func TestApplyPatchGitPathsNotStrippedTwice(t *testing.T) {
	h := newHarness(t)
	h.put("a/inner.txt", "x\n")
	patch := `diff --git a/b/new.txt b/b/new.txt
new file mode 100644
--- /dev/null
+++ b/b/new.txt
@@ -0,0 +1 @@
+in b
diff --git a/a/inner.txt b/a/inner.txt
deleted file mode 100644
--- a/a/inner.txt
+++ /dev/null
@@ -1 +0,0 @@
-x
`
	got := h.ok("apply_patch", map[string]any{"patch": patch})
	wantAll(t, got, "created b/new.txt", "deleted a/inner.txt")
	h.wantFile("b/new.txt", "in b\n")
	h.wantGone("new.txt")
}

func TestApplyPatchGitRename(t *testing.T) {
	h := newHarness(t)
	h.putMode("old/name.sh", "#!/bin/sh\necho 1\n", 0o755)
	h.put("plain.txt", "p\nq\n")
	patch := `diff --git a/old/name.sh b/new/name.sh
similarity index 80%
rename from old/name.sh
rename to new/name.sh
index 1111111..2222222 100755
--- a/old/name.sh
+++ b/new/name.sh
@@ -1,2 +1,2 @@
 #!/bin/sh
-echo 1
+echo 2
diff --git a/plain.txt b/moved.txt
similarity index 100%
rename from plain.txt
rename to moved.txt
`
	got := h.ok("apply_patch", map[string]any{"patch": patch})
	wantAll(t, got, "renamed old/name.sh to new/name.sh (1 hunk)", "renamed plain.txt to moved.txt (0 hunks)")
	h.wantFile("new/name.sh", "#!/bin/sh\necho 2\n")
	if info, _ := os.Stat(h.abs("new/name.sh")); info.Mode().Perm() != 0o755 {
		t.Errorf("renamed file mode %v, want 0755", info.Mode().Perm())
	}
	h.wantFile("moved.txt", "p\nq\n")
	for _, gone := range []string{"old/name.sh", "plain.txt"} {
		if _, err := os.Stat(h.abs(gone)); !os.IsNotExist(err) {
			t.Errorf("%s still exists after the rename", gone)
		}
	}
	h.wantWritten("new/name.sh", "moved.txt")
}

func TestApplyPatchRenameOntoExistingFileRefused(t *testing.T) {
	h := newHarness(t)
	h.put("from.txt", "f\n")
	h.put("to.txt", "precious\n")
	before := testenv.Snapshot(t, h.root)
	msg := h.fail("apply_patch", map[string]any{"patch": "diff --git a/from.txt b/to.txt\nsimilarity index 100%\nrename from from.txt\nrename to to.txt\n"})
	wantAll(t, msg, "to.txt", "already exists", "nothing was written")
	if d := testenv.SnapshotDiff(before, testenv.Snapshot(t, h.root)); d != "" {
		t.Errorf("refused patch changed files: %s", d)
	}
}

func TestApplyPatchGitCopy(t *testing.T) {
	h := newHarness(t)
	h.put("tmpl.txt", "name: X\nsize: 1\n")
	patch := `diff --git a/tmpl.txt b/copy.txt
similarity index 60%
copy from tmpl.txt
copy to copy.txt
--- a/tmpl.txt
+++ b/copy.txt
@@ -1,2 +1,2 @@
-name: X
+name: Y
 size: 1
`
	got := h.ok("apply_patch", map[string]any{"patch": patch})
	wantAll(t, got, "copied tmpl.txt to copy.txt")
	if c := h.get("tmpl.txt"); c != "name: X\nsize: 1\n" {
		t.Errorf("the copy's source changed: %q", c)
	}
	h.wantFile("copy.txt", "name: Y\nsize: 1\n")
	h.wantWritten("copy.txt")
}

// A hunk whose line numbers are off is placed by its context and reported.
func TestApplyPatchOffsetHunk(t *testing.T) {
	h := newHarness(t)
	var b strings.Builder
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&b, "header %d\n", i)
	}
	b.WriteString("func a() {\n\treturn 1\n}\n")
	h.put("f.go", b.String())
	// The diff was made before the five header lines were added.
	patch := "--- a/f.go\n+++ b/f.go\n@@ -1,3 +1,3 @@\n func a() {\n-\treturn 1\n+\treturn 2\n }\n"
	got := h.ok("apply_patch", map[string]any{"patch": patch})
	wantAll(t, got, "patched f.go (1 hunk, 1 placed by context at other line numbers)")
	if c := h.get("f.go"); !strings.HasSuffix(c, "func a() {\n\treturn 2\n}\n") || !strings.HasPrefix(c, "header 1\n") {
		t.Errorf("f.go = %q", c)
	}
}

// Hunks are numbered against the original file: a hunk that adds lines does
// not make the next hunk count as misplaced.
func TestApplyPatchHunksAfterGrowingHunkAreNotOffset(t *testing.T) {
	h := newHarness(t)
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&b, "l%d\n", i)
	}
	h.put("n.txt", b.String())
	patch := "--- a/n.txt\n+++ b/n.txt\n" +
		"@@ -2,3 +2,6 @@\n l2\n+new a\n+new b\n+new c\n l3\n l4\n" +
		"@@ -15,3 +18,3 @@\n l15\n-l16\n+L16\n l17\n"
	got := h.ok("apply_patch", map[string]any{"patch": patch})
	if got != "applied the patch to 1 file:\npatched n.txt (2 hunks)" {
		t.Errorf("result %q: no hunk was misplaced", got)
	}
	c := h.get("n.txt")
	wantAll(t, c, "l2\nnew a\nnew b\nnew c\nl3\n", "l15\nL16\nl17\n")
}

// Context is matched where the stated position is wrong; with the same
// context twice, the nearest match wins.
func TestApplyPatchNearestMatchWins(t *testing.T) {
	h := newHarness(t)
	body := "}\n\nfunc x() {\n\treturn nil\n}\n"
	h.put("dup.go", "package p\n"+body+body+body)
	// Lines 9-10 of the file are the second copy's; the hunk says line 10,
	// one off, while the third copy is four off.
	patch := "--- a/dup.go\n+++ b/dup.go\n@@ -10,2 +10,2 @@\n func x() {\n-\treturn nil\n+\treturn err\n"
	got := h.ok("apply_patch", map[string]any{"patch": patch})
	wantAll(t, got, "1 placed by context")
	want := "package p\n" + body + strings.Replace(body, "nil", "err", 1) + body
	if c := h.get("dup.go"); c != want {
		t.Errorf("dup.go =\n%s\nwant\n%s", c, want)
	}
}

// Bad input (issue 2): when the second hunk does not apply, no file changes
// at all, not even files whose hunks were fine.
func TestApplyPatchSecondHunkFailsNothingChanges(t *testing.T) {
	h := newHarness(t)
	h.put("first.txt", "a\nb\nc\n")
	var b strings.Builder
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&b, "row %d\n", i)
	}
	h.put("second.txt", b.String())
	h.put("untouched.txt", "u\n")
	before := testenv.Snapshot(t, h.root)
	patch := "--- a/first.txt\n+++ b/first.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n" +
		"--- /dev/null\n+++ b/created.txt\n@@ -0,0 +1 @@\n+new\n" +
		"--- a/second.txt\n+++ b/second.txt\n" +
		"@@ -1,3 +1,3 @@\n row 1\n-row 2\n+ROW 2\n row 3\n" +
		"@@ -9,3 +9,3 @@\n row 9\n-row ten\n+ROW 10\n row 11\n"
	msg := h.fail("apply_patch", map[string]any{"patch": patch})
	wantAll(t, msg,
		"hunk 2 of 2 for second.txt (@@ -9,3 +9,3 @@) does not apply, so no file was changed",
		"The hunk expects:\n\trow 9\n\trow ten\n\trow 11\n",
		"but at line 9 the file has:\n     9\trow 9\n    10\trow 10\n    11\trow 11\n",
		"Read the file again")
	if d := testenv.SnapshotDiff(before, testenv.Snapshot(t, h.root)); d != "" {
		t.Errorf("failed patch changed files: %s", d)
	}
}

// REG-9: a patch naming a file outside the root is refused before anything
// is written, even for the files inside it names first.
func TestApplyPatchOutsideRootRefused(t *testing.T) {
	h := newHarness(t)
	out := h.outside()
	h.putOutside("o.txt", "o\n")
	if err := os.Symlink(out, h.abs("door")); err != nil {
		t.Fatal(err)
	}
	h.put("in.txt", "i\n")
	before := testenv.Snapshot(t, filepath.Dir(h.root))
	inside := "--- a/in.txt\n+++ b/in.txt\n@@ -1 +1 @@\n-i\n+I\n"
	for _, p := range []string{
		inside + "--- a/../outside/o.txt\n+++ b/../outside/o.txt\n@@ -1 +1 @@\n-o\n+O\n",
		inside + "--- " + filepath.Join(out, "o.txt") + "\n+++ " + filepath.Join(out, "o.txt") + "\n@@ -1 +1 @@\n-o\n+O\n",
		inside + "--- a/door/o.txt\n+++ b/door/o.txt\n@@ -1 +1 @@\n-o\n+O\n",
		inside + "--- /dev/null\n+++ b/../outside/new.txt\n@@ -0,0 +1 @@\n+x\n",
		inside + "--- a/door/o.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-o\n",
		inside + "diff --git a/in.txt b/door/moved.txt\nsimilarity index 100%\nrename from in.txt\nrename to door/moved.txt\n",
	} {
		msg := h.fail("apply_patch", map[string]any{"patch": p})
		wantAll(t, msg, "outside the root "+h.root, "nothing was written")
	}
	if d := testenv.SnapshotDiff(before, testenv.Snapshot(t, filepath.Dir(h.root))); d != "" {
		t.Errorf("refused patches changed files: %s", d)
	}
}

// A header naming an absolute path after a prefix ("--- a//tmp/…/f.go")
// lost its leading slash and was refused as "tmp/…/f.go does not exist".
// It reads as the absolute path it is: applied inside the root, refused
// as an absolute path outside it.
func TestApplyPatchAbsoluteHeader(t *testing.T) {
	h := newHarness(t)
	h.put("f.go", "package f\n")
	abs := h.abs("f.go")
	hunk := "@@ -1 +1 @@\n-package f\n+package g\n"
	for _, p := range []string{
		"--- a/" + abs + "\n+++ b/" + abs + "\n" + hunk,
		"diff --git a/" + abs + " b/" + abs + "\n--- a/" + abs + "\n+++ b/" + abs + "\n" + hunk,
	} {
		h.ok("apply_patch", map[string]any{"patch": p})
		if got := h.get("f.go"); got != "package g\n" {
			t.Errorf("after the patch: %q", got)
		}
		h.put("f.go", "package f\n")
	}
	out := h.putOutside("o.go", "package f\n")
	for _, p := range []string{
		"--- a/" + out + "\n+++ b/" + out + "\n" + hunk,
		"diff --git a/" + out + " b/" + out + "\n--- a/" + out + "\n+++ b/" + out + "\n" + hunk,
		"--- /dev/null\n+++ b/" + out + ".new\n@@ -0,0 +1 @@\n+x\n",
	} {
		msg := h.fail("apply_patch", map[string]any{"patch": p})
		wantAll(t, msg, "the patch names an absolute path", "which is outside the root "+h.root, "nothing was written")
	}
	if data, _ := os.ReadFile(out); string(data) != "package f\n" {
		t.Errorf("the outside file changed: %q", data)
	}
}

func TestApplyPatchBadInput(t *testing.T) {
	h := newHarness(t)
	h.put("a.txt", "a\n")
	h.put("img.bin", "\x00\x01\x02binary\n")
	cases := []struct {
		name, patch string
		want        []string
	}{
		{"empty", "", []string{"patch is empty", "unified diff"}},
		{"blank", "  \n\n", []string{"patch is empty"}},
		{"prose", "please change a to b\n", []string{"the patch names no files", "--- a/FILE", "@@ -l,n +l,n @@"}},
		{"hunk without header", "@@ -1 +1 @@\n-a\n+b\n", []string{"the patch could not be parsed", "---/+++ headers"}},
		{"creates existing", "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+new\n",
			[]string{"the patch creates a.txt, which already exists (nothing was written)"}},
		{"text patch over binary file", "--- a/img.bin\n+++ b/img.bin\n@@ -1 +1 @@\n-x\n+y\n",
			[]string{"img.bin is a binary file", "apply_patch changes text files only"}},
		{"git binary patch", "diff --git a/img.bin b/img.bin\nindex 1111111..2222222 100644\nBinary files a/img.bin and b/img.bin differ\n",
			[]string{"the patch changes binary file img.bin", "text only", "nothing was written"}},
		{"missing file", "--- a/nope.txt\n+++ b/nope.txt\n@@ -1 +1 @@\n-a\n+b\n",
			[]string{"nope.txt does not exist"}},
		{"partial delete", "--- a/a.txt\n+++ /dev/null\n@@ -0,0 +0,0 @@\n",
			[]string{"could not be parsed"}},
		{"hunk past the end", "--- a/a.txt\n+++ b/a.txt\n@@ -5,2 +5,2 @@\n x\n-y\n+z\n",
			[]string{"hunk 1 of 1 for a.txt", "the file has only 1 lines"}},
	}
	before := testenv.Snapshot(t, h.root)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h.t = t
			wantAll(t, h.fail("apply_patch", map[string]any{"patch": tc.patch}), tc.want...)
		})
	}
	if d := testenv.SnapshotDiff(before, testenv.Snapshot(t, h.root)); d != "" {
		t.Errorf("failed patches changed files: %s", d)
	}
}

func TestApplyPatchDeleteMustRemoveEverything(t *testing.T) {
	h := newHarness(t)
	h.put("two.txt", "one\ntwo\n")
	msg := h.fail("apply_patch", map[string]any{"patch": "--- a/two.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-one\n"})
	wantAll(t, msg, "deletes two.txt but its hunks do not remove all of its content")
	if h.get("two.txt") != "one\ntwo\n" {
		t.Errorf("file changed")
	}
}

func TestApplyPatchCRLFFileKeepsCRLF(t *testing.T) {
	h := newHarness(t)
	h.put("w.txt", "a\r\nb\r\nc\r\n")
	h.ok("apply_patch", map[string]any{"patch": "--- a/w.txt\n+++ b/w.txt\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n+B2\n c\n"})
	h.wantFile("w.txt", "a\r\nB\r\nB2\r\nc\r\n")
}

func TestApplyPatchNoNewlineAtEnd(t *testing.T) {
	h := newHarness(t)
	h.put("n.txt", "x\ny")
	patch := "--- a/n.txt\n+++ b/n.txt\n@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+z\n\\ No newline at end of file"
	h.ok("apply_patch", map[string]any{"patch": patch})
	h.wantFile("n.txt", "x\nz")
}

// Real tools' output: diffs made by git and by GNU diff between two trees
// turn the first tree into the second.
func TestApplyPatchFromRealDiffTools(t *testing.T) {
	before := map[string]string{
		"README.md":      "# Demo\n\nSome text.\n",
		"src/main.go":    "package main\n\nfunc main() {\n\tprintln(\"a\")\n\tprintln(\"b\")\n\tprintln(\"c\")\n}\n",
		"src/gone.go":    "package main\n\nvar gone = 1\n",
		"docs/intro.txt": strings.Repeat("intro line\n", 30) + "last\n",
	}
	after := map[string]string{
		"README.md":      "# Demo\n\nSome better text.\nMore.\n",
		"src/main.go":    "package main\n\nfunc main() {\n\tprintln(\"a\")\n\tprintln(\"c\")\n}\n",
		"src/added.go":   "package main\n\nvar added = 2\n",
		"docs/intro.txt": "first\n" + strings.Repeat("intro line\n", 30) + "LAST\n",
	}
	for _, tool := range []string{"git", "diff"} {
		t.Run(tool, func(t *testing.T) {
			testenv.LookPath(t, tool)
			work := t.TempDir()
			testenv.WriteTree(t, filepath.Join(work, "a"), before)
			testenv.WriteTree(t, filepath.Join(work, "b"), after)
			var patch string
			if tool == "git" {
				// A real repository: commit the old tree, stage the new one.
				repo := filepath.Join(work, "a")
				git := func(args ...string) string {
					cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "core.autocrlf=false"}, args...)...)
					cmd.Dir = repo
					out, err := cmd.Output()
					if err != nil {
						t.Fatalf("git %v: %v", args, err)
					}
					return string(out)
				}
				git("init", "-q")
				git("add", "-A")
				git("commit", "-q", "-m", "before")
				for name := range before {
					os.Remove(filepath.Join(repo, name))
				}
				testenv.WriteTree(t, repo, after)
				git("add", "-A")
				patch = git("diff", "--cached", "--no-color")
			} else {
				cmd := exec.Command("diff", "-ruN", "a", "b")
				cmd.Dir = work
				out, err := cmd.Output()
				if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
					t.Fatalf("diff: %v", err)
				}
				patch = string(out)
				// The folders are named a and b, so diff writes the same
				// a/ and b/ prefixes git does, with timestamps.
				if !strings.Contains(patch, "--- a/src/main.go\t") {
					t.Fatalf("unexpected diff output:\n%s", patch)
				}
			}
			h := newHarness(t)
			for name, content := range before {
				h.put(name, content)
			}
			h.ok("apply_patch", map[string]any{"patch": patch})
			got := testenv.Snapshot(t, h.root)
			for name, content := range after {
				if got[name] != "-rw-r--r-- "+content {
					t.Errorf("%s = %q, want %q", name, got[name], content)
				}
			}
			if _, ok := got["src/gone.go"]; ok {
				t.Errorf("src/gone.go not deleted")
			}
		})
	}
}

// A patch may mix git sections and traditional ones: git names are used as
// git gives them, traditional ones lose their a/ and b/.
func TestApplyPatchMixedGitAndTraditional(t *testing.T) {
	h := newHarness(t)
	h.put("b/inner.txt", "1\n")
	h.put("top.txt", "2\n")
	patch := "diff --git a/b/inner.txt b/b/inner.txt\n--- a/b/inner.txt\n+++ b/b/inner.txt\n@@ -1 +1 @@\n-1\n+one\n" +
		"--- a/top.txt\n+++ b/top.txt\n@@ -1 +1 @@\n-2\n+two\n"
	got := h.ok("apply_patch", map[string]any{"patch": patch})
	wantAll(t, got, "patched b/inner.txt", "patched top.txt")
	if h.get("b/inner.txt") != "one\n" || h.get("top.txt") != "two\n" {
		t.Errorf("files: %q %q", h.get("b/inner.txt"), h.get("top.txt"))
	}
	h.wantWritten("b/inner.txt", "top.txt")
}

// A parse error in a later git section gives line numbers in the whole patch.
func TestApplyPatchParseErrorLineNumbers(t *testing.T) {
	h := newHarness(t)
	h.put("x.txt", "x\n")
	patch := "--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-x\n+y\n" +
		"diff --git a/x.txt b/x.txt\n--- a/x.txt\n+++ b/x.txt\n@@ -1,5 +1,5 @@\n-x\n+y\n"
	msg := h.fail("apply_patch", map[string]any{"patch": patch})
	wantAll(t, msg, "the patch could not be parsed", "line numbers counted from line 6 of the patch")
	if h.get("x.txt") != "x\n" {
		t.Errorf("file changed")
	}
}
