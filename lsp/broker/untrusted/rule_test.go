package untrusted

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// pinned is env with GOTOOLCHAIN and every manager's pin an untrusted
// start needs set, as lsp/toolenv's Env.Child sets them.
func pinned(env []string) []string {
	env = append(slices.Clip(env), "GOTOOLCHAIN=local")
	get := lookup(env)
	for _, m := range ManagerPins(env) {
		if get(m.Var) == "" {
			env = append(env, m.Var+"=system")
		}
	}
	return env
}

// N1: NODE_OPTIONS and GOFLAGS are read option by option: what they name
// outside the root, a built-in module and the options that load nothing
// pass; what they name inside it or relative to the working folder is
// refused (TestCheckoutPinsRefused starts the servers).
func TestCheckUntrustedOptions(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "hook.js")
	base := []string{"GOTOOLCHAIN=local"} // no PATH, no HOME: no manager to pin
	for _, c := range []struct {
		name, value string
		refused     bool
	}{
		{"NODE_OPTIONS", "--max-old-space-size=4096 --enable-source-maps", false},
		{"NODE_OPTIONS", "--require " + outside + " --import=node:fs", false},
		{"NODE_OPTIONS", "--import=file://" + outside, false},
		{"NODE_OPTIONS", "--experimental-loader " + filepath.Join(root, "l.mjs"), true},
		{"NODE_OPTIONS", "-r", false}, // no value: Node refuses it itself
		{"NODE_OPTIONS", "--openssl-config=./openssl.cnf", true},
		{"GOFLAGS", "-mod=mod -tags=x -toolexec=" + outside + " -modfile=" + outside, false},
		{"GOFLAGS", "-toolexec=" + filepath.Join(root, "x") + " -v", true},
		{"GOFLAGS", "'-overlay=" + filepath.Join(root, "a b.json") + "'", true},
	} {
		err := Check("", root, append(slices.Clip(base), c.name+"="+c.value))
		if (err != nil) != c.refused {
			t.Errorf("%s=%s: %v, want refused %v", c.name, c.value, err, c.refused)
		}
	}
}

// BenchmarkCheckUntrusted is the rule (Check) as the broker applies to each
// hello: this process's environment, pinned, over a root of its own.
func BenchmarkCheckUntrusted(b *testing.B) {
	root := b.TempDir()
	env := pinned(os.Environ())
	bin, err := LookOutside("sh", root, env)
	if err != nil {
		b.Skip(err)
	}
	for b.Loop() {
		if err := Check(bin, root, env); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkManagerPins is the managers' lookup each hello's rule makes.
func BenchmarkManagerPins(b *testing.B) {
	env := os.Environ()
	for b.Loop() {
		ManagerPins(env)
	}
}

// The rule's cached answers (fscache.go) follow the file system: a
// manager installed, made executable or not, or linked elsewhere, and a
// plugin added, change ManagerPins' next answer; a link retargeted into
// the root, or a root moved behind its link, changes within's. A stale
// answer here would let a checkout's choice through.
func TestCheckoutCachesFollowChanges(t *testing.T) {
	bin, other, home := t.TempDir(), t.TempDir(), t.TempDir()
	env := []string{"PATH=" + bin, "HOME=" + home}
	has := func(name string) bool {
		return slices.ContainsFunc(ManagerPins(env), func(m ManagerPin) bool { return m.Var == name })
	}
	step := func(what string, do func() error, name string, want bool) {
		t.Helper()
		if err := do(); err != nil {
			t.Fatal(err)
		}
		if got := has(name); got != want {
			t.Fatalf("after %s: %s pinned %v, want %v", what, name, got, want)
		}
	}
	rustup := filepath.Join(bin, "rustup")
	step("nothing", func() error { return nil }, "RUSTUP_TOOLCHAIN", false)
	step("rustup installed", func() error { return os.WriteFile(rustup, []byte("#!/bin/sh\n"), 0o755) }, "RUSTUP_TOOLCHAIN", true)
	step("rustup made not executable", func() error { return os.Chmod(rustup, 0o644) }, "RUSTUP_TOOLCHAIN", false)
	step("rustup made executable", func() error { return os.Chmod(rustup, 0o755) }, "RUSTUP_TOOLCHAIN", true)
	target := filepath.Join(other, "rustup")
	step("rustup a link to a file not executable", func() error {
		if err := os.WriteFile(target, []byte("#!/bin/sh\n"), 0o644); err != nil {
			return err
		}
		os.Remove(rustup)
		return os.Symlink(target, rustup)
	}, "RUSTUP_TOOLCHAIN", false)
	step("the link's target made executable", func() error { return os.Chmod(target, 0o755) }, "RUSTUP_TOOLCHAIN", true)
	step("rustup removed", func() error { return os.Remove(rustup) }, "RUSTUP_TOOLCHAIN", false)
	step("an asdf plugin added", func() error { return os.MkdirAll(filepath.Join(home, ".asdf", "plugins", "nodejs"), 0o755) }, "ASDF_NODEJS_VERSION", true)
	step("pyenv installed in PYENV_ROOT", func() error {
		return os.MkdirAll(filepath.Join(home, ".pyenv", "bin"), 0o755)
	}, "PYENV_VERSION", false)
	step("pyenv's program written", func() error {
		return os.WriteFile(filepath.Join(home, ".pyenv", "bin", "pyenv"), []byte("#!/bin/sh\n"), 0o755)
	}, "PYENV_VERSION", true)

	// Folders unchanged for long are answered from the cache.
	old := []string{"PATH=/proc"}
	ManagerPins(old)
	pinAnswers.Lock()
	_, kept := pinAnswers.m[strings.Join([]string{"/proc", "", "", ""}, "\x00")]
	pinAnswers.Unlock()
	if !kept {
		t.Error("the answer for an environment of old folders was not kept")
	}

	root, outside := t.TempDir(), t.TempDir()
	link := filepath.Join(t.TempDir(), "tools")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	if within(link, root) {
		t.Fatal("a link to a folder outside the root is taken for inside it")
	}
	os.Remove(link)
	if err := os.Symlink(filepath.Join(root), link); err != nil {
		t.Fatal(err)
	}
	if !within(link, root) {
		t.Fatal("a link retargeted into the root is still taken for outside it")
	}
	// The root behind a link: moved, the link follows it.
	rootLink := filepath.Join(t.TempDir(), "root")
	if err := os.Symlink(outside, rootLink); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "sub")
	os.Mkdir(sub, 0o755)
	if within(sub, rootLink) {
		t.Fatal("a folder of another tree is taken for inside the linked root")
	}
	os.Remove(rootLink)
	if err := os.Symlink(root, rootLink); err != nil {
		t.Fatal(err)
	}
	if !within(sub, rootLink) {
		t.Fatal("the linked root's new target is not seen")
	}
}
