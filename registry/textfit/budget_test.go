package textfit

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestBudget(t *testing.T) {
	for _, c := range []struct {
		b    Budget
		n    int
		want Budget
	}{{8000, 1000, 7000}, {8000, 7900, 2000}, {200, 800, 50}, {100, 800, 40}, {0, 10, 40}} {
		if got := c.b.Reserve(c.n); got != c.want {
			t.Errorf("Budget(%d).Reserve(%d) = %d, want %d", c.b, c.n, got, c.want)
		}
	}
	s := strings.Repeat("a", 100) + strings.Repeat("é", 300) + "END"
	out := Budget(90).HeadTail(s, "the whole output is in F")
	if !strings.HasPrefix(out, strings.Repeat("a", 60)) || !strings.HasSuffix(out, "END") ||
		!strings.Contains(out, "[… 313 characters left out here; the whole output is in F]") || !utf8.ValidString(out) {
		t.Fatalf("%q", out)
	}
	if Budget(90).HeadTail("fits", "") != "fits" {
		t.Fatal("a text that fits was changed")
	}
}

// Parts that share one result: equal shares with a floor, shares by size
// with the short parts whole, and Head keeping whole lines with a note that
// counts characters, never bytes.
func TestBudgetParts(t *testing.T) {
	if got := Budget(7600).Split(4); got != 1900 {
		t.Errorf("Split(4) = %d", got)
	}
	if got := Budget(100).Split(8); got != minBody {
		t.Errorf("Split(8) of 100 = %d, want the floor %d", got, minBody)
	}
	if got := Budget(1000).Split(0); got != 1000 {
		t.Errorf("Split(0) = %d", got)
	}
	for _, c := range []struct {
		b     Budget
		sizes []int
		want  []Budget
	}{
		{1000, []int{100, 5000, 0}, []Budget{100, 900, 0}},
		{1000, []int{5000, 5000}, []Budget{500, 500}},
		{1000, []int{10, 20}, []Budget{10, 20}},
		{90, []int{100, 10, 100}, []Budget{40, 10, 40}},
	} {
		if got := c.b.Share(c.sizes); !slices.Equal(got, c.want) {
			t.Errorf("Budget(%d).Share(%v) = %v, want %v", c.b, c.sizes, got, c.want)
		}
	}
	note := func(n int) string { return fmt.Sprintf("\n(%d more)", n) }
	s := "ééééé\nèèèèè\nààààà\n"
	if !Budget(18).Fits(s) || Budget(17).Fits(s) || Budget(18).Head(s, note) != s {
		t.Error("a text of 18 characters (and more bytes) does not fit 18")
	}
	if got := Budget(17).Head(s, note); got != "ééééé\n(13 more)" {
		t.Errorf("Head: %q", got)
	}
}
