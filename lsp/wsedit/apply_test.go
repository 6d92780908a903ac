package wsedit

import (
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/lsp/protocol"
)

// limit is package lsp's limit for a file from a language server.
const limit = 16 << 20

func edit(l1, c1, l2, c2 int, text string) protocol.TextEdit {
	return protocol.TextEdit{Range: protocol.Range{Start: protocol.Position{Line: l1, Character: c1}, End: protocol.Position{Line: l2, Character: c2}}, NewText: text}
}

func TestApplyTextEdits(t *testing.T) {
	text := "a := 1\r\nb := größe + 🚀x\n"
	cases := []struct {
		name  string
		enc   string
		edits []protocol.TextEdit
		want  string
		err   string
	}{
		{"replace and insert, any order", protocol.UTF16, []protocol.TextEdit{edit(1, 0, 1, 1, "B"), edit(0, 0, 0, 1, "A")}, "A := 1\r\nB := größe + 🚀x\n", ""},
		// x stands after the rocket: column 15 in UTF-16 units, 14 in runes.
		{"utf-16 column after a surrogate pair", protocol.UTF16, []protocol.TextEdit{edit(1, 15, 1, 16, "y")}, "a := 1\r\nb := größe + 🚀y\n", ""},
		{"utf-32 column", protocol.UTF32, []protocol.TextEdit{edit(1, 14, 1, 15, "y")}, "a := 1\r\nb := größe + 🚀y\n", ""},
		{"inserts at one place keep their order", protocol.UTF8, []protocol.TextEdit{edit(0, 0, 0, 0, "1"), edit(0, 0, 0, 0, "2")}, "12a := 1\r\nb := größe + 🚀x\n", ""},
		{"past the end clamps", protocol.UTF8, []protocol.TextEdit{edit(9, 0, 9, 0, "// end\n")}, text + "// end\n", ""},
		{"overlap", protocol.UTF8, []protocol.TextEdit{edit(0, 0, 0, 3, "x"), edit(0, 2, 0, 4, "y")}, "", "overlapping"},
		{"backwards", protocol.UTF8, []protocol.TextEdit{edit(0, 3, 0, 1, "x")}, "", "ends"},
	}
	for _, c := range cases {
		got, err := applyTextEdits(text, c.edits, c.enc, limit)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: want error %q, got %v (%q)", c.name, c.err, err, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

func FuzzApplyTextEdits(f *testing.F) {
	f.Add("a\nbc\n", 0, 1, 1, 0, "x", 1, 0, 1, 2, "y")
	f.Add("🚀\r\n", 0, 1, 0, 2, "", 5, 5, 6, 6, "z")
	f.Fuzz(func(t *testing.T, text string, a, b, c, d int, s1 string, e, g, h, i int, s2 string) {
		edits := []protocol.TextEdit{edit(a, b, c, d, s1), edit(e, g, h, i, s2)}
		for _, enc := range []string{protocol.UTF8, protocol.UTF16, protocol.UTF32} {
			out, err := applyTextEdits(text, edits, enc, limit)
			if err != nil {
				continue
			}
			if len(out) > len(text)+len(s1)+len(s2) {
				t.Fatalf("%s: output longer than text plus inserts: %q", enc, out)
			}
		}
	})
}
