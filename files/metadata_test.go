package files_test

import (
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"golang.org/x/sys/unix"
)

// writeCalls are the three write tools' calls that change f.txt from "old"
// to "new", with or without force.
func writeCalls(force bool) map[string]map[string]any {
	return map[string]map[string]any{
		"write":       {"path": "f.txt", "content": "new\n", "force": force},
		"edit":        {"path": "f.txt", "old_string": "old", "new_string": "new", "force": force},
		"apply_patch": {"patch": "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-old\n+new\n", "force": force},
	}
}

// D11: a read-only file (no write bit; root ignores permission bits, so the
// bits are what counts) is refused unless forced, and the result of a
// forced write says so; the mode is kept.
func TestWriteToolsRefuseReadOnlyFileUnlessForced(t *testing.T) {
	for tool, args := range writeCalls(false) {
		t.Run(tool, func(t *testing.T) {
			h := newHarness(t)
			h.putMode("f.txt", "old\n", 0o444)
			before := testenv.Snapshot(t, h.root)
			msg := h.fail(tool, args)
			wantAll(t, msg, "read-only", "mode 0444", "force")
			if d := testenv.SnapshotDiff(before, testenv.Snapshot(t, h.root)); d != "" {
				t.Errorf("refused %s changed files: %s", tool, d)
			}
			got := h.ok(tool, writeCalls(true)[tool])
			wantAll(t, got, "note: f.txt was read-only (mode 0444) and was replaced as asked")
			if h.get("f.txt") != "new\n" {
				t.Errorf("forced %s did not write: %q", tool, h.get("f.txt"))
			}
			if info, _ := os.Stat(h.abs("f.txt")); info.Mode().Perm() != 0o444 {
				t.Errorf("mode %v, want 0444 kept", info.Mode().Perm())
			}
		})
	}
}

// D11: a file with another hard link is refused unless forced (replacing it
// splits the link); forced, the result says the other name keeps the old
// content.
func TestWriteToolsRefuseHardLinkedFileUnlessForced(t *testing.T) {
	for tool, args := range writeCalls(false) {
		t.Run(tool, func(t *testing.T) {
			h := newHarness(t)
			h.put("f.txt", "old\n")
			if err := os.Link(h.abs("f.txt"), h.abs("other.txt")); err != nil {
				testenv.Unavailable(t, "hard links", err)
			}
			before := testenv.Snapshot(t, h.root)
			msg := h.fail(tool, args)
			wantAll(t, msg, "other hard links", "force")
			if d := testenv.SnapshotDiff(before, testenv.Snapshot(t, h.root)); d != "" {
				t.Errorf("refused %s changed files: %s", tool, d)
			}
			got := h.ok(tool, writeCalls(true)[tool])
			wantAll(t, got, "note: f.txt had 2 hard links; the other names keep the old content")
			if h.get("f.txt") != "new\n" || h.get("other.txt") != "old\n" {
				t.Errorf("f.txt = %q, other.txt = %q", h.get("f.txt"), h.get("other.txt"))
			}
		})
	}
}

// D11: an edit keeps setuid and setgid bits and extended attributes.
func TestEditKeepsSpecialBitsAndXattrs(t *testing.T) {
	h := newHarness(t)
	for name, mode := range map[string]os.FileMode{"suid.sh": 0o755 | os.ModeSetuid, "sgid.sh": 0o775 | os.ModeSetgid} {
		h.put(name, "echo old\n")
		if err := os.Chmod(h.abs(name), mode); err != nil {
			t.Fatal(err)
		}
		h.ok("edit", map[string]any{"path": name, "old_string": "old", "new_string": "new"})
		info, err := os.Stat(h.abs(name))
		if err != nil || info.Mode() != mode {
			t.Errorf("%s: mode %v (%v), want %v", name, info.Mode(), err, mode)
		}
	}
	p := h.put("x.txt", "old\n")
	if err := unix.Setxattr(p, "user.tag", []byte("kept"), 0); err != nil {
		testenv.Unavailable(t, "user extended attributes", err)
	}
	h.ok("edit", map[string]any{"path": "x.txt", "old_string": "old", "new_string": "new"})
	buf := make([]byte, 64)
	n, err := unix.Getxattr(p, "user.tag", buf)
	if err != nil || string(buf[:n]) != "kept" {
		t.Errorf("user.tag after the edit: %q (%v), want \"kept\"", buf[:max(n, 0)], err)
	}
	if h.get("x.txt") != "new\n" {
		t.Errorf("x.txt = %q", h.get("x.txt"))
	}
}

// D11: a new file made by write honours the umask.
func TestWriteNewFileHonoursUmask(t *testing.T) {
	h := newHarness(t)
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	h.ok("write", map[string]any{"path": "secret/new.txt", "content": "s\n"})
	for name, want := range map[string]os.FileMode{"secret/new.txt": 0o600, "secret": 0o700} {
		info, err := os.Stat(h.abs(name))
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v under umask 077", name, info.Mode().Perm(), want)
		}
	}
	if _, err := os.Stat(h.abs("secret/new.txt")); errors.Is(err, os.ErrNotExist) {
		t.Errorf("not created")
	}
}
