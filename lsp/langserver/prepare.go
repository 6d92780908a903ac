package langserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/builtin-tools/builtin-tools/pathguard"
)

// A read tool has no side effects and runs no code from the checkout.
// These Prepare functions keep three servers to that: clangd's index goes
// to the server's private folder, typescript-language-server loads the
// TypeScript installed beside it, and rust-analyzer runs no build script.

// clangdDatabases are where prepareClangd looks for the compilation
// database, first found first.
var clangdDatabases = []string{"compile_commands.json", "build/compile_commands.json"}

// prepareClangd moves clangd's background index out of the checkout.
// clangd keeps the index in .cache/clangd/index beside the compilation
// database it uses; a copy of the database in StateDir (its paths made
// absolute), named with --compile-commands-dir, puts the index there.
// The database is read through the run's guard (N6): a named pipe, a
// device, a link out of the root or a file over the size limit stops the
// start with a message, since clangd would read it too.
func prepareClangd(l *Launch) error {
	for _, rel := range clangdDatabases {
		p := filepath.Join(l.Root, filepath.FromSlash(rel))
		dir := filepath.Dir(p)
		data, err := readCheckoutFile(l.Guard, p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("clangd was not started: %w; replace it with the real compilation database, or remove it", err)
		}
		out, err := absoluteCompileCommands(data, dir)
		if err != nil {
			return fmt.Errorf("%s: %w", l.Guard.Rel(p), err)
		}
		if err := os.WriteFile(filepath.Join(l.StateDir, "compile_commands.json"), out, 0o600); err != nil {
			return err
		}
		l.Args = append(l.Args, "--compile-commands-dir="+l.StateDir)
		return nil
	}
	// compile_flags.txt and no database at all index nothing on disk: the
	// background index covers only the database's files.
	return nil
}

// readCheckoutFile reads a file of the checkout that a start needs,
// through the run's guard: a regular file inside the root (a link is
// followed only while it stays inside), opened without blocking, of at
// most MaxFileBytes. An error wrapping fs.ErrNotExist means there is none;
// any other names the file relative to the root and says what it is.
func readCheckoutFile(g *pathguard.Guard, abs string) ([]byte, error) {
	if g == nil {
		return nil, fmt.Errorf("%s: the root cannot be opened", abs)
	}
	rel := g.Rel(abs)
	if _, err := g.Lstat(abs); err != nil {
		return nil, err
	}
	if _, err := g.Resolve(abs); err != nil {
		return nil, fmt.Errorf("%s is a symbolic link that leads outside the root", rel)
	}
	data, info, err := g.ReadFile(abs, MaxFileBytes)
	switch {
	case err == nil:
		return data, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, err // a dangling link inside the root
	case errors.Is(err, pathguard.ErrNotRegular) && info != nil:
		return nil, fmt.Errorf("%s is %s, not a regular file", rel, pathguard.FileKind(info.Mode()))
	case errors.Is(err, pathguard.ErrTooLarge) && info != nil:
		return nil, fmt.Errorf("%s is %d bytes, over the %d-byte limit", rel, info.Size(), MaxFileBytes)
	}
	return nil, fmt.Errorf("%s: %w", rel, err)
}

// absoluteCompileCommands rewrites each entry's relative "directory"
// against dir, where the database was found, keeping every other field.
func absoluteCompileCommands(data []byte, dir string) ([]byte, error) {
	var entries []map[string]any
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, fmt.Errorf("not a JSON array of compile commands: %w", err)
	}
	for _, e := range entries {
		d, _ := e["directory"].(string)
		if !filepath.IsAbs(d) {
			e["directory"] = filepath.Join(dir, d)
		}
	}
	return json.Marshal(entries)
}

// prepareTypeScript makes an untrusted checkout's server load the
// TypeScript installed next to the server: typescript-language-server
// otherwise prefers the checkout's node_modules/typescript, which is the
// checkout's code, and tsserver would run it. Automatic type acquisition
// (npm installs of @types packages) is off for the same reason.
func prepareTypeScript(l *Launch) error {
	if l.Trusted {
		return nil
	}
	opts := map[string]any{}
	if m, ok := l.InitializationOptions.(map[string]any); ok {
		for k, v := range m {
			opts[k] = v
		}
	}
	opts["disableAutomaticTypingAcquisition"] = true
	tsserver := bundledTSServer(l.Bin)
	if tsserver == "" {
		if local := filepath.Join(l.Root, "node_modules", "typescript", "lib", "tsserver.js"); checkoutHas(l.Guard, local) {
			return fmt.Errorf("typescript-language-server (%s) has no TypeScript installed beside it, so it would run the checkout's own %s, "+
				"and this checkout is not trusted; install typescript next to the server (npm install typescript) or trust the checkout", l.Bin, local)
		}
	} else {
		opts["tsserver"] = map[string]any{"path": tsserver}
	}
	l.InitializationOptions = opts
	return nil
}

// bundledTSServer finds typescript/lib/tsserver.js in a node_modules folder
// above the server's real location, as Node's require would from there.
func bundledTSServer(bin string) string {
	resolved, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return ""
	}
	for dir := filepath.Dir(resolved); ; {
		p := filepath.Join(dir, "node_modules", "typescript", "lib", "tsserver.js")
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// prepareRustAnalyzer turns off what runs the crate's code in an untrusted
// checkout: build scripts, procedural macros and cargo check on save. It
// does not start at all when the checkout holds a cargo configuration or a
// rust-analyzer.toml where they would apply: rust-analyzer runs cargo
// metadata, and cargo reads .cargo/config.toml from its folder up, whose
// [build] rustc, rustc-wrapper and [env] (LD_PRELOAD) name what cargo
// runs; rust-analyzer.toml may set the commands rust-analyzer runs.
func prepareRustAnalyzer(l *Launch) error {
	if l.Trusted {
		return nil
	}
	if found := cargoConfigs(l.Guard, l.Root); len(found) > 0 {
		return fmt.Errorf("rust-analyzer was not started: it runs cargo, and this untrusted checkout has %s, "+
			"which can name programs for cargo or rust-analyzer to run (build.rustc, build.rustc-wrapper, [env], override commands); "+
			"trust the checkout (--trust-checkout) to use rust-analyzer here", strings.Join(found, ", "))
	}
	l.InitializationOptions = map[string]any{
		"cargo":       map[string]any{"buildScripts": map[string]any{"enable": false}},
		"procMacro":   map[string]any{"enable": false},
		"checkOnSave": false,
	}
	return nil
}

// cargoConfigNames are the files, relative to a folder, in which cargo
// and rust-analyzer read settings that can name programs to run.
var cargoConfigNames = []string{".cargo/config.toml", ".cargo/config", "rust-analyzer.toml", ".rust-analyzer.toml"}

// cargoConfigs lists (relative to the root) the cargo and rust-analyzer
// configuration files inside the root that apply to a rust-analyzer
// started in dir: in dir and each folder above it up to the root, and in
// dir's folders, where rust-analyzer looks for more crates. A link or
// anything else by those names counts.
func cargoConfigs(g *pathguard.Guard, dir string) []string {
	if g == nil {
		return nil
	}
	var found []string
	look := func(d string) {
		for _, n := range cargoConfigNames {
			p := filepath.Join(d, filepath.FromSlash(n))
			if _, err := g.Lstat(p); err == nil {
				found = append(found, g.Rel(p))
			}
		}
	}
	if entries, err := g.ReadDir(dir); err == nil {
		for _, e := range entries {
			if e.IsDir() && e.Name() != ".cargo" && e.Name() != "target" {
				look(filepath.Join(dir, e.Name()))
			}
		}
	}
	for d := dir; ; d = filepath.Dir(d) {
		look(d)
		if d == g.Root() || filepath.Dir(d) == d {
			break
		}
	}
	slices.Sort(found)
	return found
}

// checkoutHas reports whether abs is a regular file inside the root.
func checkoutHas(g *pathguard.Guard, abs string) bool {
	if g == nil {
		return false
	}
	info, err := g.Stat(abs)
	return err == nil && info.Mode().IsRegular()
}
