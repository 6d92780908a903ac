// Command graphacc measures the precision and recall of the code graph's
// call edges (package graph) against a language server's call hierarchy.
//
// It indexes a root with graph, picks definitions by a fixed seed, asks a
// language server for every place each one is called — through the
// repository's lsp package (lsp.Supervisor.CallHierarchy:
// prepareCallHierarchy, then callHierarchy/incomingCalls), the path the
// agent's `lsp incoming_calls` takes — asks graph's Callers for the same
// definitions, and compares the two by file:line: precision per
// resolution class, recall, and every miss and false positive with what
// graph said about it.
//
//	go -C bench build -o /tmp/graphacc ./graphacc   # from the repository root
//	/tmp/graphacc [-lang go] [-root DIR] [-n 50] [-seed 1] [-out report.md]
//	/tmp/graphacc -target crypto/x509/cert_pool.go:73   # chosen definitions
//
// For method targets it also asks lsp's definition at every site the
// server lists, to tell references to the target itself from those the
// server adds through interface satisfaction. The server is the lsp
// table's row for the language with -server's program and arguments;
// gopls runs with CGO_ENABLED=0 unless -server-env says otherwise (see
// langs), pyright with the root as its root (the standard library has no
// project file). lsp starts one server per root-marker folder, waits for
// its initial indexing, opens documents before asking about them, and
// stops every server (and its process group) when the run ends or on
// SIGINT/SIGTERM.
//
// With -impact it also walks the server's incoming calls from each target
// to -impact-depth (2 by default) and compares the functions reached with
// graph's impact at each depth from 2 (reach, what impact adds, and the
// share of impact's functions the server reaches too).
//
// bench/graphacc.sh runs it with the defaults; RESULTS.md has a run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/graph"
	"github.com/builtin-tools/builtin-tools/graph/index"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

type config struct {
	lang         *lang
	root         string
	n, perDir    int
	seed         uint64
	server       string
	args         []string
	env          []string
	only         []string
	out          string
	serverLog    string
	loadTimeout  time.Duration
	queryTimeout time.Duration
	settle       time.Duration
	classify     bool
	defMax       int
	maxBytes     int64
	impact       bool
	impactDepth  int
}

func main() {
	os.Exit(run())
}

var running atomic.Pointer[server]

func run() int {
	langID := flag.String("lang", "go", "language: go, python, typescript, javascript or c")
	root := flag.String("root", "", "folder to index (default: $(go env GOROOT)/src for go, /usr/lib/python3.11 for python; required for typescript, javascript and c)")
	n := flag.Int("n", 0, "definitions to measure (default 50 for go, 30 for python)")
	seed := flag.Uint64("seed", 1, "seed of the choice of definitions")
	perDir := flag.Int("per-dir", 2, "at most this many definitions from one folder")
	srv := flag.String("server", "", "language server binary (default gopls for go, pyright-langserver for python; looked up in PATH, then .tools)")
	srvArgs := flag.String("server-args", "", "its arguments, space-separated (default: serve for gopls, --stdio for pyright)")
	srvEnv := flag.String("server-env", "default", "variables added to the server's environment, space-separated K=V (default: CGO_ENABLED=0 for go, since gopls leaves cgo packages out of cross-package references; none: nothing)")
	only := flag.String("target", "", "measure these definitions instead of a random choice: comma-separated FILE:LINE (relative to the root, the line of the definition)")
	out := flag.String("out", "", "detailed report, markdown (default graphacc-LANG.md)")
	srvLog := flag.String("server-log", "", "file for the server's stderr (default: discarded)")
	loadTimeout := flag.Duration("load-timeout", 30*time.Minute, "how long to wait for the server to load the workspace")
	queryTimeout := flag.Duration("query-timeout", 10*time.Minute, "timeout of one request")
	settle := flag.Duration("settle", 5*time.Minute, "after the load, wait up to this long for the server's progress reports to end, so queries do not compete with its background work")
	classify := flag.Bool("classify", true, "ask the server's definition at the truth sites of method targets (is the reference to the target itself or to a method corresponding to it through an interface?) and at every exact/import site it did not report")
	defMax := flag.Int("def-max", 3000, "at most this many definition requests per target")
	maxBytes := flag.Int64("max-bytes", 0, "graph.Options.MaxBytes (0: graph's default)")
	impact := flag.Bool("impact", false, "also compare impact of each target with the server's incoming calls walked as deep (the functions each reaches), at each depth from 2 to -impact-depth")
	impactDepth := flag.Int("impact-depth", 2, "with -impact, the deepest depth compared (2 or more)")
	flag.Parse()

	l := langs[*langID]
	if l == nil {
		fmt.Fprintf(os.Stderr, "graphacc: unknown -lang %q (go, python, typescript, javascript, c)\n", *langID)
		return 2
	}
	c := config{lang: l, root: *root, n: *n, perDir: *perDir, seed: *seed, server: *srv, out: *out, serverLog: *srvLog,
		loadTimeout: *loadTimeout, queryTimeout: *queryTimeout, settle: *settle, classify: *classify, defMax: *defMax, maxBytes: *maxBytes, impact: *impact, impactDepth: max(2, *impactDepth)}
	if c.root == "" {
		c.root = l.defaultDir()
	}
	if c.root == "" {
		fmt.Fprintf(os.Stderr, "graphacc: -lang %s needs -root (bench/graphacc.sh prepares one)\n", l.id)
		return 2
	}
	if c.n <= 0 {
		c.n = l.n
	}
	if c.server == "" {
		c.server = l.server
	}
	c.args = l.args
	switch *srvEnv {
	case "default":
		c.env = l.env
	case "none", "":
	default:
		c.env = strings.Fields(*srvEnv)
	}
	if *only != "" {
		c.only = strings.Split(*only, ",")
	}
	if *srvArgs != "" {
		c.args = strings.Fields(*srvArgs)
	} else if *srv != "" && filepath.Base(*srv) != l.server {
		c.args = nil
	}
	if c.out == "" {
		c.out = "graphacc-" + l.id + ".md"
	}
	abs, err := filepath.Abs(c.root)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "graphacc: root: %v\n", err)
		return 2
	}
	c.root = abs
	if bin, err := findBinary(c.server); err == nil {
		c.server = bin
	} else {
		fmt.Fprintf(os.Stderr, "graphacc: %v\n", err)
		return 2
	}

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		sig := <-sigs
		if s := running.Load(); s != nil {
			s.stop()
		}
		fmt.Fprintf(os.Stderr, "graphacc: %v: server stopped\n", sig)
		os.Exit(130)
	}()

	if err := measure(c); err != nil {
		fmt.Fprintf(os.Stderr, "graphacc: %v\n", err)
		return 1
	}
	return 0
}

func findBinary(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return filepath.Abs(p)
	}
	for _, dir := range []string{".tools/bin", ".tools/node_modules/.bin"} {
		p := filepath.Join(dir, filepath.Base(name))
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return filepath.Abs(p)
		}
	}
	return "", fmt.Errorf("language server %q not found in PATH or .tools", name)
}

// timings are what the report says of how long things took.
type timings struct {
	build, dump, init, firstItem, load, settle time.Duration
	warm                                       []string
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "graphacc: "+format+"\n", args...)
}

func measure(c config) error {
	ctx := context.Background()
	var tm timings

	// 1. The graph.
	g, err := pathguard.New(c.root)
	if err != nil {
		return err
	}
	defer g.Close()
	e := astgrep.NewEngine(astgrep.Options{})
	defer e.Close()
	x, err := index.New(g, e, graph.Options{MaxBytes: c.maxBytes})
	if err != nil {
		return err
	}
	defer x.Close()
	if x.Languages().Lookup(c.lang.id) == nil {
		return fmt.Errorf("graph has no language %q in this checkout (it reads %s): nothing to measure", c.lang.id, strings.Join(x.Languages().IDs(), ", "))
	}
	logf("indexing %s", c.root)
	t0 := time.Now()
	x.Start(nil)
	if !x.Wait(ctx, time.Hour) {
		return errors.New("the index was not built in an hour")
	}
	tm.build = time.Since(t0)
	w := graph.NewViewer(x)
	st := graph.StatusAnswer(w.View(0), x.Stats()).Status
	logf("indexed %d files (%d %s) in %s: %d definitions, %d references, %.0f MiB; %d skipped",
		st.Files, st.Languages[c.lang.id], c.lang.id, tm.build.Round(time.Millisecond), st.Defs, st.Refs, st.MemoryMiB, len(st.SkipList))
	if st.Languages[c.lang.id] == 0 {
		return fmt.Errorf("no %s files indexed under %s", c.lang.id, c.root)
	}
	t0 = time.Now()
	d := parseDump(graph.Dump(w.View(0)))
	tm.dump = time.Since(t0)
	logf("dump read in %s", tm.dump.Round(time.Millisecond))

	// 2. The targets.
	src := &sources{root: c.root, files: map[string][]string{}}
	sc := newScope(c.lang, c.root, c.env)
	targets, skipped := pick(d, c.lang, sc, src, c.n, c.perDir, c.seed, c.only)
	logf("%d targets chosen (seed %d)", len(targets), c.seed)
	if len(targets) == 0 {
		return errors.New("no definitions to measure")
	}

	// 3. The server.
	var stderr io.Writer = io.Discard
	if c.serverLog != "" {
		f, err := os.Create(c.serverLog)
		if err != nil {
			return err
		}
		defer f.Close()
		stderr = f
	}
	s, err := newServer(c, stderr)
	if err != nil {
		return err
	}
	t0 = s.started
	running.Store(s)
	defer s.stop()
	logf("%s: lsp starts it on the first request, for the folder of the nearest root marker (%s)", filepath.Base(c.server), c.root)
	if err := warmUp(ctx, c, s, targets, &tm, t0); err != nil {
		return err
	}

	// 4-5. Each target, both ways.
	var results []*result
	for i, t := range targets {
		r := measureTarget(ctx, c, w, s, d, sc, src, t)
		results = append(results, r)
		logf("%d/%d %s: server %d sites, graph %d exact %d import %d candidate (%s + %s definitions)", i+1, len(targets), t.Qualified,
			len(r.truth), len(r.ours[graph.Exact]), len(r.ours[graph.ViaImport]), len(r.ours[graph.Candidate]),
			r.incDur.Round(time.Millisecond), r.defDur.Round(time.Millisecond))
	}
	var impact string
	if c.impact {
		var rows []impactRow
		for i, t := range targets {
			rs := measureImpact(ctx, w, s, src, t, c.impactDepth)
			rows = append(rows, rs...)
			for _, r := range rs {
				logf("impact %d/%d %s: server %d functions at depth %d, impact %d, both %d", i+1, len(targets), t.Qualified, r.server, r.depth, r.ours, r.both)
			}
		}
		impact = renderImpact(rows, c.impactDepth)
	}
	progress, _, msgs := s.snapshotProgress()
	s.stop()
	running.Store(nil)

	// 6. The report.
	rep := &report{c: c, st: st, tm: tm, targets: targets, results: results, skipped: skipped, sc: sc, progress: progress, messages: msgs, src: src}
	summary, detail := rep.render()
	summary += impact
	fmt.Print(summary)
	if err := os.WriteFile(c.out, []byte(summary+"\n"+detail), 0o644); err != nil {
		return err
	}
	logf("report written to %s", c.out)
	return nil
}

// warmUp waits until the server answers: for each module (lsp starts one
// server per root-marker folder, and waits for a server's initial
// indexing), a call hierarchy retried until it names a function, then a
// quiet period with no progress under way.
func warmUp(ctx context.Context, c config, s *server, targets []*target, tm *timings, started time.Time) error {
	deadline := started.Add(c.loadTimeout)
	byModule := map[string][]*target{}
	var mods []string
	for _, t := range targets {
		if byModule[t.Module] == nil {
			mods = append(mods, t.Module)
		}
		byModule[t.Module] = append(byModule[t.Module], t)
	}
	for mi, m := range mods {
		ts := byModule[m]
		var lastErr error
		t0 := time.Now()
		for attempt := 0; ; attempt++ {
			if time.Now().After(deadline) {
				return fmt.Errorf("the server named no call hierarchy item in module %s within %s (last error: %v)", m, c.loadTimeout, lastErr)
			}
			t := ts[attempt%len(ts)]
			calls, err := s.incoming(ctx, t.Rel, place(t.LineTxt, t.Line, t.Col, t.Name))
			if mi == 0 && attempt == 0 {
				tm.init = time.Since(started)
			}
			if err == nil && item(calls) != nil {
				break
			}
			lastErr = err
			time.Sleep(2 * time.Second)
		}
		if mi == 0 {
			tm.firstItem = time.Since(started)
		}
		tm.warm = append(tm.warm, fmt.Sprintf("module %s: first answer after %s", m, time.Since(t0).Round(time.Millisecond)))
		logf("server answers for module %s (%s since start)", m, time.Since(started).Round(time.Millisecond))
	}
	tm.load = time.Since(started)
	t0 := time.Now()
	quiet := time.Time{}
	for time.Since(t0) < c.settle {
		_, active, _ := s.snapshotProgress()
		if len(active) == 0 {
			if quiet.IsZero() {
				quiet = time.Now()
			}
			if time.Since(quiet) > 3*time.Second {
				break
			}
		} else {
			quiet = time.Time{}
		}
		time.Sleep(500 * time.Millisecond)
	}
	tm.settle = time.Since(t0)
	return nil
}
