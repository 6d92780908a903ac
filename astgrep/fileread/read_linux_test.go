package fileread

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/builtin-tools/builtin-tools/astgrep/parsecache"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// A worker's reader reads what the guard would, and refuses what the
// guard refuses: a link (even to a file inside the root), a named pipe
// (without blocking), a file outside the root.
func TestFileReaderKeepsTheGuardsRules(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.go")
	os.WriteFile(secret, []byte("package secret\n"), 0o644)
	root := testenv.Tree(t, map[string]string{
		"a/one.go":   "package a\n",
		"a/two.go":   "package a // two\n",
		"b/three.go": "package b\n",
	})
	os.Symlink(secret, filepath.Join(root, "a", "out.go"))
	os.Symlink(filepath.Join(root, "a", "one.go"), filepath.Join(root, "a", "in.go"))
	if err := syscall.Mkfifo(filepath.Join(root, "a", "pipe.go"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := pathguard.New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var r Reader
	defer r.Close()
	for _, name := range []string{"a/one.go", "a/two.go", "b/three.go", "a/one.go"} {
		p := filepath.Join(root, name)
		got, info, err := r.Read(nil, g, p, 0, 1<<20)
		want, _ := os.ReadFile(p)
		if err != nil || string(got) != string(want) {
			t.Fatalf("%s: %q %v, want %q", name, got, err, want)
		}
		if r.fd == nil || r.dir != filepath.Dir(p) {
			t.Fatalf("%s: read through the guard, not beneath its folder", name)
		}
		st, _ := os.Stat(p)
		a, okA := parsecache.StampOf(info)
		b, okB := parsecache.StampOf(st)
		if !okA || !okB || a != b || info.Size() != st.Size() || !info.ModTime().Equal(st.ModTime()) || !info.Mode().IsRegular() {
			t.Errorf("%s: stamp %+v, os.Stat's %+v", name, a, b)
		}
	}
	for _, name := range []string{"a/out.go", "a/in.go", "a/pipe.go"} {
		got, _, err := r.Read(nil, g, filepath.Join(root, name), 0, 1<<20)
		if err == nil {
			t.Errorf("%s: read %q, want it refused", name, got)
		}
	}
	if _, _, err := r.Read(nil, g, secret, 0, 1<<20); err == nil {
		t.Error("a file outside the root was read")
	}
	// Over the limit: the guard's error, not a truncated read.
	if _, _, err := r.Read(nil, g, filepath.Join(root, "a", "two.go"), 0, 4); err == nil || errors.Is(err, os.ErrNotExist) {
		t.Errorf("over the limit: %v", err)
	}
}
