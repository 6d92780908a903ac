package lsp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/internal/walk"
	"github.com/builtin-tools/builtin-tools/lsp/broker"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Supervisor holds the language servers of one run: it starts them on
// demand, one per (server, root marker folder), restarts crashed ones on
// the next call, and lets go of them all on Close. With [Config.Pool] set
// the servers are shared with the other runs of the process over the same
// folder (LSP-7), and a server stops when its last run closes; otherwise
// they are the run's own. Idle ones are reaped either way. Its methods are
// safe for concurrent use.
type Supervisor struct {
	checkout
	ownGuard bool // the guard was opened here, and Close closes it
	cfg      Config

	tools launcher
	fleet fleet

	// actions are the code actions listed in this run, by id (fix.go).
	actions actionTable
}

// checkout is the folder a run works in, as its results name it: the root,
// the path guard every path a server sends back is confined through, and
// the folders of files asked about (RelText). Edits are planned and
// written into it through editCheckout.
type checkout struct {
	root  string // absolute, symlinks resolved
	roots []string
	// guard confines every path a server sends back before it is read,
	// quoted or written, and every file read to prepare a start; nil when
	// the root cannot be opened.
	guard *pathguard.Guard

	// dirs are the folders of files asked about, where RelText looks for a
	// file a server names from a folder other than the root.
	dirsMu sync.Mutex
	dirs   map[string]bool
}

// launcher chooses, probes and starts the programs a run starts for its
// checkout — servers, probes, checkers — in the environment its trust
// allows: for an untrusted checkout the toolchain pins (toolchain.go),
// worked out on first use, and Volta shims resolved once each.
type launcher struct {
	co    *checkout
	cfg   *Config
	hooks *testHooks

	pinOnce   sync.Once
	pinned    *pins
	unshimMu  sync.Mutex
	unshimmed map[string]unshimmed
}

// fleet is the servers one run holds — from its own pool or the shared
// one — with their crashes and start failures, and the files it syncs to
// them.
type fleet struct {
	co  *checkout
	la  *launcher
	cfg *Config

	// ownPool holds the servers this run shares with no other.
	ownPool *Pool

	mu      sync.Mutex
	closed  bool
	servers map[serverKey]*serverEntry // the pool entries this run holds
	crashes map[serverKey]Crash        // last unexpected exit, for Status
	// failures are servers that failed to start, not started again until
	// their backoff ends (or reload).
	failures map[serverKey]*startFailure
	told     map[string]bool // servers that do not run, already reported on a write
	stop     chan struct{}
	wg       sync.WaitGroup // the starts this run began
}

type serverKey struct {
	id   string
	root string
}

// NewSupervisor returns a Supervisor for the checkout at root, with a path
// guard of its own. It starts nothing (LSP-1): servers start on the first
// call that needs them.
func NewSupervisor(root string, cfg Config) *Supervisor {
	abs, err := filepath.Abs(root)
	if err != nil {
		abs = filepath.Clean(root)
	}
	roots := []string{abs}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil && resolved != abs {
		roots = []string{resolved, abs}
	}
	guard, _ := pathguard.New(roots[0])
	s := newSupervisor(roots, guard, cfg)
	s.ownGuard = guard != nil
	return s
}

// OpenSupervisor returns a Supervisor over the run's path guard g (a
// family's Open passes registry.Env.Guard), which Close leaves open.
func OpenSupervisor(g *pathguard.Guard, cfg Config) *Supervisor {
	return newSupervisor([]string{g.Root()}, g, cfg)
}

func newSupervisor(roots []string, guard *pathguard.Guard, cfg Config) *Supervisor {
	s := &Supervisor{checkout: checkout{root: roots[0], roots: roots, guard: guard}, cfg: cfg.withDefaults()}
	s.tools = launcher{co: &s.checkout, cfg: &s.cfg}
	s.fleet = fleet{co: &s.checkout, la: &s.tools, cfg: &s.cfg,
		servers:  map[serverKey]*serverEntry{},
		ownPool:  NewPool(),
		crashes:  map[serverKey]Crash{},
		failures: map[serverKey]*startFailure{},
		told:     map[string]bool{},
		stop:     make(chan struct{}),
	}
	if cfg.MemoryBudget != 0 {
		s.fleet.ownPool.SetBudget(cfg.MemoryBudget)
		if cfg.Pool != nil {
			cfg.Pool.SetBudget(cfg.MemoryBudget)
		}
	}
	return s
}

// Guard is the path guard the supervisor reads and confines through: the
// locations its methods take come from it (Guard.Path).
func (co *checkout) Guard() *pathguard.Guard { return co.guard }

// Root returns the checkout root the supervisor works in.
func (co *checkout) Root() string { return co.root }

// DiagnosticsWait is the bound on one version's diagnostics.
func (s *Supervisor) DiagnosticsWait() time.Duration { return s.cfg.DiagnosticsWait }

// Close lets go of every server the run holds: each that no other run
// holds is shut down (shutdown and exit, then kill of its process group)
// and waited for. Calls after Close fail with ErrClosed.
func (s *Supervisor) Close() error {
	if s.fleet.close() && s.ownGuard {
		s.guard.Close()
	}
	return nil
}

// close lets go of every server the fleet holds (Close), reporting whether
// it was open.
func (fl *fleet) close() bool {
	fl.mu.Lock()
	if fl.closed {
		fl.mu.Unlock()
		return false
	}
	fl.closed = true
	close(fl.stop)
	entries := make([]*serverEntry, 0, len(fl.servers))
	for _, e := range fl.servers {
		entries = append(entries, e)
	}
	fl.servers = map[serverKey]*serverEntry{}
	fl.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	// A start this was the last holder of is cancelled; one that does not
	// end within startGrace (a preparation stuck in a system call) is not
	// waited for: start stops what it started once it returns.
	var wg sync.WaitGroup
	for _, e := range entries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.pool.release(ctx, e, false)
		}()
	}
	wg.Wait()
	return true
}

// Close waits at most closeTimeout in all, and at most startGrace for a
// start it cancelled.
const (
	closeTimeout = 10 * time.Second
	startGrace   = 2 * time.Second
)

// rel returns path relative to the root for messages, or path itself when
// it lies outside.
func (co *checkout) rel(path string) string {
	for _, r := range co.roots {
		if rel, err := filepath.Rel(r, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel)
		}
	}
	return path
}

// RelText rewrites the paths under the root in text — a server's message,
// a checker's output line, a diagnostic — relative to the root, as every
// result names files: "/root/a.go" and "file:///root/a.go" become "a.go".
// The root itself stays named (a message may say what paths are relative
// to), as does a path outside it.
//
// A server may also name a file relative to a folder other than the root:
// gopls writes "shapes/a.go:7:6" — the file's folder and name — for
// root/shapes/a.go when the root is "shapes", and "sub/a.go" for
// root/pkg/sub/a.go. A relative path that is no file under the root but is
// one under the root's parent, or under a folder of a file asked about (or
// one above it), is rewritten to the path from the root.
func (co *checkout) RelText(text string) string {
	for _, r := range co.roots {
		if !strings.Contains(text, r) {
			continue
		}
		text = replacePath(text, fileURI(r)+"/", "")
		text = replacePath(text, r+string(filepath.Separator), "")
	}
	if !strings.Contains(text, "/") || co.guard == nil {
		return text
	}
	var b strings.Builder
	last := 0
	for _, m := range relPathToken.FindAllStringSubmatchIndex(text, -1) {
		if rel, ok := co.fromElsewhere(text[m[2]:m[3]]); ok {
			b.WriteString(text[last:m[2]])
			b.WriteString(rel)
			last = m[3]
		}
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// relPathToken is a relative path of at least two parts (group 1), at the
// start of text or after a character that is no part of a path.
var relPathToken = regexp.MustCompile(`(?:^|[^\w./~-])((?:[\w.~-]+/)+[\w.~-]*[\w~-])`)

// maxDirs bounds the folders RelText remembers.
const maxDirs = 1000

// noteDir remembers the folder of a file asked about, for RelText.
func (co *checkout) noteDir(path string) {
	co.dirsMu.Lock()
	defer co.dirsMu.Unlock()
	if co.dirs == nil {
		co.dirs = map[string]bool{}
	}
	if len(co.dirs) < maxDirs {
		co.dirs[filepath.Dir(path)] = true
	}
}

// fromElsewhere finds the file under the root that tok, a relative path
// no file under the root has, names from another folder: the root's
// parent, or a remembered folder or one above it.
func (co *checkout) fromElsewhere(tok string) (string, bool) {
	if strings.HasPrefix(tok, "/") {
		return "", false
	}
	exists := func(abs string) bool {
		if !co.inRoot(abs) || abs == co.root {
			return false
		}
		info, err := co.guard.Lstat(abs)
		return err == nil && !info.IsDir()
	}
	if exists(filepath.Join(co.root, tok)) {
		return "", false // already relative to the root
	}
	co.dirsMu.Lock()
	bases := []string{filepath.Dir(co.root)}
	for d := range co.dirs {
		bases = append(bases, d)
	}
	co.dirsMu.Unlock()
	slices.SortFunc(bases, func(a, b string) int { return cmp.Compare(len(b), len(a)) }) // deepest first
	seen := map[string]bool{}
	for _, d := range bases {
		for ; co.inRoot(d) || d == filepath.Dir(co.root); d = filepath.Dir(d) {
			if seen[d] {
				break
			}
			seen[d] = true
			if abs := filepath.Join(d, tok); exists(abs) {
				return co.rel(abs), true
			}
			if d == filepath.Dir(co.root) {
				break
			}
		}
	}
	return "", false
}

// replacePath replaces prefix in text where it starts a path (not inside a
// longer one).
func replacePath(text, prefix, with string) string {
	var b strings.Builder
	for {
		i := strings.Index(text, prefix)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		end := i + len(prefix)
		ok := i == 0 || !isPathByte(text[i-1])
		b.WriteString(text[:i])
		if ok {
			b.WriteString(with)
		} else {
			b.WriteString(prefix)
		}
		text = text[end:]
	}
}

// isPathByte reports whether c may be part of a file name or path.
func isPathByte(c byte) bool {
	return c == '/' || c == '.' || c == '-' || c == '_' || c == '~' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// inRoot reports whether path is the root or below it.
func (co *checkout) inRoot(path string) bool {
	return co.rel(path) != path || path == co.root
}

// checkFile is the checkout's checkFile, failing with ErrClosed once the
// run has closed.
func (fl *fleet) checkFile(at pathguard.Path) (string, error) {
	if fl.isClosed() {
		return "", ErrClosed
	}
	return fl.co.checkFile(at)
}

func (fl *fleet) isClosed() bool {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return fl.closed
}

// tell reports whether the server id that does not run is not yet
// reported on a write, and notes that it is now.
func (fl *fleet) tell(id string) bool {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	first := !fl.told[id]
	fl.told[id] = true
	return first
}

// troubles are the last crash and the start failure of each of server
// id's roots, for Status.
func (fl *fleet) troubles(id string) (crashes []Crash, failures []StartFailure) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	for key, c := range fl.crashes {
		if key.id == id {
			crashes = append(crashes, c)
		}
	}
	for key, f := range fl.failures {
		if key.id == id {
			failures = append(failures, StartFailure{Root: fl.co.rel(key.root), Error: f.err.Error(), RetryAt: f.until})
		}
	}
	return crashes, failures
}

// checkFile validates a file argument: absolute or root-relative, inside
// the root (after resolving symlinks), an existing regular file.
func (co *checkout) checkFile(at pathguard.Path) (string, error) {
	if at.IsZero() {
		return "", fmt.Errorf("%w: file is required", ErrBadFile)
	}
	file, err := co.guard.Of(at)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadFile, err)
	}
	path := file
	if !filepath.IsAbs(path) {
		path = filepath.Join(co.root, path)
	}
	path = filepath.Clean(path)
	if !co.inRoot(path) {
		return "", fmt.Errorf("%w: %s is outside the root %s; give a path inside it", ErrBadFile, file, co.root)
	}
	resolved, err := co.confine(path)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadFile, err)
	}
	info, err := co.guard.Stat(resolved)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%w: %s does not exist (paths are relative to %s)", ErrBadFile, co.rel(path), co.root)
	case err != nil:
		return "", fmt.Errorf("%w: %v", ErrBadFile, err)
	case info.IsDir():
		return "", fmt.Errorf("%w: %s is a folder; give a file", ErrBadFile, co.rel(resolved))
	case !info.Mode().IsRegular():
		// A named pipe would block the open, here and in the server.
		return "", fmt.Errorf("%w: %s is not a regular file (%s); language servers read source files", ErrBadFile, co.rel(resolved), info.Mode().Type())
	}
	return resolved, nil
}

// confine resolves a path a server sent (or a caller gave) through the
// run's path guard: the real file inside the root, or an error saying it
// lies outside. Lexical checks are not enough: root/ext may be a symlink
// to a folder outside the root.
func (co *checkout) confine(path string) (string, error) {
	if co.guard == nil {
		return "", fmt.Errorf("the root %s cannot be opened", co.root)
	}
	return co.guard.Resolve(co.canonical(path))
}

// canonical maps a resolved path to the root spelling used everywhere.
func (co *checkout) canonical(path string) string {
	for _, r := range co.roots {
		if rel, err := filepath.Rel(r, path); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.Join(co.root, rel)
		}
	}
	return path
}

// choice is the server that owns a file: its spec, root folder and binary.
type choice struct {
	spec       *ServerSpec
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
		langID, ok := spec.owns(path)
		if !ok {
			continue
		}
		owned = true
		root, marker, bad := la.co.root, "", ""
		if !spec.RootAtTop {
			root, marker, bad = la.co.nearestMarker(filepath.Dir(path), spec.RootMarkers)
		}
		bin, binErr := la.program(spec.Command[0], spec.LocalBinDirs, root)
		switch {
		case bad != "":
			reasons = append(reasons, fmt.Sprintf("%s found %s, which does not count as a root marker: %s; replace it with the real file, or remove it",
				spec.ID, la.co.rel(filepath.Join(root, marker)), bad))
		case root == "" && binErr != nil:
			reasons = append(reasons, fmt.Sprintf("%s needs a root marker (%s) in %s or a folder above it inside the root, and %s is not installed (%s)",
				spec.ID, strings.Join(spec.RootMarkers, ", "), la.co.rel(filepath.Dir(path)), spec.Command[0], spec.Install))
		case root == "":
			reasons = append(reasons, fmt.Sprintf("%s is installed (%s) but no root marker (%s) was found in %s or a folder above it inside the root",
				spec.ID, bin, strings.Join(spec.RootMarkers, ", "), la.co.rel(filepath.Dir(path))))
		case binErr != nil && !errors.Is(binErr, exec.ErrNotFound) && !errors.Is(binErr, fs.ErrNotExist):
			// A manager's shim with nothing to run outside the checkout.
			reasons = append(reasons, fmt.Sprintf("%s found %s, but %v", spec.ID, la.co.rel(filepath.Join(root, marker)), binErr))
		case binErr != nil:
			reasons = append(reasons, fmt.Sprintf("%s found %s but %s is not installed: %s",
				spec.ID, la.co.rel(filepath.Join(root, marker)), spec.Command[0], spec.Install))
		default:
			c := &choice{spec: spec, root: root, bin: bin, languageID: langID}
			if la.runsWarm(c) {
				return c, nil
			}
			if err := la.probe(spec, bin, root); err != nil {
				reasons = append(reasons, fmt.Sprintf("%s found %s, and %s is installed but does not run: %v; install it: %s",
					spec.ID, la.co.rel(filepath.Join(root, marker)), bin, err, spec.Install))
				broken = append(broken, spec.ID)
				continue
			}
			return c, nil
		}
	}
	if !owned {
		return nil, fmt.Errorf("%w: no server in the table handles %q files (%s); use read or grep for it",
			ErrNotOwned, filepath.Ext(path), la.co.rel(path))
	}
	return nil, &UnavailableError{File: la.co.rel(path), Reasons: reasons, Broken: broken}
}

// nearestMarker walks from dir up to the supervisor root and returns the
// first folder holding one of markers, and the marker found. When the
// markers there are all unfit (a named pipe, a device, a link out of the
// root: N10), bad says why the first one is.
func (co *checkout) nearestMarker(dir string, markers []string) (root, marker, bad string) {
	for {
		found := ""
		for _, m := range markers {
			ok, why := co.markerAt(filepath.Join(dir, m))
			if ok {
				return dir, m, ""
			}
			if why != "" && found == "" {
				found, bad = m, why
			}
		}
		if found != "" {
			return dir, found, bad
		}
		if dir == co.root || !co.inRoot(dir) {
			return "", "", ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", ""
		}
		dir = parent
	}
}

// markerAt reports whether p is a root marker: a regular file (of at most
// maxFileBytes, since the server reads it) or a folder, itself or through
// links inside the root. Otherwise why says what it is instead; both are
// empty when nothing is there.
func (co *checkout) markerAt(p string) (ok bool, why string) {
	if co.guard == nil {
		return false, ""
	}
	info, err := co.guard.Lstat(p)
	if err != nil {
		return false, ""
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		target, err := co.guard.Resolve(p)
		if err != nil {
			return false, "it is a symbolic link that leads outside the root"
		}
		if info, err = co.guard.Lstat(target); err != nil {
			return false, "" // a dangling link is no marker
		}
	}
	switch {
	case info.IsDir():
		return true, ""
	case !info.Mode().IsRegular():
		return false, "it is " + fileKind(info) + ", not a regular file"
	case info.Size() > maxFileBytes:
		return false, fmt.Sprintf("it is %d bytes, over the %d-byte limit", info.Size(), maxFileBytes)
	}
	return true, ""
}

// fileKind names a file that is not a regular file or a folder.
func fileKind(info fs.FileInfo) string {
	switch t := info.Mode().Type(); {
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeDevice != 0:
		return "a device"
	default:
		return "a file of type " + t.String()
	}
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
		return broker.LookOutside(program, la.co.root, os.Environ())
	}
	if found := localBins(program, localDirs, root, la.co.root); len(found) > 0 {
		return found[0], nil
	}
	return exec.LookPath(program)
}

// program is the program a start or a checker runs: lookBin's, with a
// toolchain manager's shim replaced by the program it runs outside the
// checkout when the checkout is not trusted (toolchain.go).
func (la *launcher) program(name string, localDirs []string, root string) (string, error) {
	bin, err := la.lookBin(name, localDirs, root)
	if err != nil {
		return "", err
	}
	return la.unshim(bin)
}

// serverFor returns the running server for c, starting one (and waiting,
// bounded by StartTimeout) when there is none or the last one died. The
// server counts as in use (never reaped, and no preview runs on it) until
// the caller calls release.
func (fl *fleet) serverFor(ctx context.Context, c *choice) (*server, error) {
	key := serverKey{c.spec.ID, c.root}
	for {
		fl.mu.Lock()
		if fl.closed {
			fl.mu.Unlock()
			return nil, ErrClosed
		}
		e := fl.servers[key]
		if f := fl.failures[key]; e == nil && f != nil && time.Now().Before(f.until) {
			fl.mu.Unlock()
			return nil, &BackoffError{Err: f.err, Until: f.until}
		}
		if e == nil {
			pool, shared := fl.poolFor()
			pkey := poolKey{id: c.spec.ID, root: c.root, runRoot: fl.co.root, trusted: fl.cfg.Trusted, launch: fl.la.launchDigest(c)}
			fl.wg.Add(1)
			var created bool
			e, created = pool.acquire(pkey, fl.cfg.IdleTimeout, func(e *serverEntry) {
				defer fl.wg.Done()
				fl.la.start(e, c, shared)
			})
			if !created {
				fl.wg.Done()
			}
			fl.servers[key] = e
		}
		fl.mu.Unlock()

		select {
		case <-e.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-fl.stop:
			return nil, ErrClosed
		}
		if e.err != nil {
			fl.drop(key, e)
			fl.failed(key, e.err)
			return nil, e.err
		}
		fl.mu.Lock()
		delete(fl.failures, key)
		fl.mu.Unlock()
		if e.srv.peerGone() || !e.srv.alive() {
			// Crashed since the last call: note it and start afresh.
			e.srv.mu.Lock()
			closing := e.srv.closing
			e.srv.mu.Unlock()
			if !closing && !e.srv.stoppedIdle() {
				fl.mu.Lock()
				fl.crashes[key] = Crash{Root: fl.co.rel(key.root), Error: e.srv.exitError("").Error(), At: time.Now()}
				fl.mu.Unlock()
			}
			fl.drop(key, e)
			continue
		}
		if !e.pool.use(e) {
			// Reaped or reloaded (by this run or another): start afresh.
			fl.drop(key, e)
			continue
		}
		srv := e.srv
		srv.touch()
		if err := srv.view.share(ctx, fl.cfg.viewBound()); err != nil {
			srv.inflight.Add(-1)
			if errors.Is(err, errViewBusy) {
				return nil, srv.busyError("", false)
			}
			return nil, err
		}
		return srv, nil
	}
}

// failed records a start failure and its backoff, doubled each time it
// fails again.
func (fl *fleet) failed(key serverKey, err error) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if fl.closed {
		return
	}
	f := fl.failures[key]
	if f == nil {
		f = &startFailure{backoff: firstBackoff}
		fl.failures[key] = f
	} else {
		f.backoff = min(2*f.backoff, maxBackoff)
	}
	f.err, f.until = err, time.Now().Add(f.backoff)
}

// release ends a use begun by serverFor.
func (srv *server) release() {
	srv.view.unshare()
	srv.endUse()
}

// endUse is release for a use that gave its view share back earlier
// (a wait for late diagnostics, which asks the server nothing).
func (srv *server) endUse() {
	srv.touch()
	srv.inflight.Add(-1)
}

// start starts c's server for e. A shared server gets a path guard of its
// own (the run that started it may close first); a run's own server reads
// through the run's.
func (la *launcher) start(e *serverEntry, c *choice, shared bool) {
	defer close(e.ready)
	defer func() {
		if e.abandoned() {
			e.closeGuard()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), la.cfg.StartTimeout)
	defer cancel()
	go func() {
		select {
		case <-e.abandon:
			cancel()
		case <-ctx.Done():
		}
	}()
	relRoot := la.co.rel(c.root)
	if relRoot == "" {
		relRoot = "."
	}
	guard, relText := la.co.guard, la.co.RelText
	if shared {
		g, err := pathguard.New(la.co.root)
		if err != nil {
			e.err = fmt.Errorf("starting %s for %s: %w", c.spec.ID, relRoot, err)
			return
		}
		e.guard = g
		view := &checkout{root: la.co.root, roots: la.co.roots, guard: g}
		guard, relText = g, view.RelText
	}
	var srv *server
	var err error
	if la.cfg.Broker != "" {
		// A server the broker runs warm for another process: joined with
		// no pins, probe or Prepare; else started in full.
		srv, _ = la.joinWarm(ctx, c, guard, relRoot, relText)
	}
	if srv == nil {
		var l *Launch
		if l, err = la.launch(c, guard); err == nil {
			srv, err = startServer(ctx, c.spec, l, relRoot, la.cfg, la.hooks, relText)
		}
	}
	if err == nil && e.abandoned() {
		// Every run that wanted it closed meanwhile: stop what it started.
		srv.kill()
		err = ErrClosed
	}
	if err != nil {
		var se *ServerError
		if errors.As(err, &se) && se.Kind == ErrServerTimeout {
			se.Detail = fmt.Sprintf("it did not finish starting (initialize) within %s", la.cfg.StartTimeout)
		}
		e.err = fmt.Errorf("starting %s for %s: %w", c.spec.ID, relRoot, err)
		return
	}
	srv.touch() // idle time counts from ready, not from launch
	e.srv = srv
}

// launch is one start of c, as its spec's Prepare leaves it: a private
// state folder (removed with the server), the guard g, and the
// environment that keeps an untrusted checkout's toolchain files out.
func (la *launcher) launch(c *choice, g *pathguard.Guard) (*Launch, error) {
	stateDir, err := proc.TempDir("lsp-" + strings.ReplaceAll(c.spec.ID, string(filepath.Separator), "_") + "-")
	if err != nil {
		return nil, fmt.Errorf("making %s's private folder: %w", c.spec.ID, err)
	}
	l := &Launch{Bin: c.bin, Args: append([]string(nil), c.spec.Command[1:]...), Root: c.root, Trusted: la.cfg.Trusted,
		StateDir: stateDir, Guard: g, Env: la.childEnv(c.root), InitializationOptions: c.spec.InitializationOptions}
	if la.cfg.Broker != "" {
		l.warm = la.warmKey(c)
	}
	if c.spec.Prepare != nil {
		if err := c.spec.Prepare(l); err != nil {
			os.RemoveAll(stateDir)
			return nil, err
		}
	}
	return l, nil
}

// drop lets go of e if it is still the entry this run holds for key.
func (fl *fleet) drop(key serverKey, e *serverEntry) {
	fl.mu.Lock()
	held := fl.servers[key] == e
	if held {
		delete(fl.servers, key)
	}
	fl.mu.Unlock()
	if held {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		e.pool.release(ctx, e, false)
	}
}

// runningEntry is a live server this run holds.
type runningEntry struct {
	srv     *server
	clients int // runs holding it, this one included
}

// running returns the live servers, sorted by id and root.
func (fl *fleet) running() []*server {
	var out []*server
	for _, r := range fl.runningEntries() {
		out = append(out, r.srv)
	}
	return out
}

// runningEntries is running with how many runs hold each server.
func (fl *fleet) runningEntries() []runningEntry {
	fl.mu.Lock()
	var entries []*serverEntry
	for _, e := range fl.servers {
		entries = append(entries, e)
	}
	fl.mu.Unlock()
	var out []runningEntry
	for _, e := range entries {
		select {
		case <-e.ready:
		default:
			continue
		}
		e.pool.mu.Lock()
		gone, refs := e.gone, e.refs
		e.pool.mu.Unlock()
		if e.srv != nil && e.srv.alive() && !gone {
			out = append(out, runningEntry{srv: e.srv, clients: refs})
		}
	}
	slices.SortFunc(out, func(a, b runningEntry) int {
		return cmp.Or(strings.Compare(a.srv.spec.ID, b.srv.spec.ID), strings.Compare(a.srv.root, b.srv.root))
	})
	return out
}

// Reload restarts the server that owns file (file "" restarts every
// running server) and returns what it did. On an error it returns what
// was reloaded before it.
func (s *Supervisor) Reload(ctx context.Context, file pathguard.Path) (*ReloadResult, error) {
	if file.IsZero() {
		res := &ReloadResult{All: true, Servers: []Reloaded{}}
		for _, srv := range s.fleet.running() {
			key := serverKey{srv.spec.ID, srv.root}
			s.fleet.stopKey(ctx, key)
			t0 := time.Now()
			c := &choice{spec: srv.spec, root: srv.root, bin: srv.bin}
			started, err := s.fleet.serverFor(ctx, c)
			if err != nil {
				return res, err
			}
			started.release()
			res.Servers = append(res.Servers, Reloaded{Server: srv.spec.ID, Root: started.relRoot, WasRunning: true,
				PID: started.pid(), ReadyMS: time.Since(t0).Round(time.Millisecond).Milliseconds()})
		}
		return res, nil
	}
	path, err := s.fleet.checkFile(file)
	if err != nil {
		return nil, err
	}
	c, err := s.tools.choose(path)
	if err != nil {
		return nil, err
	}
	key := serverKey{c.spec.ID, c.root}
	was := s.fleet.stopKey(ctx, key)
	t0 := time.Now()
	srv, err := s.fleet.serverFor(ctx, c)
	if err != nil {
		return nil, err
	}
	srv.release()
	return &ReloadResult{Servers: []Reloaded{{Server: c.spec.ID, Root: srv.relRoot, WasRunning: was,
		PID: srv.pid(), ReadyMS: time.Since(t0).Round(time.Millisecond).Milliseconds()}}}, nil
}

// stopKey shuts down the server for key, reporting whether one ran. A
// server other runs share stops for them too: their next call starts it
// again.
func (fl *fleet) stopKey(ctx context.Context, key serverKey) bool {
	fl.mu.Lock()
	e := fl.servers[key]
	delete(fl.servers, key)
	delete(fl.failures, key) // reload retries at once
	fl.mu.Unlock()
	if e == nil {
		return false
	}
	e.pool.release(ctx, e, true)
	return true
}

// Status says, per language in the table, whether its root marker is in the
// checkout and its binary resolves, and which servers run for which roots.
// It starts nothing.
func (s *Supervisor) Status(ctx context.Context) *Status {
	markers := s.scanMarkers(ctx, s.cfg.Servers)
	running := s.fleet.runningEntries()
	st := &Status{Root: s.root, Trusted: s.cfg.Trusted, Servers: make([]ServerStatus, 0, len(s.cfg.Servers))}
	for i := range s.cfg.Servers {
		spec := &s.cfg.Servers[i]
		dirs := markers[spec.ID]
		probeRoot := s.root
		if len(dirs) > 0 {
			probeRoot = filepath.Join(s.root, filepath.FromSlash(dirs[0]))
		}
		bin, binErr := s.tools.program(spec.Command[0], spec.LocalBinDirs, s.root)
		if binErr != nil && len(dirs) > 0 {
			bin, binErr = s.tools.program(spec.Command[0], spec.LocalBinDirs, probeRoot)
		}
		// Lists the schema requires are [] when empty, never null (a
		// RootAtTop row has no markers).
		row := ServerStatus{ID: spec.ID, Language: spec.Language, Extensions: append([]string{}, slices.Sorted(maps.Keys(spec.Extensions))...),
			RootMarkers: append([]string{}, spec.RootMarkers...), MarkerDirs: dirs, Program: spec.Command[0], Install: spec.Install}
		if binErr == nil {
			row.Binary = s.rel(bin) // a program inside a trusted checkout, relative
		}
		for _, r := range running {
			if srv := r.srv; srv.spec.ID == spec.ID {
				n := srv.docs.count()
				row.Running = append(row.Running, RunningServer{Root: srv.relRoot, PID: srv.pid(),
					UptimeSeconds: int64(time.Since(srv.started).Round(time.Second) / time.Second), OpenFiles: n, Encoding: srv.encoding,
					Clients: r.clients, MemoryKB: proc.RSSKB(srv.pid()), IdleSeconds: int64(srv.idleFor().Round(time.Second) / time.Second)})
			}
		}
		switch {
		case len(row.Running) > 0:
			row.State = StateRunning
		case len(dirs) > 0 && binErr == nil:
			if err := s.tools.probe(spec, bin, probeRoot); err != nil {
				row.State, row.RunError = StateBroken, err.Error()
			} else {
				row.State = StateAvailable
			}
		case len(dirs) > 0:
			row.State = StateNoBinary
		case binErr == nil:
			row.State = StateNoMarker
		default:
			row.State = StateNoMarkerNoBinary
		}
		row.Crashes, row.StartFailures = s.fleet.troubles(spec.ID)
		slices.SortFunc(row.Crashes, func(a, b Crash) int {
			return cmp.Or(strings.Compare(a.Root, b.Root), strings.Compare(a.Error, b.Error))
		})
		slices.SortFunc(row.StartFailures, func(a, b StartFailure) int { return strings.Compare(a.Root, b.Root) })
		if !s.cfg.Trusted {
			var roots []string
			for _, d := range dirs {
				roots = append(roots, filepath.Join(s.root, filepath.FromSlash(d)))
			}
			for _, p := range localBins(spec.Command[0], spec.LocalBinDirs, append(roots, s.root)...) {
				row.PassedOver = append(row.PassedOver, s.rel(p))
			}
			if spec.CheckerRunsCode != "" && len(dirs) > 0 {
				row.Checker, row.CheckerSkipped = spec.Checker, spec.CheckerRunsCode
			}
		}
		st.Servers = append(st.Servers, row)
	}
	st.Pool = s.fleet.poolStatus(ctx)
	// One figure for a server's memory in both lists: with its children.
	mem := map[int]int64{}
	for _, p := range st.Pool.Servers {
		mem[p.PID] = p.MemoryKB
	}
	for i := range st.Servers {
		for j := range st.Servers[i].Running {
			r := &st.Servers[i].Running[j]
			if kb, ok := mem[r.PID]; ok {
				r.MemoryKB = kb
			}
			r.OverBudget = st.Pool.BudgetKB > 0 && r.MemoryKB >= st.Pool.BudgetKB
		}
	}
	return st
}

// poolStatus lists the servers of the pool this run's servers go to.
func (fl *fleet) poolStatus(ctx context.Context) *PoolStatus {
	pool, shared := fl.poolFor()
	held := map[*serverEntry]bool{}
	fl.mu.Lock()
	for _, e := range fl.servers {
		held[e] = true
	}
	fl.mu.Unlock()
	rows, stops := pool.list()
	ps := &PoolStatus{BudgetKB: pool.Budget(), Shared: shared, Servers: make([]PoolServerStatus, 0, len(rows))}
	where := func(root string) (string, bool) {
		if !fl.co.inRoot(root) {
			return "", true
		}
		if rel := fl.co.rel(root); rel != "" {
			return rel, false
		}
		return ".", false
	}
	for _, r := range rows {
		root, other := where(r.Root)
		ps.UsedKB += r.MemoryKB
		ps.Servers = append(ps.Servers, PoolServerStatus{Server: r.Server, Root: root, OtherFolder: other, ThisRun: held[r.e],
			Trusted: r.Trusted, State: r.State, Clients: r.Clients, PID: r.PID, MemoryKB: r.MemoryKB,
			IdleSeconds: int64(r.Idle.Round(time.Second) / time.Second), OverBudget: ps.BudgetKB > 0 && r.MemoryKB >= ps.BudgetKB})
		if r.State != PoolStarting && r.e.srv != nil {
			ps.Servers[len(ps.Servers)-1].Processes = r.e.srv.processes(ctx)
		}
	}
	for _, r := range rows {
		if r.State != PoolStarting && r.e.srv != nil {
			if bs := r.e.srv.brokerServers(ctx); bs != nil {
				ps.Broker = &BrokerStatus{BudgetKB: bs.BudgetKB, Servers: make([]PoolServerStatus, 0, len(bs.Servers))}
				for _, x := range bs.Servers {
					root, other := where(x.Dir)
					ps.Broker.UsedKB += x.MemoryKB
					ps.Broker.Servers = append(ps.Broker.Servers, PoolServerStatus{Server: x.Server, Root: root, OtherFolder: other,
						Trusted: x.Trusted, State: x.State, Processes: x.Clients, PID: x.PID, MemoryKB: x.MemoryKB,
						IdleSeconds: x.IdleMS / 1000, OverBudget: bs.BudgetKB > 0 && x.MemoryKB >= bs.BudgetKB})
				}
				break
			}
		}
	}
	for _, b := range stops {
		root, other := where(b.Root)
		forRoot, forOther := where(b.ForRoot)
		if forOther {
			forRoot = "another folder"
		}
		ps.Stopped = append(ps.Stopped, BudgetStopStatus{Server: b.Server, Root: root, OtherFolder: other, MemoryKB: b.MemoryKB,
			UsedKB: b.UsedKB, BudgetKB: b.BudgetKB, For: b.For + " for " + forRoot, At: b.At})
	}
	return ps
}

// scanMarkers walks the checkout (bounded in depth and size, skipping
// dependency and hidden folders) and returns, per server id, the folders
// (relative to the root) holding one of its markers.
func (co *checkout) scanMarkers(ctx context.Context, specs []ServerSpec) map[string][]string {
	const maxDepth, maxEntries = 4, 20000
	byMarker := map[string][]string{}
	for i := range specs {
		for _, m := range specs[i].RootMarkers {
			byMarker[m] = append(byMarker[m], specs[i].ID)
		}
	}
	found := map[string][]string{}
	if co.guard == nil {
		return found
	}
	seen := map[string]map[string]bool{}
	entries := 0
	// The run's one walk policy (.gitignore, hidden and vendored folders),
	// plus build output, down to maxDepth.
	opts := walk.Options{Dirs: true, MaxDepth: maxDepth, HiddenFiles: true, SkipDirs: []string{"target", "build"}}
	_ = walk.Walk(ctx, co.guard, co.root, opts, func(e walk.Entry) error {
		entries++
		if entries > maxEntries {
			return walk.SkipAll
		}
		ids := byMarker[path.Base(e.Rel)]
		if len(ids) > 0 {
			if ok, _ := co.markerAt(e.Abs); !ok {
				return nil // not a marker (N10); a call on a file below says why
			}
		}
		for _, id := range ids {
			dir := path.Dir(e.Rel)
			if seen[id] == nil {
				seen[id] = map[string]bool{}
			}
			if !seen[id][dir] {
				seen[id][dir] = true
				found[id] = append(found[id], dir)
			}
		}
		return nil
	})
	for id := range found {
		slices.Sort(found[id])
	}
	return found
}
