// Package corpus is what the two parse programs share: the Go files of a
// tree and the timing of three passes over them.
package corpus

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Run parses every .go file under root, outside vendor folders, three
// times with parse, and prints the throughput of each pass under label.
func Run(label, root string, parse func([]byte) error) {
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
	if len(files) == 0 {
		fmt.Fprintf(os.Stderr, "%s: no .go files under %s\n", label, root)
		os.Exit(2)
	}
	for r := 0; r < 3; r++ {
		t0 := time.Now()
		for _, f := range files {
			if err := parse(f); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", label, err)
				os.Exit(1)
			}
		}
		d := time.Since(t0)
		fmt.Printf("%s: %d files, %.1f MB, %.2f s, %.2f MB/s\n", label, len(files), float64(size)/1e6, d.Seconds(), float64(size)/1e6/d.Seconds())
	}
}
