// Package wire is the run-time half of internal/codecgen: the one decoder
// every generated codec reads with, the appends its encoders share, the
// loops over a slice's elements, the decoding of a whole value and the
// error of a failed Validate check, so a generated file holds only what
// its types make different.
//
// It is for generated code; nothing else should need it. The encoding is
// codecgen's (see its package doc); this package knows no types beyond
// bytes, integers, floats and strings.
package wire

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
)

// A Decoder reads one encoding, consuming its input. After the first
// failure its input is empty, so every read gives zero and every count 0,
// and decoding ends without panicking; Finish reports the failure.
type Decoder struct {
	b    []byte
	n    int    // the whole input's length, for positions in errors
	what string // the first failure, "" while there is none
	at   int    // where it was
}

// NewDecoder returns a Decoder of data.
func NewDecoder(data []byte) Decoder { return Decoder{b: data, n: len(data)} }

// Fail records what went wrong at the current position (the first
// failure only) and empties the input. It makes no call, so the reads
// that use it stay small enough to be inlined.
func (d *Decoder) Fail(what string) {
	if d.what == "" {
		d.what, d.at = what, d.n-len(d.b)
	}
	d.b = nil
}

// Finish is the decoding's outcome: its first failure, or a failure when
// bytes are left over (an encoding is read whole).
func (d *Decoder) Finish() error {
	if d.what == "" && len(d.b) != 0 {
		d.Fail("trailing bytes")
	}
	if d.what != "" {
		return fmt.Errorf("codec: %s at byte %d", d.what, d.at)
	}
	return nil
}

// Uvarint reads an unsigned varint.
func (d *Decoder) Uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.Fail("a bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// Unsigned is an unsigned integer wider than a byte.
type Unsigned interface {
	~uint16 | ~uint32 | ~uint64 | ~uint
}

// Signed is a signed integer wider than a byte.
type Signed interface {
	~int16 | ~int32 | ~int64 | ~int
}

// Integers are read in two steps, written in one line of generated code,
//
//	_ = wire.SmallInt(d, &v.X) || wire.Int(d, &v.X)
//
// because most are one byte (small numbers and deltas) and a call in a
// function keeps it from being inlined: SmallInt, which makes no call and
// is inlined, reads a one-byte varint; Int, called when it cannot, reads
// any. A one-byte varint fits every type here, so only a delta needs a
// range check on the short path.

// SmallUint reads a one-byte varint into x and reports whether it could;
// otherwise it leaves the input as it was.
func SmallUint[T Unsigned](d *Decoder, x *T) bool {
	if b := d.b; len(b) > 0 && b[0] < 0x80 {
		*x, d.b = T(b[0]), b[1:]
		return true
	}
	return false
}

// Uint reads an unsigned varint into x, failing when it does not fit. It
// returns true, to follow SmallUint in one expression.
func Uint[T Unsigned](d *Decoder, x *T) bool {
	u := d.Uvarint()
	*x = T(u)
	if uint64(*x) != u {
		d.outOfRange(u, x)
	}
	return true
}

// SmallUintDelta is SmallUint for a delta-coded value: the signed
// difference from prev.
func SmallUintDelta[T Unsigned](d *Decoder, x *T, prev T) bool {
	if b := d.b; len(b) > 0 && b[0] < 0x80 {
		u := uint64(prev) + uint64(int64(b[0]>>1)^-int64(b[0]&1))
		if uint64(T(u)) == u {
			*x, d.b = T(u), b[1:]
			return true
		}
	}
	return false
}

// UintDelta is Uint for a delta-coded value.
func UintDelta[T Unsigned](d *Decoder, x *T, prev T) bool {
	u := uint64(prev) + uint64(zigzag(d.Uvarint()))
	*x = T(u)
	if uint64(*x) != u {
		d.outOfRange(u, x)
	}
	return true
}

// SmallInt reads a one-byte zigzagged varint into x and reports whether
// it could; otherwise it leaves the input as it was.
func SmallInt[T Signed](d *Decoder, x *T) bool {
	if b := d.b; len(b) > 0 && b[0] < 0x80 {
		*x, d.b = T(int64(b[0]>>1)^-int64(b[0]&1)), b[1:]
		return true
	}
	return false
}

// Int reads a zigzagged varint into x, failing when it does not fit. It
// returns true, to follow SmallInt in one expression.
func Int[T Signed](d *Decoder, x *T) bool {
	s := zigzag(d.Uvarint())
	*x = T(s)
	if int64(*x) != s {
		d.outOfRange(s, x)
	}
	return true
}

// SmallIntDelta is SmallInt for a delta-coded value: the difference from
// prev.
func SmallIntDelta[T Signed](d *Decoder, x *T, prev T) bool {
	if b := d.b; len(b) > 0 && b[0] < 0x80 {
		s := int64(prev) + (int64(b[0]>>1) ^ -int64(b[0]&1))
		if int64(T(s)) == s {
			*x, d.b = T(s), b[1:]
			return true
		}
	}
	return false
}

// IntDelta is Int for a delta-coded value.
func IntDelta[T Signed](d *Decoder, x *T, prev T) bool {
	s := int64(uint64(prev) + uint64(zigzag(d.Uvarint())))
	*x = T(s)
	if int64(*x) != s {
		d.outOfRange(s, x)
	}
	return true
}

func zigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// outOfRange fails; x points to the field, whose type the message names.
func (d *Decoder) outOfRange(v, x any) {
	d.Fail(fmt.Sprintf("%v out of range for %s", v, strings.TrimPrefix(fmt.Sprintf("%T", x), "*")))
}

// Byte reads one byte.
func (d *Decoder) Byte() byte {
	if len(d.b) > 0 {
		v := d.b[0]
		d.b = d.b[1:]
		return v
	}
	d.Fail("short input")
	return 0
}

// Bool reads a byte that must be 0 or 1.
func (d *Decoder) Bool() bool {
	if len(d.b) > 0 && d.b[0] <= 1 {
		v := d.b[0] == 1
		d.b = d.b[1:]
		return v
	}
	d.Fail("a bad bool")
	return false
}

// Count reads a length and refuses one the bytes left cannot hold at min
// bytes an element: what bounds the allocations by the input.
func (d *Decoder) Count(min int) int {
	n := d.Uvarint()
	if n > uint64(len(d.b)/min) {
		d.Fail("a count past the end")
		return 0
	}
	return int(n)
}

func (d *Decoder) take(n int) []byte {
	if n > len(d.b) {
		d.Fail("short input")
		return nil
	}
	s := d.b[:n:n]
	d.b = d.b[n:]
	return s
}

// Str reads a length-prefixed string.
func (d *Decoder) Str() string { return string(d.take(d.Count(1))) }

// Bytes reads a length-prefixed byte slice, nil when empty; it does not
// share the input's memory.
func (d *Decoder) Bytes() []byte {
	n := d.Count(1)
	if n == 0 {
		return nil
	}
	return append([]byte(nil), d.take(n)...)
}

// Array fills dst, a byte array's slice, from as many bytes.
func (d *Decoder) Array(dst []byte) { copy(dst, d.take(len(dst))) }

// Float32 reads a float32's IEEE bits, little endian.
func (d *Decoder) Float32() float32 {
	if s := d.take(4); s != nil {
		return math.Float32frombits(binary.LittleEndian.Uint32(s))
	}
	return 0
}

// Float64 reads a float64's IEEE bits, little endian.
func (d *Decoder) Float64() float64 {
	if s := d.take(8); s != nil {
		return math.Float64frombits(binary.LittleEndian.Uint64(s))
	}
	return 0
}

// AppendBool appends a bool as one byte.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// AppendStr appends a string or byte slice, length first.
func AppendStr[S ~string | ~[]byte](b []byte, s S) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// AppendFloat32 appends a float32's IEEE bits, little endian.
func AppendFloat32(b []byte, v float32) []byte {
	return binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
}

// AppendFloat64 appends a float64's IEEE bits, little endian.
func AppendFloat64(b []byte, v float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
}

// A slice is written as its length and its elements. A slice of structs
// is appended and read by the functions below, given the struct's
// generated Append or Decode function for each element; a delta-coded
// one's is also given the element before (the first, a zero one). A
// slice of integers or strings is appended the same way, with the
// element functions here, and read by its own loop, which inlines the
// short read. Written once here, a slice's loop is in no generated file.

// AppendSlice appends s, each element by elem.
func AppendSlice[T any](b []byte, s []T, elem func([]byte, *T) []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	for i := range s {
		b = elem(b, &s[i])
	}
	return b
}

// AppendDeltaSlice appends s, each element by elem given the one before.
func AppendDeltaSlice[T any](b []byte, s []T, elem func(b []byte, v, prev *T) []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	var zero T
	prev := &zero
	for i := range s {
		b = elem(b, &s[i], prev)
		prev = &s[i]
	}
	return b
}

// AppendInt appends a signed integer, zigzagged.
func AppendInt[T Signed](b []byte, v *T) []byte { return binary.AppendVarint(b, int64(*v)) }

// AppendUint appends an unsigned integer.
func AppendUint[T Unsigned](b []byte, v *T) []byte { return binary.AppendUvarint(b, uint64(*v)) }

// AppendIntDelta appends a signed integer as its difference from prev.
func AppendIntDelta[T Signed](b []byte, v, prev *T) []byte {
	return binary.AppendVarint(b, int64(*v)-int64(*prev))
}

// AppendUintDelta appends an unsigned integer as its signed difference
// from prev.
func AppendUintDelta[T Unsigned](b []byte, v, prev *T) []byte {
	return binary.AppendVarint(b, int64(uint64(*v)-uint64(*prev)))
}

// AppendString appends a string, length first.
func AppendString[S ~string](b []byte, s *S) []byte { return AppendStr(b, *s) }

// makeSlice reads a slice's length and makes *s that long (nil when 0);
// min is an element's smallest encoding, which bounds the length (see
// Count).
func makeSlice[T any](d *Decoder, min int, s *[]T) []T {
	if n := d.Count(min); n > 0 {
		*s = make([]T, n)
	}
	return *s
}

// ReadSlice reads a slice into s, each element by elem.
func ReadSlice[T any](d *Decoder, min int, s *[]T, elem func(*Decoder, *T)) {
	e := makeSlice(d, min, s)
	for i := range e {
		elem(d, &e[i])
	}
}

// ReadDeltaSlice reads a slice into s, each element by elem given the
// one before. The first is given itself, still zero: a generated Decode
// reads each field of prev before it sets that field of v.
func ReadDeltaSlice[T any](d *Decoder, min int, s *[]T, elem func(d *Decoder, v, prev *T)) {
	e := makeSlice(d, min, s)
	for i := range e {
		elem(d, &e[i], &e[max(i-1, 0)])
	}
}

// ReadInts reads a slice of signed integers into s.
func ReadInts[T Signed](d *Decoder, s *[]T) {
	e := makeSlice(d, 1, s)
	for i := range e {
		_ = SmallInt(d, &e[i]) || Int(d, &e[i])
	}
}

// ReadUints reads a slice of unsigned integers into s.
func ReadUints[T Unsigned](d *Decoder, s *[]T) {
	e := makeSlice(d, 1, s)
	for i := range e {
		_ = SmallUint(d, &e[i]) || Uint(d, &e[i])
	}
}

// ReadIntDeltas reads a slice of delta-coded signed integers into s.
func ReadIntDeltas[T Signed](d *Decoder, s *[]T) {
	e := makeSlice(d, 1, s)
	for i := range e {
		prev := e[max(i-1, 0)]
		_ = SmallIntDelta(d, &e[i], prev) || IntDelta(d, &e[i], prev)
	}
}

// ReadUintDeltas reads a slice of delta-coded unsigned integers into s.
func ReadUintDeltas[T Unsigned](d *Decoder, s *[]T) {
	e := makeSlice(d, 1, s)
	for i := range e {
		prev := e[max(i-1, 0)]
		_ = SmallUintDelta(d, &e[i], prev) || UintDelta(d, &e[i], prev)
	}
}

// ReadStrings reads a slice of strings into s.
func ReadStrings[S ~string](d *Decoder, s *[]S) {
	e := makeSlice(d, 1, s)
	for i := range e {
		e[i] = S(d.Str())
	}
}

// Unmarshal sets *v from data, which decode must read whole (see
// Finish); on a failure *v is left zero, not partly decoded.
func Unmarshal[T any](data []byte, v *T, decode func(*Decoder, *T)) error {
	d := NewDecoder(data)
	var zero T
	*v = zero
	decode(&d, v)
	if err := d.Finish(); err != nil {
		*v = zero
		return err
	}
	return nil
}

// Invalid is Validate's error for a field whose value x fails its tag's
// check against a table of n: at names the field, with a %d for each of
// the indexes (of the slices it is in), and what says what x should be
// ("an index of Defs").
func Invalid(at, what string, x, n int64, indexes ...int) error {
	args := make([]any, 0, len(indexes)+2)
	for _, i := range indexes {
		args = append(args, i)
	}
	return fmt.Errorf(at+": %d is not "+what+" (length %d)", append(args, x, n)...)
}
