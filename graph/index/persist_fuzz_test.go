package index

import (
	"context"
	"os"
	"testing"
)

// A damaged snapshot never panics the loader and never yields records
// that point past their own definitions; it is dropped and the build
// parses the files.
func FuzzLoadSnapshot(f *testing.F) {
	root, cache := f.TempDir(), f.TempDir()
	writeTree(f, root, map[string]string{
		"go.mod": "module m\n",
		"a.go":   "package m\n\nimport \"m/b\"\n\nfunc A() { b.B(); A() }\n",
		"b/b.go": "package b\n\ntype T struct{}\n\nfunc (t T) M() { t.M() }\n\nfunc B() {}\n",
	})
	x := buildRootOpts(f, root, Options{CacheDir: cache})
	x.Flush(context.Background())
	good, err := os.ReadFile(x.snapshotPath())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(snapshotMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(x.snapshotPath(), data, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, file := range x.load() {
			for _, r := range file.Refs {
				if int(r.Encl) >= len(file.Defs) {
					t.Fatalf("%s: a reference enclosed by definition %d of %d", file.Rel, r.Encl, len(file.Defs))
				}
			}
		}
	})
}
