package toyrecord

import "time"

// Every holds one field of every kind the generator supports, so their
// encodings are round-tripped and fuzzed too.
type Every struct {
	B      bool
	I8     int8
	U8     uint8
	I16    int16
	U16    uint16
	I32    int32
	U32    uint32
	I64    int64
	U64    uint64
	I      int
	U      uint
	F32    float32
	F64    float64
	S      string
	Name   Name
	Raw    []byte
	Key    [32]byte
	Pair   [2]int16
	Wait   time.Duration // a named type of another package
	Names  []string
	Deltas []int64 `codec:"delta"`
	Spans  []Span
	Blobs  [][]byte // a slice of what package wire has no slice function for
	Skip   int      `codec:"-"`
	Nested Inner
}

// Name is a named string type.
type Name string

// Span has delta-coded fields, so a slice of them stores differences.
type Span struct {
	From uint64 `codec:"delta"`
	To   int16  `codec:"delta"`
}

// Inner is a struct inside a struct, holding a slice of structs.
type Inner struct {
	Spans []Span
	Flag  bool
}
