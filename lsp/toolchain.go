package lsp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/lsp/broker"
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
// cargo's .cargo/config.toml is handled where cargo is run (see
// prepareRustAnalyzer). nvm, fnm and direnv act only through a shell's
// hooks: nothing here runs them, and a child of this process never reads
// .nvmrc, .node-version or .envrc through them.
//
// Whether a start obeys all that is one function, broker.CheckUntrusted,
// which this process applies before each start (checkLaunch) and to each
// program it resolves (unshim), and the broker to each hello again: it
// also refuses a program or a variable of the user's environment that
// leads inside the root (PATH, VIRTUAL_ENV, NODE_PATH …).

// resolveTimeout bounds one manager query (rustup default, volta which).
const resolveTimeout = 10 * time.Second

// pins is what an untrusted checkout's programs run with.
type pins struct {
	set      []string // NAME=value, added to (or replacing) the environment
	voltaBin string   // Volta's shim folder, "" when there is none
}

// pins are the current ones (sharedPins): a default toolchain changed
// while a run lives gives its next start the new one, as it gives a new
// process's, so that a pool's key and a warm name, which name the
// settings the pins come from (pinSources), name the server started.
func (la *launcher) pins() *pins {
	p := sharedPins(la.trimmedEnv())
	la.pinned.Store(p)
	return p
}

// pinCache holds computePins' answer per environment of this process and
// its pinSources: it asks the managers (rustup, pyenv …), which takes a
// run's first call hundreds of milliseconds, and the answer changes only
// with the environment and the managers' global settings.
var pinCache struct {
	sync.Mutex
	env    string
	pinned *pins
}

func sharedPins(env []string) *pins {
	sources := pinSources(env)
	key := strings.Join(env, "\x00") + "\x00\x00" + sources
	pinCache.Lock()
	defer pinCache.Unlock()
	if pinCache.pinned == nil || pinCache.env != key {
		pinCache.env, pinCache.pinned = key, computePins(env)
	}
	return pinCache.pinned
}

// pinSources names the global settings the pins' values come from, for
// each manager computePins asks (its variable unset): rustup's
// settings.toml (its default toolchain), pyenv's version file, asdf's
// global .tool-versions, each with a digest of its content. Reading them
// takes microseconds where asking the managers takes hundreds of
// milliseconds, so a warm join checks them (warmKey) instead: a default
// changed since a server started names another server.
func pinSources(env []string) string {
	home, _ := os.UserHomeDir()
	under := func(v, sub string) string {
		if v != "" {
			return v
		}
		return filepath.Join(home, sub)
	}
	var b strings.Builder
	for _, m := range broker.ManagerPins(env) {
		if os.Getenv(m.Var) != "" {
			continue
		}
		var file string
		switch m.Var {
		case "RUSTUP_TOOLCHAIN":
			file = filepath.Join(under(os.Getenv("RUSTUP_HOME"), ".rustup"), "settings.toml")
		case "PYENV_VERSION":
			file = filepath.Join(under(os.Getenv("PYENV_ROOT"), ".pyenv"), "version")
		default:
			file = filepath.Join(home, cmpEnv("ASDF_DEFAULT_TOOL_VERSIONS_FILENAME", ".tool-versions"))
		}
		data, _ := os.ReadFile(file)
		fmt.Fprintf(&b, "%s %s %x\n", m.Var, file, sha256.Sum256(data))
	}
	return b.String()
}

func computePins(env []string) *pins {
	p := &pins{}
	home, _ := os.UserHomeDir()
	add := func(name, value string) { p.set = append(p.set, name+"="+value) }

	// The managers, and which variable pins each, are the rule's
	// (broker.ManagerPins), which the broker checks a hello against.
	var global map[string]string
	for _, m := range broker.ManagerPins(env) {
		if os.Getenv(m.Var) != "" {
			continue
		}
		switch m.Var {
		case "RUSTUP_TOOLCHAIN":
			// "none" is no toolchain: the proxies then fail rather than
			// follow the checkout's file.
			tc := "none"
			if out, err := query(m.Manager, "default"); err == nil {
				if f := strings.Fields(out); len(f) > 0 {
					tc = f[0]
				}
			}
			add(m.Var, tc)
		case "PYENV_VERSION":
			v := "system"
			if out, err := query(m.Manager, "version-name"); err == nil && strings.TrimSpace(out) != "" {
				v = strings.TrimSpace(strings.SplitN(out, "\n", 2)[0])
			}
			add(m.Var, v)
		default: // an asdf plugin's
			if global == nil {
				global = toolVersions(filepath.Join(home, cmpEnv("ASDF_DEFAULT_TOOL_VERSIONS_FILENAME", ".tool-versions")))
			}
			v := global[filepath.Base(m.Manager)]
			if v == "" {
				v = "system" // the next program on PATH, never the checkout's choice
			}
			add(m.Var, v)
		}
	}

	p.voltaBin = voltaDir()

	switch tc := os.Getenv("GOTOOLCHAIN"); {
	case tc == "" || tc == "auto" || tc == "path":
		add("GOTOOLCHAIN", "local")
	case strings.HasSuffix(tc, "+auto") || strings.HasSuffix(tc, "+path"):
		add("GOTOOLCHAIN", tc[:strings.LastIndexByte(tc, '+')])
	}
	return p
}

// voltaDir is Volta's shim folder, "" when there is none: found without
// asking a manager, so a program's choice need not wait for the pins.
func voltaDir() string { return broker.VoltaBin(os.Environ()) }

// cmpEnv is the variable's value, or def when it is unset or empty.
func cmpEnv(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// query runs a manager's command in proc.NeutralDir, where no file of the
// checkout is above the working folder, and returns its output.
func query(bin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
	defer cancel()
	out, err := proc.Probe(ctx, bin, args...)
	if err != nil {
		if why := explainingLine(string(out)); why != "" {
			return "", fmt.Errorf("%s (%v)", why, err)
		}
		return "", err
	}
	return string(out), nil
}

// toolVersions reads an asdf .tool-versions file: tool → first version.
func toolVersions(path string) map[string]string {
	out := map[string]string{}
	data, err := os.ReadFile(path)
	if err != nil || len(data) > 1<<20 {
		return out
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if f := strings.Fields(line); len(f) >= 2 {
			if _, ok := out[f[0]]; !ok {
				out[f[0]] = f[1]
			}
		}
	}
	return out
}

// childEnv is the environment of a program started for the checkout in
// dir ("" for a probe, which runs in proc.NeutralDir): nil, this process's
// own, when the checkout is trusted; otherwise that with the pins and
// without folder-list entries inside the root (broker.OutsideRoot).
func (la *launcher) childEnv(dir string) []string {
	if la.cfg.Trusted {
		return nil
	}
	set := slices.Clone(la.pins().set)
	if dir != "" {
		if v, ok := la.goWork(dir); ok {
			set = append(set, "GOWORK="+v)
		}
	}
	// PATH and the other folder lists lose what leads into the checkout.
	env := la.trimmedEnv()
	for _, kv := range set {
		name, _, _ := strings.Cut(kv, "=")
		env = slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, name+"=") })
		env = append(env, kv)
	}
	return env
}

// envDigest stands for childEnv(dir) in a pool's key without working the
// pins out (a process's first call would wait for the managers): the
// environment as the child gets it less the pins (childInputs), the
// settings the pins come from (pinSources) and the GOWORK setting say
// the same.
func (la *launcher) envDigest(dir string) []string {
	if la.cfg.Trusted {
		return nil
	}
	gowork, _ := la.goWork(dir)
	inputs, sources := la.childInputs()
	return append(inputs, "\x00GOWORK="+gowork, "\x00PINS="+sources)
}

// childInputs is what childEnv is worked out from, less the managers'
// answers: this process's environment when the checkout is trusted;
// otherwise that with the folder lists trimmed as the child gets them
// (broker.OutsideRoot, so two environments that differ only in entries
// inside the root name one server), and the managers the pins ask, which
// the trimmed PATH finds (the pins are a function of those); and, when
// untrusted, the settings those managers' answers come from (pinSources).
func (la *launcher) childInputs() (inputs []string, sources string) {
	if la.cfg.Trusted {
		return os.Environ(), ""
	}
	env := la.trimmedEnv()
	sources = pinSources(env)
	for _, m := range broker.ManagerPins(env) {
		env = append(env, "\x00PIN "+m.Var+"="+m.Manager)
	}
	return env, sources
}

// trimmedEnv is this process's environment less the folder-list entries
// inside the root (broker.OutsideRoot), as a child gets it: the pins ask
// only the managers it finds, so a rustup or pyenv the checkout carries on
// PATH is never run (N1), and the child, whose PATH is trimmed alike,
// never meets it either.
func (la *launcher) trimmedEnv() []string {
	env, _ := broker.OutsideRoot(os.Environ(), la.co.root)
	return env
}

// goWork says what GOWORK a go command started in dir gets: "off" when the
// workspace file it would use is outside the root (it would bring modules
// from outside the root into the server's answers).
func (la *launcher) goWork(dir string) (string, bool) {
	if v := os.Getenv("GOWORK"); v != "" {
		if v == "off" || la.co.inRoot(filepath.Clean(v)) {
			return "", false
		}
		return "off", true
	}
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			if la.co.inRoot(d) {
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

// unshim replaces a Volta shim by the program it runs outside the checkout
// (untrusted only): in a checkout whose package.json lists the tool, the
// shim would run the checkout's own node_modules/.bin copy.
func (la *launcher) unshim(bin string) (string, error) {
	if la.cfg.Trusted {
		return bin, nil
	}
	if filepath.Dir(bin) != voltaDir() {
		// PATH may lead inside the root: the rule refuses what lies
		// there (the run's root, which holds every server's).
		return bin, broker.CheckProgram(bin, la.co.root, os.Environ())
	}
	p := la.pins()
	if p.voltaBin == "" || filepath.Dir(bin) != p.voltaBin {
		return bin, nil
	}
	name := filepath.Base(bin)
	la.unshimMu.Lock()
	defer la.unshimMu.Unlock()
	if r, ok := la.unshimmed[name]; ok {
		return r.bin, r.err
	}
	resolved, err := la.voltaWhich(p.voltaBin, name)
	if err == nil {
		err = broker.CheckProgram(resolved, la.co.root, os.Environ())
	}
	if la.unshimmed == nil {
		la.unshimmed = map[string]unshimmed{}
	}
	la.unshimmed[name] = unshimmed{resolved, err}
	return resolved, err
}

type unshimmed struct {
	bin string
	err error
}

func (la *launcher) voltaWhich(voltaBin, name string) (string, error) {
	volta := filepath.Join(voltaBin, "volta")
	ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
	defer cancel()
	cmd := exec.Command(volta, "which", name)
	cmd.Dir = proc.NeutralDir
	cmd.Env = la.childEnv("")
	out, err := proc.Output(ctx, cmd)
	resolved := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	if err == nil && (!filepath.IsAbs(resolved) || !fileExists(resolved)) {
		err = errors.New("it named no program")
	}
	if err != nil {
		if why := explainingLine(string(out)); why != "" && resolved == "" {
			err = fmt.Errorf("%s (%v)", why, err)
		}
		return "", fmt.Errorf("%s is a Volta shim, which in this checkout could run the checkout's own copy, and `volta which %s` found none outside it: %v; "+
			"install it with volta install %s, or trust the checkout", name, name, err, name)
	}
	return resolved, nil
}

// checkLaunch applies the checkout-toolchain rule (N1) to an untrusted
// start as Prepare left it, before the server is started here or asked
// of the broker: the rule is broker.CheckUntrusted, the one the broker
// applies to every hello again, so the two never disagree (a broker's
// refusal would otherwise fall back to a start here).
func checkLaunch(l *Launch) error {
	if l.Trusted || l.joinOnly {
		return nil
	}
	env := l.Env
	if env == nil {
		env = os.Environ()
	}
	return broker.CheckUntrusted(l.Bin, l.Root, env)
}
