// Command bundled parses the Go files of a tree with the runtime and
// grammar go-tree-sitter bundles (the ones the engine links), on one
// thread, and prints the throughput.
package main

import (
	"context"
	"os"

	"github.com/builtin-tools/builtin-tools/bench/tsruntime/corpus"
	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/golang"
)

func main() {
	p := sitter.NewParser()
	p.SetLanguage(golang.GetLanguage())
	corpus.Run("bundled (go-tree-sitter)", os.Args[1], func(src []byte) error {
		t, err := p.ParseCtx(context.Background(), nil, src)
		if err == nil {
			t.Close()
		}
		return err
	})
}
