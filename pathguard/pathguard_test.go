//go:build unix

package pathguard

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
		// D15: ".." after a link is taken from the link's target, as the
		// kernel does: escape/.. is the folder above outside/.
		"escape/../secret",
		"escape/../outside/secret",
	} {
		_, err := g.Resolve(p)
		if err == nil {
			t.Errorf("Resolve(%q) accepted a path outside the root", p)
			continue
		}
		if !errors.Is(err, ErrOutside) || !strings.Contains(err.Error(), root) {
			t.Errorf("Resolve(%q) error %q should wrap ErrOutside and name the root %s", p, err, root)
		}
		// N9: a link out is said to lead outside; where it points is not
		// named.
		if rest := strings.Replace(err.Error(), Clip(p), "", 1); strings.Contains(rest, "outside/") || strings.Contains(rest, "nothing-yet") {
			t.Errorf("Resolve(%q) error %q names the outside target", p, err)
		}
	}
	if _, err := g.Resolve("escape/secret"); err == nil || !strings.Contains(err.Error(), `"escape/secret" leads outside the root`) {
		t.Errorf("link out: %v", err)
	}
	// N9: a file where a folder should be is named, in the root's terms.
	if _, err := g.Resolve("sub/a.txt/x"); err == nil || err.Error() != `path "sub/a.txt/x": sub/a.txt is not a folder` {
		t.Errorf("file as a folder: %v", err)
	}
}

func TestResolveAccepts(t *testing.T) {
	g, root, _ := setup(t)
	cases := map[string]string{
		"sub/a.txt":                      filepath.Join(root, "sub", "a.txt"),
		"./sub/../sub/a.txt":             filepath.Join(root, "sub", "a.txt"),
		filepath.Join(root, "sub/a.txt"): filepath.Join(root, "sub", "a.txt"),
		"inlink/a.txt":                   filepath.Join(root, "sub", "a.txt"),
		"inlink/../sub/a.txt":            filepath.Join(root, "sub", "a.txt"),
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
	for _, p := range []string{"", "a\x00b", "missing-\uFFFD.txt", strings.Repeat("d/", 3000)} {
		_, err := g.Resolve(p)
		if err == nil {
			t.Errorf("Resolve(%q) accepted", p)
			continue
		}
		// D10: a huge path is never echoed back whole.
		if len(err.Error()) > 1000 {
			t.Errorf("Resolve of a %d-byte path: a %d-byte error", len(p), len(err.Error()))
		}
		if strings.Contains(p, "\uFFFD") && !strings.Contains(err.Error(), "not UTF-8") {
			t.Errorf("Resolve(%q): %v, want the U+FFFD explained", p, err)
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

// D6: a named pipe is refused without blocking, whatever reads it.
func TestOpenRefusesPipesWithoutBlocking(t *testing.T) {
	g, root, _ := setup(t)
	fifo := filepath.Join(root, "p.go")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err) // unix always has FIFOs; testenv imports this package
	}
	if _, _, err := g.Open(fifo); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("Open of a FIFO: %v", err)
	}
	if _, _, err := g.ReadFile(fifo, 0); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadFile of a FIFO: %v", err)
	}
	if _, _, err := g.Open(filepath.Join(root, "escape", "secret")); err == nil {
		t.Error("Open followed a link out of the root")
	}
	data, _, err := g.ReadFile(filepath.Join(root, "sub", "a.txt"), 0)
	if err != nil || string(data) != "a" {
		t.Errorf("ReadFile: %q %v", data, err)
	}
	if _, _, err := g.ReadFile(filepath.Join(root, "sub", "a.txt"), 0); err != nil {
		t.Error(err)
	}
	os.WriteFile(filepath.Join(root, "big"), make([]byte, 100), 0o644)
	if _, _, err := g.ReadFile(filepath.Join(root, "big"), 10); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFile over the limit: %v", err)
	}
}
