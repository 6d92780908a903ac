package toolenv

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/lsp/broker/untrusted"
)

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
func (e *Env) pins() *pins {
	p := sharedPins(e.trimmed())
	e.pinned.Store(p)
	return p
}

// Pins are the variables (NAME=value) an untrusted checkout's programs
// run with now, asking the managers when the environment or their
// settings changed since they were last asked.
func (e *Env) Pins() []string { return slices.Clone(e.pins().set) }

// Pinned are the pins this run last used; ok is false when none of its
// starts has needed them yet (a server joined warm needs none).
func (e *Env) Pinned() (set []string, ok bool) {
	if p := e.pinned.Load(); p != nil {
		return slices.Clone(p.set), true
	}
	return nil, false
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
// milliseconds, so a warm join checks them instead (package lsp's warm
// name): a default changed since a server started names another server.
func pinSources(env []string) string {
	home, _ := os.UserHomeDir()
	under := func(v, sub string) string {
		if v != "" {
			return v
		}
		return filepath.Join(home, sub)
	}
	var b strings.Builder
	for _, m := range untrusted.ManagerPins(env) {
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
	// (untrusted.ManagerPins), which the broker checks a hello against.
	var global map[string]string
	for _, m := range untrusted.ManagerPins(env) {
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
func voltaDir() string { return untrusted.VoltaBin(os.Environ()) }

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
		if why := proc.ExplainingLine(string(out)); why != "" {
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
