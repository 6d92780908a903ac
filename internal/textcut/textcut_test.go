package textcut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCutsOnCharacters(t *testing.T) {
	s := "héllo, 世界"
	for n := 0; n <= len(s)+1; n++ {
		if b := Bytes(s, n); !utf8.ValidString(b) || len(b) > n {
			t.Errorf("Bytes(%d) = %q", n, b)
		}
		if r := Runes(s, n); !utf8.ValidString(r) || utf8.RuneCountInString(r) != min(n, utf8.RuneCountInString(s)) {
			t.Errorf("Runes(%d) = %q", n, r)
		}
	}
	if got := Ellipsis("世界世界", 3); got != "世界…" {
		t.Errorf("Ellipsis = %q", got)
	}
	if got := Ellipsis("ab", 3); got != "ab" {
		t.Errorf("Ellipsis short = %q", got)
	}
}

func TestHeadTail(t *testing.T) {
	s := strings.Repeat("é", 10) + strings.Repeat("x", 80) + strings.Repeat("ü", 10)
	head, tail, cut := HeadTail(s, 30)
	if head != strings.Repeat("é", 10)+strings.Repeat("x", 10) || tail != strings.Repeat("ü", 10) || cut != 70 {
		t.Fatalf("%q %q %d", head, tail, cut)
	}
	if h, tl, c := HeadTail("short", 30); h != "short" || tl != "" || c != 0 {
		t.Fatalf("%q %q %d", h, tl, c)
	}
	if h, tl, c := HeadTail("abc", 0); h != "" || tl != "" || c != 3 {
		t.Fatalf("%q %q %d", h, tl, c)
	}
}
