package walk_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/builtin-tools/builtin-tools/internal/walk"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// checkout makes a small tree the examples walk: Go files, one too large,
// an ignored one, a vendored folder, a hidden one and a build folder.
func checkout() (*pathguard.Guard, func()) {
	root, _ := os.MkdirTemp("", "checkout")
	for name, content := range map[string]string{
		".gitignore":       "gen/\n",
		"main.go":          "package main\n",
		"big.go":           "package main\n// " + strings.Repeat("x", 3<<20) + "\n",
		"gen/out.go":       "package gen\n",
		"vendor/x/x.go":    "package x\n",
		".cache/c.go":      "package c\n",
		".clangd":          "CompileFlags: {}\n",
		"lib/lib.go":       "package lib\n",
		"target/t.go":      "package t\n",
		"lib/deep/more.go": "package deep\n",
	} {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	g, err := pathguard.New(root)
	if err != nil {
		panic(err)
	}
	return g, func() { g.Close(); os.RemoveAll(root) }
}

// Every Go file, sorted, with those over 2 MiB marked TooLarge: what a
// search lists as skipped instead of reading.
func ExampleFiles() {
	g, done := checkout()
	defer done()
	files, err := walk.Files(context.Background(), g, g.Root(), walk.Options{
		MaxFileSize: 2 << 20,
		Want:        func(name string) bool { return strings.HasSuffix(name, ".go") },
	})
	if err != nil {
		panic(err)
	}
	for _, f := range files {
		fmt.Println(f.Rel, f.TooLarge)
	}
	// Output:
	// big.go true
	// lib/deep/more.go false
	// lib/lib.go false
	// main.go false
	// target/t.go false
}

// A marker scan: folders too, at most one level of folders below the start,
// hidden files kept (hidden folders are never entered), build folders
// skipped.
func ExampleWalk() {
	g, done := checkout()
	defer done()
	err := walk.Walk(context.Background(), g, g.Root(), walk.Options{Dirs: true, MaxDepth: 1, HiddenFiles: true,
		SkipDirs: []string{"target", "build"}}, func(e walk.Entry) error {
		if e.Dir {
			fmt.Println(e.Rel + "/")
		} else if e.Depth == 1 {
			fmt.Println(e.Rel)
		}
		return nil
	})
	if err != nil {
		panic(err)
	}
	// Output:
	// .clangd
	// .gitignore
	// big.go
	// lib/
	// main.go
}

// A watcher deciding whether an event concerns the checkout, by the walk's
// rules alone: the path may be gone already.
func ExampleExcluded() {
	g, done := checkout()
	defer done()
	for _, rel := range []string{"lib/lib.go", "gen/out.go", "vendor/x/x.go", ".cache/c.go", "lib/removed.go"} {
		fmt.Println(rel, walk.Excluded(g, filepath.Join(g.Root(), rel), false, walk.Options{}))
	}
	// Output:
	// lib/lib.go false
	// gen/out.go true
	// vendor/x/x.go true
	// .cache/c.go true
	// lib/removed.go false
}
