package graph

import (
	"strings"
	"testing"
)

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
		_, n := l.normType(s)
		if n != "" && !isIdent(n) {
			t.Errorf("normType(%q) named %q, not an identifier", s, n)
		}
		l.elemType(s)
		keyType(s)
		fields, _ := l.structFields(typeText(s))
		for _, fd := range fields {
			if fd.Name != "" && !isIdent(fd.Name) {
				t.Errorf("structFields(%q) named field %q, not an identifier", s, fd.Name)
			}
		}
		if r := funcTypeResult(s); r != "" && (!strings.HasPrefix(strings.TrimSpace(s), "func(") || !strings.HasSuffix(strings.TrimSpace(s), r) || r != strings.TrimSpace(r)) {
			t.Errorf("funcTypeResult(%q) = %q, not the trimmed end of a function type", s, r)
		}
		if parts := topSplit(s, ','); len(parts) == 0 || len(parts)-1 > strings.Count(s, ",") {
			t.Errorf("topSplit(%q) = %q: more parts than commas allow", s, parts)
		}
		// opening's bracket starts the balanced run that ends s; lastTopDot's
		// dot has as many closing brackets after it as opening ones.
		if i := opening(s); i != -1 && (i < 0 || i >= len(s) || !strings.ContainsRune("([", rune(s[i])) || balance(s[i:]) != 0) {
			t.Errorf("opening(%q) = %d, not the bracket that opens the end", s, i)
		}
		if i := lastTopDot(s); i != -1 && (i < 0 || i >= len(s) || s[i] != '.' || balance(s[i+1:]) != 0) {
			t.Errorf("lastTopDot(%q) = %d, not a dot outside brackets", s, i)
		}
		wordAt(s, "x")
	})
}

// balance is the round and square brackets s opens less those it closes.
func balance(s string) int {
	return strings.Count(s, "(") + strings.Count(s, "[") - strings.Count(s, ")") - strings.Count(s, "]")
}
