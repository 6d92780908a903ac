package files_test

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// resultBudget is the files package's cap on any result that quotes file
// lines (maxResultBytes).
const resultBudget = 64 << 10

// D7: an edit next to a huge line returns a small result: the line is cut
// as read cuts it, and the file gets the change.
func TestEditResultCutsLongLines(t *testing.T) {
	h := newHarness(t)
	long := strings.Repeat("x", 1<<20)
	h.put("l.txt", "head\n"+long+"\nlast\n")
	got := h.ok("edit", map[string]any{"path": "l.txt", "old_string": "last\n", "new_string": "LAST\n"})
	if len(got) > resultBudget {
		t.Errorf("edit returned %d bytes, over the %d-byte budget", len(got), resultBudget)
	}
	for _, want := range []string{"     2\t" + strings.Repeat("x", 2000) + "… [line cut: 1048576 bytes]\n", "     3\tLAST"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s in %s", clip(want), clip(got))
		}
	}
	if c := h.get("l.txt"); c != "head\n"+long+"\nLAST\n" {
		t.Errorf("file not edited as asked (%d bytes)", len(c))
	}
}

// D7: a change of many long lines is shown up to the budget, and the result
// says which lines it left out and how to see them.
func TestEditResultSaysWhatItLeftOut(t *testing.T) {
	h := newHarness(t)
	h.put("m.txt", "a\nb\nc\n")
	var lines []string
	for i := 0; i < 60; i++ {
		lines = append(lines, strings.Repeat("é", 1500)) // 3000 bytes each
	}
	got := h.ok("edit", map[string]any{"path": "m.txt", "old_string": "b\n", "new_string": strings.Join(lines, "\n") + "\n"})
	if len(got) > resultBudget {
		t.Errorf("edit returned %d bytes, over the %d-byte budget", len(got), resultBudget)
	}
	if !utf8.ValidString(got) {
		t.Errorf("a cut split a character")
	}
	wantAll(t, clip(got), "edited m.txt: replaced 1 occurrence (first at line 2)", "[line cut: 3000 bytes]", "call read with offset ")
}

// D7: the messages of a failed edit or patch quote file lines cut and
// within the budget.
func TestFailureMessagesCapQuotedLines(t *testing.T) {
	h := newHarness(t)
	tail := strings.Repeat("y", 100_000)
	var many strings.Builder
	for i := 0; i < 12; i++ {
		many.WriteString("needle " + tail + "\n")
	}
	h.put("many.txt", many.String())
	h.put("ws.txt", "\tfoo("+tail+")\n\tbar("+tail+")\n")
	h.put("p.txt", "1"+tail+"\n2"+tail+"\n3"+tail+"\n")
	before := testenv.Snapshot(t, h.root)
	cases := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"several matches", "edit", map[string]any{"path": "many.txt", "old_string": "needle", "new_string": "pin"}, "occurs 12 times"},
		{"no match", "edit", map[string]any{"path": "many.txt", "old_string": "needle zebra", "new_string": "pin"}, "Lines most like its first line"},
		{"whitespace", "edit", map[string]any{"path": "ws.txt", "old_string": "  foo(" + tail + ")\n  bar(" + tail + ")", "new_string": "x"}, "if whitespace is ignored"},
		{"hunk mismatch", "apply_patch", map[string]any{"patch": "--- a/p.txt\n+++ b/p.txt\n@@ -1,3 +1,3 @@\n 1" + tail + "\n-2z" + tail + "\n+2\n 3" + tail + "\n"}, "does not apply"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h.t = t
			msg := h.fail(tc.tool, tc.args)
			if len(msg) > resultBudget {
				t.Errorf("message of %d bytes, over the %d-byte budget", len(msg), resultBudget)
			}
			wantAll(t, clip(msg), tc.want, "[line cut: 100")
		})
	}
	if d := testenv.SnapshotDiff(before, testenv.Snapshot(t, h.root)); d != "" {
		t.Errorf("failed calls changed files: %s", d)
	}
}

// D7: edit and apply_patch refuse a file over their size limit with a clear
// message, and write nothing. The file is sparse, so it costs no disk.
func TestTextToolsRefuseFileOverSizeLimit(t *testing.T) {
	h := newHarness(t)
	p := h.put("big.txt", "hello\n")
	if err := os.Truncate(p, 17<<20); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	msg := h.fail("edit", map[string]any{"path": "big.txt", "old_string": "hello", "new_string": "bye"})
	wantAll(t, msg, "big.txt is too large for edit", "the limit is 16 MiB", "use write to replace it whole")
	msg = h.fail("apply_patch", map[string]any{"patch": "--- a/big.txt\n+++ b/big.txt\n@@ -1 +1 @@\n-hello\n+bye\n"})
	wantAll(t, msg, "big.txt is too large for apply_patch", "nothing was written")
	after, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) || after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("the refused calls changed big.txt")
	}
	if left := tempLeftovers(t, h.root); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// D7: read with limit 1 of a 2 GiB file whose second line is the rest of
// the file shows line 1 without holding the huge line or reading it all.
func TestReadLimitOneOfHugeSparseFile(t *testing.T) {
	h := newHarness(t)
	p := h.put("huge.txt", "first\n"+strings.Repeat("x", 9000)) // text past the binary sniff
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2 << 30); err != nil {
		f.Close()
		t.Fatal(err)
	}
	f.Close()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	got := h.ok("read", map[string]any{"path": "huge.txt", "limit": 1})
	runtime.ReadMemStats(&m1)
	// Lines past the page are counted for 64 MiB only, so the call takes
	// the same time whatever the file's size.
	if want := "     1\tfirst\n[showing lines 1-1 of at least 1 (lines past the first 64 MiB were not counted) (limit); call read with offset 2 to continue]"; got != want {
		t.Errorf("read = %q, want %q", got, want)
	}
	if grew := m1.TotalAlloc - m0.TotalAlloc; grew > 64<<20 {
		t.Errorf("read allocated %d MiB for a 2 GiB file; it should not hold the huge line", grew>>20)
	}
}

// clip shortens a long text for a failure message: every run of one
// repeated byte longer than 20 becomes a count.
func clip(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == s[i] {
			j++
		}
		if j-i > 20 {
			fmt.Fprintf(&b, "%c{%d}", s[i], j-i)
		} else {
			b.WriteString(s[i:j])
		}
		i = j
	}
	return b.String()
}

// allocated returns how many bytes fn allocated in all.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// N5: nothing bounded a result before it was built: edit with replace_all
// of a 1 MiB new_string over 50,000 matches asked for 50 GB and serve died
// of "out of memory". The result's size is computed first and a result
// over the 16 MiB file limit refused, without building it. Likewise a patch
// whose result would pass the limit: one file grown past it, or many
// copies of a big file.
func TestResultOverSizeLimitRefusedBeforeItIsBuilt(t *testing.T) {
	h := newHarness(t)
	h.put("many.txt", strings.Repeat("x\n", 50_000))
	huge := strings.Repeat("y", 1<<20)
	var msg string
	n := allocated(func() {
		msg = h.fail("edit", map[string]any{"path": "many.txt", "old_string": "x", "new_string": huge, "replace_all": true})
	})
	wantAll(t, msg, "50000 occurrences", "over the 16 MiB limit", "nothing was written")
	if n > 256<<20 {
		t.Errorf("the refused edit allocated %d MiB", n>>20)
	}
	// Just under the limit is done.
	h.put("few.txt", strings.Repeat("x\n", 15))
	h.ok("edit", map[string]any{"path": "few.txt", "old_string": "x", "new_string": huge, "replace_all": true})

	// apply_patch: a hunk that makes a 12 MiB file larger than 16 MiB, and
	// 200 copies of it (2.4 GiB of results).
	big := h.put("big.txt", strings.Repeat("z", 12<<20)+"\n")
	_ = big
	grow := "--- a/big.txt\n+++ b/big.txt\n@@ -1 +1,2 @@\n " + strings.Repeat("z", 12<<20) + "\n+" + strings.Repeat("w", 5<<20) + "\n"
	msg = h.fail("apply_patch", map[string]any{"patch": grow})
	wantAll(t, msg, "big.txt", "over the 16 MiB limit", "nothing was written")
	var copies strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&copies, "diff --git a/big.txt b/copy%d.txt\nsimilarity index 100%%\ncopy from big.txt\ncopy to copy%d.txt\n", i, i)
	}
	n = allocated(func() { msg = h.fail("apply_patch", map[string]any{"patch": copies.String()}) })
	wantAll(t, msg, "over the", "limit", "nothing was written")
	if n > 1<<30 {
		t.Errorf("the refused patch allocated %d MiB", n>>20)
	}
	if left := tempLeftovers(t, h.root); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
