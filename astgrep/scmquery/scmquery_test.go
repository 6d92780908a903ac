package scmquery

import (
	"errors"
	"testing"
)

// toy is a grammar of a few symbols: two named node types, a token, and
// a name that is both (symbols 4 and 5), and two fields.
var toy = Grammar{
	Symbols: []string{"end", "call", "identifier", "(", "string", "string"},
	Named:   []bool{false, true, true, false, true, false},
	Fields:  map[string]uint8{"function": 1, "arguments": 2},
}

func TestParseReadsEveryConstruct(t *testing.T) {
	pats, names, err := Parse(toy, `
; a comment
(call function: (identifier) @fn . (_)* @args . !arguments) @call
[(string) "string"] @s
((identifier) @x (#eq? @x "f") (#not-match? @x "^g") (#set! k v) (#any-of? @x "a" "b"))
(call (ERROR) _? @any)
`)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"fn", "args", "call", "s", "x", "any"}; len(names) != len(want) || names[0] != "fn" || names[5] != "any" {
		t.Fatalf("names %v, want %v", names, want)
	}
	if len(pats) != 4 {
		t.Fatalf("%d patterns, want 4", len(pats))
	}
	call := pats[0].Root
	if call.Kind != KindType || len(call.Syms) != 1 || call.Syms[0] != 1 || call.Captures[0] != 2 ||
		len(call.NegFields) != 1 || call.NegFields[0] != 2 || !call.AnchorLast || len(call.Children) != 2 {
		t.Fatalf("call pattern %+v", call)
	}
	fn, args := call.Children[0], call.Children[1]
	if fn.Field != 1 || fn.Node.Kind != KindType || fn.Quant != 0 || fn.AnchorBefore {
		t.Errorf("function child %+v", fn)
	}
	if args.Node.Kind != KindNamed || args.Quant != '*' || !args.AnchorBefore || args.Node.Captures[0] != 1 {
		t.Errorf("arguments child %+v", args)
	}
	alt := pats[1].Root
	if alt.Kind != KindAlt || len(alt.Alts) != 2 || alt.Alts[0].Syms[0] != 4 || alt.Alts[1].Kind != KindToken || alt.Alts[1].Syms[0] != 5 {
		t.Errorf("alternation %+v", alt)
	}
	preds := pats[2].Preds
	if len(preds) != 3 {
		t.Fatalf("%d predicates, want 3 (#set! is a directive)", len(preds))
	}
	if !preds[0].Test([]byte("f")) || preds[0].Test([]byte("g")) || preds[0].Negate || preds[0].Other != -1 {
		t.Errorf("#eq? %+v", preds[0])
	}
	if !preds[1].Negate || !preds[1].Test([]byte("go")) {
		t.Errorf("#not-match? %+v", preds[1])
	}
	if !preds[2].Test([]byte("b")) || preds[2].Test([]byte("c")) {
		t.Errorf("#any-of? %+v", preds[2])
	}
	last := pats[3].Root.Children
	if last[0].Node.Kind != KindError || last[1].Node.Kind != KindAny || last[1].Quant != '?' {
		t.Errorf("(call (ERROR) _?) children %+v %+v", last[0].Node, last[1])
	}
}

func TestParseErrorsSayWhere(t *testing.T) {
	for _, c := range []struct {
		src  string
		want string
	}{
		{"(call)\n  (nothing)", `line 2 column 11: unknown node type "nothing" near ")"`},
		{`(call nope: (identifier))`, `line 1 column 12: unknown field "nope" near " (identifier))"`},
		{`"}"`, `line 1 column 4: the grammar has no token "}" near ""`},
		{`((identifier) @x (#eq? @y "a"))`, `line 1 column 26: predicate names capture @y, which the pattern does not define before it near " \"a\"))"`},
		{`((identifier) @x (#like? @x "a"))`, `line 1 column 33: unknown predicate #like? (known: #eq?, #match?, #any-of? and their #not- forms) near ")"`},
		{`(call`, `line 1 column 6: unclosed ( near ""`},
	} {
		_, _, err := Parse(toy, c.src)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%q: %v, want an *Error", c.src, err)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.src, err, c.want)
		}
	}
}

// Any text parses or gives an *Error; none panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`(call function: (identifier) @f) @c`, `[(string) "("]`, `((identifier) @x (#match? @x "["))`, `(`, `@`, `(#eq? @x)`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if _, _, err := Parse(toy, src); err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Problem == "" {
				t.Fatalf("%q: %v", src, err)
			}
		}
	})
}
