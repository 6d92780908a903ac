package record

import (
	"errors"
	"fmt"
)

// Decode reads a record AppendBinary wrote, decoded and checked
// (every index inside its table). Damaged bytes are an error, never a
// panic. Its strings are its own, not interned as extraction's are:
// interning them cost a warm start of GOROOT 0.8 CPU-s for 9 MiB of live
// heap.
func Decode(b []byte) (*Record, error) {
	r := &Record{}
	if err := r.UnmarshalBinary(b); err != nil {
		return nil, err
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// check is what Validate checks beyond the fields' tags.
func (r *Record) check() error {
	switch {
	case len(r.Strs) == 0 || r.Strs[0] != "":
		return errors.New("the string table does not start with \"\"")
	case r.Errors < 0 || r.Errors > 0 && len(r.ErrorAt) == 0:
		return errors.New("syntax errors without their lines")
	case len(r.DefOrder) != len(r.Defs) || len(r.RefOrder) != len(r.Refs):
		return errors.New("an order of another length than its table")
	}
	if i := firstOver(r.Defs, func(d *Def) uint8 { return d.How }, len(HowText)); i >= 0 {
		return fmt.Errorf("definition %d typed in an unknown way", i)
	}
	if i := firstOver(r.Refs, func(f *Ref) uint8 { return f.Kind }, len(RefKindNames)); i >= 0 {
		return fmt.Errorf("reference %d of an unknown kind", i)
	}
	if i := firstOver(r.Locals, func(l *Local) uint8 { return l.How }, len(HowText)); i >= 0 {
		return fmt.Errorf("local %d typed in an unknown way", i)
	}
	if i := firstOver(r.Fields, func(f *Field) uint8 { return f.How }, len(HowText)); i >= 0 {
		return fmt.Errorf("field %d typed in an unknown way", i)
	}
	for i, n := range r.Types {
		if n.Form >= numForms || n.Part >= numParts || n.Last <= int32(i) || int(n.Last) > len(r.Types) {
			return fmt.Errorf("type node %d out of its table", i)
		}
	}
	for i, e := range r.Exprs {
		if e.First < 0 || int(e.First)+int(e.N) > len(r.Steps) {
			return fmt.Errorf("expression %d out of the steps", i)
		}
	}
	for i, s := range r.Steps {
		if s.Op >= numOps {
			return fmt.Errorf("step %d of an unknown kind", i)
		}
	}
	return nil
}

// firstOver is the index of the first row whose code (how it is typed, its
// kind) is n or more, a value no name table holds; -1 when there is none.
func firstOver[T any](rows []T, code func(*T) uint8, n int) int {
	for i := range rows {
		if int(code(&rows[i])) >= n {
			return i
		}
	}
	return -1
}
