package toolschema

import (
	"encoding/json"
	"reflect"
	"testing"
)

type tree struct {
	Name     string  `json:"name"`
	Children []*tree `json:"children"`
	Next     *tree   `json:"next,omitempty"`
}

// A recursive type fills at every depth through its own filler.
func TestFillerOfRecursiveType(t *testing.T) {
	v := &tree{Name: "a", Children: []*tree{{Name: "b", Next: &tree{Name: "c"}}}}
	WithoutNulls(v)
	b, _ := json.Marshal(v)
	want := `{"name":"a","children":[{"name":"b","children":[],"next":{"name":"c","children":[]}}]}`
	if string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
	type flat struct {
		N int    `json:"n"`
		S string `json:"s"`
	}
	if f := fillerFor(reflect.TypeFor[flat]()); f != nil {
		t.Errorf("a type with nothing that can be null has a filler")
	}
}
