package files_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/files"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// fuzzTree is the small tree every fuzz input is applied to.
var fuzzTree = map[string]string{
	"a.txt":      "alpha\nbeta\ngamma\n",
	"dir/b.go":   "package b\n\nfunc B() int {\n\treturn 1\n}\n",
	"crlf.txt":   "one\r\ntwo\r\n",
	"bin.dat":    "\x00\x01binary",
	"noeol.txt":  "last line",
	"latin1.txt": "caf\xe9\n",
}

// FuzzApplyPatch: arbitrary patch text never panics, never writes outside
// the root, and either applies fully (every file the report names is in the
// state it says, and nothing else changed) or leaves every file as it was.
func FuzzApplyPatch(f *testing.F) {
	for _, seed := range []string{
		"--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n",
		"diff --git a/dir/b.go b/dir/b.go\nindex 1111111..2222222 100644\n--- a/dir/b.go\n+++ b/dir/b.go\n@@ -3,3 +3,3 @@\n func B() int {\n-\treturn 1\n+\treturn 2\n }\n",
		"--- /dev/null\n+++ b/new/n.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n",
		"--- a/a.txt\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-alpha\n-beta\n-gamma\n",
		"diff --git a/a.txt b/moved.txt\nsimilarity index 100%\nrename from a.txt\nrename to moved.txt\n",
		"diff --git a/a.txt b/copy.txt\nsimilarity index 90%\ncopy from a.txt\ncopy to copy.txt\n--- a/a.txt\n+++ b/copy.txt\n@@ -1 +1 @@\n-alpha\n+ALPHA\n",
		"--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-alpha\n+A\n@@ -3 +3 @@\n-nope\n+G\n",
		"--- a/crlf.txt\n+++ b/crlf.txt\n@@ -1,2 +1,3 @@\n one\n+one and a half\n two\n",
		"--- a/noeol.txt\n+++ b/noeol.txt\n@@ -1 +1 @@\n-last line\n\\ No newline at end of file\n+last line\n",
		"--- a/../outside/secret.txt\n+++ b/../outside/secret.txt\n@@ -1 +1 @@\n-secret\n+pwned\n",
		"--- a/door/secret.txt\n+++ b/door/secret.txt\n@@ -1 +1 @@\n-secret\n+pwned\n",
		"--- /dev/null\n+++ b/door/planted.txt\n@@ -0,0 +1 @@\n+planted\n",
		"--- a/bin.dat\n+++ b/bin.dat\n@@ -1 +1 @@\n-x\n+y\n",
		"--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,4 @@\n alpha\n+inserted\n beta\n gamma\n--- /dev/null\n+++ b/a.txt/under.txt\n@@ -0,0 +1 @@\n+x\n",
		"diff --git a/a.txt b/a.txt\nold mode 100644\nnew mode 100755\n",
		"diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+a.txt\n",
		"--- b/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-alpha\n+ALPHA\n",
		"@@ -1 +1 @@\n-a\n+b\n",
		"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, patch string) {
		parent := t.TempDir()
		root := filepath.Join(parent, "root")
		testenv.WriteTree(t, root, fuzzTree)
		os.Mkdir(filepath.Join(parent, "outside"), 0o755)
		os.WriteFile(filepath.Join(parent, "outside", "secret.txt"), []byte("secret\n"), 0o644)
		os.Symlink("../outside", filepath.Join(root, "door"))
		os.Symlink("a.txt", filepath.Join(root, "inlink.txt"))

		run, err := registry.NewRun(registry.Config{Root: root, Families: []registry.Extension{files.Family}})
		if err != nil {
			t.Fatal(err)
		}
		defer run.Close()
		before := testenv.Snapshot(t, parent)
		args, _ := json.Marshal(map[string]string{"patch": patch})
		res, err := run.Call(context.Background(), tiers.Normal, "apply_patch", args)
		if err != nil {
			t.Fatalf("Go error: %v", err)
		}
		text := registry.ResultText(res)
		if strings.Contains(text, "this is a bug in builtin-tools") {
			t.Fatalf("apply_patch panicked: %s", text)
		}
		if text == "" {
			t.Fatalf("empty result")
		}
		after := testenv.Snapshot(t, parent)
		for k, v := range before {
			if !strings.HasPrefix(k, "root"+string(filepath.Separator)) && k != "root" && after[k] != v {
				t.Fatalf("changed outside the root: %s", k)
			}
		}
		for k := range after {
			if !strings.HasPrefix(k, "root"+string(filepath.Separator)) && k != "root" && before[k] == "" {
				t.Fatalf("created outside the root: %s", k)
			}
		}
		if left := tempLeftovers(t, parent); len(left) > 0 {
			t.Fatalf("temporary files left: %v", left)
		}
		if res.IsError {
			if d := testenv.SnapshotDiff(before, after); d != "" {
				t.Fatalf("failed patch (%s) changed files: %s", text, d)
			}
			return
		}
		checkReport(t, root, text, before, after)
	})
}

// checkReport checks a successful apply_patch report against the disk: each
// file it names as patched, created, renamed or copied exists, each deleted
// one is gone, and no file it does not name changed.
func checkReport(t *testing.T, root, report string, before, after map[string]string) {
	t.Helper()
	lines := strings.Split(report, "\n")
	if !strings.HasPrefix(lines[0], "applied the patch to ") {
		t.Fatalf("unexpected report %q", report)
	}
	exists := map[string]bool{} // last word on each named file
	for _, l := range lines[1:] {
		name := func(s string) string { return strings.TrimSpace(strings.SplitN(s, " (", 2)[0]) }
		switch {
		case strings.HasPrefix(l, "patched "):
			exists[name(l[len("patched "):])] = true
		case strings.HasPrefix(l, "created "):
			exists[name(l[len("created "):])] = true
		case strings.HasPrefix(l, "changed mode of "):
			rest := l[len("changed mode of "):]
			exists[rest[:strings.LastIndex(rest, " to ")]] = true
		case strings.HasPrefix(l, "deleted "):
			exists[name(l[len("deleted "):])] = false
		case strings.HasPrefix(l, "renamed "), strings.HasPrefix(l, "copied "):
			from, to, ok := strings.Cut(l[strings.Index(l, " ")+1:], " to ")
			if !ok {
				t.Fatalf("unreadable report line %q", l)
			}
			if strings.HasPrefix(l, "renamed ") {
				exists[from] = false
			}
			exists[name(to)] = true
		default:
			t.Fatalf("unreadable report line %q in %q", l, report)
		}
	}
	for rel, want := range exists {
		info, err := os.Lstat(filepath.Join(root, rel))
		if want && (err != nil || !info.Mode().IsRegular()) {
			t.Fatalf("report says %s exists, but: %v", rel, err)
		}
		if !want && err == nil {
			t.Fatalf("report says %s was deleted, but it exists", rel)
		}
	}
	for _, k := range strings.Split(testenv.SnapshotDiff(before, after), ", ") {
		if k == "" {
			continue
		}
		rel := filepath.ToSlash(strings.TrimPrefix(k[strings.Index(k, " ")+1:], "root/"))
		if _, named := exists[rel]; named {
			continue
		}
		if v := after["root/"+rel]; strings.HasPrefix(v, "dir ") {
			continue // a parent folder made for a new file
		}
		t.Fatalf("%s but the report does not name it:\n%s", k, report)
	}
}
