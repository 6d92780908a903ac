package langtable

import (
	"strings"
	"testing"
)

// Every row can be told from the others (ids, aliases, exact names), has a
// context to read a pattern in, and names its extensions as the lookup
// spells them: with the dot, lower case.
func TestTableRowsAreWellFormed(t *testing.T) {
	names := map[string]string{}
	claim := func(id, name string) {
		if other, ok := names[name]; ok {
			t.Errorf("%s and %s both claim %q", other, id, name)
		}
		names[name] = id
	}
	for _, sp := range Table {
		claim(sp.ID, sp.ID)
		for _, a := range sp.Aliases {
			claim(sp.ID, a)
		}
		if len(sp.Contexts) == 0 {
			t.Errorf("%s has no scaffold context", sp.ID)
		}
		for _, e := range sp.Exts {
			if !strings.HasPrefix(e, ".") || e != strings.ToLower(e) {
				t.Errorf("%s: extension %q is not a lower-case .ext", sp.ID, e)
			}
		}
		if len(sp.PlaceholderStyles()) == 0 {
			t.Errorf("%s has no placeholder style", sp.ID)
		}
	}
	g := Generic("zig")
	if g.ID != "zig" || len(g.Exts) != 1 || g.Exts[0] != ".zig" || len(g.Contexts) != 2 || g.Bundled != "" {
		t.Errorf("Generic(zig) = %+v", g)
	}
}

// The styles spell distinct placeholders, each its own way.
func TestStylesSpellDistinctPlaceholders(t *testing.T) {
	want := map[Style]string{StyleLower: "zmv3z", StyleUpper: "ZMV3Z", StyleDollar: "$zmv3z", StyleString: `"zmv3z"`}
	for s, w := range want {
		if got := s.Spell(3); got != w {
			t.Errorf("style %d spells %q, want %q", s, got, w)
		}
	}
}
