package registry

import (
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
