package files_test

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// D14: in a traditional diff a/ and b/ are dropped only when the name
// without them is the file meant: a checkout with a b/ folder gets its own
// file patched, and a name that fits two files is refused.
func TestApplyPatchTraditionalPrefixes(t *testing.T) {
	change := "@@ -1 +1 @@\n-x\n+y\n"
	t.Run("only the prefixed file exists", func(t *testing.T) {
		h := newHarness(t)
		h.put("b/conf.txt", "x\n")
		got := h.ok("apply_patch", map[string]any{"patch": "--- b/conf.txt\n+++ b/conf.txt\n" + change})
		wantAll(t, got, "patched b/conf.txt")
		if h.get("b/conf.txt") != "y\n" {
			t.Errorf("b/conf.txt not patched")
		}
		h.wantWritten("b/conf.txt")
	})
	t.Run("both exist, conventional a/ b/", func(t *testing.T) {
		h := newHarness(t)
		h.put("b/conf.txt", "x\n")
		h.put("conf.txt", "x\n")
		got := h.ok("apply_patch", map[string]any{"patch": "--- a/conf.txt\n+++ b/conf.txt\n" + change})
		wantAll(t, got, "patched conf.txt")
		if h.get("conf.txt") != "y\n" || h.get("b/conf.txt") != "x\n" {
			t.Errorf("conf.txt = %q, b/conf.txt = %q; want only conf.txt patched", h.get("conf.txt"), h.get("b/conf.txt"))
		}
	})
	t.Run("both exist, ambiguous", func(t *testing.T) {
		h := newHarness(t)
		h.put("b/conf.txt", "x\n")
		h.put("conf.txt", "x\n")
		before := testenv.Snapshot(t, h.root)
		msg := h.fail("apply_patch", map[string]any{"patch": "--- b/conf.txt\n+++ b/conf.txt\n" + change})
		wantAll(t, msg, "b/conf.txt", "conf.txt", "both exist", "diff --git", "nothing was written")
		if d := testenv.SnapshotDiff(before, testenv.Snapshot(t, h.root)); d != "" {
			t.Errorf("refused patch changed files: %s", d)
		}
	})
	t.Run("new file beside a b folder", func(t *testing.T) {
		h := newHarness(t)
		h.put("b/keep.txt", "k\n")
		// "--- /dev/null +++ b/…" is the usual form: b/ is the prefix
		got := h.ok("apply_patch", map[string]any{"patch": "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+n\n"})
		wantAll(t, got, "created new.txt")
		// diff -N names the missing side with the epoch; b/ on both sides
		// could be the folder
		before := testenv.Snapshot(t, h.root)
		msg := h.fail("apply_patch", map[string]any{"patch": "--- b/other.txt\t1970-01-01 00:00:00.000000000 +0000\n" +
			"+++ b/other.txt\t2024-05-01 10:00:00.000000000 +0000\n@@ -0,0 +1 @@\n+n\n"})
		wantAll(t, msg, "b/other.txt", "a folder b exists", "diff --git", "nothing was written")
		if d := testenv.SnapshotDiff(before, testenv.Snapshot(t, h.root)); d != "" {
			t.Errorf("refused patch changed files: %s", d)
		}
	})
}

// D14: git mode changes are applied and reported: a mode-only entry, a
// mode change with a hunk, and a new executable file (its mode is 0777 less
// the umask, as git makes it).
func TestApplyPatchGitModes(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	h := newHarness(t)
	h.put("run.sh", "echo run\n")
	h.putMode("tool.sh", "echo tool\n", 0o755)
	h.putMode("private.sh", "echo private\n", 0o600)
	patch := "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n" +
		"diff --git a/tool.sh b/tool.sh\nold mode 100755\nnew mode 100644\nindex 1111111..2222222\n--- a/tool.sh\n+++ b/tool.sh\n@@ -1 +1 @@\n-echo tool\n+echo TOOL\n" +
		"diff --git a/private.sh b/private.sh\nold mode 100644\nnew mode 100755\n" +
		"diff --git a/new.sh b/new.sh\nnew file mode 100755\nindex 0000000..3333333\n--- /dev/null\n+++ b/new.sh\n@@ -0,0 +1 @@\n+echo new\n"
	got := h.ok("apply_patch", map[string]any{"patch": patch})
	wantAll(t, got, "applied the patch to 4 files:", "changed mode of run.sh to 755",
		"patched tool.sh (1 hunk) and changed its mode to 644", "changed mode of private.sh to 700", "created new.sh (1 hunk, executable)")
	for name, want := range map[string]os.FileMode{"run.sh": 0o755, "tool.sh": 0o644, "private.sh": 0o700, "new.sh": 0o755} {
		if info, err := os.Stat(h.abs(name)); err != nil || info.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", name, info.Mode().Perm(), err, want)
		}
	}
	if h.get("run.sh") != "echo run\n" || h.get("tool.sh") != "echo TOOL\n" || h.get("new.sh") != "echo new\n" {
		t.Errorf("contents: %q %q %q", h.get("run.sh"), h.get("tool.sh"), h.get("new.sh"))
	}
	h.wantWritten("run.sh", "tool.sh", "private.sh", "new.sh")
}

// D14: symbolic links and submodules are not files apply_patch can write;
// a patch with one is refused whole.
func TestApplyPatchRefusesLinksAndSubmodules(t *testing.T) {
	h := newHarness(t)
	h.put("a.txt", "a\n")
	if err := os.Symlink("a.txt", h.abs("link")); err != nil {
		t.Fatal(err)
	}
	ok := "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n"
	cases := []struct{ name, patch, want string }{
		{"new link", "diff --git a/l2 b/l2\nnew file mode 120000\nindex 0000000..1111111\n--- /dev/null\n+++ b/l2\n@@ -0,0 +1 @@\n+a.txt\n\\ No newline at end of file\n",
			"l2 is a symbolic link (mode 120000)"},
		{"changed link", "diff --git a/link b/link\nindex 1111111..2222222 120000\n--- a/link\n+++ b/link\n@@ -1 +1 @@\n-a.txt\n\\ No newline at end of file\n+b.txt\n\\ No newline at end of file\n",
			"link is a symbolic link (mode 120000)"},
		{"file to link", "diff --git a/a.txt b/a.txt\nold mode 100644\nnew mode 120000\n", "a.txt is a symbolic link (mode 120000)"},
		{"submodule", "diff --git a/sub b/sub\nnew file mode 160000\nindex 0000000..1111111\n--- /dev/null\n+++ b/sub\n@@ -0,0 +1 @@\n+Subproject commit 1111111111111111111111111111111111111111\n",
			"sub is a submodule (mode 160000)"},
	}
	before := testenv.Snapshot(t, h.root)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h.t = t
			msg := h.fail("apply_patch", map[string]any{"patch": ok + tc.patch})
			wantAll(t, msg, tc.want, "nothing was written")
		})
	}
	if d := testenv.SnapshotDiff(before, testenv.Snapshot(t, h.root)); d != "" {
		t.Errorf("refused patches changed files: %s", d)
	}
}

// D14: two sections for one file are one file in the report.
func TestApplyPatchCountsFilesOnce(t *testing.T) {
	h := newHarness(t)
	h.put("a.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n")
	patch := "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-1\n+one\n" +
		"--- a/a.txt\n+++ b/a.txt\n@@ -9 +9 @@\n-9\n+nine\n"
	got := h.ok("apply_patch", map[string]any{"patch": patch})
	if want := "applied the patch to 1 file:\npatched a.txt (2 hunks)"; !strings.HasPrefix(got, want) || strings.Count(got, "a.txt") != 1 {
		t.Errorf("report %q, want %q with the file once", got, want)
	}
	h.wantFile("a.txt", "one\n2\n3\n4\n5\n6\n7\n8\nnine\n")
}
