package files_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

func TestWriteCreatesParentFolders(t *testing.T) {
	h := newHarness(t)
	got := h.ok("write", map[string]any{"path": "a/b/c.txt", "content": "one\ntwo"})
	if got != "created a/b/c.txt (2 lines, 7 bytes)" {
		t.Errorf("write = %q", got)
	}
	h.wantFile("a/b/c.txt", "one\ntwo")
	info, err := os.Stat(h.abs("a/b/c.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644", info.Mode().Perm())
	}
	h.wantWritten("a/b/c.txt")
}

// REG-8: a replacing write is temp file + rename: a reader holding the old
// file keeps seeing the old bytes whole, and no temporary file is left.
func TestWriteReplacesAtomically(t *testing.T) {
	h := newHarness(t)
	h.put("conf.ini", "old content\n")
	f, err := os.Open(h.abs("conf.ini"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := h.ok("write", map[string]any{"path": "conf.ini", "content": "new\ncontent\n"})
	if got != "replaced conf.ini (2 lines, 12 bytes)" {
		t.Errorf("write = %q", got)
	}
	h.wantFile("conf.ini", "new\ncontent\n")
	old, err := io.ReadAll(f)
	if err != nil || string(old) != "old content\n" {
		t.Errorf("the open old file reads %q (%v): the write was made in place, not by rename", old, err)
	}
	if left := tempLeftovers(t, h.root); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	h.wantWritten("conf.ini")
}

func TestWriteKeepsMode(t *testing.T) {
	h := newHarness(t)
	h.putMode("run.sh", "#!/bin/sh\necho old\n", 0o755)
	h.ok("write", map[string]any{"path": "run.sh", "content": "#!/bin/sh\necho new\n"})
	info, err := os.Stat(h.abs("run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o755 {
		t.Errorf("mode after write %v, want 0755", info.Mode().Perm())
	}
}

func TestWriteEmptyContent(t *testing.T) {
	h := newHarness(t)
	h.put("x.txt", "something\n")
	got := h.ok("write", map[string]any{"path": "x.txt", "content": ""})
	if got != "replaced x.txt (0 lines, 0 bytes)" || h.get("x.txt") != "" {
		t.Errorf("write empty = %q, file %q", got, h.get("x.txt"))
	}
}

func TestWriteThroughSymlinkInsideRoot(t *testing.T) {
	h := newHarness(t)
	h.put("real.txt", "old\n")
	if err := os.Symlink("real.txt", h.abs("alias.txt")); err != nil {
		t.Fatal(err)
	}
	h.ok("write", map[string]any{"path": "alias.txt", "content": "new\n"})
	if h.get("real.txt") != "new\n" {
		t.Errorf("target not written")
	}
	if fi, err := os.Lstat(h.abs("alias.txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced by a file")
	}
	h.wantWritten("real.txt")
}

func TestWriteToFolderRefused(t *testing.T) {
	h := newHarness(t)
	h.put("dir/keep.txt", "k\n")
	msg := h.fail("write", map[string]any{"path": "dir", "content": "x"})
	wantAll(t, msg, "dir is a folder; give a file path")
	if h.get("dir/keep.txt") != "k\n" {
		t.Errorf("folder content changed")
	}
}

// REG-9: writes through "..", absolute paths or symlinks that leave the
// root are refused naming the root, and nothing outside changes.
func TestWriteRefusesPathsOutsideRoot(t *testing.T) {
	h := newHarness(t)
	out := h.outside()
	target := h.putOutside("victim.txt", "original\n")
	if err := os.Symlink(target, h.abs("victim-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, h.abs("door")); err != nil {
		t.Fatal(err)
	}
	before := testenv.Snapshot(t, filepath.Dir(h.root))
	for _, p := range []string{
		"../outside/victim.txt",
		"../outside/new.txt",
		target,
		filepath.Join(out, "new.txt"),
		"victim-link",
		"door/victim.txt",
		"door/new/deeper.txt",
	} {
		msg := h.fail("write", map[string]any{"path": p, "content": "pwned\n"})
		wantAll(t, msg, "outside the root "+h.root)
	}
	if d := testenv.SnapshotDiff(before, testenv.Snapshot(t, filepath.Dir(h.root))); d != "" {
		t.Errorf("refused writes changed files: %s", d)
	}
}

// Bad input (issue 2): plan mode calling write by name is refused (REG-5).
func TestWriteRefusedInPlanMode(t *testing.T) {
	h := newHarness(t)
	res, err := h.run.Call(context.Background(), tiers.Plan, "write", []byte(`{"path":"x.txt","content":"x"}`))
	if err != nil || !res.IsError {
		t.Fatalf("plan-mode write: err %v, result %v", err, res)
	}
	wantAll(t, registry.ResultText(res), "write")
	if _, err := os.Stat(h.abs("x.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("plan-mode write created the file")
	}
}

func TestWriteMissingArguments(t *testing.T) {
	h := newHarness(t)
	msg := h.fail("write", map[string]any{"path": "x.txt"})
	wantAll(t, msg, "content")
	msg = h.fail("write", map[string]any{"path": "x.txt", "content": 3})
	wantAll(t, msg, "content")
	if _, err := os.Stat(h.abs("x.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused write created the file")
	}
}

// The child of TestWriteIntoReadOnlyFolder finds its fixture through this.
const readOnlyFixtureEnv = "BUILTIN_TOOLS_FILES_READONLY_FIXTURE"

// Bad input (issue 2): a write into a read-only folder fails with a clear
// error and the old content stays intact. Root ignores permission bits, so
// as root the assertions run in a copy of this test binary as uid 65534.
func TestWriteIntoReadOnlyFolder(t *testing.T) {
	if dir := os.Getenv(readOnlyFixtureEnv); dir != "" {
		checkReadOnlyWrite(t, dir) // the unprivileged child
		return
	}
	if os.Geteuid() != 0 {
		dir := t.TempDir()
		makeReadOnlyFixture(t, dir)
		t.Cleanup(func() { os.Chmod(filepath.Join(dir, "root", "ro"), 0o755) })
		checkReadOnlyWrite(t, dir)
		return
	}

	// As root: uid 65534 runs the test again on a fixture in a
	// world-readable folder.
	var base string
	var before map[string]string
	testenv.AsNobody(t, "TestWriteIntoReadOnlyFolder", func(b string) []string {
		base = b
		makeReadOnlyFixture(t, base)
		before = testenv.Snapshot(t, filepath.Join(base, "root"))
		return []string{readOnlyFixtureEnv + "=" + base}
	})
	if d := testenv.SnapshotDiff(before, testenv.Snapshot(t, filepath.Join(base, "root"))); d != "" {
		t.Errorf("the failed writes changed the fixture: %s", d)
	}
}

// makeReadOnlyFixture makes dir/root with a read-only folder ro holding
// file.txt, readable by everyone.
func makeReadOnlyFixture(t *testing.T, dir string) {
	t.Helper()
	ro := filepath.Join(dir, "root", "ro")
	if err := os.MkdirAll(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "root"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ro, "file.txt"), []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
}

func checkReadOnlyWrite(t *testing.T, dir string) {
	h := newHarnessAt(t, filepath.Join(dir, "root"))
	msg := h.fail("write", map[string]any{"path": "ro/file.txt", "content": "clobbered\n"})
	wantAll(t, msg, "could not write ro/file.txt", "permission denied", "not writable", "the file was not changed")
	if got := h.get("ro/file.txt"); got != "precious\n" {
		t.Errorf("old content lost: %q", got)
	}
	msg = h.fail("write", map[string]any{"path": "ro/new.txt", "content": "x\n"})
	wantAll(t, msg, "could not write ro/new.txt", "not writable")
	msg = h.fail("edit", map[string]any{"path": "ro/file.txt", "old_string": "precious", "new_string": "cheap"})
	wantAll(t, msg, "could not write ro/file.txt", "not writable", "the file was not changed")
	msg = h.fail("apply_patch", map[string]any{"patch": "--- a/ro/file.txt\n+++ b/ro/file.txt\n@@ -1 +1 @@\n-precious\n+cheap\n"})
	wantAll(t, msg, "could not apply the patch", "permission denied")
	if got := h.get("ro/file.txt"); got != "precious\n" {
		t.Errorf("old content lost: %q", got)
	}
	if left := tempLeftovers(t, h.root); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
