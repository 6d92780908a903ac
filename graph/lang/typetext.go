package lang

import "strings"

// Declared types as written. These read the text a query captured for a
// type or a receiver; they go when types are captured as structure
// (issue 28, step 5), and until then both extraction (doc comments) and
// the resolver use them.

// NormType reduces a declared type to the qualifier and name of the type
// whose members a value of it has: *pkg.T is (pkg, T), Optional[Foo] is
// Foo for a language listing Optional among its type_wrappers. A slice, a
// map, a function type or a union names no such type: ("", "").
func (l *Language) NormType(text string) (qual, name string) {
	s := text
	for range 8 {
		old := s
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
			// A result list: (*X, error), (x *X, err error).
			first := TopSplit(s[1:len(s)-1], ',')[0]
			if fs := strings.Fields(first); len(fs) > 1 && IsIdent(fs[0]) {
				first = strings.Join(fs[1:], " ")
			}
			s = first
			continue
		}
		for _, p := range []string{"*", "&mut ", "&", "mut ", "const ", "struct ", "class ", "union ", "enum ", "typename ", "readonly ", "dyn ", "impl ", "volatile "} {
			s = strings.TrimPrefix(s, p)
		}
		for _, suf := range []string{"*", "&", "?", "| None", "| null", "| undefined", " const"} {
			s = strings.TrimSpace(strings.TrimSuffix(s, suf))
		}
		if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
			s = s[1 : len(s)-1]
		}
		if strings.HasSuffix(s, "[]") {
			return "", ""
		}
		if i := strings.IndexAny(s, "[<"); i > 0 && (s[len(s)-1] == ']' || s[len(s)-1] == '>') {
			base := s[:i]
			if l.wrappers[LastSegment(base)] {
				s = TopSplit(s[i+1:len(s)-1], ',')[0]
			} else {
				s = base
			}
		}
		if s == old {
			break
		}
	}
	if s == "" || strings.ContainsAny(s, "[]{}()<> ,|\"'=") {
		return "", ""
	}
	qual, name = "", s
	if i := strings.LastIndex(s, "::"); i >= 0 {
		qual, name = s[:i], s[i+2:]
	} else if i := strings.LastIndex(s, "."); i >= 0 {
		qual, name = s[:i], s[i+1:]
	}
	if !IsIdent(name) {
		return "", ""
	}
	return qual, name
}

// ElemType is the element type of a collection type as written: []E,
// [N]E and map[K]V (V), E[], and Name[E] / Name<E> for a name listed in
// the language's element_types.
func (l *Language) ElemType(text string) string {
	s, el, isChan := collection(text)
	if isChan {
		return el // what a receive gives
	}
	switch {
	case strings.HasPrefix(s, "map["):
		if end := Closing(s, 3); end > 0 {
			return s[end+1:]
		}
	case strings.HasPrefix(s, "["):
		if end := Closing(s, 0); end > 0 {
			return s[end+1:]
		}
	case strings.HasSuffix(s, "[]"):
		return strings.TrimSuffix(s, "[]")
	}
	if i := strings.IndexAny(s, "[<"); i > 0 && (s[len(s)-1] == ']' || s[len(s)-1] == '>') && l.elements[LastSegment(s[:i])] {
		return TopSplit(s[i+1:len(s)-1], ',')[0]
	}
	return ""
}

// StructField is one field of a struct type written in place; Name is ""
// for an embedded type (or an interface's embedded interface).
type StructField struct{ Name, Type string }

// StructFields reads the fields of a struct or interface type written in
// place, as the language writes it ("struct { a, b int; *bytes.Buffer }",
// "interface { io.Reader; Close() error }": a method written there is no
// definition, and reads as a type that resolves to none); ok is false for
// any other text.
func (l *Language) StructFields(text string) ([]StructField, bool) {
	s := strings.TrimSpace(text)
	for strings.HasPrefix(s, "*") {
		s = strings.TrimSpace(s[1:])
	}
	kw := ""
	for _, k := range l.TypeLiterals {
		if strings.HasPrefix(s, k) {
			kw = k
		}
	}
	if kw == "" {
		return nil, false
	}
	s = strings.TrimSpace(s[len(kw):])
	if !strings.HasPrefix(s, "{") || Closing(s, 0) != len(s)-1 {
		return nil, false
	}
	var out []StructField
	for _, fd := range TopSplit(s[1:len(s)-1], ';') {
		if i := strings.IndexAny(fd, "`\""); i >= 0 { // a tag
			fd = fd[:i]
		}
		fd = strings.TrimSpace(fd)
		if fd == "" {
			continue
		}
		// names, then the type: "a, b int"; one word alone is embedded.
		rest, names := fd, []string(nil)
		for {
			j := strings.IndexAny(rest, " \t,")
			if j <= 0 || !IsIdent(rest[:j]) {
				break
			}
			names = append(names, rest[:j])
			rest = strings.TrimSpace(rest[j:])
			if !strings.HasPrefix(rest, ",") {
				break
			}
			rest = strings.TrimSpace(rest[1:])
		}
		if len(names) == 0 || rest == "" {
			out = append(out, StructField{Type: fd})
			continue
		}
		for _, n := range names {
			out = append(out, StructField{Name: n, Type: rest})
		}
	}
	return out, true
}

// collection is a collection type's text without pointers, and for a
// channel type its element.
func collection(text string) (s, chanElem string, isChan bool) {
	s = strings.TrimSpace(text)
	for strings.HasPrefix(s, "*") {
		s = s[1:]
	}
	for _, c := range []string{"<-chan ", "chan<- ", "chan "} {
		if strings.HasPrefix(s, c) {
			return s, strings.TrimSpace(s[len(c):]), true
		}
	}
	return s, "", false
}

// KeyType is what a one-variable range over a value of the collection
// type text gives when that has methods: map[K]V's K, a channel's element
// ("" for a slice's or string's int index).
func KeyType(text string) string {
	s, el, isChan := collection(text)
	if isChan {
		return el
	}
	if strings.HasPrefix(s, "map[") {
		if end := Closing(s, 3); end > 0 {
			return strings.TrimSpace(s[4:end])
		}
	}
	return ""
}

// Closing returns the index of the bracket Closing the one at open.
func Closing(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '[', '(', '<', '{':
			depth++
		case ']', ')', '>', '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// TopSplit splits s at sep outside brackets.
func TopSplit(s string, sep byte) []string {
	var out []string
	depth, from := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '(', '<', '{':
			depth++
		case ']', ')', '>', '}':
			depth--
		case sep:
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[from:i]))
				from = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[from:]))
}

func LastSegment(s string) string {
	if i := strings.LastIndexAny(s, ".:"); i >= 0 {
		return s[i+1:]
	}
	return s
}

func IsIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// FuncTypeResult is the result of a function type as written, "func(a
// int) *T" → "*T", or "" when it is none or has none.
func FuncTypeResult(text string) string {
	s := strings.TrimSpace(text)
	if !strings.HasPrefix(s, "func(") {
		return ""
	}
	end := Closing(s, 4)
	if end < 0 {
		return ""
	}
	return strings.TrimSpace(s[end+1:])
}

// Opening returns the index of the bracket Opening the one that ends s.
func Opening(s string) int {
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')', ']':
			depth++
		case '(', '[':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// LastTopDot is the index of the last "." outside brackets, or -1.
func LastTopDot(s string) int {
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')', ']':
			depth++
		case '(', '[':
			depth--
		case '.':
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// ResultAt is result n of a Go-style result list as written: "(*X,
// error)", "(ctx Context, cancel CancelFunc)", "(a, b int)" (a is an
// int).
func ResultAt(list string, n int) (string, bool) {
	s := strings.TrimSpace(list)
	if !strings.HasPrefix(s, "(") || !strings.HasSuffix(s, ")") {
		return "", false
	}
	parts := TopSplit(s[1:len(s)-1], ',')
	if n >= len(parts) {
		return "", false
	}
	named := false
	for _, p := range parts {
		if fs := strings.Fields(p); len(fs) > 1 && IsIdent(fs[0]) && !strings.HasPrefix(p, "func") && !strings.HasPrefix(p, "chan") && !strings.HasPrefix(p, "map") && !strings.HasPrefix(p, "interface") && !strings.HasPrefix(p, "struct") {
			named = true
		}
	}
	if !named {
		return parts[n], parts[n] != ""
	}
	// Named results: a name alone takes the type of the next one written.
	for i := n; i < len(parts); i++ {
		if fs := strings.Fields(parts[i]); len(fs) > 1 {
			return strings.TrimSpace(strings.TrimPrefix(parts[i], fs[0])), true
		}
	}
	return "", false
}
