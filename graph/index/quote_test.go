package index

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Lines gives a file's lines while it is as its entry was read, the same
// ones to every answer, and nothing once it changed on disk (the caller
// then reads it as it is).
func TestLinesKeptByContent(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "a.go")
	if err := os.WriteFile(path, []byte("package a\n\nfunc F() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	x := buildRootOpts(t, root, Options{})
	e := x.Snapshot().Entry("a.go")
	ls, ok := x.Lines(e)
	if !ok || len(ls) != 4 || string(ls[2]) != "func F() {}" {
		t.Fatalf("Lines = %q, %v", ls, ok)
	}
	again, ok := x.Lines(e)
	if !ok || &again[0] != &ls[0] {
		t.Fatal("the second answer read the file again")
	}
	if err := os.WriteFile(path, []byte("package a\n\nfunc G() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ls, ok := x.Lines(e); ok {
		t.Fatalf("the file changed on disk, Lines still gave %q", strings.Join(strings.Fields(string(ls[2])), " "))
	}
}
