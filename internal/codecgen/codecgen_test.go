package codecgen

import (
	"regexp"
	"strings"
	"testing"
)

func hashOf(t *testing.T, cfg Config) string {
	t.Helper()
	if cfg.Package == "" {
		cfg.Package = "p"
	}
	src, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`const SchemaHash = "([0-9a-f]{64})"`).FindSubmatch(src)
	if m == nil {
		t.Fatalf("no SchemaHash in\n%s", src)
	}
	return string(m[1])
}

// Each type below is named T, as one record type would be before and
// after an edit.
func base() any {
	type T struct {
		A int32
		B string
	}
	return T{}
}

// SchemaHash is the same for the same types and changes with any field,
// type, order or tag.
func TestSchemaHash(t *testing.T) {
	h := hashOf(t, Config{Roots: []any{base()}})
	if again := hashOf(t, Config{Roots: []any{base()}}); again != h {
		t.Fatal("SchemaHash differs between two runs over the same types")
	}
	type Idx int32
	changed := map[string]any{
		"reordered": func() any {
			type T struct {
				B string
				A int32
			}
			return T{}
		}(),
		"renamed": func() any {
			type T struct {
				A2 int32
				B  string
			}
			return T{}
		}(),
		"retyped": func() any {
			type T struct {
				A int64
				B string
			}
			return T{}
		}(),
		"named type": func() any {
			type T struct {
				A Idx
				B string
			}
			return T{}
		}(),
		"tagged": func() any {
			type T struct {
				A int32 `codec:"delta"`
				B string
			}
			return T{}
		}(),
		"added": func() any {
			type T struct {
				A int32
				B string
				C bool
			}
			return T{}
		}(),
	}
	seen := map[string]string{h: "base"}
	for name, v := range changed {
		got := hashOf(t, Config{Roots: []any{v}})
		if prev, ok := seen[got]; ok {
			t.Errorf("%s: SchemaHash equals %s's", name, prev)
		}
		seen[got] = name
	}
}

// An embedded struct is its fields written in its place: the same
// description, code and so SchemaHash as the struct that spells them out.
func TestEmbeddedIsSpliced(t *testing.T) {
	type AB struct {
		A int32
		B string
	}
	spliced := func() any {
		type T struct{ AB }
		return T{}
	}()
	if got, want := hashOf(t, Config{Roots: []any{spliced}}), hashOf(t, Config{Roots: []any{base()}}); got != want {
		t.Errorf("SchemaHash of T{AB} = %s, of T{A, B} = %s", got, want)
	}
}

// What the generator cannot encode safely is refused at generation, with
// the field named.
func TestGenerateRefuses(t *testing.T) {
	type Inner struct{ X int32 }
	type Node struct {
		Kids []Node
	}
	type Empty struct{}
	type Idx int32
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"map", Config{Roots: []any{func() any {
			type T struct{ M map[string]int }
			return T{}
		}()}}, "T.M"},
		{"pointer", Config{Roots: []any{func() any {
			type T struct{ P *Inner }
			return T{}
		}()}}, "T.P"},
		{"interface", Config{Roots: []any{func() any {
			type T struct{ I any }
			return T{}
		}()}}, "T.I"},
		{"recursive", Config{Roots: []any{Node{}}}, "contains itself"},
		{"slice of empty", Config{Roots: []any{func() any {
			type T struct{ E []Empty }
			return T{}
		}()}}, "no bytes"},
		{"embedded non-struct", Config{Roots: []any{func() any {
			type T struct{ Idx }
			return T{}
		}()}}, "T.Idx: an embedded int32"},
		{"embedded name twice", Config{Roots: []any{func() any {
			type T struct {
				Inner
				X string
			}
			return T{}
		}()}}, "T.X: Inner has a field of that name too"},
		{"embedded tagged", Config{Roots: []any{func() any {
			type T struct {
				Inner `codec:"delta"`
			}
			return T{}
		}()}}, "takes no tag"},
		{"unknown tag", Config{Roots: []any{func() any {
			type T struct {
				X int32 `codec:"indx=Y"`
			}
			return T{}
		}()}}, "unknown part"},
		{"path to nothing", Config{Roots: []any{func() any {
			type T struct {
				X int32 `codec:"index=Nope"`
			}
			return T{}
		}()}}, "no encoded field Nope"},
		{"path to a scalar", Config{Roots: []any{func() any {
			type T struct {
				X int32 `codec:"index=Y"`
				Y int32
			}
			return T{}
		}()}}, "not a slice or string"},
		{"index on a string", Config{Roots: []any{func() any {
			type T struct {
				S string `codec:"index=S"`
			}
			return T{}
		}()}}, "only integers"},
		{"delta on a byte", Config{Roots: []any{func() any {
			type T struct {
				B uint8 `codec:"delta"`
			}
			return T{}
		}()}}, "delta is for"},
		{"table of a non-integer", Config{Roots: []any{Inner{}}, Tables: []Table{{Type: "", Tag: "index=X"}}}, "not a named integer"},
		{"root not a struct", Config{Roots: []any{Idx(0)}}, "not a named struct"},
		{"check of no root", Config{Roots: []any{Inner{}}, Checks: map[string]string{"Other": "check"}}, "not a root"},
	}
	for _, c := range cases {
		c.cfg.Package = "p"
		_, err := Generate(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Generate = %v, want an error containing %q", c.name, err, c.want)
		}
	}
}
