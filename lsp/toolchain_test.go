package lsp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// N1: toolchain managers pick the program a shim runs from a file in the
// working folder or above it. For an untrusted checkout nothing the
// checkout names this way may run through lsp status, hover, symbols, a
// start or a checker; trusted, it does (which shows each test would see
// it). The tests that change the environment (HOME, PATH, a manager's
// folder) are not parallel.

// script writes an executable shell script.
func script(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// resolved is a fresh temporary folder with its links resolved.
func resolved(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// checkoutProgram is a program inside the checkout that records each run
// in marker, answers a version probe, and otherwise becomes the fake
// server that answers initialize.
func checkoutProgram(t *testing.T, path, marker string) {
	exe, _ := os.Executable()
	script(t, path, fmt.Sprintf("echo \"$0 $*\" >> %s\n[ \"$1\" = --version ] && { echo 'checkout 9.9.9'; exit 0; }\nexec %s -fake-lsp=mute\n", marker, exe))
}

// shimSpec is a one-row table whose program is a manager's shim name.
func shimSpec(program string) []langserver.Spec {
	return []langserver.Spec{{ID: program, Language: "Fake", Command: []string{program}, Probe: []string{"--version"},
		Install: "a test shim", RootMarkers: []string{"fake.toml"}, Extensions: map[string]string{".fake": "fake"}}}
}

// checkoutRunsTrusted starts the shim fakels over root, trusted, and
// wants marker to say the checkout's program (its path ends in rel) ran.
func checkoutRunsTrusted(t *testing.T, root, marker, rel string) {
	t.Helper()
	trusted := NewSupervisor(root, Config{Servers: shimSpec("fakels"), Trusted: true, StartTimeout: 20 * time.Second})
	defer trusted.Close()
	if _, err := trusted.Reload(t.Context(), loc(t, trusted, filepath.Join(root, "a.fake"))); err != nil {
		t.Fatal(err)
	}
	if got := readMarker(marker); !strings.Contains(got, rel) {
		t.Fatalf("trusted, the checkout's fakels did not run (%q)", got)
	}
}

// touchAll runs status, a start (reload), hover and a workspace search,
// the read calls that start programs.
func touchAll(t *testing.T, sup *Supervisor, file string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st := sup.Status(ctx)
	for _, row := range st.Servers {
		t.Logf("status %s: %s %s %s", row.ID, row.State, row.Binary, row.RunError)
	}
	if _, err := sup.Reload(ctx, loc(t, sup, file)); err != nil {
		t.Logf("reload: %v", err)
	}
	if _, err := sup.Hover(ctx, loc(t, sup, file), protocol.Place{Line: 1, Symbol: "hello"}); err != nil {
		t.Logf("hover: %v", err)
	}
	if _, err := sup.Symbols(ctx, "hello", pathguard.Path{}); err != nil {
		t.Logf("symbols: %v", err)
	}
	if rep, err := sup.Check(ctx); err == nil {
		t.Logf("check: %+v", rep.Runs)
	}
}

// N1, the report's case: rust-toolchain.toml names a toolchain folder in
// the checkout, whose bin/rust-analyzer rustup's proxy would run, for the
// probe (in the process's folder, here the checkout) and for the start.
func TestRustToolchainFileIsNotFollowedUntrusted(t *testing.T) {
	rustup := testenv.LookPath(t, "rustup")
	ra := testenv.LookPath(t, "rust-analyzer")
	if !sameFile(rustup, ra) {
		t.Skipf("rust-analyzer (%s) is not rustup's proxy here", ra)
	}
	root := resolved(t)
	marker := filepath.Join(resolved(t), "ran")
	for _, name := range []string{"rust-analyzer", "cargo", "rustc"} {
		checkoutProgram(t, filepath.Join(root, "tc", "bin", name), marker)
	}
	plant(t, root, marker, map[string]string{
		"rust-toolchain.toml": "[toolchain]\npath = \"" + filepath.Join(root, "tc") + "\"\n",
		"Cargo.toml":          "[package]\nname = \"x\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"src/main.rs":         "fn main() { let hello = 1; }\n",
	})
	t.Chdir(root)
	sup := NewSupervisor(root, Config{StartTimeout: 20 * time.Second, RequestTimeout: 5 * time.Second})
	touchAll(t, sup, filepath.Join(root, "src", "main.rs"))
	row := statusRow(t, sup.Status(t.Context()), "rust-analyzer")
	sup.Close()
	if got := readMarker(marker); got != "" {
		t.Fatalf("an untrusted checkout's toolchain ran:\n%s", got)
	}
	if row.State == answer.StateAvailable && !strings.Contains(row.RunError, "checkout") {
		t.Logf("rust-analyzer of the default toolchain runs here: %+v", row)
	}

	trusted := NewSupervisor(root, Config{Trusted: true})
	defer trusted.Close()
	row = statusRow(t, trusted.Status(t.Context()), "rust-analyzer")
	if got := readMarker(marker); !strings.Contains(got, filepath.Join("tc", "bin", "rust-analyzer")+" --version") {
		t.Fatalf("trusted, the checkout's toolchain did not run (so the test cannot see it); status %+v, ran %q", row, got)
	}
}

func sameFile(a, b string) bool {
	ia, err1 := os.Stat(a)
	ib, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ia, ib)
}

// N1 for pyenv: its shims run the version .python-version names. Only
// installed versions can be named, so the checkout chooses an interpreter
// rather than a program of its own; untrusted, it chooses nothing.
func TestPythonVersionFileIsNotFollowedUntrusted(t *testing.T) {
	pyenv := testenv.LookPath(t, "pyenv")
	python, err := exec.LookPath("python")
	if err != nil || !strings.Contains(python, filepath.Join("pyenv", "shims")) && !strings.Contains(python, filepath.Join(".pyenv", "shims")) {
		t.Skipf("python on PATH (%s) is not a pyenv shim", python)
	}
	out, err := proc.Probe(t.Context(), pyenv, "version-name")
	if err != nil {
		t.Skipf("pyenv has no default version: %v (%s)", err, proc.ExplainingLine(string(out)))
	}
	def := strings.TrimSpace(string(out))
	list, err := proc.Probe(t.Context(), pyenv, "versions", "--bare", "--skip-aliases")
	if err != nil {
		list = nil
	}
	other := ""
	for _, v := range strings.Fields(string(list)) {
		if v != def && !strings.Contains(v, "/") && !strings.Contains(def, v) {
			other = v
			break
		}
	}
	if other == "" {
		t.Skipf("pyenv has one version (%s); the test needs two", def)
	}
	root := resolved(t)
	marker := filepath.Join(resolved(t), "python")
	bin := filepath.Join(resolved(t), "pyserver")
	exe, _ := os.Executable()
	// A server that, like pyright, runs `python` from PATH in its folder.
	script(t, bin, fmt.Sprintf("python -c 'import sys; print(sys.version.split()[0])' >> %s 2>&1\nexec %s -fake-lsp=mute\n", marker, exe))
	plant(t, root, marker, map[string]string{"fake.toml": "", "a.fake": "hello\n", ".python-version": other + "\n"})
	spec := shimSpec(bin)
	spec[0].ID, spec[0].Probe = "pyserver", nil
	start := func(cfg Config) string {
		os.Remove(marker)
		cfg.Servers, cfg.StartTimeout = spec, 20*time.Second
		sup := NewSupervisor(root, cfg)
		defer sup.Close()
		if _, err := sup.Reload(t.Context(), loc(t, sup, filepath.Join(root, "a.fake"))); err != nil {
			t.Fatal(err)
		}
		return readMarker(marker)
	}
	want := func(v string) string { return strings.Join(strings.Split(v, ".")[:2], ".") }
	if got := start(Config{}); !strings.HasPrefix(got, want(def)) {
		t.Errorf("untrusted, the server's python is %q; want the default %s, not the checkout's %s", got, def, other)
	}
	if got := start(Config{Trusted: true}); !strings.HasPrefix(got, want(other)) {
		t.Errorf("trusted, the server's python is %q; want the checkout's %s (the test cannot see the difference otherwise)", got, other)
	}
}

// fakeManager sets up the environment for a fake manager: HOME, PATH with
// shimDir first, and env.
func fakeManager(t *testing.T, shimDir string, env map[string]string) {
	t.Setenv("HOME", resolved(t))
	t.Setenv("PATH", shimDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	for k, v := range env {
		t.Setenv(k, v)
	}
}

// N1 for asdf: a shim runs the version .tool-versions names, and
// "path:DIR" runs DIR/bin/<tool>. The fake shim reads the files as asdf
// does (ASDF_<TOOL>_VERSION first, then .tool-versions from the working
// folder up, then the one in HOME).
func TestToolVersionsFileIsNotFollowedUntrusted(t *testing.T) {
	data := resolved(t)
	marker := filepath.Join(resolved(t), "ran")
	installed := filepath.Join(resolved(t), "installed")
	exe, _ := os.Executable()
	script(t, filepath.Join(data, "installs", "fakels", "1.0", "bin", "fakels"),
		fmt.Sprintf("echo \"$*\" >> %s\n[ \"$1\" = --version ] && { echo 'fakels 1.0'; exit 0; }\nexec %s -fake-lsp=mute\n", installed, exe))
	os.MkdirAll(filepath.Join(data, "plugins", "fakels"), 0o755)
	script(t, filepath.Join(data, "shims", "fakels"), `v="$ASDF_FAKELS_VERSION"
if [ -z "$v" ]; then
	d="$PWD"
	while :; do
		if [ -f "$d/.tool-versions" ]; then
			v=$(awk '$1=="fakels" {print $2; exit}' "$d/.tool-versions")
			[ -n "$v" ] && break
		fi
		[ "$d" = / ] && break
		d=$(dirname "$d")
	done
fi
[ -z "$v" ] && [ -f "$HOME/.tool-versions" ] && v=$(awk '$1=="fakels" {print $2; exit}' "$HOME/.tool-versions")
case "$v" in
	path:*) exec "${v#path:}/bin/fakels" "$@" ;;
	""|system) echo "asdf: no version set for fakels" >&2; exit 126 ;;
	*) exec "$ASDF_DATA_DIR/installs/fakels/$v/bin/fakels" "$@" ;;
esac
`)
	fakeManager(t, filepath.Join(data, "shims"), map[string]string{"ASDF_DATA_DIR": data})
	os.Unsetenv("ASDF_FAKELS_VERSION")
	os.WriteFile(filepath.Join(os.Getenv("HOME"), ".tool-versions"), []byte("fakels 1.0\n"), 0o644)

	root := resolved(t)
	checkoutProgram(t, filepath.Join(root, "tc", "bin", "fakels"), marker)
	plant(t, root, marker, map[string]string{"fake.toml": "", "a.fake": "hello\n", ".tool-versions": "fakels path:" + filepath.Join(root, "tc") + "\n"})
	sup := NewSupervisor(root, Config{Servers: shimSpec("fakels"), StartTimeout: 20 * time.Second, RequestTimeout: 2 * time.Second})
	touchAll(t, sup, filepath.Join(root, "a.fake"))
	sup.Close()
	if got := readMarker(marker); got != "" {
		t.Fatalf("an untrusted checkout's .tool-versions chose what ran:\n%s", got)
	}
	if got := readMarker(installed); !strings.Contains(got, "--version") {
		t.Errorf("the user's own fakels 1.0 did not run either (%q): the shim does not work", got)
	}

	checkoutRunsTrusted(t, root, marker, filepath.Join("tc", "bin", "fakels"))
}

// N1 for Volta: a shim runs the checkout's node_modules/.bin copy of a
// tool its package.json lists as a dependency. Untrusted, the program
// `volta which` names outside the checkout runs instead.
func TestVoltaProjectToolIsNotRunUntrusted(t *testing.T) {
	home := resolved(t)
	marker := filepath.Join(resolved(t), "ran")
	installed := filepath.Join(home, "tools", "image", "packages", "fakels", "bin", "fakels")
	exe, _ := os.Executable()
	script(t, installed, fmt.Sprintf("[ \"$1\" = --version ] && { echo 'fakels 1.0'; exit 0; }\nexec %s -fake-lsp=mute\n", exe))
	// Resolution as Volta's: the nearest package.json; its project copy
	// when it lists the tool, else the installed default.
	resolve := fmt.Sprintf(`d="$PWD"
bin=%s
while :; do
	if [ -f "$d/package.json" ]; then
		if grep -q '"fakels"' "$d/package.json" && [ -x "$d/node_modules/.bin/fakels" ]; then bin="$d/node_modules/.bin/fakels"; fi
		break
	fi
	[ "$d" = / ] && break
	d=$(dirname "$d")
done
`, installed)
	script(t, filepath.Join(home, "bin", "fakels"), resolve+"exec \"$bin\" \"$@\"\n")
	script(t, filepath.Join(home, "bin", "volta"), "[ \"$1\" = which ] || exit 2\n"+resolve+"echo \"$bin\"\n")
	fakeManager(t, filepath.Join(home, "bin"), map[string]string{"VOLTA_HOME": home})

	root := resolved(t)
	checkoutProgram(t, filepath.Join(root, "node_modules", ".bin", "fakels"), marker)
	plant(t, root, marker, map[string]string{"fake.toml": "", "a.fake": "hello\n",
		"package.json": `{"name": "x", "devDependencies": {"fakels": "1.0.0"}}`})
	sup := NewSupervisor(root, Config{Servers: shimSpec("fakels"), StartTimeout: 20 * time.Second, RequestTimeout: 2 * time.Second})
	touchAll(t, sup, filepath.Join(root, "a.fake"))
	row := statusRow(t, sup.Status(t.Context()), "fakels")
	sup.Close()
	if got := readMarker(marker); got != "" {
		t.Fatalf("an untrusted checkout's node_modules/.bin/fakels ran through the Volta shim:\n%s", got)
	}
	if row.Binary != installed {
		t.Errorf("status: want the binary Volta runs outside the checkout (%s), got %q", installed, row.Binary)
	}

	checkoutRunsTrusted(t, root, marker, filepath.Join("node_modules", ".bin", "fakels"))
}

// N1 audit: nvm, fnm and direnv act only through a shell's hooks, and npm
// only when a server installs types (off untrusted). Fake ones on PATH
// that, like the real ones, would act on .nvmrc, .node-version, .envrc and
// .npmrc record any run: lsp never runs them for a TypeScript checkout.
// This pins what the audit found; it is not a defect the code had.
func TestShellHookManagersAreNeverRun(t *testing.T) {
	testenv.LookPath(t, "typescript-language-server")
	bin := resolved(t)
	marker := filepath.Join(resolved(t), "ran")
	for _, name := range []string{"nvm", "fnm", "direnv", "npm", "npx", "yarn", "pnpm"} {
		script(t, filepath.Join(bin, name), "echo \"$0 $*\" >> "+marker+"\nexit 1\n")
	}
	fakeManager(t, bin, nil)
	root := resolved(t)
	plant(t, root, marker, map[string]string{
		"package.json":  `{"name": "x", "dependencies": {"left-pad": "1.3.0"}}`,
		"tsconfig.json": `{"compilerOptions": {"strict": true}}`,
		"a.ts":          "export function hello(): number { return 1; }\n",
		".nvmrc":        "../../evil\n",
		".node-version": "99.0.0\n",
		".envrc":        "touch " + marker + "\n",
		".npmrc":        "script-shell=" + filepath.Join(root, "evil") + "\n",
	})
	sup := NewSupervisor(root, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := sup.Hover(ctx, loc(t, sup, filepath.Join(root, "a.ts")), protocol.Place{Line: 1, Symbol: "hello"}); err != nil {
		t.Fatal(err)
	}
	if rep, err := sup.Check(ctx); err == nil {
		t.Logf("check: %+v", rep.Runs)
	}
	sup.Status(ctx)
	sup.Close()
	if got := readMarker(marker); got != "" {
		t.Fatalf("a shell-hook manager or npm ran:\n%s", got)
	}
}

// N1 for the go command: a go.mod "toolchain" (or a go line above the
// installed Go) makes go download and run another toolchain; untrusted,
// GOTOOLCHAIN=local keeps the installed one. With GOPROXY=off the switch
// shows as a refused download instead of running anything.
func TestGoToolchainLineIsNotFollowedUntrusted(t *testing.T) {
	testenv.LookPath(t, "go")
	t.Setenv("GOTOOLCHAIN", "auto")
	t.Setenv("GOPROXY", "off")
	root := resolved(t)
	plant(t, root, "", map[string]string{
		"go.mod":  "module example.com/x\n\ngo 1.99.0\n\ntoolchain go1.99.1\n",
		"main.go": "package main\n\nfunc main() {}\n",
	})
	check := func(cfg Config) string {
		sup := NewSupervisor(root, cfg)
		defer sup.Close()
		rep, err := sup.Check(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(checkRun(t, rep, "Go").Output, "\n")
	}
	if out := check(Config{}); strings.Contains(out, "go1.99") && strings.Contains(out, "download") || !strings.Contains(out, "GOTOOLCHAIN=local") {
		t.Errorf("untrusted go vet: want the installed Go to refuse (GOTOOLCHAIN=local), without a toolchain download; got:\n%s", out)
	}
	if out := check(Config{Trusted: true}); !strings.Contains(out, "go1.99") || strings.Contains(out, "GOTOOLCHAIN=local") {
		t.Errorf("trusted go vet: want the switch to go1.99 tried (as the user's go does); got:\n%s", out)
	}
}

// N1 for cargo: rust-analyzer runs cargo metadata in the crate, and cargo
// reads the checkout's .cargo/config.toml, whose build.rustc (like
// rustc-wrapper and [env]) names a program for cargo to run. The fake
// rust-analyzer runs cargo metadata as the real one does (none is
// installed here); untrusted it is not started, and says why.
func TestCargoConfigOfTheCheckoutIsNotUsedUntrusted(t *testing.T) {
	testenv.LookPath(t, "cargo")
	out, err := proc.Probe(t.Context(), testenv.LookPath(t, "rustup"), "which", "rustc")
	if err != nil {
		t.Skipf("no rustc: %v (%s)", err, proc.ExplainingLine(string(out)))
	}
	rustc := strings.TrimSpace(string(out))
	root := rustRoot(t)
	root, _ = filepath.EvalSymlinks(root)
	marker := filepath.Join(resolved(t), "ran")
	script(t, filepath.Join(root, "evil-rustc"), "echo \"rustc $*\" >> "+marker+"\nexec "+rustc+" \"$@\"\n")
	plant(t, root, marker, map[string]string{".cargo/config.toml": "[build]\nrustc = \"" + filepath.Join(root, "evil-rustc") + "\"\n"})
	exe, _ := os.Executable()
	ra := filepath.Join(resolved(t), "rust-analyzer")
	script(t, ra, fmt.Sprintf("[ \"$1\" = --version ] && { echo 'rust-analyzer 0.0.0 (test)'; exit 0; }\ncargo metadata --format-version 1 >/dev/null 2>&1\nexec %s -fake-lsp=mute\n", exe))
	spec := langserver.Table()
	i := slices.IndexFunc(spec, func(s langserver.Spec) bool { return s.ID == "rust-analyzer" })
	spec[i].Command = []string{ra}
	main := filepath.Join(root, "src", "main.rs")

	sup := NewSupervisor(root, Config{Servers: spec[i : i+1], StartTimeout: 30 * time.Second})
	_, err = sup.Reload(t.Context(), loc(t, sup, main))
	sup.Close()
	expectErr(t, "untrusted start", err, nil, "rust-analyzer was not started", ".cargo/config.toml", "--trust-checkout")
	if got := readMarker(marker); got != "" {
		t.Fatalf("the checkout's build.rustc ran:\n%s", got)
	}

	trusted := NewSupervisor(root, Config{Servers: spec[i : i+1], Trusted: true, StartTimeout: 30 * time.Second})
	defer trusted.Close()
	if _, err := trusted.Reload(t.Context(), loc(t, trusted, main)); err != nil {
		t.Fatal(err)
	}
	if got := readMarker(marker); !strings.Contains(got, "rustc -vV") {
		t.Fatalf("trusted, cargo metadata did not run the checkout's build.rustc (%q): the test cannot see it", got)
	}
}

// N1: the checkout-toolchain rule is the broker's (untrusted.Check)
// and this process applies the same function before a start, with no
// broker too: an untrusted run whose PATH leads into the root runs none
// of the checkout's programs found there (PATH's folders inside the root
// are passed over, and the server outside answers), and one whose
// VIRTUAL_ENV is the checkout's is refused before pyright starts. Before,
// PATH's pyright-langserver in the root ran, and pyright started with the
// checkout's virtualenv; and the pins asked the rustup and pyenv PATH
// found in the root for their defaults.
func TestUntrustedEnvironmentIntoTheRoot(t *testing.T) {
	testenv.LookPath(t, "pyright-langserver")
	root := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	plant(t, root, marker, map[string]string{
		"pyproject.toml":                        "[project]\nname = \"x\"\n",
		"m.py":                                  "def f():\n    return 1\n",
		"node_modules/.bin/pyright-langserver*": "",
		".venv/bin/python*":                     "",
		".venv/bin/python3*":                    "",
		// Toolchain managers the pins would ask (toolenv's computePins).
		".venv/bin/rustup*": "",
		".venv/bin/pyenv*":  "",
	})
	hover := func(t *testing.T) error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		sup := NewSupervisor(root, Config{})
		defer sup.Close()
		_, err := sup.Hover(ctx, loc(t, sup, filepath.Join(root, "m.py")), protocol.Place{Line: 1, Symbol: "f"})
		t.Logf("hover: %v", err)
		return err
	}
	// PATH into the root (an activated .venv, node_modules/.bin, "." or an
	// empty entry) is passed over: the server is the one outside.
	t.Run("PATH", func(t *testing.T) {
		sep := string(filepath.ListSeparator)
		t.Setenv("PATH", filepath.Join(root, "node_modules", ".bin")+sep+filepath.Join(root, ".venv", "bin")+sep+"."+sep+sep+os.Getenv("PATH"))
		err := hover(t)
		if got := readMarker(marker); got != "" {
			t.Fatalf("the checkout's program on PATH ran: %s", got)
		}
		if err != nil {
			t.Fatalf("hover with the checkout's folders on PATH: %v", err)
		}
	})
	t.Run("VIRTUAL_ENV", func(t *testing.T) {
		t.Setenv("VIRTUAL_ENV", filepath.Join(root, ".venv"))
		err := hover(t)
		expectErr(t, "hover", err, nil, `VIRTUAL_ENV names ".venv", inside the root`, "virtualenv's interpreter")
	})
}

// The pool's key (toolenv's Digest) and the broker's warm name (warmKey) of an
// untrusted start stand for the environment its child gets: two
// environments that differ only in folder-list entries inside the root,
// which OutsideRoot trims away, name one server; an entry outside the
// root still tells two apart. Before, both hashed the untrimmed
// environment, and such runs started a server each.
func TestEnvDigestIsTheChildsEnvironment(t *testing.T) {
	root := t.TempDir()
	sup := NewSupervisor(root, Config{})
	defer sup.Close()
	c := &choice{spec: &langserver.Table()[0], root: root, bin: "/bin/sh"}
	names := func() ([]string, string) { return sup.tools.env.Digest(root), sup.tools.warmKey(c) }
	sep := string(filepath.ListSeparator)
	base := os.Getenv("PATH")
	lib := filepath.Join(t.TempDir(), "lib")
	t.Setenv("PATH", base)
	t.Setenv("PYTHONPATH", lib)
	plainEnv, plainWarm := names()
	t.Setenv("PATH", filepath.Join(root, ".venv", "bin")+sep+base+sep+".")
	t.Setenv("PYTHONPATH", filepath.Join(root, "src")+sep+lib)
	inRootEnv, inRootWarm := names()
	if !slices.Equal(plainEnv, inRootEnv) || plainWarm != inRootWarm {
		t.Errorf("entries inside the root changed the names: digest equal %v, warm %s / %s",
			slices.Equal(plainEnv, inRootEnv), plainWarm, inRootWarm)
	}
	t.Setenv("PATH", t.TempDir()+sep+base)
	outsideEnv, outsideWarm := names()
	if slices.Equal(plainEnv, outsideEnv) || plainWarm == outsideWarm {
		t.Error("an entry outside the root did not change the names")
	}
}
