package ondisk

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/internal/walk"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// The literal scan finds the name in any case when asked, and counts a
// file it must not read as it is (a link or a pipe swapped in after the
// walk) as a hit, so the capture reports why.
func TestScanReadsOnlyRegularFiles(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"a/x.go": "package a\nfunc NewThing() {}\n", "a/y.go": "package a\n", "b/z.go": "package b\nvar newthing = 1\n",
		"a/link.go": "package a\n", "a/pipe.go": "package a\n", "secret.txt": "NewThing"})
	g, err := pathguard.New(root)
	if err != nil {
		t.Fatal(err)
	}
	var files []walk.Entry
	if err := walk.Walk(context.Background(), g, g.Root(), walk.Options{Want: func(name string) bool { return filepath.Ext(name) == ".go" }}, func(e walk.Entry) error {
		files = append(files, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(root, "a/link.go"))
	if err := os.Symlink(filepath.Join(root, "secret.txt"), filepath.Join(root, "a/link.go")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(root, "a/pipe.go"))
	if err := syscall.Mkfifo(filepath.Join(root, "a/pipe.go"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for i, h := range Scan(context.Background(), g, files, [][]byte{[]byte("NewThing")}, false, 0) {
		got[files[i].Rel] = h
	}
	want := map[string]bool{"a/x.go": true, "a/y.go": false, "b/z.go": false, "a/link.go": true, "a/pipe.go": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("scan: %v, want %v", got, want)
	}
	for i, h := range Scan(context.Background(), g, files, [][]byte{[]byte("newthing")}, true, 0) {
		got[files[i].Rel] = h
	}
	want["b/z.go"] = true
	if !reflect.DeepEqual(got, want) {
		t.Errorf("scan in any case: %v, want %v", got, want)
	}
}
