package toyrecord

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"flag"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/codecgen"
)

var update = flag.Bool("update", false, "rewrite codec_gen.go")

// config is how codec_gen.go is generated.
var config = codecgen.Config{
	Package: "toyrecord",
	Roots:   []any{Record{}, Every{}},
	Tables: []codecgen.Table{
		{Type: Str(0), Tag: "index=Strs.Ends"},
		{Type: TypeID(0), Tag: "index=Types,none=-1"},
		{Type: ExprID(0), Tag: "index=Exprs,none=-1"},
	},
	Checks: map[string]string{"Record": "check"},
	Header: "Regenerate: go test ./internal/codecgen/toyrecord -run TestCodecUpToDate -update",
}

// The codec on disk is the one the types give; -update rewrites it. The
// other tests reach the codec through interfaces, so this one still
// compiles and runs when codec_gen.go is stale or deleted.
func TestCodecUpToDate(t *testing.T) {
	if err := codecgen.UpToDate(config, "codec_gen.go", *update); err != nil {
		t.Fatal(err)
	}
}

type codec interface {
	encoding.BinaryAppender
	encoding.BinaryUnmarshaler
	Validate() error
}

func asCodec(t testing.TB, r *Record) codec {
	c, ok := any(r).(codec)
	if !ok {
		t.Fatal("Record has no codec: run TestCodecUpToDate -update")
	}
	return c
}

func encode(t testing.TB, r *Record) []byte {
	b, err := asCodec(t, r).AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decode(t testing.TB, b []byte) (*Record, error) {
	r := &Record{}
	return r, asCodec(t, r).UnmarshalBinary(b)
}

// Every record the synthesizer makes is valid, and decodes to itself.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, refs := range []int{0, 1, 2, 10, 191, 5000} {
		want := synth(rng, refs)
		if err := asCodec(t, want).Validate(); err != nil {
			t.Fatalf("%d refs: synthesized record invalid: %v", refs, err)
		}
		b := encode(t, want)
		got, err := decode(t, b)
		if err != nil {
			t.Fatalf("%d refs: %v", refs, err)
		}
		if err := asCodec(t, got).Validate(); err != nil {
			t.Fatalf("%d refs: decoded record invalid: %v", refs, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%d refs: decoded record differs", refs)
		}
		// The encoding appends: what was in the buffer stays.
		b2 := encode(t, want)
		if b3, _ := asCodec(t, want).AppendBinary([]byte("x")); string(b3[1:]) != string(b2) || b3[0] != 'x' {
			t.Fatal("AppendBinary did not append")
		}
	}
}

// Each index the tags describe is checked; the check hook runs last.
func TestValidateRefuses(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		name   string
		break_ func(r *Record)
		want   string
	}{
		{"string index", func(r *Record) { r.Defs[0].Name = Str(len(r.Strs.Ends)) }, "Defs[0].Name"},
		{"string offset", func(r *Record) { r.Strs.Ends[len(r.Strs.Ends)-1] = uint32(len(r.Strs.Data) + 1) }, "Strs.Ends"},
		{"unsorted offsets", func(r *Record) { r.Strs.Ends[2], r.Strs.Ends[3] = r.Strs.Ends[3], r.Strs.Ends[2] }, "less than the element before"},
		{"type index", func(r *Record) { r.Defs[1].Type = TypeID(len(r.Types)) }, "Defs[1].Type"},
		{"none is -1 only", func(r *Record) { r.Defs[1].Type = -2 }, "Defs[1].Type"},
		{"enclosing def", func(r *Record) { r.Refs[3].Encl = int32(len(r.Defs)) }, "Refs[3].Encl"},
		{"order", func(r *Record) { r.DefOrder[0] = -1 }, "DefOrder[0]"},
		{"step span", func(r *Record) { r.Exprs[0].First = int32(len(r.Steps)); r.Exprs[0].N = 1 }, "Exprs[0].First"},
		{"step in a nested table", func(r *Record) { r.Steps[0].Name = 1 << 30 }, "Steps[0].Name"},
		{"hook", func(r *Record) { r.Types[0].Last = 0 }, "Types[0]"},
	} {
		r := synth(rng, 200)
		c.break_(r)
		err := asCodec(t, r).Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate = %v, want an error naming %q", c.name, err, c.want)
		}
	}
}

// Decoding any bytes returns an error or a record; a record that
// validates can be read everywhere without a panic and encodes back to
// one that decodes equal.
func FuzzDecode(f *testing.F) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 5, 40} {
		b := encode(f, synth(rng, n))
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decode(t, data)
		if err != nil {
			if !reflect.DeepEqual(r, &Record{}) {
				t.Fatal("a failed decode left a partial record")
			}
			return
		}
		if asCodec(t, r).Validate() != nil {
			return
		}
		readAll(r)
		again, err := decode(t, encode(t, r))
		if err != nil || !reflect.DeepEqual(again, r) {
			t.Fatalf("re-encoding a decoded record: %v", err)
		}
	})
}

// readAll touches every index a consumer follows, to show Validate made
// them safe.
func readAll(r *Record) {
	s := &r.Strs
	for i := range r.Strs.Ends {
		_ = s.At(Str(i))
	}
	for _, d := range r.Defs {
		_ = s.At(d.Name) + s.At(d.Kind) + s.At(d.Container) + s.At(d.Scope) + s.At(d.Self)
		if d.Type != NoType {
			_ = r.Types[d.Type]
		}
		if d.Init != NoExpr {
			_ = r.Exprs[d.Init]
		}
	}
	for _, e := range r.Exprs {
		_ = r.Steps[e.First : e.First+int32(e.N)]
	}
	for _, x := range r.Refs {
		if x.Encl >= 0 {
			_ = r.Defs[x.Encl]
		}
	}
	for _, i := range r.DefOrder {
		_ = r.Defs[i]
	}
	for _, i := range r.RefOrder {
		_ = r.Refs[i]
	}
	for _, t := range r.Types {
		_ = r.Types[t.Last-1]
	}
}

// A hostile input cannot make the decoder allocate much more than its own
// size: a claimed count is weighed against the bytes left.
func TestDecodeAllocationBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	good := encode(t, synth(rng, 300))
	inputs := [][]byte{
		// A string of 2^40 bytes, a slice of 2^40 elements.
		binary.AppendUvarint(nil, 1<<40),
		append(binary.AppendUvarint([]byte{0}, 1<<40), make([]byte, 64)...),
	}
	for range 300 {
		b := slices.Clone(good)
		for range 1 + rng.IntN(8) {
			b[rng.IntN(len(b))] = byte(rng.Uint32())
		}
		if rng.IntN(2) == 0 {
			b = b[:rng.IntN(len(b))]
		}
		inputs = append(inputs, b)
	}
	var before, after runtime.MemStats
	for _, in := range inputs {
		// TotalAlloc counts the whole process's allocations: the least of
		// three decodes is the decode's own (one failed on a 6-byte input
		// with 5,720 bytes another goroutine allocated meanwhile).
		got := uint64(math.MaxUint64)
		for range 3 {
			c := asCodec(t, &Record{})
			runtime.ReadMemStats(&before)
			_ = c.UnmarshalBinary(in)
			runtime.ReadMemStats(&after)
			got = min(got, after.TotalAlloc-before.TotalAlloc)
		}
		// The widest element (Def: 56 bytes in memory) has 16 one-byte
		// fields at least: 3.5× its input; twice that covers the size
		// classes of small allocations.
		if limit := uint64(8*len(in) + 1024); got > limit {
			t.Errorf("decoding %d bytes allocated %d (limit %d)", len(in), got, limit)
		}
	}
}

type everyCodec interface {
	encoding.BinaryAppender
	encoding.BinaryUnmarshaler
}

func randomEvery(rng *rand.Rand) *Every {
	pick := func(vals ...uint64) uint64 { return vals[rng.IntN(len(vals))] }
	u := func() uint64 {
		return pick(0, 1, 127, 128, math.MaxUint16, math.MaxUint32, math.MaxUint64, rng.Uint64())
	}
	e := &Every{
		B: rng.IntN(2) == 1, I8: int8(u()), U8: uint8(u()), I16: int16(u()), U16: uint16(u()),
		I32: int32(u()), U32: uint32(u()), I64: int64(u()), U64: u(), I: int(u()), U: uint(u()),
		F32: float32(rng.NormFloat64()), F64: rng.NormFloat64(), S: "héllo\x00", Name: "n",
		Raw: []byte{0, 1, 2}, Pair: [2]int16{math.MinInt16, math.MaxInt16}, Wait: time.Duration(u()),
		Names:  []string{"", "a", "bc"},
		Deltas: []int64{math.MaxInt64, math.MinInt64, 0, int64(u())},
		Spans:  []Span{{From: u(), To: int16(u())}, {From: u(), To: int16(u())}},
		Blobs:  [][]byte{nil, {1, 2}},
		Nested: Inner{Spans: []Span{{From: 5, To: -3}}, Flag: true},
	}
	for i := range e.Key {
		e.Key[i] = byte(rng.Uint32())
	}
	return e
}

// Every kind of field round-trips at its extremes; an unencoded field
// stays zero.
func TestRoundTripEveryKind(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for range 200 {
		want := randomEvery(rng)
		want.Skip = 7
		c, ok := any(want).(everyCodec)
		if !ok {
			t.Fatal("Every has no codec: run TestCodecUpToDate -update")
		}
		b, _ := c.AppendBinary(nil)
		got := &Every{}
		if err := any(got).(everyCodec).UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		want.Skip = 0
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v\nwant %+v", got, want)
		}
	}
}

// A value out of its type's range (a uint16 of 70000) is refused, not
// truncated.
func TestDecodeRefusesOutOfRange(t *testing.T) {
	b := []byte{0, 0, 0} // B, I8, U8
	b = binary.AppendVarint(b, 1<<20)
	got := &Every{}
	err := any(got).(everyCodec).UnmarshalBinary(b)
	if err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Fatalf("UnmarshalBinary = %v, want an int16 out of range", err)
	}
}

func FuzzDecodeEvery(f *testing.F) {
	rng := rand.New(rand.NewPCG(13, 14))
	for range 4 {
		b, _ := any(randomEvery(rng)).(everyCodec).AppendBinary(nil)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e := &Every{}
		if any(e).(everyCodec).UnmarshalBinary(data) != nil {
			return
		}
		b1, _ := any(e).(everyCodec).AppendBinary(nil)
		e2 := &Every{}
		if err := any(e2).(everyCodec).UnmarshalBinary(b1); err != nil {
			t.Fatalf("re-decoding: %v", err)
		}
		if b2, _ := any(e2).(everyCodec).AppendBinary(nil); !bytes.Equal(b1, b2) {
			t.Fatal("encoding is not stable")
		}
	})
}
