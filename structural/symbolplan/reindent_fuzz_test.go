package symbolplan

import (
	"strings"
	"testing"
)

// reindentAs keeps every line's text and order, drops only blank edges,
// and starts each line with the indentation asked for, whatever the text.
func FuzzReindent(f *testing.F) {
	f.Add("n := 0\nfor range xs {\n\tn++\n}\nreturn n", "\t", "\t", false)
	f.Add("\n    if a:\n        b\n    c\n\n", "    ", "    ", true)
	f.Add("  x\n\ty\n", "  ", "\t", false)
	f.Add("{\n  return 1;\n}", "", "  ", false)
	f.Fuzz(func(t *testing.T, text, indent, unit string, skipFirst bool) {
		if strings.ContainsAny(indent+unit, "\r\n") || strings.Trim(indent, " \t") != "" || strings.Trim(unit, " \t") != "" || unit == "" {
			return
		}
		out := reindentAs(text, indent, unit, skipFirst, "\n")
		var want, got []string
		for _, l := range strings.Split(text, "\n") {
			if s := strings.TrimSpace(l); s != "" {
				want = append(want, s)
			}
		}
		for i, l := range strings.Split(out, "\n") {
			if s := strings.TrimSpace(l); s != "" {
				got = append(got, s)
				if !(i == 0 && skipFirst) && !strings.HasPrefix(l, indent) {
					t.Fatalf("line %d %q does not start with %q", i, l, indent)
				}
			}
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("text changed: %q -> %q", text, out)
		}
	})
}
