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
	type Node struct{ Kids []Node }
	type Empty struct{}
	type Idx int32
	// A root type per refusal, named for it: the error names its field.
	type Map struct{ M map[string]int }
	type Pointer struct{ P *Inner }
	type Interface struct{ I any }
	type SliceOfEmpty struct{ E []Empty }
	type EmbeddedInt struct{ Idx }
	type EmbeddedTwice struct {
		Inner
		X string
	}
	type EmbeddedTagged struct {
		Inner `codec:"delta"`
	}
	type UnknownTag struct {
		X int32 `codec:"indx=Y"`
	}
	type PathToNothing struct {
		X int32 `codec:"index=Nope"`
	}
	type PathToScalar struct {
		X int32 `codec:"index=Y"`
		Y int32
	}
	type IndexOnString struct {
		S string `codec:"index=S"`
	}
	type DeltaOnByte struct {
		B uint8 `codec:"delta"`
	}
	root := func(v any) Config { return Config{Roots: []any{v}} }
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"map", root(Map{}), "Map.M"},
		{"pointer", root(Pointer{}), "Pointer.P"},
		{"interface", root(Interface{}), "Interface.I"},
		{"recursive", root(Node{}), "contains itself"},
		{"slice of empty", root(SliceOfEmpty{}), "no bytes"},
		{"embedded non-struct", root(EmbeddedInt{}), "EmbeddedInt.Idx: an embedded int32"},
		{"embedded name twice", root(EmbeddedTwice{}), "EmbeddedTwice.X: Inner has a field of that name too"},
		{"embedded tagged", root(EmbeddedTagged{}), "takes no tag"},
		{"unknown tag", root(UnknownTag{}), "unknown part"},
		{"path to nothing", root(PathToNothing{}), "no encoded field Nope"},
		{"path to a scalar", root(PathToScalar{}), "not a slice or string"},
		{"index on a string", root(IndexOnString{}), "only integers"},
		{"delta on a byte", root(DeltaOnByte{}), "delta is for"},
		{"table of a non-integer", Config{Roots: []any{Inner{}}, Tables: []Table{{Type: "", Tag: "index=X"}}}, "not a named integer"},
		{"root not a struct", root(Idx(0)), "not a named struct"},
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
