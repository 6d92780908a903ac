package wire

import (
	"encoding/binary"
	"math"
	"testing"
)

// The short and the full integer reads agree, the short one declines what
// it cannot read (leaving the input), and a value that does not fit fails
// with its type named.
func TestIntegers(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, -64, 64, -65, math.MaxInt16, math.MinInt16, 1 << 40} {
		b := binary.AppendVarint(nil, v)
		d := NewDecoder(b)
		var x int64
		small := SmallInt(&d, &x)
		if small != (len(b) == 1) {
			t.Errorf("%d: SmallInt = %v for %d bytes", v, small, len(b))
		}
		if !small {
			Int(&d, &x)
		}
		if err := d.Finish(); err != nil || x != v {
			t.Errorf("%d: read %d, %v", v, x, err)
		}
	}

	d := NewDecoder(binary.AppendVarint(nil, math.MaxInt16+1))
	var x int16
	_ = SmallInt(&d, &x) || Int(&d, &x)
	if err := d.Finish(); err == nil || err.Error() != "codec: 32768 out of range for int16 at byte 3" {
		t.Errorf("Finish = %v", err)
	}

	// A delta that leaves the type fails on either path.
	for _, delta := range []int64{1, 1000} {
		d := NewDecoder(binary.AppendVarint(nil, delta))
		var u uint16
		_ = SmallUintDelta(&d, &u, math.MaxUint16) || UintDelta(&d, &u, math.MaxUint16)
		if err := d.Finish(); err == nil {
			t.Errorf("delta %d past MaxUint16: no error (read %d)", delta, u)
		}
	}
}

// After a failure every read gives zero and the first failure is the one
// reported.
func TestFailureSticks(t *testing.T) {
	d := NewDecoder([]byte{2, 'a'})
	if s := d.Str(); s != "" {
		t.Errorf("Str = %q from a short input", s)
	}
	if d.Byte() != 0 || d.Bool() || d.Count(1) != 0 || d.Bytes() != nil {
		t.Error("a read after the failure gave something")
	}
	if err := d.Finish(); err == nil || err.Error() != "codec: a count past the end at byte 1" {
		t.Errorf("Finish = %v", err)
	}
	d = NewDecoder([]byte{0, 0})
	d.Byte()
	if err := d.Finish(); err == nil || err.Error() != "codec: trailing bytes at byte 1" {
		t.Errorf("Finish = %v", err)
	}
}

// Validate's error names the field with the indexes of the slices it is
// in, the value and the table's length.
func TestInvalid(t *testing.T) {
	err := Invalid("Record.Defs[%d].Spans[%d].End", "an offset within .Data", 9, 3, 2, 0)
	if want := "Record.Defs[2].Spans[0].End: 9 is not an offset within .Data (length 3)"; err == nil || err.Error() != want {
		t.Errorf("Invalid = %v, want %q", err, want)
	}
}
