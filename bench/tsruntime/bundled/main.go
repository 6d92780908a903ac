// Command bundled parses every .go file under a root, outside vendor
// folders, with the runtime and grammar go-tree-sitter bundles (the ones
// the engine links), on one thread, and prints the throughput.
package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/golang"
)

func main() {
	files, size := goFiles(os.Args[1])
	p := sitter.NewParser()
	p.SetLanguage(golang.GetLanguage())
	for r := 0; r < 3; r++ {
		t0 := time.Now()
		for _, f := range files {
			t, err := p.ParseCtx(context.Background(), nil, f)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			t.Close()
		}
		d := time.Since(t0)
		fmt.Printf("bundled (go-tree-sitter): %d files, %.1f MB, %.2f s, %.2f MB/s\n", len(files), float64(size)/1e6, d.Seconds(), float64(size)/1e6/d.Seconds())
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
