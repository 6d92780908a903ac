package graph

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// TestImpactReaches checks that impact reaches where a change to
// a concrete method propagates (testdata/impact: callers through an
// interface the method's type satisfies, callers' callers, functions that
// pass a dependent as a value, constructors, calls through an interface
// declared outside the root), each at the depth the fixture's "expect"
// gives, and that it reaches at least what callers walked by hand reach.
func TestImpactReaches(t *testing.T) {
	eachArchive(t, "testdata/impact/*.txtar", func(t *testing.T, _ string, ar *txtar.Archive) {
		var start string
		want := map[string]int{}
		depth := 2
		for _, f := range ar.Files {
			switch f.Name {
			case "start":
				start = strings.TrimSpace(string(f.Data))
			case "expect":
				for _, l := range strings.Split(strings.TrimSpace(string(f.Data)), "\n") {
					d, q, _ := strings.Cut(l, " ")
					n, _ := strconv.Atoi(d)
					want[q] = n
					depth = max(depth, n)
				}
			}
		}
		x := buildFixture(t, ar)
		a, err := x.Impact(Spec{Symbol: start}, depth, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, ring := range a.Depths {
			for _, d := range ring.Dependents {
				got[d.Symbol.Qualified] = ring.Depth
			}
		}
		// By hand: callers of each, calls and values, to depth.
		hand := map[string]bool{}
		frontier := []string{start}
		for range depth {
			var next []string
			for _, q := range frontier {
				c, err := x.Callers(Spec{Symbol: q}, 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range slices.Concat(c.Sites, c.Values) {
					if !hand[s.In] && s.In != start {
						hand[s.In] = true
						next = append(next, s.In)
					}
				}
			}
			frontier = next
		}
		t.Logf("impact of %s to depth %d reaches %d functions (callers walked by hand: %d, expected %d)", start, depth, len(got), len(hand), len(want))
		for q, d := range want {
			if got[q] != d {
				t.Errorf("impact of %s: %s at depth %d, want %d", start, q, got[q], d)
			}
		}
		for q := range hand {
			if got[q] == 0 {
				t.Errorf("impact of %s misses %s, which callers walked by hand reach", start, q)
			}
		}
		if t.Failed() {
			t.Logf("impact:\n%s", a.Text())
		}
	})
}
