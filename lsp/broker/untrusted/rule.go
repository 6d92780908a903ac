// Package untrusted is the checkout-toolchain rule (N1) for a program
// started for an untrusted root, in one place: the process applies it
// before it starts a server or asks the broker for one (package lsp's
// checkLaunch, and lsp/toolenv's Unshim to each program it resolves), and
// the broker applies it again to every hello and join, whatever the
// process sent. It keeps the file system's answers it relies on
// (fscache.go) and starts nothing. A checkout chooses what runs when
//   - the program lies inside it (node_modules/.bin, .venv/bin, its own
//     gopls), or is a Volta shim (which runs the checkout's copy of a
//     tool its package.json lists);
//   - a variable points inside it: an interpreter, a virtualenv, module
//     or library search paths (VIRTUAL_ENV, PYTHONPATH, NODE_PATH, PATH …),
//     or a toolchain (GOROOT, RUSTUP_TOOLCHAIN as a path, asdf's path:);
//   - an option in NODE_OPTIONS or GOFLAGS names code to load or a
//     program to run inside it or relative to the working folder
//     (--require, --import, --loader, --openssl-config; -toolexec,
//     -modfile, -overlay);
//   - a toolchain manager is installed and its pin variable is unset:
//     rustup reads rust-toolchain(.toml), pyenv .python-version, asdf
//     .tool-versions from the working folder up ([ManagerPins]);
//   - GOTOOLCHAIN is unset, auto or path: the go command runs the
//     toolchain a go.mod or go.work "toolchain" line names.
package untrusted

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Refusal says what of an untrusted start the rule refused, and why.
// Paths inside the root are shown relative to it.
type Refusal struct {
	What string // "its program node_modules/.bin/x lies inside the root"
	Why  string // what the checkout would choose through it
	Fix  string // what the user can do
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("not started for this untrusted root: %s, so %s; %s, or trust the checkout (--trust-checkout)", r.What, r.Why, r.Fix)
}

// shown is p as a refusal shows it: relative to root when inside it.
func shown(p, root string) string {
	if rel, err := filepath.Rel(root, p); err == nil && filepath.IsAbs(p) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return rel
	}
	return p
}

// pathVars are variables whose value is a path (or a list of paths) a
// program started for the root follows to an interpreter, a toolchain or
// code to load: one inside the root is the checkout's choice.
var pathVars = map[string]string{
	"PATH":             "programs it runs are looked up there",
	"VIRTUAL_ENV":      "Python servers run that virtualenv's interpreter",
	"CONDA_PREFIX":     "Python servers run that environment's interpreter",
	"PYTHONHOME":       "Python loads its standard library from there",
	"PYTHONPATH":       "Python imports modules from there",
	"NODE_PATH":        "Node loads modules from there",
	"GOROOT":           "the go command runs that toolchain",
	"RUSTUP_HOME":      "rustup runs toolchains from there",
	"CARGO_HOME":       "cargo reads its configuration and runs programs from there",
	"RUSTUP_TOOLCHAIN": "rustup runs that toolchain",
	"PYENV_ROOT":       "pyenv runs interpreters from there",
	"ASDF_DATA_DIR":    "asdf runs tools from there",
	"VOLTA_HOME":       "Volta runs tools from there",
	"NVM_DIR":          "nvm runs Node from there",
	"NVM_BIN":          "Node runs from there",
	"LD_LIBRARY_PATH":  "programs load shared libraries from there",
	"LD_PRELOAD":       "programs load those libraries",
}

// ManagerPin is a toolchain manager found in an environment, and the
// variable that keeps it from the checkout's per-folder choice.
type ManagerPin struct {
	Var     string // RUSTUP_TOOLCHAIN, PYENV_VERSION, ASDF_<TOOL>_VERSION
	Manager string // the manager's program (rustup, pyenv) or plugin folder
	File    string // the checkout file it would read
}

// managerPins is ManagerPins worked out, each file it looks at stamped
// in st.
func managerPins(get func(string) string, st *stamps) []ManagerPin {
	home := get("HOME")
	var out []ManagerPin
	if bin := lookPathStamped(get("PATH"), "rustup", st); bin != "" {
		out = append(out, ManagerPin{"RUSTUP_TOOLCHAIN", bin, "rust-toolchain.toml"})
	}
	pyenv := lookPathStamped(get("PATH"), "pyenv", st)
	if pyenv == "" {
		if r := orDefault(get("PYENV_ROOT"), home, ".pyenv"); r != "" {
			p := filepath.Join(r, "bin", "pyenv")
			st.folder(filepath.Dir(p))
			st.name(p)
			if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
				pyenv = p
			}
		}
	}
	if pyenv != "" {
		out = append(out, ManagerPin{"PYENV_VERSION", pyenv, ".python-version"})
	}
	if data := orDefault(get("ASDF_DATA_DIR"), home, ".asdf"); data != "" {
		plugins := filepath.Join(data, "plugins")
		st.folder(plugins)
		if entries, err := os.ReadDir(plugins); err == nil {
			for _, e := range entries {
				name := "ASDF_" + strings.ToUpper(strings.ReplaceAll(e.Name(), "-", "_")) + "_VERSION"
				out = append(out, ManagerPin{name, filepath.Join(plugins, e.Name()), ".tool-versions"})
			}
		}
	}
	return out
}

// VoltaBin is Volta's shim folder in env, "" when there is none.
func VoltaBin(env []string) string {
	get := lookup(env)
	if v := orDefault(get("VOLTA_HOME"), get("HOME"), ".volta"); v != "" {
		if info, err := os.Stat(filepath.Join(v, "bin")); err == nil && info.IsDir() {
			return filepath.Join(v, "bin")
		}
	}
	return ""
}

// CheckProgram refuses a program an untrusted start would run that the
// checkout chose: one inside root (by its path or where its links lead),
// or a Volta shim of env. nil when it may run.
func CheckProgram(bin, root string, env []string) error {
	if bin == "" {
		return nil
	}
	if !filepath.IsAbs(bin) {
		return &Refusal{What: "its program " + bin + " is not an absolute path",
			Why: "it would be looked up from the working folder, which is the checkout", Fix: "install it on PATH"}
	}
	if within(bin, root) {
		return &Refusal{What: "its program " + shown(bin, root) + " lies inside the root",
			Why: "it is the checkout's own code", Fix: "install it outside the checkout (on PATH)"}
	}
	if v := VoltaBin(env); v != "" && filepath.Dir(bin) == v {
		return &Refusal{What: "its program " + bin + " is a Volta shim",
			Why: "it would run the checkout's own copy where the checkout's package.json lists it", Fix: "start the program `volta which` names instead"}
	}
	return nil
}

// Check is the whole rule for a start for the untrusted root:
// the program (CheckProgram) and the environment env it runs with.
func Check(bin, root string, env []string) error {
	if err := CheckProgram(bin, root, env); err != nil {
		return err
	}
	get := lookup(env)
	rv := viewRoot(root)
	for _, name := range slices.Sorted(maps.Keys(pathVars)) {
		v := get(name)
		if v == "" {
			continue
		}
		for _, p := range splitPaths(name, v) {
			if (name == "RUSTUP_TOOLCHAIN" || name == "LD_PRELOAD") && !strings.ContainsRune(p, filepath.Separator) {
				// A toolchain's or a library's name, not a path.
				continue
			}
			if !rv.outside(p) {
				return &Refusal{What: fmt.Sprintf("%s names %q, %s", name, shown(p, root), inRootWord(p)),
					Why: pathVars[name], Fix: "start builtin-tools with " + name + " naming only folders outside the checkout"}
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(optionVars)) {
		v := get(name)
		if v == "" {
			continue
		}
		ov := optionVars[name]
		for _, o := range ov.loads(v) {
			if !rv.outside(o.path) {
				return &Refusal{What: fmt.Sprintf("%s names %q in %s, %s", name, shown(o.path, root), o.flag, inRootWord(o.path)),
					Why: ov.why, Fix: "start builtin-tools with " + name + " naming only files outside the checkout"}
			}
		}
	}
	for _, m := range ManagerPins(env) {
		v := get(m.Var)
		if v == "" {
			return &Refusal{What: m.Var + " is unset while " + m.Manager + " is installed",
				Why: "it would follow the checkout's " + m.File, Fix: "set " + m.Var + " (builtin-tools sets it to your default for an untrusted root)"}
		}
		if dir, ok := strings.CutPrefix(v, "path:"); ok && !rv.outside(dir) {
			return &Refusal{What: fmt.Sprintf("%s names %q, %s", m.Var, "path:"+shown(dir, root), inRootWord(dir)),
				Why: "asdf would run that folder's programs", Fix: "set " + m.Var + " to an installed version"}
		}
	}
	switch tc := get("GOTOOLCHAIN"); {
	case !has(env, "GOTOOLCHAIN") || tc == "" || tc == "auto" || tc == "path" || strings.HasSuffix(tc, "+auto") || strings.HasSuffix(tc, "+path"):
		return &Refusal{What: "GOTOOLCHAIN=" + tc + " lets the checkout choose the Go toolchain",
			Why: "the go command would run the toolchain a go.mod or go.work \"toolchain\" line names", Fix: "set GOTOOLCHAIN=local (builtin-tools sets it for an untrusted root)"}
	}
	return nil
}

// optionVars are variables whose value is a list of a program's options,
// some of which name code it loads or a program it runs: one that names
// a path inside the root, or one relative to the working folder (the
// checkout), is the checkout's choice.
var optionVars = map[string]struct {
	why   string
	loads func(v string) []optionPath
}{
	"NODE_OPTIONS": {"Node loads that code before the server's own", nodeLoads},
	"GOFLAGS":      {"the go command gopls runs reads or runs it", goLoads},
}

// optionPath is a path an option names, and the option.
type optionPath struct{ flag, path string }

// nodeLoads is what NODE_OPTIONS has Node load: --require / -r, --import,
// --loader and --experimental-loader, and --openssl-config (whose file
// can name engines, libraries OpenSSL loads), with the value as the next
// word or after "=". A file: URL is its path; a bare name is looked up from the
// working folder's node_modules, so it counts as a relative path; a
// built-in module (node:) loads nothing of a checkout.
func nodeLoads(v string) []optionPath {
	flags := []string{"--require", "-r", "--import", "--loader", "--experimental-loader", "--openssl-config"}
	var out []optionPath
	words := optionWords(v)
	for i := 0; i < len(words); i++ {
		flag, val, eq := strings.Cut(words[i], "=")
		if !slices.Contains(flags, flag) {
			continue
		}
		if !eq {
			if i+1 == len(words) {
				break
			}
			i++
			val = words[i]
		}
		if strings.HasPrefix(val, "node:") {
			continue
		}
		if p, ok := strings.CutPrefix(val, "file://"); ok {
			val = p
		}
		out = append(out, optionPath{flag, val})
	}
	return out
}

// goLoads is what GOFLAGS has the go command read or run: -toolexec's
// program (its first word), -modfile's and -overlay's file. GOFLAGS
// gives a value only after "=".
func goLoads(v string) []optionPath {
	var out []optionPath
	for _, w := range optionWords(v) {
		flag, val, ok := strings.Cut(w, "=")
		flag = "-" + strings.TrimLeft(flag, "-")
		if !ok {
			continue
		}
		switch flag {
		case "-toolexec":
			if f := strings.Fields(val); len(f) > 0 {
				out = append(out, optionPath{flag, f[0]})
			}
		case "-modfile", "-overlay":
			out = append(out, optionPath{flag, val})
		}
	}
	return out
}

// optionWords splits a list of options at spaces, a quoted word (single
// or double quotes) kept whole, as Node and the go command read theirs.
func optionWords(v string) []string {
	var out []string
	var w strings.Builder
	quote, in := rune(0), false
	for _, r := range v {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				out = append(out, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, w.String())
	}
	return out
}

func inRootWord(p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return "a folder relative to the working folder (the checkout)"
	}
	return "inside the root"
}

// splitPaths is the paths in a variable's value.
func splitPaths(name, v string) []string {
	switch name {
	case "PATH", "PYTHONPATH", "NODE_PATH", "LD_LIBRARY_PATH":
		return filepath.SplitList(v)
	case "LD_PRELOAD":
		return strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ' ' })
	}
	return []string{v}
}

// within reports whether p is root or inside it, as written or where its
// links lead.
func within(p, root string) bool { return viewRoot(root).within(p) }

// rootView is a root as written and where its links lead, resolved once
// for the many paths a rule checks against it.
type rootView struct{ root, real string }

func viewRoot(root string) rootView {
	if root == "" {
		return rootView{}
	}
	root = filepath.Clean(root)
	real, err := evalSymlinks(root)
	if err != nil {
		real = root
	}
	return rootView{root, real}
}

// within reports whether p is the root or inside it, as written or where
// its links lead.
func (v rootView) within(p string) bool {
	if v.root == "" {
		return false
	}
	in := func(p, root string) bool {
		rel, err := filepath.Rel(root, p)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	}
	p = filepath.Clean(p)
	if in(p, v.root) || in(p, v.real) {
		return true
	}
	if rp, err := evalSymlinks(p); err == nil {
		return in(rp, v.real) || in(rp, v.root)
	}
	return false
}

// outside reports whether p is an absolute path outside the root.
func (v rootView) outside(p string) bool {
	return p != "" && filepath.IsAbs(p) && !v.within(p)
}

func lookup(env []string) func(string) string {
	return func(name string) string {
		v, prefix := "", name+"="
		for _, e := range env {
			if val, ok := strings.CutPrefix(e, prefix); ok {
				v = val
			}
		}
		return v
	}
}

func has(env []string, name string) bool {
	for _, e := range env {
		if strings.HasPrefix(e, name+"=") {
			return true
		}
	}
	return false
}

// orDefault is v, else home/sub ("" when home is "").
func orDefault(v, home, sub string) string {
	if v != "" {
		return v
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, sub)
}

// OutsideRoot is env for a start for the untrusted root with the folder
// lists (PATH, PYTHONPATH, NODE_PATH, LD_LIBRARY_PATH) keeping only their
// entries outside root: an entry inside it, relative or empty (the
// working folder, the checkout) is left out rather than the start
// refused, so an activated virtualenv or a "." on PATH costs the servers
// only the checkout's programs. left lists what it took out, as
// "NAME entry". Check still refuses such an entry in a hello.
func OutsideRoot(env []string, root string) (out, left []string) {
	out = make([]string, 0, len(env))
	rv := viewRoot(root)
	for _, e := range env {
		name, v, ok := strings.Cut(e, "=")
		if !ok || !slices.Contains(folderLists, name) {
			out = append(out, e)
			continue
		}
		var keep []string
		for _, p := range filepath.SplitList(v) {
			if !rv.outside(p) {
				left = append(left, name+" "+shown(p, root))
				continue
			}
			keep = append(keep, p)
		}
		out = append(out, name+"="+strings.Join(keep, string(filepath.ListSeparator)))
	}
	return out, left
}

// folderLists are the variables OutsideRoot trims.
var folderLists = []string{"PATH", "PYTHONPATH", "NODE_PATH", "LD_LIBRARY_PATH"}

// LookOutside finds program as the untrusted root's start does: on env's
// PATH less its entries inside root (OutsideRoot).
func LookOutside(program, root string, env []string) (string, error) {
	env, _ = OutsideRoot(env, root)
	if p := lookPath(lookup(env)("PATH"), program); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("%s: %w (looked on PATH outside the checkout)", program, exec.ErrNotFound)
}

// lookPath finds an executable name in the folders of path (absolute
// ones only: relative ones are refused above).
func lookPath(path, name string) string { return lookPathStamped(path, name, nil) }

// lookPathStamped is lookPath, stamping in st (when not nil) each folder
// searched and each file by that name found in one.
func lookPathStamped(path, name string, st *stamps) string {
	for _, d := range filepath.SplitList(path) {
		if !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, name)
		if st != nil {
			st.folder(d)
			st.name(p)
		}
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return ""
}
