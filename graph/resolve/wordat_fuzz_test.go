package resolve

import "testing"

// FuzzWordAt: finding a word on a source line never panics, and what it
// finds is the word.
func FuzzWordAt(f *testing.F) {
	for _, s := range []string{"x", "x(", "ax x", "", "xx", "a.x()"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if i := wordAt(s, "x"); i >= 0 && s[i:i+1] != "x" {
			t.Errorf("wordAt(%q) = %d", s, i)
		}
	})
}
