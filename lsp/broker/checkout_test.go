package broker

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/lsp/broker/untrusted"
)

// wrapper writes an executable script at path that appends a line to
// marker (so a test sees whether it ran) and runs real with its arguments.
func wrapper(t *testing.T, path, real, marker string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho ran >> '" + marker + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// ran waits (bounded) for the wrapper's marker; false when it never came.
func ran(marker string, wait time.Duration) bool {
	return testenv.Until(wait, func() bool {
		_, err := os.Stat(marker)
		return err == nil
	})
}

// pinnedEnv is this process's environment with every pin an untrusted
// start needs set (as lsp/toolenv's Env.Child sets them).
func pinnedEnv() []string {
	env := withEnv(os.Environ(), "GOTOOLCHAIN", "local")
	for _, m := range untrusted.ManagerPins(env) {
		if os.Getenv(m.Var) == "" {
			env = withEnv(env, m.Var, "system")
		}
	}
	return env
}

// greeter greets the broker in dir with a hello, keeping an accepted
// connection open for the test.
func greeter(t *testing.T, dir string) func(h Hello) error {
	return func(h Hello) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := Dial(ctx, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Greet(ctx, c, h); err != nil {
			return err
		}
		t.Cleanup(func() { c.Close() })
		return nil
	}
}

// N1, issue 32 §2: the broker applies the whole checkout-toolchain rule
// to an untrusted hello, whatever the process worked out: a server
// program inside the root (pyright in the checkout's node_modules/.bin)
// is refused with what and why, and nothing runs; a trusted hello with
// the same program starts it. Before, the broker checked only
// GOTOOLCHAIN and started the checkout's program.
func TestCheckoutProgramRefused(t *testing.T) {
	real := testenv.LookPath(t, "pyright-langserver")
	root := testenv.Tree(t, map[string]string{"pyproject.toml": "[project]\nname = \"m\"\n", "m.py": "x = 1\n"})
	marker := filepath.Join(t.TempDir(), "ran")
	bin := filepath.Join(root, "node_modules", ".bin", "pyright-langserver")
	wrapper(t, bin, real, marker)
	greet := greeter(t, serve(t))
	env := pinnedEnv()
	h := Hello{Server: "pyright", Bin: bin, Args: []string{"--stdio"}, Dir: root, Env: env}

	err := greet(h)
	if err == nil || !strings.Contains(err.Error(), "its program node_modules/.bin/pyright-langserver lies inside the root") || !strings.Contains(err.Error(), "checkout's own code") {
		t.Fatalf("an untrusted hello naming the checkout's pyright: %v", err)
	}
	if ran(marker, 0) {
		t.Fatal("the checkout's program ran for an untrusted hello")
	}
	// Linked from outside the root: the link's target is the root's.
	link := filepath.Join(t.TempDir(), "pyright-langserver")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	h.Bin = link
	if err := greet(h); err == nil || !strings.Contains(err.Error(), "lies inside the root") {
		t.Fatalf("an untrusted hello naming a link to the checkout's pyright: %v", err)
	}
	if ran(marker, 0) {
		t.Fatal("the checkout's program ran through a link for an untrusted hello")
	}

	h.Bin, h.Trusted = bin, true
	if err := greet(h); err != nil {
		t.Fatalf("a trusted hello naming the checkout's pyright: %v", err)
	}
	if !ran(marker, time.Minute) {
		t.Fatal("the trusted hello's program never ran")
	}
}

// N1, issue 32 §2: an untrusted hello whose environment lets the checkout
// choose a toolchain, an interpreter or code to load is refused, saying
// which variable and why, and its server (gopls, through a wrapper
// outside the root that marks each run) is not started; a trusted hello
// with the same environment starts it. Before, each of these started
// gopls (the broker checked only GOTOOLCHAIN).
func TestCheckoutPinsRefused(t *testing.T) {
	root, gopls := goModule(t)
	tools := t.TempDir()
	marker := filepath.Join(tools, "ran")
	bin := filepath.Join(tools, "gopls")
	wrapper(t, bin, gopls, marker)
	// A rustup and a pyenv installed outside the root: their pins must be set.
	managers := t.TempDir()
	for _, p := range []string{filepath.Join(managers, "bin", "rustup"), filepath.Join(managers, "pyenv", "bin", "pyenv")} {
		testenv.WriteTree(t, filepath.Dir(p), map[string]string{filepath.Base(p): "#!/bin/sh\nexit 1\n"})
		os.Chmod(p, 0o755)
	}
	asdf := filepath.Join(managers, "asdf")
	os.MkdirAll(filepath.Join(asdf, "plugins", "nodejs"), 0o755)
	pinned := withEnv(withEnv(withEnv(withEnv(withEnv(pinnedEnv(),
		"GOTOOLCHAIN", "local"), "RUSTUP_TOOLCHAIN", "stable"), "PYENV_VERSION", "system"),
		"PYENV_ROOT", filepath.Join(managers, "pyenv")), "ASDF_DATA_DIR", asdf)
	pinned = withEnv(withEnv(pinned, "ASDF_NODEJS_VERSION", "system"), "PATH", filepath.Join(managers, "bin")+":"+os.Getenv("PATH"))
	unset := func(env []string, name string) []string {
		var out []string
		for _, e := range env {
			if !strings.HasPrefix(e, name+"=") {
				out = append(out, e)
			}
		}
		return out
	}
	inRoot := func(p string) string { return filepath.Join(root, p) }
	// Shown root-relative.
	for _, c := range []struct {
		name string
		env  []string
		want string
	}{
		{"rust-toolchain", unset(pinned, "RUSTUP_TOOLCHAIN"), "RUSTUP_TOOLCHAIN is unset while " + filepath.Join(managers, "bin", "rustup") + " is installed, so it would follow the checkout's rust-toolchain.toml"},
		{"rustup path", withEnv(pinned, "RUSTUP_TOOLCHAIN", inRoot("tc")), `RUSTUP_TOOLCHAIN names "tc", inside the root, so rustup runs that toolchain`},
		{"python-version", unset(pinned, "PYENV_VERSION"), "PYENV_VERSION is unset while "}, // pyenv here, else the one in PYENV_ROOT
		{"tool-versions", unset(pinned, "ASDF_NODEJS_VERSION"), "ASDF_NODEJS_VERSION is unset"},
		{"asdf path", withEnv(pinned, "ASDF_NODEJS_VERSION", "path:"+inRoot("node")), `ASDF_NODEJS_VERSION names "path:node", inside the root, so asdf would run that folder's programs`},
		{"virtualenv", withEnv(pinned, "VIRTUAL_ENV", inRoot(".venv")), `VIRTUAL_ENV names ".venv", inside the root, so Python servers run that virtualenv's interpreter`},
		{"pythonpath", withEnv(pinned, "PYTHONPATH", "/usr/lib/x:"+inRoot("src")), `PYTHONPATH names "src", inside the root, so Python imports modules from there`},
		{"node_path", withEnv(pinned, "NODE_PATH", inRoot("node_modules")), `NODE_PATH names "node_modules", inside the root, so Node loads modules from there`},
		{"path", withEnv(pinned, "PATH", inRoot(".venv/bin")+":"+os.Getenv("PATH")), `PATH names ".venv/bin", inside the root, so programs it runs are looked up there`},
		{"relative path", withEnv(pinned, "PATH", os.Getenv("PATH")+":."), `PATH names ".", a folder relative to the working folder (the checkout)`},
		{"goroot", withEnv(pinned, "GOROOT", inRoot("go")), `GOROOT names "go", inside the root, so the go command runs that toolchain`},
		{"gotoolchain", withEnv(pinned, "GOTOOLCHAIN", "auto"), "GOTOOLCHAIN=auto lets the checkout choose the Go toolchain"},
		{"node require", withEnv(pinned, "NODE_OPTIONS", "--max-old-space-size=4096 --require ./x.js"), `NODE_OPTIONS names "./x.js" in --require, a folder relative to the working folder (the checkout), so Node loads that code before the server's own`},
		{"node -r", withEnv(pinned, "NODE_OPTIONS", "-r x"), `NODE_OPTIONS names "x" in -r`},
		{"node import", withEnv(pinned, "NODE_OPTIONS", "--import=file://"+inRoot("hook.mjs")), `NODE_OPTIONS names "hook.mjs" in --import, inside the root`},
		{"node loader", withEnv(pinned, "NODE_OPTIONS", `--loader "`+inRoot("l.mjs")+`"`), `NODE_OPTIONS names "l.mjs" in --loader, inside the root`},
		{"toolexec", withEnv(pinned, "GOFLAGS", "-mod=mod -toolexec=./x"), `GOFLAGS names "./x" in -toolexec, a folder relative to the working folder (the checkout), so the go command gopls runs reads or runs it`},
		{"modfile", withEnv(pinned, "GOFLAGS", "-modfile="+inRoot("alt.mod")), `GOFLAGS names "alt.mod" in -modfile, inside the root`},
		{"overlay", withEnv(pinned, "GOFLAGS", "--overlay=o.json"), `GOFLAGS names "o.json" in -overlay`},
	} {
		t.Run(c.name, func(t *testing.T) {
			greet := greeter(t, serve(t))
			os.Remove(marker)
			h := Hello{Server: "gopls", Bin: bin, Dir: root, Env: c.env}
			err := greet(h)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "not started for this untrusted root") || strings.Contains(err.Error(), root) {
				t.Fatalf("an untrusted hello: %v\nwant it refused with %q", err, c.want)
			}
			if ran(marker, 0) {
				t.Fatal("gopls started for the refused hello")
			}
			h.Trusted = true
			if err := greet(h); err != nil {
				t.Fatalf("a trusted hello with the same environment: %v", err)
			}
			if !ran(marker, time.Minute) {
				t.Fatal("the trusted hello's gopls never ran")
			}
		})
	}
	// The pinned environment itself is accepted untrusted.
	os.Remove(marker)
	if err := greeter(t, serve(t))(Hello{Server: "gopls", Bin: bin, Dir: root, Env: pinned}); err != nil {
		t.Fatalf("an untrusted hello with every pin set: %v", err)
	}
}
