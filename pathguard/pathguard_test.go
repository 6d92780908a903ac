package pathguard

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func setup(t *testing.T) (*Guard, string, string) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "sub", "a.txt"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644)
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "sub"), filepath.Join(root, "inlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "nothing-yet"), filepath.Join(root, "dangling")); err != nil {
		t.Fatal(err)
	}
	g, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	return g, g.Root(), outside
}

// REG-9: paths that leave the root are refused with an error naming the root.
func TestResolveRefuses(t *testing.T) {
	g, root, outside := setup(t)
	for _, p := range []string{
		"../outside/secret",
		"sub/../../outside/secret",
		filepath.Join(outside, "secret"),
		"/etc/passwd",
		"escape/secret",
		"escape/new-file",
		"dangling",
	} {
		_, err := g.Resolve(p)
		if err == nil {
			t.Errorf("Resolve(%q) accepted a path outside the root", p)
			continue
		}
		if !errors.Is(err, ErrOutside) || !strings.Contains(err.Error(), root) {
			t.Errorf("Resolve(%q) error %q should wrap ErrOutside and name the root %s", p, err, root)
		}
	}
}

func TestResolveAccepts(t *testing.T) {
	g, root, _ := setup(t)
	cases := map[string]string{
		"sub/a.txt":                      filepath.Join(root, "sub", "a.txt"),
		"./sub/../sub/a.txt":             filepath.Join(root, "sub", "a.txt"),
		filepath.Join(root, "sub/a.txt"): filepath.Join(root, "sub", "a.txt"),
		"inlink/a.txt":                   filepath.Join(root, "sub", "a.txt"),
		"new/folder/file.go":             filepath.Join(root, "new", "folder", "file.go"),
		".":                              root,
	}
	for in, want := range cases {
		got, err := g.Resolve(in)
		if err != nil {
			t.Errorf("Resolve(%q): %v", in, err)
			continue
		}
		if got != want {
			t.Errorf("Resolve(%q) = %s, want %s", in, got, want)
		}
	}
	if rel := g.Rel(filepath.Join(root, "sub", "a.txt")); rel != "sub/a.txt" {
		t.Errorf("Rel = %q", rel)
	}
}

func TestResolveBadInput(t *testing.T) {
	g, _, _ := setup(t)
	for _, p := range []string{"", "a\x00b"} {
		if _, err := g.Resolve(p); err == nil {
			t.Errorf("Resolve(%q) accepted", p)
		}
	}
	if _, err := New(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("New accepted a missing root")
	}
}

func FuzzResolve(f *testing.F) {
	base := f.TempDir()
	root := filepath.Join(base, "root")
	os.MkdirAll(filepath.Join(root, "d"), 0o755)
	os.Symlink(base, filepath.Join(root, "up"))
	g, err := New(root)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"a", "../x", "d/../../x", "up/root/d", "/", "d//./e", "up"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := g.Resolve(p)
		if err != nil {
			return
		}
		if got != g.Root() && !strings.HasPrefix(got, g.Root()+string(filepath.Separator)) {
			t.Fatalf("Resolve(%q) = %s escapes %s", p, got, g.Root())
		}
	})
}
