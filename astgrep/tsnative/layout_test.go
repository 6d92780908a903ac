package tsnative

import (
	"reflect"
	"testing"

	sitter "github.com/smacker/go-tree-sitter"
)

// The tree-sitter structs this package declares for its own cgo calls must
// match the runtime's declarations, which go-tree-sitter compiles in: a
// new runtime with another layout would read garbage, not fail to build.
func TestTreeSitterLayout(t *testing.T) {
	theirs := map[string]reflect.Type{
		"TSNode":       fieldType(t, reflect.TypeFor[sitter.Node](), "c"),
		"TSTreeCursor": fieldType(t, reflect.TypeFor[sitter.TreeCursor](), "c").Elem(),
	}
	for name, ours := range cLayout() {
		them := theirs[name]
		if ours.Size() != them.Size() || ours.Align() != them.Align() || ours.NumField() != them.NumField() {
			t.Fatalf("%s: ours %d bytes / align %d / %d fields, the runtime's %d / %d / %d",
				name, ours.Size(), ours.Align(), ours.NumField(), them.Size(), them.Align(), them.NumField())
		}
		for i := range ours.NumField() {
			a, b := ours.Field(i), them.Field(i)
			if a.Name != b.Name || a.Offset != b.Offset || a.Type.Size() != b.Type.Size() {
				t.Errorf("%s field %d: ours %s at %d (%d bytes), the runtime's %s at %d (%d bytes)",
					name, i, a.Name, a.Offset, a.Type.Size(), b.Name, b.Offset, b.Type.Size())
			}
		}
	}
}

func fieldType(t *testing.T, s reflect.Type, name string) reflect.Type {
	f, ok := s.FieldByName(name)
	if !ok {
		t.Fatalf("%s has no field %s: go-tree-sitter changed", s, name)
	}
	return f.Type
}
