package lang

import (
	"strings"
	"testing"
)

// A declared type's text reduces to the type whose members a value has.
func TestNormType(t *testing.T) {
	l := &Language{wrappers: map[string]bool{"Optional": true}, elements: map[string]bool{"list": true}}
	for in, want := range map[string]string{
		"*store.Store":      "store Store",
		"(*Store, error)":   " Store",
		"(s *Store, e err)": " Store",
		"Optional[Foo]":     " Foo",
		": Foo":             "",
		"[]*Conn":           " ",
		"map[string]int":    " ",
		"Foo[]":             " ",
		"List[T]":           " List",
		"'Foo'":             " Foo",
		"Foo | None":        " Foo",
		"ns::Widget &":      "ns Widget",
	} {
		q, n := l.NormType(in)
		if want == "" {
			continue
		}
		if got := q + " " + n; got != want {
			t.Errorf("normType(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"[]*Conn": "*Conn", "map[string]*C": "*C", "[4]T": "T", "Foo[]": "Foo", "list[Foo]": "Foo", "Set[Foo]": ""} {
		if got := l.ElemType(in); got != want {
			t.Errorf("elemType(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzTypeText feeds declared-type text (as a query file captures it from
// any source) to the functions that read it: none may panic, and a name
// they return is an identifier.
func FuzzTypeText(f *testing.F) {
	for _, s := range []string{"*store.Store", "(*X, error)", "(x *X, err error)", "Optional[Foo]", "map[string][]*T", "[4]T", "Foo[]",
		"Array<Foo>", "List[Foo]", ": Foo", "'Foo'", "Foo | None", "ns::W &", "(", ")", "()", "[", "]", "<>", "a[", "map[", "x.", ".", "::", "func(", "func()", "func(a int) *T", "chan<- T", "map[K]V", "struct { a, b int; *x.T }", "interface{ io.Reader; Close() error }", "struct {\n\ta int // c\n\tb string `json:\"b\"`\n}", "struct{", "struct {}"} {
		f.Add(s)
	}
	l := &Language{wrappers: map[string]bool{"Optional": true}, elements: map[string]bool{"List": true, "Array": true}, TypeLiterals: []string{"struct", "interface"}}
	f.Fuzz(func(t *testing.T, s string) {
		_, n := l.NormType(s)
		if n != "" && !IsIdent(n) {
			t.Errorf("normType(%q) named %q, not an identifier", s, n)
		}
		l.ElemType(s)
		_ = KeyType(s)
		fields, _ := l.StructFields(typeText(s))
		for _, fd := range fields {
			if fd.Name != "" && !IsIdent(fd.Name) {
				t.Errorf("structFields(%q) named field %q, not an identifier", s, fd.Name)
			}
		}
		if r := FuncTypeResult(s); r != "" && (!strings.HasPrefix(strings.TrimSpace(s), "func(") || !strings.HasSuffix(strings.TrimSpace(s), r) || r != strings.TrimSpace(r)) {
			t.Errorf("FuncTypeResult(%q) = %q, not the trimmed end of a function type", s, r)
		}
		if parts := TopSplit(s, ','); len(parts) == 0 || len(parts)-1 > strings.Count(s, ",") {
			t.Errorf("TopSplit(%q) = %q: more parts than commas allow", s, parts)
		}
		// Opening's bracket starts the balanced run that ends s; LastTopDot's
		// dot has as many closing brackets after it as opening ones.
		if i := Opening(s); i != -1 && (i < 0 || i >= len(s) || !strings.ContainsRune("([", rune(s[i])) || balance(s[i:]) != 0) {
			t.Errorf("Opening(%q) = %d, not the bracket that opens the end", s, i)
		}
		if i := LastTopDot(s); i != -1 && (i < 0 || i >= len(s) || s[i] != '.' || balance(s[i+1:]) != 0) {
			t.Errorf("LastTopDot(%q) = %d, not a dot outside brackets", s, i)
		}
	})
}

// balance is the round and square brackets s opens less those it closes.
func balance(s string) int {
	return strings.Count(s, "(") + strings.Count(s, "[") - strings.Count(s, ")") - strings.Count(s, "]")
}
