// Package toolenv is the environment a program started for a checkout
// runs in — a language server, the probe that checks it runs, a project
// checker — and which program that is when a toolchain manager's shim
// stands in for it. A trusted checkout's programs get this process's own
// environment. An untrusted checkout's get it trimmed of the folder-list
// entries inside the root (untrusted.OutsideRoot) and with the toolchain
// pins: the user's own defaults, asked of the rustup, pyenv and asdf that
// the trimmed PATH finds, set so that no file of the checkout picks the
// toolchain (N1); and a Volta shim is replaced by the program it runs
// outside the checkout. [Env] holds one run's answers.
//
// It is not the rule that judges a start (untrusted.Check, which
// package lsp applies before each start and the broker at each hello),
// and it starts no server: package lsp does, with what Env gives it.
package toolenv

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/builtin-tools/builtin-tools/lsp/broker/untrusted"
)

// Toolchain managers pick the program a shim runs from a file in the
// working folder or a folder above it, so a checkout can choose what runs
// when a server, probe or checker is started for it (N1):
//
//   - rustup's proxies (cargo, rustc, rust-analyzer) read rust-toolchain.toml
//     or rust-toolchain, whose [toolchain] path may name a folder inside
//     the checkout;
//   - pyenv's shims read .python-version (only installed versions);
//   - asdf's shims read .tool-versions, where "path:/a/folder" runs that
//     folder's bin/<tool>;
//   - Volta's shims run the checkout's node_modules/.bin copy of a tool its
//     package.json lists as a dependency;
//   - the go command downloads and runs the toolchain a go.mod or go.work
//     "toolchain" line names, and uses a go.work found above the module.
//
// For an untrusted checkout every program started for it runs with those
// choices pinned to the user's own, resolved outside the checkout (in
// proc.NeutralDir): RUSTUP_TOOLCHAIN, PYENV_VERSION and ASDF_<TOOL>_VERSION
// set to the defaults, a Volta shim replaced by the program `volta which`
// names, GOTOOLCHAIN=local, and GOWORK=off when the go.work the go command
// would use lies outside the root. A variable the user set is kept.
// cargo's .cargo/config.toml is handled where cargo is run (package lsp's
// prepareRustAnalyzer). nvm, fnm and direnv act only through a shell's
// hooks: nothing here runs them, and a child of this process never reads
// .nvmrc, .node-version or .envrc through them.
//
// Whether a start obeys all that is one function, untrusted.Check,
// which package lsp applies before each start (checkLaunch), Unshim to
// each program it resolves (untrusted.CheckProgram), and the broker to each
// hello again: it also refuses a program or a variable of the user's
// environment that leads inside the root (PATH, VIRTUAL_ENV, NODE_PATH …).

// Env is the environment of the programs one run starts for its checkout,
// with what it caches of the managers' answers: the pins it last used and
// the Volta shims it resolved. Safe for concurrent use.
type Env struct {
	root    string   // absolute, links resolved: the rule's root
	roots   []string // root, and the root as given when it differs
	trusted bool

	// pinned are the pins this run last used, which keep an untrusted
	// checkout's programs from its toolchain files; nil until a start
	// needs them.
	pinned    atomic.Pointer[pins]
	unshimMu  sync.Mutex
	unshimmed map[string]unshimmed
}

// New is the environment for the checkout whose root is roots[0]
// (absolute, links resolved); the rest of roots name it too (the root as
// the caller gave it). trusted says whether its own choices may run.
func New(roots []string, trusted bool) *Env {
	return &Env{root: roots[0], roots: slices.Clone(roots), trusted: trusted}
}

// Child is the environment of a program started for the checkout in dir
// ("" for a probe, which runs in proc.NeutralDir): nil, this process's
// own, when the checkout is trusted; otherwise that with the pins and
// without folder-list entries inside the root (untrusted.OutsideRoot).
func (e *Env) Child(dir string) []string {
	if e.trusted {
		return nil
	}
	set := slices.Clone(e.pins().set)
	if dir != "" {
		if v, ok := e.GoWork(dir); ok {
			set = append(set, "GOWORK="+v)
		}
	}
	// PATH and the other folder lists lose what leads into the checkout.
	env := e.trimmed()
	for _, kv := range set {
		name, _, _ := strings.Cut(kv, "=")
		env = slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, name+"=") })
		env = append(env, kv)
	}
	return env
}

// Digest stands for Child(dir) in a pool's key without working the pins
// out (a process's first call would wait for the managers): the
// environment as the child gets it less the pins (Inputs), the settings
// the pins come from and the GOWORK setting say the same.
func (e *Env) Digest(dir string) []string {
	if e.trusted {
		return nil
	}
	gowork, _ := e.GoWork(dir)
	inputs, sources := e.Inputs()
	return append(inputs, "\x00GOWORK="+gowork, "\x00PINS="+sources)
}

// Inputs is what Child is worked out from, less the managers' answers:
// this process's environment when the checkout is trusted; otherwise that
// with the folder lists trimmed as the child gets them
// (untrusted.OutsideRoot, so two environments that differ only in entries
// inside the root name one server), and the managers the pins ask, which
// the trimmed PATH finds (the pins are a function of those); and, when
// untrusted, sources: the global settings those managers' answers come
// from (pinSources).
func (e *Env) Inputs() (inputs []string, sources string) {
	if e.trusted {
		return os.Environ(), ""
	}
	env := e.trimmed()
	sources = pinSources(env)
	for _, m := range untrusted.ManagerPins(env) {
		env = append(env, "\x00PIN "+m.Var+"="+m.Manager)
	}
	return env, sources
}

// trimmed is this process's environment less the folder-list entries
// inside the root (untrusted.OutsideRoot), as a child gets it: the pins ask
// only the managers it finds, so a rustup or pyenv the checkout carries on
// PATH is never run (N1), and the child, whose PATH is trimmed alike,
// never meets it either.
func (e *Env) trimmed() []string {
	env, _ := untrusted.OutsideRoot(os.Environ(), e.root)
	return env
}

// GoWork says what GOWORK a go command started in dir gets: "off" when the
// workspace file it would use is outside the root (it would bring modules
// from outside the root into the server's answers); ok is false when
// GOWORK is left as it is.
func (e *Env) GoWork(dir string) (v string, ok bool) {
	if v := os.Getenv("GOWORK"); v != "" {
		if v == "off" || e.inRoot(filepath.Clean(v)) {
			return "", false
		}
		return "off", true
	}
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			if e.inRoot(d) {
				return "", false
			}
			return "off", true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", false
		}
		d = parent
	}
}

// inRoot reports whether path is the root or below it, under any of its
// names.
func (e *Env) inRoot(path string) bool {
	for _, r := range e.roots {
		if rel, err := filepath.Rel(r, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
