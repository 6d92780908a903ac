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
	for i := range r.Defs {
		if int(r.Defs[i].How) >= len(HowText) {
			return fmt.Errorf("definition %d typed in an unknown way", i)
		}
	}
	for i := range r.Refs {
		if int(r.Refs[i].Kind) >= len(RefKindNames) {
			return fmt.Errorf("reference %d of an unknown kind", i)
		}
	}
	for i := range r.Locals {
		if int(r.Locals[i].How) >= len(HowText) {
			return fmt.Errorf("local %d typed in an unknown way", i)
		}
	}
	for i := range r.Fields {
		if int(r.Fields[i].How) >= len(HowText) {
			return fmt.Errorf("field %d typed in an unknown way", i)
		}
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
