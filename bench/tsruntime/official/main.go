// Command official parses every .go file under a root, outside vendor
// folders, with the official Go binding of tree-sitter 0.25 and
// tree-sitter-go 0.25, on one thread, and prints the throughput.
package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	sitter "github.com/tree-sitter/go-tree-sitter"
	golang "github.com/tree-sitter/tree-sitter-go/bindings/go"
)

func main() {
	files, size := goFiles(os.Args[1])
	p := sitter.NewParser()
	p.SetLanguage(sitter.NewLanguage(golang.Language()))
	for r := 0; r < 3; r++ {
		t0 := time.Now()
		for _, f := range files {
			t := p.Parse(f, nil)
			if t == nil {
				fmt.Fprintln(os.Stderr, "the parse failed")
				os.Exit(1)
			}
			t.Close()
		}
		d := time.Since(t0)
		fmt.Printf("official (tree-sitter 0.25): %d files, %.1f MB, %.2f s, %.2f MB/s\n", len(files), float64(size)/1e6, d.Seconds(), float64(size)/1e6/d.Seconds())
	}
}

func goFiles(root string) ([][]byte, int) {
	var files [][]byte
	size := 0
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.Contains(p, "/vendor/") {
			if b, err := os.ReadFile(p); err == nil {
				files = append(files, b)
				size += len(b)
			}
		}
		return nil
	})
	return files, size
}
