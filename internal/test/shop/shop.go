// Package shop is the small Go module that the language-server broker's
// interleaving scenario writes to from several processes at once: the
// cmd/builtin-tools test and the bench/lspbroker measurement run the
// same scenario, so they lay out and rewrite the same files. It is for
// tests and benchmarks only.
package shop

import (
	"fmt"
	"strings"
)

// Shared is shared.go, which no process writes: its Marker says "disk",
// and every process's file calls its Shared.
const Shared = "package shop\n\n// Marker is what the file on disk says.\nconst Marker = \"disk\"\n\nfunc Shared() int { return 1 }\n"

// Tree is the module for n processes: go.mod, shared.go and each
// process's file before its first write.
func Tree(n int) map[string]string {
	tree := map[string]string{"go.mod": "module example.com/shop\n\ngo 1.22\n", "shared.go": Shared}
	for id := 1; id <= n; id++ {
		tree[File(id)] = Own(id, 0, nil)
	}
	return tree
}

// File is the name of process id's own file.
func File(id int) string { return fmt.Sprintf("p%d.go", id) }

// Own is process id's file after its write at step, with a line for each
// write so far, so a lost write shows as a missing line.
func Own(id, step int, writes []int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package shop\n\nconst P%d = %d\n\nfunc p%d() int { return Shared() + P%d }\n", id, step, id, id)
	for _, w := range writes {
		fmt.Fprintf(&b, "\n// write %d\n", w)
	}
	return b.String()
}
