package files_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/mark3labs/mcp-go/mcp"
)

func numberedLines(from int, lines ...string) string {
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%6d\t%s\n", from+i, l)
	}
	return b.String()
}

// REG-8: text comes back numbered like cat -n.
func TestReadNumberedLines(t *testing.T) {
	h := newHarness(t)
	h.put("notes.txt", "alpha\n\tbeta\n\ngamma") // no final newline
	got := h.ok("read", map[string]any{"path": "notes.txt"})
	want := numberedLines(1, "alpha", "\tbeta", "", "gamma")
	if got != want {
		t.Errorf("read:\n%q\nwant\n%q", got, want)
	}
	if len(h.written) != 0 {
		t.Errorf("read recorded written files %v", h.written)
	}
}

func TestReadCRLFShowsLinesWithoutCarriageReturns(t *testing.T) {
	h := newHarness(t)
	h.put("dos.txt", "one\r\ntwo\r\n")
	got := h.ok("read", map[string]any{"path": "dos.txt"})
	if want := numberedLines(1, "one", "two"); got != want {
		t.Errorf("read:\n%q\nwant\n%q", got, want)
	}
}

// REG-8: offset/limit page through a file and say how to continue.
func TestReadOffsetLimitPaging(t *testing.T) {
	h := newHarness(t)
	var lines []string
	for i := 1; i <= 10; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	h.put("ten.txt", strings.Join(lines, "\n")+"\n")

	got := h.ok("read", map[string]any{"path": "ten.txt", "offset": 3, "limit": 4})
	want := numberedLines(3, lines[2:6]...) + "[showing lines 3-6 of 10 (limit); call read with offset 7 to continue]"
	if got != want {
		t.Errorf("page 1:\n%s\nwant\n%s", got, want)
	}
	got = h.ok("read", map[string]any{"path": "ten.txt", "offset": 7, "limit": 4})
	if want := numberedLines(7, lines[6:]...); got != want {
		t.Errorf("last page:\n%s\nwant\n%s", got, want)
	}
}

// With a budget that allows it, a page is at most 2000 lines.
func TestReadDefaultLimitIs2000Lines(t *testing.T) {
	h := newHarnessWithBudget(t, 1<<20)
	var b strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	h.put("long.txt", b.String())
	got := h.ok("read", map[string]any{"path": "long.txt"})
	wantAll(t, got, "  2000\t2000\n", "showing lines 1-2000 of 2500 (limit); call read with offset 2001 to continue")
	if strings.Contains(got, "\t2001\n") {
		t.Errorf("line 2001 shown past the default limit")
	}
	got = h.ok("read", map[string]any{"path": "long.txt", "offset": 2001})
	if !strings.HasPrefix(got, "  2001\t2001\n") || !strings.HasSuffix(got, "  2500\t2500\n") {
		t.Errorf("second page should hold lines 2001-2500, got %q...%q", got[:20], got[len(got)-20:])
	}
}

// REG-8: a very long line is cut at 2000 bytes and the cut is reported.
func TestReadCutsLongLines(t *testing.T) {
	h := newHarness(t)
	h.put("min.js", "short\n"+strings.Repeat("x", 5000)+"\n"+strings.Repeat("é", 3000)+"\n")
	got := h.ok("read", map[string]any{"path": "min.js"})
	lines := strings.Split(got, "\n")
	if want := "     2\t" + strings.Repeat("x", 2000) + "… [line cut: 5000 bytes]"; lines[1] != want {
		t.Errorf("line 2 = %.60q..., want 2000 x's and a cut marker", lines[1])
	}
	// A cut never splits a multi-byte character.
	if !utf8.ValidString(lines[2]) || !strings.HasSuffix(lines[2], "… [line cut: 6000 bytes]") {
		t.Errorf("line 3 = %.60q..., want valid UTF-8 ending in a cut marker", lines[2])
	}
	if n := strings.Count(lines[2], "é"); n != 1000 {
		t.Errorf("line 3 keeps %d é (2 bytes each), want 1000", n)
	}
	wantAll(t, got, "[2 long lines were cut at 2000 bytes]")
}

// REG-12: a page fits the output budget so a huge file cannot flood the
// context; the note says where to continue, and continuing picks up exactly
// there.
func TestReadCapsOutput(t *testing.T) {
	h := newHarness(t)
	var b strings.Builder
	for i := 1; i <= 400; i++ {
		fmt.Fprintf(&b, "%04d%s\n", i, strings.Repeat("y", 1500))
	}
	h.put("big.txt", b.String())
	got := h.ok("read", map[string]any{"path": "big.txt"})
	if n := utf8.RuneCountInString(got); n > 8000 {
		t.Errorf("read returned %d characters, over the output budget of 8000", n)
	}
	var last, next int
	note := got[strings.LastIndex(got, "["):]
	if _, err := fmt.Sscanf(note, "[showing lines 1-%d of 400 (output budget of 8000 characters); call read with offset %d to continue]", &last, &next); err != nil {
		t.Fatalf("no cap note (%v) in %q", err, note)
	}
	if next != last+1 || last < 4 || last >= 400 {
		t.Errorf("cap note says lines 1-%d, continue at %d", last, next)
	}
	if !strings.Contains(got, fmt.Sprintf("%6d\t%04d", last, last)) || strings.Contains(got, fmt.Sprintf("%6d\t", next)) {
		t.Errorf("output does not end at line %d", last)
	}
	page2 := h.ok("read", map[string]any{"path": "big.txt", "offset": next})
	if !strings.HasPrefix(page2, fmt.Sprintf("%6d\t%04d", next, next)) {
		t.Errorf("page 2 starts %.20q, want line %d", page2, next)
	}
}

func TestReadEmptyFile(t *testing.T) {
	h := newHarness(t)
	h.put("empty.txt", "")
	got := h.ok("read", map[string]any{"path": "empty.txt"})
	if got != "empty.txt is empty (0 lines)" {
		t.Errorf("read empty file = %q", got)
	}
}

func TestReadOffsetPastEnd(t *testing.T) {
	h := newHarness(t)
	h.put("three.txt", "a\nb\nc\n")
	msg := h.fail("read", map[string]any{"path": "three.txt", "offset": 20})
	wantAll(t, msg, "offset 20 is past the end of three.txt, which has 3 lines")
	msg = h.fail("read", map[string]any{"path": "three.txt", "offset": -1})
	wantAll(t, msg, "offset and limit must be positive")
}

func TestReadFolderListsEntries(t *testing.T) {
	h := newHarness(t)
	h.put("src/main.go", "package main\n")
	h.put("src/pkg/a.go", "package pkg\n")
	h.put("src/README", "hi\n")
	if err := os.Symlink("main.go", h.abs("src/link.go")); err != nil {
		t.Fatal(err)
	}
	got := h.ok("read", map[string]any{"path": "src"})
	want := "src is a folder with 4 entries:\nREADME\nlink.go@\nmain.go\npkg/"
	if got != want {
		t.Errorf("read folder:\n%s\nwant\n%s", got, want)
	}
	got = h.ok("read", map[string]any{"path": "."})
	wantAll(t, got, "with 1 entry:\nsrc/")
}

// REG-8: images come back as image content, not as text.
func TestReadPNGIsImageContent(t *testing.T) {
	h := newHarness(t)
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	h.put("shot.png", buf.String())
	res := h.call("read", map[string]any{"path": "shot.png"})
	if res.IsError {
		t.Fatalf("read png: %v", res.Content)
	}
	var found bool
	for _, c := range res.Content {
		ic, ok := c.(mcp.ImageContent)
		if !ok {
			continue
		}
		found = true
		if ic.MIMEType != "image/png" {
			t.Errorf("MIME type %q, want image/png", ic.MIMEType)
		}
		data, err := base64.StdEncoding.DecodeString(ic.Data)
		if err != nil || !bytes.Equal(data, buf.Bytes()) {
			t.Errorf("image data does not decode to the file's bytes (err %v)", err)
		}
	}
	if !found {
		t.Fatalf("no image content in %#v", res.Content)
	}
	wantAll(t, registry.ResultText(res), fmt.Sprintf("shot.png (image/png, %d bytes)", buf.Len()))
}

// Bad input (issue 2): a binary file is refused with a message saying why.
func TestReadBinaryRefused(t *testing.T) {
	h := newHarness(t)
	h.put("prog.o", "\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00some more")
	msg := h.fail("read", map[string]any{"path": "prog.o"})
	wantAll(t, msg, "prog.o is a binary file (25 bytes", "read shows text files only")
}

// Bad input (issue 2): a Latin-1 file is shown, with U+FFFD for the bytes
// that are not UTF-8 and a note saying so.
func TestReadLatin1(t *testing.T) {
	h := newHarness(t)
	h.put("latin1.txt", "plain\ncaf\xe9 na\xefve\nend\n")
	got := h.ok("read", map[string]any{"path": "latin1.txt"})
	wantAll(t, got,
		numberedLines(1, "plain", "caf\uFFFD na\uFFFDve", "end"),
		"the file is not valid UTF-8 (first at line 2)", "U+FFFD")
	if !utf8.ValidString(got) {
		t.Errorf("read output is not valid UTF-8")
	}
}

func TestReadMissingFile(t *testing.T) {
	h := newHarness(t)
	msg := h.fail("read", map[string]any{"path": "nope/gone.txt"})
	wantAll(t, msg, "nope/gone.txt does not exist", h.root)
}

// REG-9: "..", absolute paths outside the root and symlinks out of it are
// refused with an error naming the root; the file outside is not read.
func TestReadRefusesPathsOutsideRoot(t *testing.T) {
	h := newHarness(t)
	secret := h.putOutside("secret.txt", "TOPSECRET\n")
	h.put("sub/ok.txt", "fine\n")
	if err := os.Symlink(secret, h.abs("sub/leak.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../outside", h.abs("sub/door")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		"../outside/secret.txt",
		"sub/../../outside/secret.txt",
		secret,
		"/etc/passwd",
		"sub/leak.txt",
		"sub/door/secret.txt",
		"sub/door",
	} {
		msg := h.fail("read", map[string]any{"path": p})
		wantAll(t, msg, "outside the root "+h.root)
		if strings.Contains(msg, "TOPSECRET") {
			t.Errorf("%s: refusal leaks the file's content", p)
		}
	}
	// Inside the root, absolute paths and ".." that stay inside work.
	if got := h.ok("read", map[string]any{"path": h.abs("sub/ok.txt")}); got != numberedLines(1, "fine") {
		t.Errorf("absolute path inside the root: %q", got)
	}
	if got := h.ok("read", map[string]any{"path": "sub/../sub/ok.txt"}); got != numberedLines(1, "fine") {
		t.Errorf("'..' staying inside the root: %q", got)
	}
}

// Bad input: a named pipe would block a plain read forever; it is refused.
func TestReadRefusesNamedPipe(t *testing.T) {
	h := newHarness(t)
	if err := syscall.Mkfifo(h.abs("pipe"), 0o644); err != nil {
		testenv.Unavailable(t, "mkfifo", err)
	}
	msg := h.fail("read", map[string]any{"path": "pipe"})
	wantAll(t, msg, "pipe is not a regular file")
	msg = h.fail("edit", map[string]any{"path": "pipe", "old_string": "a", "new_string": "b"})
	wantAll(t, msg, "pipe is not a regular file")
}

func TestReadBadArguments(t *testing.T) {
	h := newHarness(t)
	msg := h.fail("read", map[string]any{})
	wantAll(t, msg, "path")
	msg = h.fail("read", map[string]any{"path": 42})
	wantAll(t, msg, "path")
	msg = h.fail("read", map[string]any{"path": ""})
	wantAll(t, msg, "empty path", h.root)
}

func TestReadImageOverLimit(t *testing.T) {
	h := newHarness(t)
	big := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 6<<20)...)
	h.put("huge.png", string(big))
	msg := h.fail("read", map[string]any{"path": "huge.png"})
	wantAll(t, msg, "huge.png is a image/png image of", "over the 5 MiB limit")
}

func TestReadThroughSymlinkInsideRoot(t *testing.T) {
	h := newHarness(t)
	h.put("docs/real.md", "# real\n")
	if err := os.Symlink("docs", h.abs("d")); err != nil {
		t.Fatal(err)
	}
	if got := h.ok("read", map[string]any{"path": "d/real.md"}); got != numberedLines(1, "# real") {
		t.Errorf("read through an inside link: %q", got)
	}
}
