package graph

import "testing"

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
		funcTypeResult(s)
		topSplit(s, ',')
		opening(s)
		lastTopDot(s)
		wordAt(s, "x")
	})
}
