package toyrecord

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// synth makes a valid record with about refs references, in the
// proportions of GOROOT/src's records (graph-design §5.1: per file on
// average 28 definitions, 191 references of which 37 % have a receiver,
// 63 locals, 5.5 fields, 3.6 imports, 82 strings).
func synth(rng *rand.Rand, refs int) *Record {
	r := &Record{}
	nStr := 8 + refs*2/5
	var data strings.Builder
	ends := []uint32{0}
	for i := 1; i < nStr; i++ {
		data.WriteString(ident(rng, i))
		ends = append(ends, uint32(data.Len()))
	}
	r.Strs = Strings{Data: data.String(), Ends: ends}
	// Zipf-like: a few names are used by most references.
	name := func() Str { return Str(1 + int(float64(nStr-1)*math.Pow(rng.Float64(), 3))) }
	r.Package = name()
	nDefs := 1 + refs/7
	nTypes := nDefs * 5 / 2
	for i := 0; i < nTypes; {
		size := 1 + rng.IntN(3)
		if i+size > nTypes {
			size = nTypes - i
		}
		for j := range size {
			r.Types = append(r.Types, TypeNode{Form: uint8(rng.IntN(16)), Part: uint8(rng.IntN(9)), Name: name(), Text: name(), Last: int32(i + size)})
			_ = j
		}
		i += size
	}
	nExprs := refs * 37 / 100
	for range nExprs {
		n := 1 + rng.IntN(3)
		r.Exprs = append(r.Exprs, Expr{Text: name(), First: int32(len(r.Steps)), N: uint8(n)})
		for range n {
			r.Steps = append(r.Steps, Step{Op: uint8(rng.IntN(12)), Name: name(), Type: NoType})
		}
	}
	typ := func() TypeID {
		if nTypes == 0 || rng.IntN(3) == 0 {
			return NoType
		}
		return TypeID(rng.IntN(nTypes))
	}
	expr := func() ExprID {
		if nExprs == 0 || rng.IntN(3) != 0 {
			return NoExpr
		}
		return ExprID(rng.IntN(nExprs))
	}
	line, at := int32(1), int32(0)
	for range nDefs {
		line += int32(1 + rng.IntN(20))
		at += int32(20 + rng.IntN(600))
		end := rng.IntN(30)
		r.Defs = append(r.Defs, Def{Name: name(), Kind: Str(1 + rng.IntN(min(6, nStr-1))), Container: name(), Scope: name(),
			Type: typ(), Init: expr(), How: uint8(rng.IntN(7)), Local: rng.IntN(4) == 0,
			Line: line, EndLine: line + int32(end), Col: int32(rng.IntN(40)),
			Start: at, End: at + int32(end*30), NameAt: at + 5})
	}
	line, at = 1, 0
	for range refs {
		line += int32(rng.IntN(2))
		at += int32(1 + rng.IntN(60))
		r.Refs = append(r.Refs, Ref{Name: name(), Recv: expr(), Kind: uint8(rng.IntN(4)), Line: line, Col: int32(rng.IntN(80)),
			Encl: int32(rng.IntN(nDefs+1)) - 1, At: at})
	}
	for range refs / 3 {
		how := uint8(rng.IntN(5))
		of := int32(typ())
		if how >= HowExpr {
			of = int32(expr())
		}
		a := int32(rng.IntN(int(at) + 1))
		r.Locals = append(r.Locals, Local{Name: name(), Encl: int32(rng.IntN(nDefs)), At: a, End: a + int32(rng.IntN(2000)),
			Line: int32(rng.IntN(int(line) + 1)), How: how, Of: of})
	}
	slices.SortFunc(r.Locals, func(a, b Local) int { return int(a.Name) - int(b.Name) })
	line, at = 1, 0
	for range refs * 3 / 100 {
		line += int32(1 + rng.IntN(10))
		at += int32(10 + rng.IntN(300))
		r.Fields = append(r.Fields, Field{Container: name(), Name: name(), How: HowDeclared, Of: int32(typ()), Line: line, At: at})
	}
	for i := range 1 + min(refs/50, 30) {
		r.Imports = append(r.Imports, Import{Module: name(), Name: name(), Local: 0, Line: int32(3 + i)})
	}
	r.DefOrder = order(len(r.Defs), func(i int) Str { return r.Defs[i].Name })
	r.RefOrder = order(len(r.Refs), func(i int) Str { return r.Refs[i].Name })
	r.DefNames = names(r.DefOrder, func(i int) Str { return r.Defs[i].Name })
	r.RefNames = names(r.RefOrder, func(i int) Str { return r.Refs[i].Name })
	if rng.IntN(20) == 0 {
		r.Errors = 2
		r.ErrorAt = []int32{int32(rng.IntN(100)), int32(100 + rng.IntN(100))}
	}
	nilEmpty(reflect.ValueOf(r).Elem())
	return r
}

// nilEmpty makes empty slices nil, as decoding gives them.
func nilEmpty(v reflect.Value) {
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Slice:
			if f.Len() == 0 {
				f.SetZero()
			}
		case reflect.Struct:
			nilEmpty(f)
		}
	}
}

var syllables = []string{"get", "set", "buf", "conn", "read", "write", "err", "ctx", "node", "type", "name", "at", "len", "new", "close", "info"}

func ident(rng *rand.Rand, i int) string {
	var s strings.Builder
	for range 1 + rng.IntN(3) {
		w := syllables[rng.IntN(len(syllables))]
		if s.Len() > 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		s.WriteString(w)
	}
	if rng.IntN(3) == 0 {
		s.WriteString(string(rune('0' + i%10)))
	}
	return s.String()
}

func order(n int, key func(int) Str) []int32 {
	o := make([]int32, n)
	for i := range o {
		o[i] = int32(i)
	}
	slices.SortStableFunc(o, func(a, b int32) int { return int(key(int(a))) - int(key(int(b))) })
	return o
}

func names(o []int32, key func(int) Str) []Str {
	var s []Str
	for _, i := range o {
		if k := key(int(i)); len(s) == 0 || s[len(s)-1] != k {
			s = append(s, k)
		}
	}
	return s
}

// corpus is 6,986 records (GOROOT/src's file count) whose reference counts
// follow a log-normal spread fitted to the design's record sizes (p50
// 1.8 KB, p90 12 KB, p99 68 KB encoded; 33 MiB in all), capped at the
// largest (1.4 MB).
var corpus = sync.OnceValue(func() []*Record { return corpusN(6986) })

// corpusN is the corpus's first n records.
func corpusN(n int) []*Record {
	rng := rand.New(rand.NewPCG(1, 2))
	const perRef = 25 // encoded bytes per reference, with everything it brings along (measured)
	recs := make([]*Record, n)
	for i := range recs {
		size := 1800 * math.Exp(1.4*rng.NormFloat64())
		refs := int(min(size, 1.4e6) / perRef)
		recs[i] = synth(rng, refs)
	}
	return recs
}
