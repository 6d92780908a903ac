package lsp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// A read tool has no side effects and runs no code from the checkout.
// These Prepare functions keep three servers to that: clangd's index goes
// to the server's private folder, typescript-language-server loads the
// TypeScript installed beside it, and rust-analyzer runs no build script.

// prepareClangd moves clangd's background index out of the checkout.
// clangd keeps the index in .cache/clangd/index beside the compilation
// database it uses; a copy of the database in StateDir (its paths made
// absolute), named with --compile-commands-dir, puts the index there.
func prepareClangd(l *Launch) error {
	for _, dir := range []string{l.Root, filepath.Join(l.Root, "build")} {
		data, err := os.ReadFile(filepath.Join(dir, "compile_commands.json"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		out, err := absoluteCompileCommands(data, dir)
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, "compile_commands.json"), err)
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
		if local := filepath.Join(l.Root, "node_modules", "typescript", "lib", "tsserver.js"); fileExists(local) {
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
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return ""
	}
	for dir := filepath.Dir(real); ; {
		p := filepath.Join(dir, "node_modules", "typescript", "lib", "tsserver.js")
		if fileExists(p) {
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
// checkout: build scripts, procedural macros and cargo check on save.
func prepareRustAnalyzer(l *Launch) error {
	if l.Trusted {
		return nil
	}
	l.InitializationOptions = map[string]any{
		"cargo":       map[string]any{"buildScripts": map[string]any{"enable": false}},
		"procMacro":   map[string]any{"enable": false},
		"checkOnSave": false,
	}
	return nil
}

func fileExists(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.Mode().IsRegular()
}

// localBins lists, in search order, the executables named program in the
// local bin folders of each root.
func localBins(program string, dirs []string, roots ...string) []string {
	var out []string
	for _, base := range roots {
		if base == "" {
			continue
		}
		for _, d := range dirs {
			p := filepath.Join(base, d, program)
			if info, err := os.Stat(p); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}
