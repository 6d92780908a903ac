package files_test

import (
	"os"
	"syscall"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// D14: in a file with mixed line ends, an exact byte match wins; LF in
// old_string stands for CRLF only when nothing matches exactly; new_string
// takes the line end of the text it replaces.
func TestEditMixedLineEnds(t *testing.T) {
	h := newHarness(t)
	h.put("mixed.txt", "one\r\ntwo\nthree\r\nfour\n")
	steps := []struct {
		old, new, want string
	}{
		// exact match of an LF region: new_string as given
		{"two\nthree", "TWO\nTHREE", "one\r\nTWO\nTHREE\r\nfour\n"},
		// no exact match: LF matches the file's CRLF, new_string gets CRLF
		{"THREE\nfour", "3\n4", "one\r\nTWO\n3\r\n4\n"},
		// a one-line match takes the end of its line
		{"one", "1\n1b", "1\r\n1b\r\nTWO\n3\r\n4\n"},
		{"TWO", "2\n2b", "1\r\n1b\r\n2\n2b\n3\r\n4\n"},
	}
	for _, s := range steps {
		h.ok("edit", map[string]any{"path": "mixed.txt", "old_string": s.old, "new_string": s.new})
		if got := h.get("mixed.txt"); got != s.want {
			t.Fatalf("edit %q -> %q gave %q, want %q", s.old, s.new, got, s.want)
		}
	}
}

// D14: a patch keeps context lines as the file has them, and an added line
// takes the line end of the line it replaces or follows, not of line 1.
func TestApplyPatchMixedLineEnds(t *testing.T) {
	h := newHarness(t)
	h.put("mixed.txt", "a\r\nb\nc\r\nd\n")
	patch := "--- a/mixed.txt\n+++ b/mixed.txt\n@@ -1,4 +1,5 @@\n a\n-b\n+B\n c\n+c2\n d\n"
	h.ok("apply_patch", map[string]any{"patch": patch})
	if got, want := h.get("mixed.txt"), "a\r\nB\nc\r\nc2\r\nd\n"; got != want {
		t.Errorf("mixed.txt = %q, want %q", got, want)
	}
	// A CRLF patch on an LF file region gives LF lines there.
	patch = "--- a/mixed.txt\n+++ b/mixed.txt\n@@ -4,2 +4,3 @@\n c2\r\n-d\r\n+D\r\n+E\r\n"
	h.ok("apply_patch", map[string]any{"patch": patch})
	if got, want := h.get("mixed.txt"), "a\r\nB\nc\r\nc2\r\nD\nE\n"; got != want {
		t.Errorf("mixed.txt = %q, want %q", got, want)
	}
}

// D14: a context line that was the last, unterminated line of the file gets
// a line end when the patch adds lines after it.
func TestApplyPatchAddsAfterUnterminatedLastLine(t *testing.T) {
	h := newHarness(t)
	h.put("n.txt", "x\r\ny")
	h.ok("apply_patch", map[string]any{"patch": "--- a/n.txt\n+++ b/n.txt\n@@ -1,2 +1,3 @@\n x\n y\n+z\n"})
	if got, want := h.get("n.txt"), "x\r\ny\r\nz\r\n"; got != want {
		t.Errorf("n.txt = %q, want %q", got, want)
	}
}

// D14: write refuses to replace a named pipe or a device with a regular
// file; they stay what they were.
func TestWriteRefusesPipesAndDevices(t *testing.T) {
	h := newHarness(t)
	if err := syscall.Mkfifo(h.abs("pipe"), 0o644); err != nil {
		testenv.Unavailable(t, "mkfifo", err)
	}
	msg := h.fail("write", map[string]any{"path": "pipe", "content": "x\n"})
	wantAll(t, msg, "pipe is not a regular file", "write replaces regular files only")
	if info, err := os.Lstat(h.abs("pipe")); err != nil || info.Mode().Type() != os.ModeNamedPipe {
		t.Errorf("the pipe was replaced: %v %v", info, err)
	}
	t.Run("device", func(t *testing.T) {
		h.t = t
		// the same numbers as /dev/null
		if err := syscall.Mknod(h.abs("null"), syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
			testenv.Unavailable(t, "mknod of a character device", err)
		}
		msg := h.fail("write", map[string]any{"path": "null", "content": "x\n"})
		wantAll(t, msg, "null is not a regular file", "write replaces regular files only")
		if info, err := os.Lstat(h.abs("null")); err != nil || info.Mode().Type()&os.ModeCharDevice == 0 {
			t.Errorf("the device was replaced: %v %v", info, err)
		}
	})
	if left := tempLeftovers(t, h.root); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
