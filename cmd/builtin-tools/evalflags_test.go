package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The eval size flags take bytes with a binary suffix, or none; the limits
// reach the kernel.
func TestEvalSizeFlags(t *testing.T) {
	for in, want := range map[string]byteSize{"64MiB": 64 << 20, "8GiB": 8 << 30, "512k": 512 << 10, "1.5G": 3 << 29, "1000": 1000, "none": -1} {
		var b byteSize
		if err := b.Set(in); err != nil || b != want {
			t.Errorf("%q: %d, %v; want %d", in, b, err, want)
		}
	}
	for _, in := range []string{"", "-1", "lots", "1XB", "0"} {
		var b byteSize
		if err := b.Set(in); err == nil {
			t.Errorf("%q was taken as %d", in, b)
		}
	}
	code, _, errs := runCmd(t, "", "call", "--root", fixture(t), "--eval-memory-limit", "1XB", "read", `{"path":"hello.txt"}`)
	if code != 2 || !strings.Contains(errs, "want a size such as 512MiB") {
		t.Fatalf("code %d, %q", code, errs)
	}
	code, out, errs := runCmd(t, "", "call", "--root", fixture(t), "--eval-memory-limit", "1GiB", "eval",
		`{"code": "import resource\nresource.getrlimit(resource.RLIMIT_AS)[0] >> 20", "description": "read the kernel's own memory limit"}`)
	if code != 0 || !strings.Contains(out, "1024") {
		t.Fatalf("code %d, %q %q", code, out, errs)
	}
}

// --graph-cache is the graph store a call writes its records and the
// root's manifest to; --graph-cache-size bounds it (none: no bound).
func TestGraphCacheFlags(t *testing.T) {
	if none, dflt := byteSize(-1).storeBytes(), byteSize(0).storeBytes(); none < 1<<60 || dflt != 0 {
		t.Fatalf("none gives %d, the default %d", none, dflt)
	}
	dir := t.TempDir()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.go"), []byte("package a\n\nfunc A() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "", "call", "--root", root, "--graph-cache", dir, "--graph-cache-size", "64MiB", "code_graph", `{"operation": "find", "symbol": "A"}`)
	if code != 0 || !strings.Contains(out, "a.go") {
		t.Fatalf("code %d, %q %q", code, out, errs)
	}
	records, _ := filepath.Glob(filepath.Join(dir, "records", "*", "*"))
	manifests, _ := filepath.Glob(filepath.Join(dir, "manifests", "*.m"))
	if len(records) != 1 || len(manifests) != 1 {
		t.Fatalf("the store holds records %v, manifests %v", records, manifests)
	}
	code, _, errs = runCmd(t, "", "call", "--root", root, "--graph-cache-size", "lots", "code_graph", `{"operation": "status"}`)
	if code != 2 || !strings.Contains(errs, "want a size such as 512MiB") {
		t.Fatalf("code %d, %q", code, errs)
	}
}
