package toolschema

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// A Go nil slice or map marshals as null, while the output schema inferred
// from its type says array or object (REG-12): a client that validates
// structuredContent, as the official SDKs do, then throws the whole result
// away. Before a result is published, every nil slice and map that JSON
// would write — a field without omitempty, an element of a list or map —
// becomes an empty one. A plan per result type says where to look, so a
// type with nothing that can be null costs one map look-up.

// nullFiller fills the nils of one type in an addressable value.
type nullFiller func(v reflect.Value)

var fillers sync.Map // reflect.Type → nullFiller (nil: nothing to fill)

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// fillerFor returns the filler of t, nil when no value of t can hold a
// null that JSON writes.
func fillerFor(t reflect.Type) nullFiller {
	if f, ok := fillers.Load(t); ok {
		return f.(nullFiller)
	}
	b := &fillBuilder{cells: map[reflect.Type]*nullFiller{}}
	f := b.build(t)
	fillers.Store(t, f)
	return f
}

type fillBuilder struct {
	// cells holds the types being built, so a recursive type (a tree of
	// nodes) refers to its own filler through the cell.
	cells map[reflect.Type]*nullFiller
}

func custom(t reflect.Type) bool {
	return t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) ||
		t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler)
}

// nullable says whether JSON writes a nil value of t as null where the
// schema wants a list or an object.
func nullable(t reflect.Type) bool {
	return (t.Kind() == reflect.Slice || t.Kind() == reflect.Map) && !custom(t)
}

// empty makes v, a nil slice or map, empty.
func empty(v reflect.Value) {
	if v.Kind() == reflect.Slice {
		v.Set(reflect.MakeSlice(v.Type(), 0, 0))
	} else {
		v.Set(reflect.MakeMap(v.Type()))
	}
}

func (b *fillBuilder) build(t reflect.Type) nullFiller {
	if f, ok := fillers.Load(t); ok {
		return f.(nullFiller)
	}
	if cell, ok := b.cells[t]; ok {
		return func(v reflect.Value) {
			if *cell != nil {
				(*cell)(v)
			}
		}
	}
	if custom(t) {
		return nil
	}
	cell := new(nullFiller)
	b.cells[t] = cell
	defer delete(b.cells, t)
	*cell = b.make(t)
	return *cell
}

func (b *fillBuilder) make(t reflect.Type) nullFiller {
	switch t.Kind() {
	case reflect.Pointer:
		inner := b.build(t.Elem())
		if inner == nil {
			return nil
		}
		return func(v reflect.Value) {
			if !v.IsNil() {
				inner(v.Elem())
			}
		}
	case reflect.Slice, reflect.Array:
		fill := nullable(t.Elem())
		inner := b.build(t.Elem())
		if !fill && inner == nil {
			return nil
		}
		return func(v reflect.Value) {
			for i := range v.Len() {
				e := v.Index(i)
				if fill && e.IsNil() {
					empty(e)
				}
				if inner != nil && e.CanAddr() {
					inner(e)
				}
			}
		}
	case reflect.Map:
		fill := nullable(t.Elem())
		inner := b.build(t.Elem())
		if !fill && inner == nil {
			return nil
		}
		return func(v reflect.Value) {
			iter := v.MapRange()
			for iter.Next() {
				e := reflect.New(t.Elem()).Elem()
				e.Set(iter.Value())
				if fill && e.IsNil() {
					empty(e)
				}
				if inner != nil {
					inner(e)
				}
				v.SetMapIndex(iter.Key(), e)
			}
		}
	case reflect.Interface:
		return func(v reflect.Value) {
			if !v.IsNil() && v.Elem().Kind() == reflect.Pointer {
				if f := fillerFor(v.Elem().Type()); f != nil {
					f(v.Elem())
				}
			}
		}
	case reflect.Struct:
		type field struct {
			index []int
			fill  bool // nil → empty
			inner nullFiller
		}
		var fields []field
		for _, sf := range reflect.VisibleFields(t) {
			if !sf.IsExported() && !sf.Anonymous {
				continue
			}
			tag := sf.Tag.Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			if name == "-" && opts == "" {
				continue
			}
			if sf.Anonymous && name == "" && (sf.Type.Kind() == reflect.Struct ||
				sf.Type.Kind() == reflect.Pointer && sf.Type.Elem().Kind() == reflect.Struct) {
				continue // promoted: VisibleFields lists its fields
			}
			if !sf.IsExported() {
				continue
			}
			omit := hasOpt(opts, "omitempty") || hasOpt(opts, "omitzero")
			f := field{index: sf.Index, fill: nullable(sf.Type) && !omit, inner: b.build(sf.Type)}
			if f.fill || f.inner != nil {
				fields = append(fields, f)
			}
		}
		if len(fields) == 0 {
			return nil
		}
		return func(v reflect.Value) {
			for _, f := range fields {
				fv, err := v.FieldByIndexErr(f.index)
				if err != nil {
					continue // through a nil embedded pointer: JSON writes none of it
				}
				if f.fill && fv.IsNil() {
					empty(fv)
				}
				if f.inner != nil {
					f.inner(fv)
				}
			}
		}
	}
	return nil
}

func hasOpt(opts, want string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

// WithoutNulls returns r's value with every nil that JSON would write as
// null where the schema says list or object made empty. A pointer result
// is filled in place; a struct result is copied first. r is not nil.
func WithoutNulls(r any) any {
	v := reflect.ValueOf(r)
	f := fillerFor(v.Type())
	if f == nil {
		return r
	}
	if v.Kind() == reflect.Pointer {
		f(v)
		return r
	}
	c := reflect.New(v.Type()).Elem()
	c.Set(v)
	f(c)
	return c.Interface()
}
