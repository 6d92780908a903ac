package toolenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/proc"
)

// resolved is a fresh temporary folder with its links resolved.
func resolved(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// write writes files under dir; a name ending in "*" is made executable.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, "*") {
			name, mode = strings.TrimSuffix(name, "*"), 0o755
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// A go.work above the root would bring modules from outside it into the
// server's answers; untrusted, GOWORK=off. One inside the root is used.
func TestGoWorkOutsideTheRootIsNotUsed(t *testing.T) {
	t.Setenv("GOWORK", "")
	os.Unsetenv("GOWORK")
	base := resolved(t)
	root := filepath.Join(base, "app")
	write(t, base, map[string]string{"go.work": "go 1.22\n\nuse ./app\nuse ./secret\n", "app/go.mod": "module example.com/app\n"})
	if env := New([]string{root}, false).Child(root); !slices.Contains(env, "GOWORK=off") {
		t.Errorf("a go.work outside the root: want GOWORK=off in the environment")
	}
	if New([]string{root}, true).Child(root) != nil {
		t.Errorf("trusted: want this process's environment, unchanged")
	}
	write(t, root, map[string]string{"go.work": "go 1.22\n\nuse .\n"})
	if env := New([]string{root}, false).Child(root); slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, "GOWORK=") }) {
		t.Errorf("a go.work inside the root: want GOWORK left alone")
	}
}

// N1: the pins ask only the managers the trimmed PATH finds. A rustup the
// checkout carries, first on PATH, is never run, and its folder is not on
// the child's PATH; the user's, after it, is asked for the default.
func TestPinsAskNoManagerInTheRoot(t *testing.T) {
	root, mine := resolved(t), resolved(t)
	marker := filepath.Join(resolved(t), "ran")
	write(t, root, map[string]string{"bin/rustup*": "#!/bin/sh\necho \"$0 $*\" >> " + marker + "\necho 'checkout (default)'\n"})
	write(t, mine, map[string]string{"rustup*": "#!/bin/sh\n[ \"$1\" = default ] && echo 'mine (default)'\n"})
	sep := string(filepath.ListSeparator)
	t.Setenv("PATH", filepath.Join(root, "bin")+sep+mine+sep+os.Getenv("PATH"))
	t.Setenv("RUSTUP_HOME", resolved(t))
	t.Setenv("RUSTUP_TOOLCHAIN", "")
	os.Unsetenv("RUSTUP_TOOLCHAIN")

	env := New([]string{root}, false)
	if pins := env.Pins(); !slices.Contains(pins, "RUSTUP_TOOLCHAIN=mine") {
		t.Errorf("pins %v: want the default of the rustup outside the root", pins)
	}
	if got, _ := os.ReadFile(marker); len(got) > 0 {
		t.Fatalf("the checkout's rustup ran: %s", got)
	}
	i := slices.IndexFunc(env.Child(""), func(e string) bool { return strings.HasPrefix(e, "PATH=") })
	if i < 0 || strings.Contains(env.Child("")[i], root) {
		t.Errorf("the child's PATH leads into the root, or is missing (%d)", i)
	}
	if New([]string{root}, true).Child("") != nil {
		t.Error("trusted: want this process's environment, unchanged")
	}
}

// The pins the untrusted environment carries, for the record.
func TestUntrustedEnvironmentPins(t *testing.T) {
	t.Parallel()
	env := New([]string{resolved(t)}, false)
	p := env.pins()
	t.Logf("pins: %v (volta %q); probes run in %s", p.set, p.voltaBin, proc.NeutralDir)
	if _, err := exec.LookPath("rustup"); err == nil && !slices.ContainsFunc(p.set, func(e string) bool { return strings.HasPrefix(e, "RUSTUP_TOOLCHAIN=") }) && os.Getenv("RUSTUP_TOOLCHAIN") == "" {
		t.Error("rustup is installed, but RUSTUP_TOOLCHAIN is not pinned")
	}
	if set, ok := env.Pinned(); !ok || !slices.Equal(set, p.set) {
		t.Errorf("Pinned %v, %v: want the pins last used, %v", set, ok, p.set)
	}
}
