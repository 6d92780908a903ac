package protocol

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFindSymbol(t *testing.T) {
	d := NewDocument("package p\n\nfunc max(x int) int { return x }\r\nvar größe = \"🚀\" + name\n" +
		"total := stats.Sum(xs) + stats.Sum(ys)\nc.total = c.total + a->b + T::m(x?.y)\n")
	cases := []struct {
		line       int
		symbol     string
		occurrence int
		col        int    // byte column wanted
		err        string // or the error text wanted
	}{
		{3, "max", 0, 5, ""},
		{3, "x", 0, 9, ""}, // the whole word, not the x inside "max"
		{3, "x", 2, 29, ""},
		{3, "return x", 0, 22, ""},
		{4, "name", 0, 23, ""},
		{4, "größe", 0, 4, ""},
		{4, "nome", 0, 0, `"nome" is not on f.go:4, which reads "var größe = \"🚀\" + name"`},
		{4, "", 0, 0, "symbol is required"},
		{7, "x", 0, 0, "line 7 is out of range: f.go has 6 lines"},
		{0, "x", 0, 0, "line 0 is out of range"},
		// Issue 19 §3: a qualified symbol points at its last part, and a
		// repeated one is chosen by its occurrence.
		{5, "stats.Sum", 0, 15, ""},
		{5, "stats.Sum", 2, 31, ""},
		{5, "Sum", 2, 31, ""},
		{5, "stats", 2, 25, ""},
		{5, "stats.Sum", 3, 0, `occurrence 3 of "stats.Sum" is past the last one: f.go:5, which reads "total := stats.Sum(xs) + stats.Sum(ys)", has it 2 times; give occurrence 1 to 2`},
		{5, "total", 2, 0, "has it once; give occurrence 1 to 1"},
		{5, "Sum", -1, 0, "occurrence -1 is not a count: occurrences are 1-based"},
		{6, "c.total", 2, 12, ""},
		{6, "a->b", 0, 23, ""},
		{6, "T::m", 0, 30, ""},
		{6, "x?.y", 0, 35, ""},
		{6, "Cart.total", 0, 2, ""}, // not on the line as written: its last part
		{6, "Cart.Total", 0, 0, `"Cart.Total" is not on f.go:6`},
	}
	for _, c := range cases {
		p := Place{Line: c.line, Symbol: c.symbol, Occurrence: c.occurrence}
		line0, col, _, err := FindSymbol(d, "f.go", p)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%+v: want error %q, got %v", p, c.err, err)
			}
			continue
		}
		if err != nil || line0 != c.line-1 || col != c.col {
			t.Errorf("%+v: got line0 %d col %d err %v; want col %d", p, line0, col, err, c.col)
		}
	}
	if d.Line(2) != "func max(x int) int { return x }" {
		t.Errorf("CRLF line kept its CR: %q", d.Line(2))
	}
	if _, _, _, err := FindSymbol(NewDocument(""), "e.go", Place{Line: 1, Symbol: "x"}); err == nil || !strings.Contains(err.Error(), "e.go is empty") {
		t.Errorf("empty file: %v", err)
	}
}

func TestColumns(t *testing.T) {
	line := "größe 🚀 x"
	b := strings.Index(line, "x") // 5 letters (7 bytes), space, rocket (4 bytes), space
	want := map[string]int{UTF8: 13, UTF16: 9, UTF32: 8}
	for enc, col := range want {
		if got := EncodedColumn(line, b, enc); got != col {
			t.Errorf("%s: EncodedColumn = %d, want %d", enc, got, col)
		}
		if got := ByteColumn(line, col, enc); got != b {
			t.Errorf("%s: ByteColumn(%d) = %d, want %d", enc, col, got, b)
		}
	}
	if got := ByteColumn(line, 999, UTF16); got != len(line) {
		t.Errorf("past the end: %d, want the line length %d", got, len(line))
	}
}

func FuzzColumns(f *testing.F) {
	f.Add("größe 🚀 x", 3)
	f.Add("\xff\xfeab", 1)
	f.Fuzz(func(t *testing.T, line string, at int) {
		if at < 0 || at > len(line) {
			return
		}
		for at > 0 && at < len(line) && !utf8.RuneStart(line[at]) {
			at--
		}
		for _, enc := range []string{UTF8, UTF16, UTF32} {
			col := EncodedColumn(line, at, enc)
			if back := ByteColumn(line, col, enc); back != at && utf8.ValidString(line) {
				t.Fatalf("%s: byte %d -> column %d -> byte %d in %q", enc, at, col, back, line)
			}
		}
	})
}
