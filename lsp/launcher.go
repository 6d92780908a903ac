package lsp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/lifetime"

	"github.com/builtin-tools/builtin-tools/astgrep/parsecache"
	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/lsp/broker/untrusted"
	"github.com/builtin-tools/builtin-tools/lsp/checkout"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/pool"
	"github.com/builtin-tools/builtin-tools/lsp/toolenv"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// launcher chooses, probes and starts the programs a run starts for its
// checkout — servers, probes, checkers — in the environment its trust
// allows (env: for an untrusted checkout the toolchain pins, worked out on
// first use, and Volta shims resolved once each).
type launcher struct {
	co    *checkout.Checkout
	cfg   *Config
	hooks *testHooks
	env   *toolenv.Env
}

// choice is the server that owns a file: its spec, root folder and binary.
type choice struct {
	spec       *langserver.Spec
	root       string
	bin        string
	languageID string
}

// choose finds the server for path by the intersection rule (LSP-2): the
// first row that owns the extension, has a root marker between the file
// and the supervisor root, and whose binary resolves.
func (la *launcher) choose(path string) (*choice, error) {
	var reasons, broken []string
	owned := false
	for i := range la.cfg.Servers {
		spec := &la.cfg.Servers[i]
		langID, ok := spec.Owns(path)
		if !ok {
			continue
		}
		owned = true
		root, marker, bad := la.co.Root(), "", ""
		if !spec.RootAtTop {
			root, marker, bad = la.co.NearestMarker(filepath.Dir(path), spec.RootMarkers)
		}
		bin, binErr := la.program(spec.Command[0], spec.LocalBinDirs, root)
		switch {
		case bad != "":
			reasons = append(reasons, fmt.Sprintf("%s found %s, which does not count as a root marker: %s; replace it with the real file, or remove it",
				spec.ID, la.co.Rel(filepath.Join(root, marker)), bad))
		case root == "" && binErr != nil:
			reasons = append(reasons, fmt.Sprintf("%s needs a root marker (%s) in %s or a folder above it inside the root, and %s is not installed (%s)",
				spec.ID, strings.Join(spec.RootMarkers, ", "), la.co.Rel(filepath.Dir(path)), spec.Command[0], spec.Install))
		case root == "":
			reasons = append(reasons, fmt.Sprintf("%s is installed (%s) but no root marker (%s) was found in %s or a folder above it inside the root",
				spec.ID, bin, strings.Join(spec.RootMarkers, ", "), la.co.Rel(filepath.Dir(path))))
		case binErr != nil && !errors.Is(binErr, exec.ErrNotFound) && !errors.Is(binErr, fs.ErrNotExist):
			// A manager's shim with nothing to run outside the checkout.
			reasons = append(reasons, fmt.Sprintf("%s found %s, but %v", spec.ID, la.co.Rel(filepath.Join(root, marker)), binErr))
		case binErr != nil:
			reasons = append(reasons, fmt.Sprintf("%s found %s but %s is not installed: %s",
				spec.ID, la.co.Rel(filepath.Join(root, marker)), spec.Command[0], spec.Install))
		default:
			c := &choice{spec: spec, root: root, bin: bin, languageID: langID}
			if la.runsWarm(c) {
				return c, nil
			}
			if err := la.probe(spec, bin, root); err != nil {
				reasons = append(reasons, fmt.Sprintf("%s found %s, and %s is installed but does not run: %v; install it: %s",
					spec.ID, la.co.Rel(filepath.Join(root, marker)), bin, err, spec.Install))
				broken = append(broken, spec.ID)
				continue
			}
			return c, nil
		}
	}
	if !owned {
		return nil, fmt.Errorf("%w: no server in the table handles %q files (%s); use read or grep for it",
			ErrNotOwned, filepath.Ext(path), la.co.Rel(path))
	}
	return nil, &UnavailableError{File: la.co.Rel(path), Reasons: reasons, Broken: broken}
}

// lookBin resolves a program: in a trusted checkout first in the server
// root's local bin folders (node_modules/.bin, .venv/bin), then in the
// supervisor root's; then PATH (for an untrusted one, its folders outside
// the root: an activated .venv or "." on PATH must not pick the program).
func (la *launcher) lookBin(program string, localDirs []string, root string) (string, error) {
	if filepath.IsAbs(program) {
		return exec.LookPath(program)
	}
	if !la.cfg.Trusted {
		return untrusted.LookOutside(program, la.co.Root(), os.Environ())
	}
	if found := localBins(program, localDirs, root, la.co.Root()); len(found) > 0 {
		return found[0], nil
	}
	return exec.LookPath(program)
}

// program is the program a start or a checker runs: lookBin's, with a
// toolchain manager's shim replaced by the program it runs outside the
// checkout when the checkout is not trusted (toolenv.Env.Unshim).
func (la *launcher) program(name string, localDirs []string, root string) (string, error) {
	bin, err := la.lookBin(name, localDirs, root)
	if err != nil {
		return "", err
	}
	return la.env.Unshim(bin)
}

// start starts c's server for e, or says why it did not. A shared server
// gets a path guard of its own (the run that started it may close first);
// a run's own server reads through the run's.
func (la *launcher) start(e *pool.Entry, c *choice, shared bool) (pool.Member, error) {
	ctx, cancel := context.WithTimeout(context.Background(), la.cfg.StartTimeout)
	defer cancel()
	ctx, stop := lifetime.Until(ctx, e.Abandon())
	defer stop()
	relRoot := la.co.Rel(c.root)
	if relRoot == "" {
		relRoot = "."
	}
	guard, relText := la.co.Guard(), la.co.RelText
	if shared {
		g, err := pathguard.New(la.co.Root())
		if err != nil {
			return nil, fmt.Errorf("starting %s for %s: %w", c.spec.ID, relRoot, err)
		}
		e.SetGuard(g)
		guard, relText = g, la.co.WithGuard(g).RelText
	}
	var srv *server
	var err error
	if la.cfg.Broker != "" {
		// A server the broker runs warm for another process: joined with
		// no pins, probe or Prepare; else started in full.
		srv, _ = la.joinWarm(ctx, c, guard, relRoot, relText)
	}
	if srv == nil {
		var l *start
		if l, err = la.launch(c, guard); err == nil {
			srv, err = startServer(ctx, c.spec, l, relRoot, la.cfg, la.hooks, relText)
		}
	}
	if err == nil && e.Abandoned() {
		// Every run that wanted it closed meanwhile: stop what it started.
		srv.kill()
		err = ErrClosed
	}
	if err != nil {
		var se *ServerError
		if errors.As(err, &se) && se.Kind == ErrServerTimeout {
			se.Detail = fmt.Sprintf("it did not finish starting (initialize) within %s", la.cfg.StartTimeout)
		}
		return nil, fmt.Errorf("starting %s for %s: %w", c.spec.ID, relRoot, err)
	}
	srv.touch() // idle time counts from ready, not from launch
	return srv, nil
}

// preparedFrom is the state of the checkout files c's Prepare reads
// (langserver.Spec.PrepareReads): each file's stamp (parsecache.StampOf: device,
// inode, size, modification and change time; size and modification time
// where there is none), through the run's guard, which follows a link only
// inside the root. It is part of a start's name (pool.Key, warmKey), so a
// server whose Prepare read an older file — clangd's copy of a compilation
// database that cmake has written again since — is neither shared nor
// kept: the next call starts one from the file as it is now.
func (la *launcher) preparedFrom(c *choice) string {
	if len(c.spec.PrepareReads) == 0 || la.co.Guard() == nil {
		return ""
	}
	var b strings.Builder
	for _, rel := range c.spec.PrepareReads {
		info, err := la.co.Guard().Stat(filepath.Join(c.root, filepath.FromSlash(rel)))
		if err != nil {
			b.WriteString("-;")
		} else if st, ok := parsecache.StampOf(info); ok {
			fmt.Fprintf(&b, "%v;", st)
		} else {
			fmt.Fprintf(&b, "%d %d;", info.Size(), info.ModTime().UnixNano())
		}
	}
	return b.String()
}

// start is one server start: the launch its row's Prepare adjusts, and
// its name at the broker (warmKey); joinOnly: only a server running under
// that name is joined, none started.
type start struct {
	langserver.Launch
	warm     string
	joinOnly bool
}

// launch is one start of c, as its spec's Prepare leaves it: a private
// state folder (removed with the server), the guard g, and the
// environment that keeps an untrusted checkout's toolchain files out.
func (la *launcher) launch(c *choice, g *pathguard.Guard) (*start, error) {
	stateDir, err := proc.TempDir("lsp-" + strings.ReplaceAll(c.spec.ID, string(filepath.Separator), "_") + "-")
	if err != nil {
		return nil, fmt.Errorf("making %s's private folder: %w", c.spec.ID, err)
	}
	l := &start{Launch: langserver.Launch{Bin: c.bin, Args: append([]string(nil), c.spec.Command[1:]...), Root: c.root, Trusted: la.cfg.Trusted,
		StateDir: stateDir, Guard: g, Env: la.env.Child(c.root), InitializationOptions: c.spec.InitializationOptions}}
	if la.cfg.Broker != "" {
		l.warm = la.warmKey(c)
	}
	if c.spec.Prepare != nil {
		if err := c.spec.Prepare(&l.Launch); err != nil {
			os.RemoveAll(stateDir)
			return nil, err
		}
	}
	return l, nil
}

// checkLaunch applies the checkout-toolchain rule (N1) to an untrusted
// start as Prepare left it, before the server is started here or asked
// of the broker: the rule is untrusted.Check, the one the broker
// applies to every hello again, so the two never disagree (a broker's
// refusal would otherwise fall back to a start here).
func checkLaunch(l *start) error {
	if l.Trusted || l.joinOnly {
		return nil
	}
	env := l.Env
	if env == nil {
		env = os.Environ()
	}
	return untrusted.Check(l.Bin, l.Root, env)
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

// launchDigest is what, beside the row's id and the roots, makes two
// starts the same: the row's data and hooks, the program and environment,
// the trust and the time limits the server's calls run with.
func (la *launcher) launchDigest(c *choice) string {
	spec := c.spec
	loaded := ""
	if spec.LoadedLog != nil {
		loaded = spec.LoadedLog.String()
	}
	data := map[string]any{
		"command": spec.Command, "bin": c.bin, "env": la.env.Digest(c.root), "markers": spec.RootMarkers,
		"at_top": spec.RootAtTop, "ext": spec.Extensions, "local": spec.LocalBinDirs, "indexes": spec.Indexes,
		"once": spec.PublishesOnce, "loaded": loaded, "settings": spec.Settings, "fix": spec.FixCommands,
		"hooks": fmt.Sprintf("%p %p", spec.Prepare, spec.Pull),
		"times": []time.Duration{la.cfg.IdleTimeout, la.cfg.StartTimeout, la.cfg.RequestTimeout, la.cfg.DiagnosticsWait,
			la.cfg.DiagnosticsSettle, la.cfg.ApplyEditWait},
	}
	raw, err := json.Marshal(data)
	if err != nil {
		raw = []byte(err.Error())
	}
	init, err := json.Marshal(spec.InitializationOptions)
	if err != nil {
		// Options that cannot be compared are never shared.
		init = fmt.Appendf(nil, "%p", la)
	}
	sum := sha256.Sum256(append(raw, init...))
	return hex.EncodeToString(sum[:])
}
