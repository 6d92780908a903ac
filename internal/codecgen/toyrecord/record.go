// Package toyrecord is a record shaped like the code graph's per-file
// record (graph-design §2.2: one string arena, tables of definitions,
// references, locals, fields, imports, type trees and receiver steps,
// linked by named index types), with the codec internal/codecgen writes
// for it. The generator's tests and benchmarks use it; nothing else
// imports it.
//
// Regenerate codec_gen.go after changing a type:
//
//	go test ./internal/codecgen/toyrecord -run TestCodecUpToDate -update
package toyrecord

import "fmt"

// Str is one of a Record's strings: an index into Strs.Ends; 0 is "".
type Str uint32

// TypeID is a declared type: the index of its root in Record.Types.
type TypeID int32

// ExprID is an expression: an index into Record.Exprs.
type ExprID int32

const (
	NoType TypeID = -1
	NoExpr ExprID = -1
)

// Record is what one file's bytes give.
type Record struct {
	Strs      Strings
	Package   Str
	Exports   Str
	Default   Str
	BuildLine Str
	Errors    int32
	ErrorAt   []int32 `codec:"delta"`
	Defs      []Def
	Refs      []Ref
	Locals    []Local
	Fields    []Field
	Imports   []Import
	Types     []TypeNode
	Exprs     []Expr
	Steps     []Step
	DefOrder  []int32 `codec:"index=Defs"`
	RefOrder  []int32 `codec:"index=Refs"`
	DefNames  []Str
	RefNames  []Str
}

// Strings is one arena holding every string of a record: string i is
// Data[Ends[i-1]:Ends[i]], and string 0 is "".
type Strings struct {
	Data string
	Ends []uint32 `codec:"bound=.Data,sorted,delta"`
}

// At is string i.
func (s *Strings) At(i Str) string {
	if i == 0 {
		return ""
	}
	return s.Data[s.Ends[i-1]:s.Ends[i]]
}

type Def struct {
	Name, Kind, Container, Scope, Self Str
	Type                               TypeID
	Init                               ExprID
	How                                uint8
	Local                              bool
	Line                               int32 `codec:"delta"`
	EndLine                            int32 `codec:"delta"`
	Col                                int32
	Start                              int32 `codec:"delta"`
	End                                int32 `codec:"delta"`
	NameAt                             int32 `codec:"delta"`
}

type Ref struct {
	Name Str
	Recv ExprID
	Kind uint8
	Line int32 `codec:"delta"`
	Col  int32
	Encl int32 `codec:"index=Defs,none=-1"`
	At   int32 `codec:"delta"`
}

// Local's Of is a TypeID or an ExprID, by How (checked by check).
type Local struct {
	Name Str
	Encl int32 `codec:"index=Defs,none=-1"`
	At   int32
	End  int32
	Line int32
	How  uint8
	Of   int32
}

type Field struct {
	Container, Name Str
	How             uint8
	Flags           uint8
	Of              int32
	Line            int32 `codec:"delta"`
	At              int32 `codec:"delta"`
}

type Import struct {
	Module, Name, Local Str
	Line                int32
}

// TypeNode is one node of a declared type's tree, in preorder; Last is
// one past its subtree.
type TypeNode struct {
	Form uint8
	Part uint8
	Name Str
	Text Str
	Last int32
}

// Expr is an expression as Steps[First:First+N].
type Expr struct {
	Text  Str
	First int32 `codec:"index=Steps,len=N"`
	N     uint8
}

type Step struct {
	Op   uint8
	Name Str
	Type TypeID
}

// How a local's or a field's Of is read: below HowExpr a TypeID, from it
// on an ExprID.
const (
	HowNone uint8 = iota
	HowDeclared
	HowNew
	HowExpr
	HowCall
)

// check is what the tags cannot say; the generated Validate calls it.
func (r *Record) check() error {
	for i, t := range r.Types {
		if t.Last <= int32(i) || int(t.Last) > len(r.Types) {
			return fmt.Errorf("Record.Types[%d]: subtree end %d outside (%d, %d]", i, t.Last, i, len(r.Types))
		}
	}
	of := func(how uint8, of int32) bool {
		if how < HowExpr {
			return of >= -1 && int(of) < len(r.Types)
		}
		return of >= -1 && int(of) < len(r.Exprs)
	}
	for i, l := range r.Locals {
		if !of(l.How, l.Of) {
			return fmt.Errorf("Record.Locals[%d]: Of %d outside its table", i, l.Of)
		}
	}
	for i, f := range r.Fields {
		if !of(f.How, f.Of) {
			return fmt.Errorf("Record.Fields[%d]: Of %d outside its table", i, f.Of)
		}
	}
	return nil
}
