// Command official parses the Go files of a tree with the official Go
// binding of tree-sitter 0.25 and tree-sitter-go 0.25, on one thread, and
// prints the throughput.
package main

import (
	"errors"
	"os"

	"github.com/builtin-tools/builtin-tools/bench/tsruntime/corpus"
	sitter "github.com/tree-sitter/go-tree-sitter"
	golang "github.com/tree-sitter/tree-sitter-go/bindings/go"
)

func main() {
	p := sitter.NewParser()
	p.SetLanguage(sitter.NewLanguage(golang.Language()))
	corpus.Run("official (tree-sitter 0.25)", os.Args[1], func(src []byte) error {
		t := p.Parse(src, nil)
		if t == nil {
			return errors.New("the parse failed")
		}
		t.Close()
		return nil
	})
}
