package astgrep_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// A search over a folder: the engine reads what the run's path guard
// confines, and each match says where it is and what its metavariables
// captured.
func Example() {
	root, _ := os.MkdirTemp("", "checkout")
	defer os.RemoveAll(root)
	os.WriteFile(filepath.Join(root, "main.go"), []byte(`package main

import "os"

func main() {
	f, _ := os.Open("notes.txt")
	defer f.Close()
}
`), 0o644)

	g, err := pathguard.New(root) // a run's guard, in a harness
	if err != nil {
		panic(err)
	}
	defer g.Close()
	e := astgrep.NewEngine(astgrep.Options{}) // GrammarDirs adds grammars loaded at run time
	defer e.Close()

	res, err := e.Search(context.Background(), astgrep.Query{Path: g.RootPath(), Pattern: "defer $X.Close()", Language: "go"})
	if err != nil {
		fmt.Println(err) // says what to do: a pattern that does not parse names the contexts tried
		return
	}
	for _, m := range res.Matches {
		fmt.Printf("%s:%d: %s ($X is %s)\n", m.File, m.StartLine, m.Text, m.Captures["X"].Text)
	}
	// Output: main.go:7: defer f.Close() ($X is f)
}
